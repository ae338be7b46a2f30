//! Logging is safe at every level: the server runs with a subscriber at `trace` while
//! clients put newlines, forged log lines, terminal escapes and 10 KB values into every
//! part of a request that can reach the log (method, headers, `_meta`'s protocolVersion and
//! trace context, tool, prompt and resource names, request ids, answer keys, task ids,
//! `requestState`, `Origin`, session ids), over HTTP (modern and legacy) and stdio. No line
//! of the log may be forged, and no value from the wire may appear longer than the cut of
//! `server::errors::for_log` (`MAX_LOGGED_CLIENT_STRING` bytes).
//!
//! One test in this binary: the subscriber is the process's global one, so that every
//! thread and task of the server logs into the buffer.

use std::sync::{Arc, Mutex, OnceLock};

use mcp_tool_client::HttpTransport;
use mcp_tool_runtime::protocol::headers::encode_header_value;
use mcp_tool_runtime::server::errors::MAX_LOGGED_CLIENT_STRING;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};
use serde_json::{Value, json};

mod transport_support;
use transport_support::{VERSION, server};

/// Everything the subscriber writes.
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

/// The process's log, at `trace`, installed once.
fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Log::default();
        let writer = log.clone();
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::TRACE)
            // every span's fields are written when it closes
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
            .with_ansi(false)
            .init();
        log
    })
}

/// The first line a forger wants in the log.
const FORGED: &str = "FORGED-LINE 2026-12-01T00:00:00.000000Z  WARN forged: admin logged in";

/// A hostile string: CR LF, a forged line, an ANSI escape, a NEL, a line separator, and a
/// 10 KB tail of one letter (`fill`) whose longest run in the log is measured.
fn hostile(fill: char) -> String {
    format!(
        "x\r\n{FORGED}\u{1b}[31m\n{FORGED}\u{85}{FORGED}\u{2028}{FORGED}\r{}",
        fill.to_string().repeat(10_000)
    )
}

/// A long header value (headers cannot carry CR or LF): 10 KB of `fill`.
fn long_header(fill: char) -> String {
    fill.to_string().repeat(10_000)
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in text.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    })
}

