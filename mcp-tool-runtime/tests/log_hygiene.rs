//! What reaches the log and the client when things go wrong (issue 11): nothing of a
//! state's contents in any log line (serde error texts quote values), and -32603 errors
//! carry one generic message while the detail stays in the server's log.

use mcp_tool_runtime::manual::Reentrant;
use std::sync::{Arc, Mutex};

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, Capability, Implementation};
use mcp_tool_runtime::requests::Ask;
use mcp_tool_runtime::seal::{Binding, StateBody};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::server::errors::{INTERNAL_ERROR_MESSAGE, MAX_LOGGED_CLIENT_STRING, redact};
use mcp_tool_runtime::{
    Principal, Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod support;

/// Everything the tests' subscriber writes.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    /// Captures every level on this thread until the guard drops.
    fn capture() -> (Log, tracing::subscriber::DefaultGuard) {
        let log = Log::default();
        let writer = log.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        // A callsite registered by another test thread while this dispatcher was being added
        // may have cached "never" (tracing's interest cache); recompute with it in.
        tracing::callsite::rebuild_interest_cache();
        (log, guard)
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().expect("log").clone()).expect("utf-8")
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Person {
    name: String,
    age: u32,
}

/// Asks for a person (journaled, so answers live in the state), then completes.
struct Journaled;

impl Tool for Journaled {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("journaled")
            .needs(Capability::Elicitation)
            .journal(true)
            .layout("v1")
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            cx.request("who", Ask::<Person>::new("Who?").into_request()?)?;
            if !cx.round_ready() {
                return Step::suspend(&json!(1));
            }
            let p: Person = cx.take_ask("who")?;
            Ok(Step::Complete(CallToolResult::text(p.name)))
        })
    }
}

/// Fails with an internal error whose text an operator needs and a client must not see.
struct Broken;

impl Tool for Broken {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("broken")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            Err(ToolError::Internal(
                "database password rejected for db-7.internal:5432".into(),
            ))
        })
    }
}

const NAME: &str = "hygiene";

fn server() -> Server {
    Server::builder(Implementation::new(NAME, "1"))
        .sealer(support::sealer("k", 5))
        .tool(Journaled)
        .tool(Broken)
        .build()
        .unwrap()
}

/// A validly sealed state for `journaled` (same key, same context as the server) with
/// `payload` inside.
fn forged_by_a_key_holder(payload: Value) -> String {
    let sealer = support::sealer("k", 5).with_context(NAME);
    let anon = Principal::anonymous();
    let args = json!({});
    sealer
        .seal(
            &Binding::new(&anon, "tools/call", "journaled", &args),
            &StateBody {
                round: 1,
                layout: "v1".into(),
                payload,
            },
            None,
        )
        .unwrap()
}

async fn call(s: &Server, extra: Value) -> Value {
    let msg = support::request(
        7,
        "tools/call",
        support::call_params(
            "journaled",
            json!({}),
            support::meta(json!({"elicitation": {}})),
            extra,
        ),
    );
    serde_json::to_value(support::send_as(s, &Principal::anonymous(), msg).await).unwrap()
}

/// States whose contents do not parse (a pending request, a journal entry) and an answer
/// of the wrong type: the errors quote the values in serde's text; the log must not.
#[tokio::test(flavor = "current_thread")]
async fn no_state_contents_reach_the_log() {
    let (log, _guard) = Log::capture();
    let s = server();

    let pending = forged_by_a_key_holder(json!({
        "state": 1,
        "pending": {"who": {"method": "MARKER-PENDING-7f3a", "params": {}}},
    }));
    let r = call(&s, json!({"requestState": pending})).await;
    assert_eq!(r["error"]["message"], "invalid requestState", "{r}");

    let journal = forged_by_a_key_holder(json!({
        "state": 1,
        "journal": {"who": "MARKER-JOURNAL-7f3a"},
    }));
    let r = call(&s, json!({"requestState": journal})).await;
    assert_eq!(r["error"]["message"], "invalid requestState", "{r}");

    // A real first round, then an answer of the wrong type (kept in the journal).
    let first = call(&s, json!({})).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let r = call(
        &s,
        support::resume(
            &state,
            json!({"who": {"action": "accept", "content": {"name": "x", "age": "MARKER-ANSWER-7f3a"}}}),
        ),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");

    let text = log.text();
    assert!(text.contains("rejected requestState"), "{text}");
    assert!(text.contains("invalid input response"), "{text}");
    assert!(
        !text.contains("MARKER"),
        "state contents in the log:\n{text}"
    );
}

/// `ToolError::Internal` and every other -32603: one generic message on the wire, the
/// detail in the log.
#[tokio::test(flavor = "current_thread")]
async fn internal_errors_send_a_generic_message_and_log_the_detail() {
    let (log, _guard) = Log::capture();
    let s = server();
    let msg = support::request(
        1,
        "tools/call",
        support::call_params("broken", json!({}), support::meta(json!({})), json!({})),
    );
    let r = serde_json::to_value(support::send_as(&s, &Principal::anonymous(), msg).await).unwrap();
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["message"], INTERNAL_ERROR_MESSAGE);
    assert_eq!(INTERNAL_ERROR_MESSAGE, "Internal error");
    assert!(r["error"].get("data").is_none(), "{r}");
    assert!(
        log.text().contains("database password rejected"),
        "{}",
        log.text()
    );
}

