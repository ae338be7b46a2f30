//! `subscriptions/listen` end to end over the real transports: Streamable HTTP (the
//! client's `HttpTransport` and `Driver::listen`, and raw requests where the HTTP status or
//! the bytes on the wire are the point) and stdio (the serve loop over pipes).
//!
//! What is proved: the acknowledgement comes first and names the agreed subset; every
//! message carries the subscription id; nothing the client did not ask for arrives; two
//! subscriptions are kept apart; a client that closes its stream frees its subscription; a
//! graceful shutdown ends each stream with the `subscriptions/listen` result; keep-alive
//! comments flow on a quiet stream; `notifications/cancelled` ends a stdio subscription and
//! end of input ends the others gracefully; a subscription that lags is ended (HTTP: the
//! stream closes without a result; stdio: the server's `notifications/cancelled`); the caps
//! refuse busy while a legitimate request is still served; `taskIds` needs the Tasks
//! extension (-32021) and agrees only to the caller's own tasks, whose status changes
//! arrive as `notifications/tasks`; `cx.resource_updated` reaches the listeners of that
//! URI only, and only URIs the caller may read are agreed.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::http::request::Parts;
use mcp_tool_client::{
    ClientTransport, Driver, HttpTransport, Listening, ScriptedHost, TransportError,
};
use mcp_tool_runtime::protocol::{ClientCapabilities, Implementation};
use mcp_tool_runtime::server::{ListenLimits, Server};
use mcp_tool_runtime::store::{Change, HUB_CAPACITY};
use mcp_tool_runtime::transport::auth::AuthError;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};
use mcp_tool_runtime::{Principal, ToolContext, ToolError, mcp_prompt, mcp_resource, mcp_tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const VERSION: &str = "2026-07-28";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// Marks note `id` changed.
#[mcp_tool]
async fn touch_note(cx: &mut ToolContext, args: Value) -> Result<String, ToolError> {
    let id = args.get("id").and_then(Value::as_str).unwrap_or("0");
    cx.resource_updated(format!("notes://notes/{id}"));
    Ok(format!("touched {id}"))
}

/// Finishes after a short while (a task when the client allows it).
#[mcp_tool(task = "optional")]
async fn short_job(_cx: &mut ToolContext) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(150)).await;
    Ok("done".into())
}

/// A greeting.
#[mcp_prompt]
async fn hello(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("Hello.".into())
}

/// The variables of a note's URI.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteVars {
    id: String,
}

/// A note.
#[mcp_resource(template = "notes://notes/{id}", mime_type = "text/plain")]
async fn note(_cx: &mut ToolContext, vars: NoteVars) -> Result<String, ToolError> {
    Ok(format!("note {}", vars.id))
}

/// A resource only `vault:read` may read.
#[mcp_resource(uri = "test://vault", scopes = "vault:read")]
async fn vault(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("gold".into())
}

fn builder() -> mcp_tool_runtime::ServerBuilder {
    Server::builder(Implementation::new("listen", "1.0"))
        .tool(touch_note::tool())
        .tool(short_job::tool())
        .prompt(hello::prompt())
        .resource(note::resource())
        .resource(vault::resource())
}

/// Bearer tokens name principals: `alice` may read the vault, the others may not.
fn authenticate(parts: &Parts) -> Result<Principal, AuthError> {
    let token = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match token {
        Some("alice") => Ok(Principal::issued("https://idp", "alice").with_scopes(["vault:read"])),
        Some(who @ ("bob" | "carol")) => Ok(Principal::issued("https://idp", who)),
        _ => Err(AuthError::bearer("test", Some("invalid_token"), "no token")),
    }
}

async fn start_with(server: Server, config: HttpConfig) -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(addr, server, config.authenticator(authenticate))
        .await
        .unwrap()
}

async fn start(server: Server) -> HttpHandle {
    start_with(server, HttpConfig::default()).await
}

fn caps(tasks: bool) -> Value {
    if tasks {
        json!({"extensions": {TASKS: {}}})
    } else {
        json!({})
    }
}

