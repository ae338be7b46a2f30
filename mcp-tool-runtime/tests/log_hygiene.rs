//! What reaches the log and the client when things go wrong (issue 11): nothing of a
//! state's contents in any log line (serde error texts quote values), and -32603 errors
//! carry one generic message while the detail stays in the server's log.

use std::sync::{Arc, Mutex};

use mcp_tool_runtime::context::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, Capability, Implementation};
use mcp_tool_runtime::requests::Ask;
use mcp_tool_runtime::seal::{Binding, StateBody};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::server::errors::{INTERNAL_ERROR_MESSAGE, redact};
use mcp_tool_runtime::{BoxFuture, Principal, Step, Tool, ToolError, ToolInfo};
use schemars::JsonSchema;
use serde::Deserialize;
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
        _args: Value,
        _state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            cx.request("who", Ask::<Person>::new("Who?").into_request()?)?;
            if !cx.round_ready() {
                return Ok(Step::Suspend { state: json!(1) });
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
        _args: Value,
        _state: Option<Value>,
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
        ("line\nbreak\u{1b}[31m", "linebreak[31m"),
    ];
    for (input, want) in cases {
        assert_eq!(redact(input), want, "{input}");
    }
    let long = "x".repeat(10_000);
    assert!(redact(&long).len() < 400);
}