fn call(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POSTs `body` with the MCP headers derived from it, `extra` replacing or adding some.
async fn post(url: &str, body: &Value, extra: &[(&str, String)]) -> u16 {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in HttpTransport::mcp_headers(body) {
        if !extra.iter().any(|(e, _)| e.eq_ignore_ascii_case(k)) {
            req = req.header(k, v);
        }
    }
    for (k, v) in extra {
        req = req.header(*k, v.as_str());
    }
    match req.json(body).send().await {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_line_can_be_forged_and_no_wire_value_is_logged_longer_than_the_cut() {
    let log = log();
    let h = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        server(),
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let url = h.url();
    let v = meta(VERSION);

    // -- the Mcp-* header checks: each letter marks one request's values --------------
    // _meta's protocolVersion against the header
    post(
        &url,
        &call(
            json!(1),
            "tools/call",
            json!({"name": "book_table", "arguments": {}, "_meta": meta(&hostile('A'))}),
        ),
        &[("mcp-protocol-version", VERSION.into())],
    )
    .await;
    // a 10 KB MCP-Protocol-Version header against the body
    post(
        &url,
        &call(
            json!(2),
            "tools/call",
            json!({"name": "book_table", "arguments": {}, "_meta": v}),
        ),
        &[("mcp-protocol-version", long_header('B'))],
    )
    .await;
    // the body's method against Mcp-Method, and a 10 KB Mcp-Method
    post(
        &url,
        &call(json!(3), &hostile('C'), json!({"_meta": v})),
        &[("mcp-method", long_header('D'))],
    )
    .await;
    // Mcp-Name against params.name
    post(
        &url,
        &call(
            json!(4),
            "tools/call",
            json!({"name": hostile('E'), "arguments": {}, "_meta": v}),
        ),
        &[("mcp-name", long_header('F'))],
    )
    .await;
    // a missing header, a body whose method is hostile and a header that agrees
    post(
        &url,
        &call(json!(5), &hostile('G'), json!({"_meta": v})),
        &[("mcp-method", encode_header_value(&hostile('G')))],
    )
    .await;

    // -- names, ids and `_meta` that pass the header checks ---------------------------
    let name = hostile('H');
    post(
        &url,
        &call(
            json!(hostile('I')),
            "tools/call",
            json!({"name": name, "arguments": {}, "_meta": v}),
        ),
        &[],
    )
    .await;
    post(
        &url,
        &call(
            json!(6),
            "prompts/get",
            json!({"name": hostile('J'), "_meta": v}),
        ),
        &[],
    )
    .await;
    post(
        &url,
        &call(
            json!(7),
            "resources/read",
            json!({"uri": hostile('K'), "_meta": v}),
        ),
        &[],
    )
    .await;
    let traced = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": hostile('L'),
    });
    post(
        &url,
        &call(json!(8), "tools/list", json!({"_meta": traced})),
        &[],
    )
    .await;
    // answers with hostile keys on a first round, then with a hostile state
    let args = json!({"restaurant": "Chez Rust", "party_size": 4});
    let mut answers = serde_json::Map::new();
    answers.insert(hostile('M'), json!({"action": "accept", "content": {}}));
    post(
        &url,
        &call(
            json!(9),
            "tools/call",
            json!({"name": "book_table", "arguments": args, "_meta": v, "inputResponses": answers}),
        ),
        &[],
    )
    .await;
    post(&url, &call(json!(10), "tools/call", json!({"name": "book_table", "arguments": args, "_meta": v, "inputResponses": answers, "requestState": hostile('N')})), &[]).await;
    post(&url, &call(json!(11), "tools/call", json!({"name": "book_table", "arguments": args, "_meta": v, "inputResponses": answers, "requestState": format!("mts3.{}", hostile('O'))})), &[]).await;
    // a task id, an unknown method (as a request and as a notification), a cursor
    post(
        &url,
        &call(
            json!(12),
            "tasks/get",
            json!({"taskId": hostile('P'), "_meta": v}),
        ),
        &[],
    )
    .await;
    post(
        &url,
        &call(json!(13), &hostile('Q'), json!({"_meta": v})),
        &[("mcp-method", encode_header_value(&hostile('Q')))],
    )
    .await;
    post(
        &url,
        &json!({"jsonrpc": "2.0", "method": hostile('R'), "params": {"_meta": v}}),
        &[],
    )
    .await;
    post(
        &url,
        &call(
            json!(14),
            "tools/list",
            json!({"cursor": hostile('S'), "_meta": v}),
        ),
        &[],
    )
    .await;
    // a foreign Origin, a session id nobody issued
    post(
        &url,
        &call(json!(15), "tools/list", json!({"_meta": v})),
        &[(
            "origin",
            format!("http://evil.example/{}", long_header('T')),
        )],
    )
    .await;
    post(
        &url,
        &call(json!(16), "tools/list", json!({"_meta": v})),
        &[("mcp-session-id", long_header('U'))],
    )
    .await;
    // the legacy handshake
    post(&url, &json!({"jsonrpc": "2.0", "id": 17, "method": "initialize", "params": {
        "protocolVersion": hostile('V'), "capabilities": {}, "clientInfo": {"name": hostile('W'), "version": "1"}}}), &[]).await;

    // -- stdio ---------------------------------------------------------------------------
    let mut input = String::new();
    for m in [
        call(json!(hostile('X')), &hostile('Y'), json!({"_meta": v})),
        json!({"jsonrpc": "2.0", "method": hostile('Z'), "params": {}}),
        call(
            json!(20),
            "tools/call",
            json!({"name": hostile('a'), "arguments": {}, "_meta": meta(&hostile('b'))}),
        ),
    ] {
        input.push_str(&serde_json::to_string(&m).unwrap());
        input.push('\n');
    }
    let (writer, mut sink) = tokio::io::duplex(1 << 20);
    let drain = tokio::spawn(async move {
        let mut out = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut sink, &mut out).await;
    });
    stdio::serve(server(), input.as_bytes(), writer, StdioConfig::default())
        .await
        .unwrap();
    let _ = drain.await;
    h.shutdown().await.unwrap();

    let text = String::from_utf8_lossy(&log.0.lock().unwrap()).into_owned();
    // the requests reached the log
    for expected in ["header validation failed", "legacy session opened"] {
        assert!(
            text.contains(expected),
            "no {expected:?} in the log:\n{text}"
        );
    }
    assert!(
        text.contains("FORGED-LINE"),
        "no hostile value reached the log"
    );
    // no forged line: every line (split at any line break a viewer honours) starts as the
    // subscriber starts its lines, never with the forger's text
    let forged: Vec<&str> = text
        .split(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
        .filter(|l| l.trim_start().starts_with("FORGED-LINE"))
        .collect();
    assert!(
        forged.is_empty(),
        "{} forged lines, e.g. {:?}",
        forged.len(),
        forged[0]
    );
    assert!(!text.contains('\u{1b}'), "a terminal escape in the log");
    // no value longer than the cut
    for c in ('A'..='Z').chain('a'..='b') {
        let run = longest_run(&text, c);
        assert!(
            run <= MAX_LOGGED_CLIENT_STRING,
            "{run} bytes of the value marked {c:?} in the log (the cut is {MAX_LOGGED_CLIENT_STRING})"
        );
    }
}