#[test]
fn redact_removes_quoted_and_backticked_values() {
    let cases = [
        (
            r#"invalid type: string "sk-live-123", expected u32 at line 1 column 9"#,
            r#"invalid type: string "…", expected u32 at line 1 column 9"#,
        ),
        (
            "unknown field `password`, expected `name`",
            "unknown field `…`, expected `…`",
        ),
        (r#"a "quote \" inside" b"#, r#"a "…" b"#),
        ("unterminated \"secret", "unterminated \"…\""),
        ("line\nbreak\u{1b}[31m", r"line\nbreak\u{1b}[31m"),
    ];
    for (input, want) in cases {
        assert_eq!(redact(input), want, "{input}");
    }
    let long = "x".repeat(10_000);
    assert!(redact(&long).len() < 400);
}

/// A forged log line: a newline, a fake timestamp and level, an ANSI colour, then 200 KB.
fn forged() -> String {
    format!(
        "2025-11-25\n2026-12-01T00:00:00.000000Z  WARN forged: admin logged in\u{1b}[31m{}",
        "A".repeat(200_000)
    )
}

/// Issue 18, item 10: the client's `protocolVersion` and `clientInfo.name` reach the log
/// escaped and cut: one line, no ANSI escape, no forged line, under 512 bytes (two values of at most 128 bytes).
#[tokio::test(flavor = "current_thread")]
async fn client_strings_in_the_log_are_escaped_and_cut() {
    let (log, _guard) = Log::capture();
    let s = server();
    let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": forged(), "capabilities": {},
        "clientInfo": {"name": forged(), "version": "1"}}});
    let (session, r) = s.initialize(&msg, &Principal::anonymous());
    assert!(session.is_some(), "{r:?}");
    // and in the session: a notification of an unknown method, a cancellation's reason
    let session = session.unwrap();
    let sink = mcp_tool_runtime::server::NotificationSink::none();
    for m in [
        json!({"jsonrpc": "2.0", "method": forged()}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": forged(), "reason": forged()}}),
    ] {
        s.handle_in_session(session.clone(), m, sink.clone()).await;
    }
    let text = log.text();
    assert!(!text.contains('\u{1b}'), "an ANSI escape in the log");
    // no value longer than the cut
    assert!(!text.contains(&"A".repeat(MAX_LOGGED_CLIENT_STRING + 1)));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.iter().all(|l| !l.starts_with("2026-12-01T00:00:00")),
        "a forged line:\n{text}"
    );
    let opened: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("legacy session opened"))
        .collect();
    assert_eq!(opened.len(), 1, "{text}");
    assert!(
        opened[0].contains(r"\n2026-12-01T00:00:00"),
        "{}",
        opened[0]
    );
    // two values a line at most, each cut with its length noted
    for l in &lines {
        assert!(l.len() < 512, "a log line of {} bytes: {l}", l.len());
    }
    assert_eq!(lines.len(), 3, "{text}");
}

/// Issue 18, item 10: a session id used by another principal is warned about at most once a
/// second, and the log never holds the id (the session's owner's credential).
#[tokio::test(flavor = "current_thread")]
async fn wrong_principal_warnings_are_throttled_and_hide_the_id() {
    use mcp_tool_runtime::transport::auth::BearerDemoAuth;
    use mcp_tool_runtime::transport::http::{self, HttpConfig};
    let (log, _guard) = Log::capture();
    let config = HttpConfig::default().authenticator(BearerDemoAuth::new());
    let h = http::spawn("127.0.0.1:0".parse().unwrap(), server(), config)
        .await
        .unwrap();
    let client = reqwest::Client::new();
    let post = |token: &str, session: Option<&str>, body: Value| {
        let mut r = client
            .post(h.url())
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = session {
            r = r
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        r.send()
    };
    let r = post(
        "alice",
        None,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a"}}}),
    )
    .await
    .unwrap();
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    for n in 0..50 {
        let r = post(
            "mallory",
            Some(&id),
            json!({"jsonrpc": "2.0", "id": n, "method": "ping"}),
        )
        .await
        .unwrap();
        assert_eq!(r.status(), 404);
    }
    let text = log.text();
    let warned = text
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("another principal"))
        .count();
    assert!((1..=2).contains(&warned), "{warned} warnings:\n{text}");
    assert!(!text.contains(&id), "the session id in the log:\n{text}");
    assert!(text.contains(&format!("{}…", &id[..6])), "{text}");
}

#[test]
fn for_log_escapes_and_bounds_any_string() {
    use mcp_tool_runtime::server::errors::{for_log, for_log_cut, printable};
    assert_eq!(for_log("2025-11-25"), "2025-11-25");
    // line and paragraph separators are escaped too
    assert_eq!(
        for_log("a\u{85}b\u{2028}c\u{2029}"),
        r"a\u{85}b\u{2028}c\u{2029}"
    );
    // the cut is on a character boundary, never inside an escape
    assert_eq!(for_log_cut("ab\ncd", 3), "ab…(5 bytes)");
    assert_eq!(for_log_cut("éé", 3), "é…(4 bytes)");
    assert_eq!(for_log_cut("ab\ncd", 4), r"ab\n…(5 bytes)");
    assert_eq!(for_log("a\nb\u{1b}[31m"), r"a\nb\u{1b}[31m");
    assert_eq!(for_log("x\u{202e}y"), r"x\u{202e}y");
    for worst in [
        "\u{1b}".repeat(100_000),
        "é".repeat(100_000),
        "A".repeat(200_000),
    ] {
        let l = for_log(&worst);
        let (kept, note) = l.split_once('…').expect("cut");
        assert!(
            kept.len() <= MAX_LOGGED_CLIENT_STRING,
            "{} bytes: {l}",
            kept.len()
        );
        assert_eq!(note, format!("({} bytes)", worst.len()));
        assert!(!l.chars().any(char::is_control));
    }
    assert_eq!(printable("ab\ncd\u{1b}ef", 4), "abcd");
}