fn meta(tasks: bool) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps(tasks),
    })
}

fn driver(url: &str, who: &str, tasks: bool) -> Driver<HttpTransport, ScriptedHost> {
    let capabilities: ClientCapabilities = serde_json::from_value(caps(tasks)).unwrap();
    Driver::new(
        HttpTransport::new(url).bearer(who),
        ScriptedHost::new(capabilities),
    )
}

fn listen_request(id: Value, filter: Value, tasks: bool) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
           "params": {"_meta": meta(tasks), "notifications": filter}})
}

/// The next message within 5 s (`None`: the stream ended).
async fn next(l: &mut Listening) -> Option<Value> {
    tokio::time::timeout(Duration::from_secs(5), l.next())
        .await
        .expect("a message or the end within 5 s")
        .map(|m| m.expect("no transport error"))
}

/// Asserts that nothing arrives within `ms`.
async fn quiet(l: &mut Listening, ms: u64) {
    if let Ok(m) = tokio::time::timeout(Duration::from_millis(ms), l.next()).await {
        panic!("expected nothing, got {m:?}");
    }
}

/// Opens a subscription with the driver; its acknowledged filter and the stream (ack
/// taken).
async fn open(
    d: &mut Driver<HttpTransport, ScriptedHost>,
    filter: Value,
) -> (Value, Value, Listening) {
    let mut l = d.listen(filter).await.expect("listen");
    let ack = next(&mut l).await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let id = ack["params"]["_meta"][SUB].clone();
    assert!(id.is_number(), "{ack}");
    (id, ack["params"]["notifications"].clone(), l)
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn raw_post(url: &str, who: &str, body: &Value) -> (u16, reqwest::Response) {
    let resp = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {who}"))
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", body["method"].as_str().unwrap_or(""))
        .json(body)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp)
}

#[tokio::test]
async fn http_ack_first_filter_honoured_and_two_subscriptions_kept_apart() {
    let server = builder().build().unwrap();
    let h = start(server.clone()).await;
    let mut d = driver(&h.url(), "alice", false);
    let (id_a, agreed_a, mut a) = open(
        &mut d,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["notes://notes/1"], "unknownField": 5}),
    )
    .await;
    let (id_b, agreed_b, mut b) = open(
        &mut d,
        json!({"promptsListChanged": true, "resourceSubscriptions": ["notes://notes/2", "nope://x", "test://vault"]}),
    )
    .await;
    assert_ne!(id_a, id_b);
    assert_eq!(
        agreed_a,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["notes://notes/1"]})
    );
    // An unknown URI is not agreed; alice may read the vault.
    assert_eq!(
        agreed_b,
        json!({"promptsListChanged": true, "resourceSubscriptions": ["notes://notes/2", "test://vault"]})
    );
    assert_eq!(server.open_subscriptions(), 2);

    // A tool's cx.resource_updated reaches the listener of that URI only.
    d.call_tool("touch_note", json!({"id": "2"})).await.unwrap();
    d.call_tool("touch_note", json!({"id": "1"})).await.unwrap();
    let got = next(&mut a).await.unwrap();
    assert_eq!(got["method"], "notifications/resources/updated");
    assert_eq!(got["params"]["uri"], "notes://notes/1");
    assert_eq!(got["params"]["_meta"][SUB], id_a);
    let got = next(&mut b).await.unwrap();
    assert_eq!(got["params"]["uri"], "notes://notes/2");
    assert_eq!(got["params"]["_meta"][SUB], id_b);

    // List changes: each to the subscription that asked; a change nobody asked for
    // (resources list) reaches no one. Order per subscription proves what was skipped.
    server.changes().publish(Change::ResourcesListChanged);
    server.changes().publish(Change::PromptsListChanged);
    server.changes().publish(Change::ToolsListChanged);
    let got = next(&mut a).await.unwrap();
    assert_eq!(got["method"], "notifications/tools/list_changed");
    assert_eq!(got["params"]["_meta"][SUB], id_a);
    let got = next(&mut b).await.unwrap();
    assert_eq!(got["method"], "notifications/prompts/list_changed");
    assert_eq!(got["params"]["_meta"][SUB], id_b);
    quiet(&mut a, 200).await;
    quiet(&mut b, 50).await;
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn http_scopes_decide_which_uris_are_agreed() {
    let h = start(builder().build().unwrap()).await;
    let mut bob = driver(&h.url(), "bob", false);
    let (_, agreed, _l) = open(
        &mut bob,
        json!({"resourceSubscriptions": ["test://vault", "notes://notes/9"]}),
    )
    .await;
    assert_eq!(
        agreed,
        json!({"resourceSubscriptions": ["notes://notes/9"]}),
        "bob may not read the vault"
    );
}

