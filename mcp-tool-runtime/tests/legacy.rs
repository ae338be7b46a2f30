//! Dual era over stdio: a legacy (2025-11-25) client in the same process pipes — it opens
//! with `initialize`, and the tools' `ask` / `sample` / `roots` reach it as real
//! `elicitation/create` / `sampling/createMessage` / `roots/list` requests that it answers
//! by id while `tools/call` is pending. Also: modern requests on the same pipe, the
//! hand-written tool (no direct mode: rounds driven in the process), capabilities,
//! cancellation both ways, timeouts, progress, end of input, and a modern-only server.

mod transport_support;

use std::collections::VecDeque;
use std::time::Duration;

use mcp_tool_runtime::protocol::{Implementation, LogLevel};
use mcp_tool_runtime::server::LegacyConfig;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};
use mcp_tool_runtime::{Sample, State, ToolContext, ToolError, mcp_prompt, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};
use transport_support::hand_written;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct City {
    /// A city.
    city: String,
}

/// Asks for a city in the middle of the call.
#[mcp_tool]
async fn weather(cx: &mut ToolContext, greeting: State<String>) -> Result<String, ToolError> {
    cx.progress(1.0, Some(2.0), Some("asking"));
    let where_: City = cx.ask("Which city?").await?;
    cx.progress(2.0, Some(2.0), None);
    Ok(format!("{} {}: sunny", greeting.as_str(), where_.city))
}

/// Two sampling requests, the second built from the first answer.
#[mcp_tool(max_rounds = 3)]
async fn summarize(cx: &mut ToolContext) -> Result<String, ToolError> {
    let pick = cx
        .sample(Sample::user("pick one").max_tokens(10))
        .await?
        .text()?;
    let summary = cx
        .sample(Sample::user(format!("summarize {pick}")).max_tokens(50))
        .await?;
    summary.text()
}

/// The client's roots.
#[mcp_tool]
async fn roots(cx: &mut ToolContext) -> Result<String, ToolError> {
    let roots = cx.roots().await?;
    Ok(roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(","))
}

/// A prompt that asks first.
#[mcp_prompt]
async fn intro(cx: &mut ToolContext) -> Result<String, ToolError> {
    let c: City = cx.ask("Where are you?").await?;
    Ok(format!("Introduce {}", c.city))
}

/// Logs at three levels around a question.
#[mcp_tool]
async fn chatty(cx: &mut ToolContext) -> Result<String, ToolError> {
    cx.log(LogLevel::Debug, "looking up");
    let c: City = cx.ask("Which city?").await?;
    cx.log_as(LogLevel::Info, Some("weather"), json!({"city": c.city}));
    cx.log(LogLevel::Error, "no forecast today");
    Ok(format!("Nothing for {}", c.city))
}

fn server_with(legacy: LegacyConfig) -> Server {
    Server::builder(Implementation::new("legacy-test", "1.0"))
        .tool(hand_written::BookTable)
        .tool(chatty::tool())
        .tool(weather::tool())
        .tool(summarize::tool())
        .tool(roots::tool())
        .prompt(intro::prompt())
        .state(String::from("Hello"))
        .legacy(legacy)
        .build()
        .unwrap()
}

/// A legacy client on in-memory pipes.
struct Client {
    w: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    serve: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Every message the server sent that was not a response, in order.
    seen: Vec<Value>,
}

impl Client {
    fn start(server: Server) -> Client {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(theirs);
        let serve = tokio::spawn(stdio::serve(
            server,
            BufReader::new(server_read),
            server_write,
            StdioConfig::default(),
        ));
        let (r, w) = tokio::io::split(ours);
        Client {
            w,
            lines: BufReader::new(r).lines(),
            serve,
            seen: Vec::new(),
        }
    }

    async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.w.write_all(&line).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("a message from the server in time")
            .unwrap()
            .expect("the server still writes");
        serde_json::from_str(&line).unwrap()
    }

    /// Reads until the response to `id`, answering every server request with `answer`.
    async fn until_response(&mut self, id: i64, answer: &mut dyn FnMut(&Value) -> Value) -> Value {
        loop {
            let m = self.next().await;
            if m.get("method").is_some() {
                self.seen.push(m.clone());
                if let Some(rid) = m.get("id") {
                    let reply = answer(&m);
                    let mut r = json!({"jsonrpc": "2.0", "id": rid});
                    if reply.get("code").is_some() {
                        r["error"] = reply;
                    } else {
                        r["result"] = reply;
                    }
                    self.send(r).await;
                }
                continue;
            }
            assert_eq!(m["id"], id, "response to another request: {m}");
            return m;
        }
    }

    async fn request(
        &mut self,
        id: i64,
        method: &str,
        params: Value,
        answer: &mut dyn FnMut(&Value) -> Value,
    ) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.until_response(id, answer).await
    }

    async fn initialize(&mut self, caps: Value) -> Value {
        let r = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                       "clientInfo": {"name": "legacy-test-client", "version": "1"}}),
                &mut no_requests,
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        r
    }

    fn requests_seen(&self, method: &str) -> Vec<&Value> {
        self.seen.iter().filter(|m| m["method"] == method).collect()
    }
}

