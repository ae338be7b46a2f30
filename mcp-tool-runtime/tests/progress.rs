//! Progress notifications: `cx.progress(..)` in `#[mcp_tool]` bodies, delivered as SSE
//! events on a real loopback HTTP response, as stdio lines before the response, through
//! the client driver's transcript, and not at all without a `progressToken` (or, over
//! HTTP, without an `Accept` that allows `text/event-stream`). Log messages (`cx.log`)
//! travel the same way when the request's `_meta` names a log level.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_tool_client::{
    ClientTransport, Direction, Driver, HttpTransport, InProcessTransport, ScriptedHost,
};
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, Implementation, LogLevel};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};
use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Reports 1, 2 and 3 of 3, 40 ms apart.
#[mcp_tool(read_only)]
async fn count(cx: &mut ToolContext) -> Result<String, ToolError> {
    for step in 1..=3u32 {
        tokio::time::sleep(Duration::from_millis(40)).await;
        cx.progress(f64::from(step), Some(3.0), Some(&format!("step {step}")));
    }
    Ok("counted".to_owned())
}

/// A name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Name {
    /// The name.
    name: String,
}

/// Progress on both sides of a suspension point.
#[mcp_tool(read_only)]
async fn greet(cx: &mut ToolContext) -> Result<String, ToolError> {
    cx.progress(1.0, Some(2.0), Some("asking"));
    let who: Name = cx.ask("Your name?").await?;
    cx.progress(2.0, Some(2.0), None);
    Ok(format!("Hello, {}!", who.name))
}

fn server() -> Server {
    Server::builder(Implementation::new("progress-test", "1.0"))
        .tool(count::tool())
        .tool(greet::tool())
        .build()
        .unwrap()
}

fn meta(token: Option<Value>) -> Value {
    let mut m = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    if let Some(t) = token {
        m["progressToken"] = t;
    }
    m
}

fn call(id: u64, tool: &str, token: Option<Value>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}, "_meta": meta(token)}})
}

async fn start() -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(addr, server(), HttpConfig::default())
        .await
        .unwrap()
}

fn request(url: &str, body: &Value, accept: Option<&str>) -> reqwest::RequestBuilder {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json");
    if let Some(a) = accept {
        req = req.header("accept", a);
    }
    for (k, v) in HttpTransport::mcp_headers(body) {
        req = req.header(k, v);
    }
    req.body(serde_json::to_vec(body).unwrap())
}

/// The `data:` payloads of an SSE body, parsed.
fn sse_messages(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            serde_json::from_str(&data.join("\n")).unwrap()
        })
        .collect()
}

fn progress_values(messages: &[Value]) -> Vec<f64> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect()
}