#[tokio::test]
async fn http_stream_headers_and_keep_alive_comments() {
    let server = builder().build().unwrap();
    let h = start_with(
        server,
        HttpConfig::default().listen_keep_alive(Duration::from_millis(50)),
    )
    .await;
    let body = listen_request(json!("s-1"), json!({"toolsListChanged": true}), false);
    let (status, mut resp) = raw_post(&h.url(), "alice", &body).await;
    assert_eq!(status, 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["x-accel-buffering"], "no");
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while seen.matches(":\n\n").count() < 3 {
        assert!(Instant::now() < deadline, "no keep-alives: {seen:?}");
        let chunk = tokio::time::timeout(Duration::from_secs(5), resp.chunk())
            .await
            .unwrap()
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let first = seen.find("data: ").expect("an event");
    let ack: Value =
        serde_json::from_str(seen[first + 6..].lines().next().unwrap()).expect("json event");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB], "s-1");
    assert!(
        seen.find(":\n\n").unwrap() > first,
        "the acknowledgement comes first"
    );
}

#[tokio::test]
async fn http_client_close_drops_the_subscription() {
    let server = builder().build().unwrap();
    let h = start(server.clone()).await;
    let mut d = driver(&h.url(), "alice", false);
    let mut streams = Vec::new();
    for _ in 0..5 {
        streams.push(open(&mut d, json!({"toolsListChanged": true})).await.2);
    }
    assert_eq!(server.open_subscriptions(), 5);
    let listeners_before = server.changes().listeners();
    streams.truncate(2);
    wait_until("three subscriptions are dropped", || {
        server.open_subscriptions() == 2
    })
    .await;
    assert_eq!(server.changes().listeners(), listeners_before - 3);
    drop(streams);
    wait_until("all are dropped", || server.open_subscriptions() == 0).await;
    assert_eq!(server.changes().listeners(), 0, "no receiver leaked");
}

#[tokio::test]
async fn http_graceful_shutdown_ends_each_stream_with_its_result() {
    let server = builder().build().unwrap();
    let h = start(server.clone()).await;
    let mut d = driver(&h.url(), "alice", false);
    let (id, _, mut l) = open(&mut d, json!({"toolsListChanged": true})).await;
    let shutdown = tokio::spawn(h.shutdown());
    let last = next(&mut l).await.expect("the result");
    assert_eq!(last["id"], id);
    assert_eq!(
        last["result"],
        json!({"resultType": "complete", "_meta": {SUB: id}})
    );
    assert!(next(&mut l).await.is_none(), "then the stream ends");
    tokio::time::timeout(Duration::from_secs(5), shutdown)
        .await
        .expect("shutdown finishes")
        .unwrap()
        .unwrap();
    assert_eq!(server.open_subscriptions(), 0);
}