fn no_requests(m: &Value) -> Value {
    panic!("unexpected request from the server: {m}")
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn initialize_negotiates_and_results_have_the_legacy_shape() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    let r = c.initialize(all_caps()).await;
    let init = &r["result"];
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "legacy-test");
    assert!(init["capabilities"]["tools"].is_object());
    assert!(init["capabilities"]["prompts"].is_object());
    assert!(init.get("resultType").is_none());

    let r = c.request(1, "ping", json!({}), &mut no_requests).await;
    assert_eq!(r["result"], json!({}));
    let r = c
        .request(2, "tools/list", json!({}), &mut no_requests)
        .await;
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["book_table", "chatty", "weather", "summarize", "roots"]
    );
    for k in ["resultType", "ttlMs", "cacheScope"] {
        assert!(r["result"].get(k).is_none(), "{k} in a legacy result");
    }
    // a second initialize in the same process is refused
    let r = c
        .request(
            3,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x"}}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["error"]["code"], -32600);
    // an older version is answered with the newest served one; 2025-06-18 is kept
    for (asked, got) in [("2024-11-05", "2025-11-25"), ("2025-06-18", "2025-06-18")] {
        let mut c = Client::start(server_with(LegacyConfig::default()));
        let r = c
            .request(
                0,
                "initialize",
                json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "x"}}),
                &mut no_requests,
            )
            .await;
        assert_eq!(r["result"]["protocolVersion"], got);
    }
}

#[tokio::test]
async fn an_elicitation_reaches_the_client_in_the_middle_of_the_call() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(all_caps()).await;
    let r = c
        .request(
            1,
            "tools/call",
            json!({"name": "weather", "arguments": {}, "_meta": {"progressToken": "p1"}}),
            &mut |m| {
                assert_eq!(m["method"], "elicitation/create");
                assert_eq!(m["params"]["message"], "Which city?");
                assert_eq!(
                    m["params"]["requestedSchema"]["properties"]["city"]["type"],
                    "string"
                );
                accept(json!({"city": "Lyon"}))
            },
        )
        .await;
    assert_eq!(text(&r), "Hello Lyon: sunny");
    assert!(r["result"].get("resultType").is_none());
    // progress on both sides of the request, before the response
    let progress: Vec<_> = c
        .requests_seen("notifications/progress")
        .iter()
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0]);
    assert_eq!(c.requests_seen("elicitation/create").len(), 1);
    // declining gives the tool's own handling: `?` on a declined ask is a tool error result
    let r = c
        .request(
            2,
            "tools/call",
            json!({"name": "weather", "arguments": {}}),
            &mut |_| json!({"action": "decline"}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true);
    assert!(text(&r).contains("declined"), "{r}");
}

#[tokio::test]
async fn two_sampling_requests_and_roots_then_a_prompt_that_asks() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(all_caps()).await;
    let mut answers = VecDeque::from(["src/main.rs", "a tiny program"]);
    let r = c
        .request(
            1,
            "tools/call",
            json!({"name": "summarize"}),
            &mut |m| {
                assert_eq!(m["method"], "sampling/createMessage");
                json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": answers.pop_front().unwrap()}})
            },
        )
        .await;
    assert_eq!(text(&r), "a tiny program");
    let asked = c.requests_seen("sampling/createMessage");
    assert_eq!(asked[0]["params"]["maxTokens"], 10);
    assert_eq!(
        asked[1]["params"]["messages"][0]["content"]["text"],
        "summarize src/main.rs"
    );
    let r = c
        .request(2, "tools/call", json!({"name": "roots"}), &mut |m| {
            assert_eq!(m["method"], "roots/list");
            json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]})
        })
        .await;
    assert_eq!(text(&r), "file:///a,file:///b");
    let r = c
        .request(3, "prompts/get", json!({"name": "intro"}), &mut |_| {
            accept(json!({"city": "Oslo"}))
        })
        .await;
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Introduce Oslo"
    );
}