#[tokio::test]
async fn http_streams_progress_as_sse_events_then_the_response() {
    let h = start().await;
    let body = call(7, "count", Some(json!("tok-1")));
    let started = Instant::now();
    let mut resp = request(&h.url(), &body, Some("application/json, text/event-stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["x-accel-buffering"], "no");
    // Events arrive as they are produced: the first one well before the response.
    let mut chunks: Vec<(Duration, String)> = Vec::new();
    while let Some(c) = resp.chunk().await.unwrap() {
        chunks.push((started.elapsed(), String::from_utf8(c.to_vec()).unwrap()));
    }
    let first = &chunks[0];
    assert!(
        first.1.contains("notifications/progress") && !first.1.contains("\"result\""),
        "{chunks:?}"
    );
    let text: String = chunks.iter().map(|(_, c)| c.as_str()).collect();
    assert!(text.starts_with("event: message\ndata: {"), "{text}");
    let messages = sse_messages(&text);
    assert_eq!(messages.len(), 4, "{messages:?}");
    for (i, n) in messages[..3].iter().enumerate() {
        assert_eq!(n["jsonrpc"], "2.0");
        assert!(n.get("id").is_none());
        assert_eq!(
            n["params"],
            json!({"progressToken": "tok-1", "progress": (i + 1) as f64, "total": 3.0,
                   "message": format!("step {}", i + 1)})
        );
    }
    let last = &messages[3];
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "counted");
    assert!(
        chunks.last().unwrap().0 > first.0 + Duration::from_millis(40),
        "{chunks:?}"
    );
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn http_answers_json_without_progress_when_accept_lacks_event_stream() {
    let h = start().await;
    let body = call(1, "count", Some(json!(99)));
    for accept in [
        Some("application/json"),
        None,
        Some("text/event-stream;q=0, application/json"),
    ] {
        let resp = request(&h.url(), &body, accept).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(
            resp.headers()["content-type"],
            "application/json",
            "{accept:?}"
        );
        let text = resp.text().await.unwrap();
        assert!(!text.contains("notifications/progress"), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "counted");
    }
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn http_without_token_answers_json() {
    let h = start().await;
    let body = call(2, "count", None);
    let resp = request(&h.url(), &body, Some("application/json, text/event-stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "application/json");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["id"], 2);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn http_error_before_any_progress_keeps_its_json_status() {
    let h = start().await;
    let body = call(3, "no_such_tool", Some(json!("t")));
    let resp = request(&h.url(), &body, Some("application/json, text/event-stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32602);
    h.shutdown().await.unwrap();
}

fn elicitation_host() -> ScriptedHost {
    let mut content = serde_json::Map::new();
    content.insert("name".into(), json!("Ada"));
    ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .answer("who", ElicitResult::accept(content))
}

#[tokio::test]
async fn driver_over_http_puts_progress_in_the_transcript() {
    let h = start().await;
    let mut d = Driver::new(HttpTransport::new(h.url()), elicitation_host()).with_progress(true);
    let out = d.call_tool("count", json!({})).await.unwrap();
    assert_eq!(out.text(), "counted");
    let dirs: Vec<_> = out.transcript.iter().map(|e| e.direction).collect();
    assert_eq!(
        dirs,
        [
            Direction::Sent,
            Direction::Received,
            Direction::Received,
            Direction::Received,
            Direction::Received
        ]
    );
    let token = &out.transcript[0].message["params"]["_meta"]["progressToken"];
    assert_eq!(token, &out.transcript[0].message["id"]);
    let progress: Vec<_> = out
        .progress()
        .iter()
        .map(|p| p["progress"].clone())
        .collect();
    assert_eq!(progress, [json!(1.0), json!(2.0), json!(3.0)]);
    assert!(out.progress().iter().all(|p| &p["progressToken"] == token));

    // Across a suspension point: one notification in each round, each with its round's token.
    let out = d.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(out.text(), "Hello, Ada!");
    assert_eq!(out.rounds, 2);
    let p = out.progress();
    assert_eq!(p.len(), 2, "{:?}", out.transcript);
    assert_eq!(p[0]["message"], "asking");
    assert_eq!(p[1]["progress"], 2.0);
    assert_ne!(p[0]["progressToken"], p[1]["progressToken"]);

    // Without asking for progress: no token, no notifications.
    let mut d = Driver::new(HttpTransport::new(h.url()), elicitation_host());
    let out = d.call_tool("count", json!({})).await.unwrap();
    assert!(out.progress().is_empty());
    assert!(
        out.transcript[0].message["params"]["_meta"]
            .get("progressToken")
            .is_none()
    );
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn in_process_transport_collects_progress() {
    let t = InProcessTransport::new(server());
    let ex = t
        .exchange(call(5, "count", Some(json!("p"))))
        .await
        .unwrap();
    assert_eq!(progress_values(&ex.notifications), [1.0, 2.0, 3.0]);
    assert_eq!(ex.response.unwrap()["id"], 5);
    // `handle` (no sink) reports nothing; the token alone changes nothing.
    let resp = server()
        .handle(call(6, "count", Some(json!("p"))), &Default::default())
        .await
        .unwrap();
    assert_eq!(
        resp.result_value().unwrap()["content"][0]["text"],
        "counted"
    );
}

/// Feeds `input` to the stdio serve loop and returns every output line, parsed.
async fn stdio_lines(input: &str) -> Vec<Value> {
    let (client_out, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    let serve = tokio::spawn(stdio::serve(
        server(),
        BufReader::new(server_in),
        server_out,
        StdioConfig::default().max_in_flight(1),
    ));
    let mut w = client_out;
    w.write_all(input.as_bytes()).await.unwrap();
    drop(w);
    tokio::time::timeout(Duration::from_secs(30), serve)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let mut lines = BufReader::new(client_in).lines();
    let mut out = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        out.push(serde_json::from_str(&line).unwrap());
    }
    out
}

#[tokio::test]
async fn stdio_writes_progress_lines_before_the_response() {
    let input = format!(
        "{}\n{}\n",
        call(1, "count", Some(json!("s-1"))),
        call(2, "count", None)
    );
    let out = stdio_lines(&input).await;
    assert_eq!(out.len(), 5, "{out:?}");
    assert_eq!(progress_values(&out[..3]), [1.0, 2.0, 3.0]);
    assert!(
        out[..3]
            .iter()
            .all(|n| n["params"]["progressToken"] == "s-1")
    );
    assert_eq!(out[3]["id"], 1);
    // The request without a token: its response only.
    assert_eq!(out[4]["id"], 2);
    assert_eq!(out[4]["result"]["content"][0]["text"], "counted");
}

/// Logs at `debug` and `warning`.
#[mcp_tool(read_only)]
async fn noisy(cx: &mut ToolContext) -> Result<String, ToolError> {
    cx.log(LogLevel::Debug, "details");
    tokio::time::sleep(Duration::from_millis(20)).await;
    cx.log(LogLevel::Warning, json!({"disk": "low"}));
    Ok("logged".to_owned())
}

#[tokio::test]
async fn http_streams_the_log_messages_a_request_asked_for() {
    let server = Server::builder(Implementation::new("log-test", "1.0"))
        .tool(noisy::tool())
        .build()
        .unwrap();
    let h = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        server,
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let with_level = |id: u64, level: Option<&str>| {
        let mut body = call(id, "noisy", None);
        if let Some(l) = level {
            body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!(l);
        }
        body
    };
    // a level: an SSE stream with the messages at or above it, then the response
    let resp = request(
        &h.url(),
        &with_level(1, Some("info")),
        Some("application/json, text/event-stream"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let messages = sse_messages(&resp.text().await.unwrap());
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["method"], "notifications/message");
    assert_eq!(
        messages[0]["params"],
        json!({"level": "warning", "data": {"disk": "low"}})
    );
    assert_eq!(messages[1]["result"]["content"][0]["text"], "logged");
    // no level: plain JSON, no message
    let resp = request(
        &h.url(),
        &with_level(2, None),
        Some("application/json, text/event-stream"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.headers()["content-type"], "application/json");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "logged");
    // a level that is not one of the eight: -32602
    let resp = request(
        &h.url(),
        &with_level(3, Some("chatty")),
        Some("application/json, text/event-stream"),
    )
    .send()
    .await
    .unwrap();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32602, "{v}");
}