#[tokio::test]
async fn http_a_lagging_subscription_is_ended_without_a_result() {
    let server = builder().build().unwrap();
    let h = start(server.clone()).await;
    let mut d = driver(&h.url(), "alice", false);
    let (_, _, mut l) = open(&mut d, json!({"toolsListChanged": true})).await;
    // More changes than the hub holds, raised at once (nothing else runs meanwhile on this
    // single-threaded runtime): the subscription has lost changes.
    for _ in 0..HUB_CAPACITY + 10 {
        server.changes().publish(Change::ToolsListChanged);
    }
    let mut delivered = 0;
    while let Some(m) = next(&mut l).await {
        assert!(m.get("id").is_none(), "no result after a lag: {m}");
        delivered += 1;
    }
    assert!(delivered < HUB_CAPACITY + 10, "{delivered}");
    wait_until("the subscription is gone", || {
        server.open_subscriptions() == 0
    })
    .await;
    // The client lists and listens again.
    let (_, _, mut again) = open(&mut d, json!({"toolsListChanged": true})).await;
    server.changes().publish(Change::ToolsListChanged);
    assert_eq!(
        next(&mut again).await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
}

#[tokio::test]
async fn http_caps_refuse_busy_while_calls_are_still_served() {
    let server = builder()
        .listen_limits(ListenLimits {
            max_open: 3,
            max_per_principal: 2,
        })
        .build()
        .unwrap();
    // Two request permits only: open listen streams must not hold them.
    let h = start_with(
        server.clone(),
        HttpConfig::default().max_concurrent_requests(2),
    )
    .await;
    let url = h.url();
    let mut alice = driver(&url, "alice", false);
    let mut bob = driver(&url, "bob", false);
    let _a1 = open(&mut alice, json!({"toolsListChanged": true})).await;
    let _a2 = open(&mut alice, json!({"toolsListChanged": true})).await;
    // Alice's third: her cap.
    let body = listen_request(json!(3), json!({"toolsListChanged": true}), false);
    let (status, resp) = raw_post(&url, "alice", &body).await;
    assert_eq!(status, 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    let err: Value = resp.json().await.unwrap();
    assert_eq!(err["error"]["code"], -32000, "{err}");
    assert_eq!(err["id"], 3);
    let _b1 = open(&mut bob, json!({"toolsListChanged": true})).await;
    // Carol's first: the process cap.
    let (status, _) = raw_post(&url, "carol", &body).await;
    assert_eq!(status, 503);
    let mut carol = driver(&url, "carol", false);
    let err = carol.listen(json!({"toolsListChanged": true})).await;
    assert_eq!(err.unwrap_err().rpc_code(), Some(-32000));
    assert_eq!(server.open_subscriptions(), 3);
    // Three streams open, two permits: calls still go through, several at once.
    let calls = (0..4).map(|i| {
        let url = url.clone();
        async move {
            let mut c = driver(&url, "carol", false);
            c.call_tool("touch_note", json!({"id": i.to_string()}))
                .await
                .map(|o| o.text())
        }
    });
    for r in futures_join(calls).await {
        assert!(r.unwrap().starts_with("touched"));
    }
}

/// Runs the futures one after another (the point is that each is served, not timing).
async fn futures_join<F: std::future::Future>(fs: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut out = Vec::new();
    for f in fs {
        out.push(f.await);
    }
    out
}

#[tokio::test]
async fn http_filter_of_the_wrong_shape_is_invalid_params() {
    let h = start(builder().build().unwrap()).await;
    for filter in [
        json!({"toolsListChanged": "yes"}),
        json!({"resourceSubscriptions": "notes://notes/1"}),
        json!({"resourceSubscriptions": [1]}),
        json!({"taskIds": [true]}),
        json!([]),
        json!({"resourceSubscriptions": vec!["notes://notes/1"; 101]}),
    ] {
        let body = listen_request(json!(9), filter.clone(), true);
        let (status, resp) = raw_post(&h.url(), "alice", &body).await;
        let err: Value = resp.json().await.unwrap();
        assert_eq!(
            (status, err["error"]["code"].as_i64()),
            (400, Some(-32602)),
            "{filter}"
        );
    }
    // Missing `_meta` too, like every request.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                      "params": {"notifications": {}}});
    let (status, _) = raw_post(&h.url(), "alice", &body).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn http_task_ids_need_the_extension_and_only_own_tasks_are_heard() {
    let server = builder().build().unwrap();
    let h = start(server.clone()).await;
    let url = h.url();
    // Without the Tasks extension declared on the listen request: -32021 naming it.
    let body = listen_request(json!(1), json!({"taskIds": ["x"]}), false);
    let (status, resp) = raw_post(&url, "alice", &body).await;
    let err: Value = resp.json().await.unwrap();
    assert_eq!(status, 400);
    assert_eq!(err["error"]["code"], -32021);
    assert_eq!(
        err["error"]["data"]["requiredCapabilities"],
        json!({"extensions": {TASKS: {}}})
    );

    // Bob's task; then Alice's.
    let mut bob = driver(&url, "bob", true);
    let created = bob
        .request("tools/call", json!({"name": "short_job", "arguments": {}}))
        .await
        .unwrap();
    let bobs = created["taskId"].as_str().unwrap().to_owned();
    let mut alice = driver(&url, "alice", true);
    let mut l = {
        // Alice listens before her task exists (so she hears it go from working to done):
        // first she asks for Bob's, which is not agreed.
        let (_, agreed, _l) = open(&mut alice, json!({"taskIds": [bobs.clone()]})).await;
        assert_eq!(agreed, json!({"taskIds": []}), "another principal's task");
        let created = alice
            .request("tools/call", json!({"name": "short_job", "arguments": {}}))
            .await
            .unwrap();
        assert_eq!(created["resultType"], "task");
        let mine = created["taskId"].as_str().unwrap().to_owned();
        let (_, agreed, l) =
            open(&mut alice, json!({"taskIds": [mine.clone(), bobs.clone()]})).await;
        assert_eq!(agreed, json!({"taskIds": [mine]}));
        l
    };
    let done = next(&mut l).await.expect("a task notification");
    assert_eq!(done["method"], "notifications/tasks", "{done}");
    assert_eq!(done["params"]["status"], "completed", "{done}");
    assert_eq!(
        done["params"]["result"]["content"][0]["text"], "done",
        "the DetailedTask, result inlined: {done}"
    );
    assert!(done["params"]["_meta"][SUB].is_number());
    assert!(done["params"].get("resultType").is_none());
    // Bob's task finishing told Alice nothing.
    quiet(&mut l, 300).await;
}

// ---- stdio ----

/// A stdio serve loop over pipes: the line writer, the line reader, the task.
struct Stdio {
    w: tokio::io::DuplexStream,
    r: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Stdio {
    fn start(server: &Server) -> Self {
        let (client_out, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, client_in) = tokio::io::duplex(1 << 20);
        let task = tokio::spawn(stdio::serve(
            server.clone(),
            BufReader::new(server_in),
            server_out,
            StdioConfig::default(),
        ));
        Stdio {
            w: client_out,
            r: BufReader::new(client_in).lines(),
            task,
        }
    }

    async fn send(&mut self, v: Value) {
        let line = format!("{}\n", serde_json::to_string(&v).unwrap());
        self.w.write_all(line.as_bytes()).await.unwrap();
    }

    async fn line(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(Duration::from_secs(5), self.r.next_line())
            .await
            .expect("a line within 5 s")
            .unwrap()?;
        Some(serde_json::from_str(&line).unwrap())
    }
}

#[tokio::test]
async fn stdio_listens_run_beside_calls_end_on_cancel_and_gracefully_at_end_of_input() {
    let server = builder().build().unwrap();
    let mut io = Stdio::start(&server);
    io.send(listen_request(
        json!(7),
        json!({"toolsListChanged": true}),
        false,
    ))
    .await;
    io.send(listen_request(
        json!(8),
        json!({"promptsListChanged": true}),
        false,
    ))
    .await;
    let mut acks = Vec::new();
    for _ in 0..2 {
        let ack = io.line().await.unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        acks.push(ack["params"]["_meta"][SUB].as_i64().unwrap());
    }
    acks.sort_unstable();
    assert_eq!(acks, [7, 8]);
    // A call on the same channel is answered while both are open.
    io.send(json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                   "params": {"name": "touch_note", "arguments": {"id": "1"}, "_meta": meta(false)}}))
        .await;
    let answer = io.line().await.unwrap();
    assert_eq!(answer["id"], 20);
    assert_eq!(answer["result"]["content"][0]["text"], "touched 1");

    server.changes().publish(Change::ToolsListChanged);
    let n = io.line().await.unwrap();
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(n["params"]["_meta"][SUB], 7);

    // The client ends 7; a later tools change reaches no one, a prompts change reaches 8.
    io.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    )
    .await;
    wait_until("7 is dropped", || server.open_subscriptions() == 1).await;
    server.changes().publish(Change::ToolsListChanged);
    server.changes().publish(Change::PromptsListChanged);
    let n = io.line().await.unwrap();
    assert_eq!(n["method"], "notifications/prompts/list_changed");
    assert_eq!(n["params"]["_meta"][SUB], 8);

    // End of input: 8 gets its result, then the server ends.
    io.w.shutdown().await.unwrap();
    let last = io.line().await.unwrap();
    assert_eq!(
        last,
        json!({"jsonrpc": "2.0", "id": 8, "result": {"resultType": "complete", "_meta": {SUB: 8}}})
    );
    assert!(io.line().await.is_none());
    io.task.await.unwrap().unwrap();
    assert_eq!(server.open_subscriptions(), 0);
}

#[tokio::test]
async fn stdio_a_lagging_subscription_is_cancelled_by_the_server() {
    let server = builder().build().unwrap();
    let mut io = Stdio::start(&server);
    io.send(listen_request(
        json!("L"),
        json!({"toolsListChanged": true}),
        false,
    ))
    .await;
    let ack = io.line().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    for _ in 0..HUB_CAPACITY + 10 {
        server.changes().publish(Change::ToolsListChanged);
    }
    let n = io.line().await.unwrap();
    assert_eq!(n["method"], "notifications/cancelled", "{n}");
    assert_eq!(n["params"]["requestId"], "L");
    wait_until("the subscription is gone", || {
        server.open_subscriptions() == 0
    })
    .await;
    io.w.shutdown().await.unwrap();
    assert!(
        io.line().await.is_none(),
        "no result for an ended subscription"
    );
}

#[tokio::test]
async fn stdio_refusals_are_answered_on_the_channel() {
    let server = builder().build().unwrap();
    let mut io = Stdio::start(&server);
    io.send(listen_request(json!(1), json!({"taskIds": []}), false))
        .await;
    let err = io.line().await.unwrap();
    assert_eq!(err["id"], 1);
    assert_eq!(err["error"]["code"], -32021);
    io.send(listen_request(
        json!(2),
        json!({"toolsListChanged": 1}),
        false,
    ))
    .await;
    let err = io.line().await.unwrap();
    assert_eq!(err["error"]["code"], -32602);
    assert_eq!(server.open_subscriptions(), 0);
}

#[tokio::test]
async fn in_process_transport_listens_too() {
    let server = builder().build().unwrap();
    let t = mcp_tool_client::InProcessTransport::new(server.clone())
        .with_principal(Principal::named("dana"));
    let mut l = t
        .listen(listen_request(
            json!(4),
            json!({"resourcesListChanged": true}),
            false,
        ))
        .await
        .unwrap();
    assert_eq!(
        next(&mut l).await.unwrap()["params"]["notifications"],
        json!({"resourcesListChanged": true})
    );
    server.changes().publish(Change::ResourcesListChanged);
    assert_eq!(
        next(&mut l).await.unwrap()["method"],
        "notifications/resources/list_changed"
    );
    drop(l);
    wait_until("dropped", || server.open_subscriptions() == 0).await;
    // A transport that cannot stream says so.
    struct OneShot;
    impl ClientTransport for OneShot {
        fn send<'a>(
            &'a self,
            _: Value,
        ) -> mcp_tool_runtime::manual::BoxFuture<'a, Result<Option<Value>, TransportError>>
        {
            Box::pin(async { Ok(None) })
        }
    }
    assert!(matches!(
        OneShot.listen(json!({})).await,
        Err(TransportError::Config(_))
    ));
}