#[tokio::test]
async fn the_hand_written_tool_has_its_rounds_driven_in_the_process() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(json!({"elicitation": {}})).await;
    let r = c
        .request(
            1,
            "tools/call",
            json!({"name": "book_table", "arguments": transport_support::args()}),
            &mut |m| match m["params"]["message"].as_str().unwrap() {
                s if s.contains("When") || s.contains("when") => {
                    accept(json!({"date": "2026-08-01", "time": "19:30"}))
                }
                _ => accept(json!({"confirm": true})),
            },
        )
        .await;
    assert_eq!(
        r["result"]["structuredContent"],
        transport_support::booked()
    );
    assert_eq!(c.requests_seen("elicitation/create").len(), 2);
}

#[tokio::test]
async fn a_missing_capability_is_a_tool_error_and_nothing_is_sent() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(json!({"elicitation": {}})).await;
    let r = c
        .request(
            1,
            "tools/call",
            json!({"name": "summarize"}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["result"]["isError"], true);
    assert!(text(&r).contains("sampling"), "{r}");
    // a prompt has no error result: a JSON-RPC error
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(json!({})).await;
    let r = c
        .request(2, "prompts/get", json!({"name": "intro"}), &mut no_requests)
        .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("elicitation"),
        "{r}"
    );
}

#[tokio::test]
async fn calls_run_concurrently_and_answers_are_routed_by_id() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(all_caps()).await;
    for id in [1, 2] {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "weather"}}))
            .await;
    }
    // both ask before either is answered
    let a = c.next().await;
    let b = c.next().await;
    assert_eq!(
        (a["method"].as_str(), b["method"].as_str()),
        (Some("elicitation/create"), Some("elicitation/create"))
    );
    assert_ne!(a["id"], b["id"]);
    // answer the second first
    for (m, city) in [(&b, "Bergen"), (&a, "Turin")] {
        c.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": accept(json!({"city": city}))}))
            .await;
    }
    let mut results = [c.next().await, c.next().await];
    results.sort_by_key(|r| r["id"].as_i64());
    let texts: Vec<String> = results.iter().map(text).collect();
    assert!(
        texts.contains(&"Hello Turin: sunny".to_owned()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"Hello Bergen: sunny".to_owned()),
        "{texts:?}"
    );
}

#[tokio::test]
async fn modern_requests_are_served_statelessly_on_the_same_pipe() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(all_caps()).await;
    let r = c
        .request(
            1,
            "server/discover",
            json!({"_meta": transport_support::meta()}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete");
    // a modern call answers input_required with a sealed state, no request is sent
    let r = c
        .request(
            2,
            "tools/call",
            json!({"name": "weather", "_meta": transport_support::meta()}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["result"]["resultType"], "input_required");
    assert!(r["result"]["requestState"].is_string());
}

#[tokio::test]
async fn the_client_cancels_a_call_and_the_server_cancels_its_request() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(all_caps()).await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "weather"}}),
    )
    .await;
    let asked = c.next().await;
    assert_eq!(asked["method"], "elicitation/create");
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 7, "reason": "user pressed stop"}}),
    )
    .await;
    // the server gives up its own request, and never answers 7
    let n = c.next().await;
    assert_eq!(n["method"], "notifications/cancelled", "{n}");
    assert_eq!(n["params"]["requestId"], asked["id"]);
    // a late answer to the cancelled request is ignored; the session goes on
    c.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": accept(json!({"city": "X"}))}))
        .await;
    let r = c.request(8, "ping", json!({}), &mut no_requests).await;
    assert_eq!(r["id"], 8);
}

#[tokio::test]
async fn an_unanswered_request_times_out_and_is_cancelled() {
    let mut c = Client::start(server_with(
        LegacyConfig::default().response_timeout(Duration::from_millis(200)),
    ));
    c.initialize(all_caps()).await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "weather"}}),
    )
    .await;
    let asked = c.next().await;
    assert_eq!(asked["method"], "elicitation/create");
    let n = c.next().await;
    assert_eq!(n["method"], "notifications/cancelled");
    assert_eq!(n["params"]["requestId"], asked["id"]);
    assert_eq!(n["params"]["reason"], "timed out");
    let r = c.next().await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["isError"], true);
    assert!(text(&r).contains("did not answer"), "{r}");
}

#[tokio::test]
async fn a_client_error_or_a_malformed_answer_fails_the_call() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(all_caps()).await;
    let r = c
        .request(
            1,
            "tools/call",
            json!({"name": "summarize"}),
            &mut |_| json!({"code": -1, "message": "User rejected sampling request"}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true);
    assert!(text(&r).contains("User rejected sampling request"), "{r}");
    let r = c
        .request(
            2,
            "tools/call",
            json!({"name": "summarize"}),
            &mut |_| json!({"role": "assistant"}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn at_end_of_input_waiting_calls_fail_and_every_request_is_answered() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    c.initialize(all_caps()).await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "weather"}}),
    )
    .await;
    let asked = c.next().await;
    assert_eq!(asked["method"], "elicitation/create");
    let Client {
        mut w,
        mut lines,
        serve,
        ..
    } = c;
    w.shutdown().await.unwrap(); // end of input
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .expect("the call is answered");
    let r: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["isError"], true);
    tokio::time::timeout(Duration::from_secs(10), serve)
        .await
        .expect("serving ends")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_modern_only_server_names_its_versions() {
    let mut c = Client::start(server_with(LegacyConfig::disabled()));
    let r = c
        .request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x"}}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(r["error"]["data"]["requested"], "2025-11-25");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2026-07-28")
    );
    // and stays modern: a request without `_meta` is refused as before
    let r = c
        .request(1, "tools/list", json!({}), &mut no_requests)
        .await;
    assert!(r.get("error").is_some(), "{r}");
}

/// The log messages (`notifications/message`) among `seen`: (level, logger, data).
fn logs(seen: &[Value]) -> Vec<(String, Value, Value)> {
    seen.iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| {
            let p = &m["params"];
            (
                p["level"].as_str().unwrap().to_owned(),
                p["logger"].clone(),
                p["data"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn log_messages_follow_the_sessions_level() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    let r = c.initialize(all_caps()).await;
    assert!(r["result"]["capabilities"]["logging"].is_object());
    let mut answer = |m: &Value| {
        assert_eq!(m["method"], "elicitation/create");
        accept(json!({"city": "Oslo"}))
    };
    // no logging/setLevel yet: no log message at all
    let r = c
        .request(1, "tools/call", json!({"name": "chatty"}), &mut answer)
        .await;
    assert_eq!(text(&r), "Nothing for Oslo");
    assert!(logs(&c.seen).is_empty(), "{:?}", c.seen);
    // an invalid level is -32602 and changes nothing
    let r = c
        .request(
            2,
            "logging/setLevel",
            json!({"level": "verbose"}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let r = c
        .request(
            3,
            "logging/setLevel",
            json!({"level": "info"}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["result"], json!({}));
    c.seen.clear();
    let r = c
        .request(4, "tools/call", json!({"name": "chatty"}), &mut answer)
        .await;
    assert_eq!(text(&r), "Nothing for Oslo");
    // debug is below info; the others arrive in order, before the response
    assert_eq!(
        logs(&c.seen),
        [
            ("info".to_owned(), json!("weather"), json!({"city": "Oslo"})),
            ("error".to_owned(), Value::Null, json!("no forecast today")),
        ]
    );
    let r = c
        .request(
            5,
            "logging/setLevel",
            json!({"level": "emergency"}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["result"], json!({}));
    c.seen.clear();
    c.request(6, "tools/call", json!({"name": "chatty"}), &mut answer)
        .await;
    assert!(logs(&c.seen).is_empty(), "{:?}", c.seen);
}

#[tokio::test]
async fn a_modern_request_logs_at_the_level_of_its_meta() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    let mut meta = transport_support::meta();
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    // the first round logs before it suspends, on the modern request's own stream
    let r = c
        .request(
            1,
            "tools/call",
            json!({"name": "chatty", "_meta": meta}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["result"]["resultType"], "input_required");
    assert_eq!(
        logs(&c.seen),
        [("debug".to_owned(), Value::Null, json!("looking up"))]
    );
    // without a level, nothing; an invalid level is -32602
    c.seen.clear();
    let r = c
        .request(
            2,
            "tools/call",
            json!({"name": "chatty", "_meta": transport_support::meta()}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["result"]["resultType"], "input_required");
    assert!(logs(&c.seen).is_empty());
    meta["io.modelcontextprotocol/logLevel"] = json!("loud");
    let r = c
        .request(
            3,
            "tools/call",
            json!({"name": "chatty", "_meta": meta}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn initialize_with_modern_meta_is_a_removed_method_not_a_session() {
    let mut c = Client::start(server_with(LegacyConfig::default()));
    let r = c
        .request(
            1,
            "initialize",
            json!({"_meta": transport_support::meta()}),
            &mut no_requests,
        )
        .await;
    assert_eq!(r["error"]["code"], -32601);
    // the process has no session yet: a legacy initialize still opens one
    let r = c.initialize(all_caps()).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}
