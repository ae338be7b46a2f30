//! Long-lived streams (`subscriptions/listen` and a legacy session's `GET` stream) have
//! their own budget, below the connection limit: with every stream slot taken, by many
//! principals from many peer addresses, requests still find connections; streams are
//! capped per principal, per peer address and (more tightly) for anonymous callers; a
//! stream ends gracefully at its maximum lifetime; and a stream budget that is not below
//! the connection limit is refused when serving starts.
//!
//! Every client here is on loopback: attackers bind their sockets to other addresses of
//! 127.0.0.0/8 (all loopback on Linux) to be many peers.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use axum::http::request::Parts;
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::LegacyConfig;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::auth::AuthError;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::{Principal, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct City {
    /// A city.
    city: String,
}

/// Asks for a city, then answers the weather there (two rounds).
#[mcp_tool]
async fn get_weather(cx: &mut ToolContext) -> Result<String, ToolError> {
    let c: City = cx.ask("Which city?").await?;
    Ok(format!("{}: sunny", c.city))
}

fn server() -> Server {
    Server::builder(Implementation::new("stream-budget", "1.0"))
        .tool(get_weather::tool())
        .legacy(LegacyConfig::default())
        .build()
        .unwrap()
}

/// Every bearer token names its principal, and costs the caller nothing: only the
/// transport's caps stand between many names and the process.
fn by_name(parts: &Parts) -> Result<Principal, AuthError> {
    let token = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match token {
        Some(name) if !name.is_empty() => Ok(Principal::named(name)),
        _ => Err(AuthError::bearer("test", Some("invalid_token"), "no token")),
    }
}

async fn start(config: HttpConfig) -> HttpHandle {
    start_as(config.authenticator(by_name)).await
}

/// Serves with `config`'s own authenticator.
async fn start_as(config: HttpConfig) -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(addr, server(), config).await.unwrap()
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    })
}

fn listen_request(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
           "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}})
}

/// A client whose connections come from `127.0.0.{last}` (no overall timeout: its streams
/// stay open for as long as the test holds them; every wait here has its own bound).
fn client_from(last: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)))
        .connect_timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// POSTs `body` as `who`, with the headers the 2026-07-28 transport asks for.
async fn post(
    client: &reqwest::Client,
    url: &str,
    who: &str,
    body: &Value,
) -> reqwest::Result<reqwest::Response> {
    let mut r = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(who)
        .json(body);
    for (k, v) in mcp_tool_client::HttpTransport::mcp_headers(body) {
        r = r.header(k, v);
    }
    r.send().await
}

/// Reads `resp` (an SSE stream) until its text contains `what`, within 2 s.
async fn read_until(resp: &mut reqwest::Response, what: &str) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut seen = String::new();
    while !seen.contains(what) {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => seen.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(Ok(None)) => return Err(format!("the stream ended: {seen:?}")),
            Ok(Err(e)) => return Err(format!("{e}: {seen:?}")),
            Err(_) => return Err(format!("not in time: {seen:?}")),
        }
    }
    Ok(seen)
}

/// Reads `resp` to its end (within 5 s): everything it carried.
async fn read_to_end(resp: &mut reqwest::Response) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => seen.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(Ok(None)) => return seen,
            Ok(Err(e)) => panic!("the stream broke instead of ending: {e}; {seen:?}"),
            Err(_) => panic!("the stream did not end in time: {seen:?}"),
        }
    }
}

/// Opens a listen stream as `who` from `client`: the open stream (acknowledged), or what
/// refused it (the status and body, or the connection error).
async fn open_listen(
    client: &reqwest::Client,
    url: &str,
    who: &str,
    id: u64,
) -> Result<reqwest::Response, String> {
    let request = listen_request(id);
    let sent = tokio::time::timeout(Duration::from_secs(2), post(client, url, who, &request));
    let mut resp = sent
        .await
        .map_err(|_| "no answer in time".to_owned())?
        .map_err(|e| format!("connection: {e}"))?;
    if resp.status() != 200 {
        return Err(refused(resp).await);
    }
    read_until(&mut resp, "notifications/subscriptions/acknowledged").await?;
    Ok(resp)
}

/// A legitimate caller, from 127.0.0.1 on fresh connections: `server/discover`, then a
/// 2-round `get_weather` call. Each step's error says what failed.
async fn legitimate_calls(url: &str) -> Result<(), String> {
    let client = client_from(1);
    let send = |body: Value| {
        let client = client.clone();
        async move {
            let answered = async {
                let resp = post(&client, url, "alice", &body)
                    .await
                    .map_err(|e| format!("{} refused: {e}", body["method"]))?;
                let status = resp.status();
                let v: Value = resp.json().await.map_err(|e| e.to_string())?;
                Ok::<_, String>((status, v))
            };
            let (status, v) = tokio::time::timeout(Duration::from_secs(2), answered)
                .await
                .map_err(|_| format!("{}: no answer within 2 s", body["method"]))??;
            if status != 200 {
                return Err(format!("{status}: {v}"));
            }
            Ok::<Value, String>(v)
        }
    };
    let disc = send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                           "params": {"_meta": meta()}}),
    )
    .await?;
    if disc["result"]["resultType"] != "complete" {
        return Err(format!("discover: {disc}"));
    }
    let call = |extra: Value| {
        let mut params = json!({"name": "get_weather", "arguments": {}, "_meta": meta()});
        if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
            p.extend(e);
        }
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    };
    let first = send(call(json!({}))).await?;
    let Some(key) = first["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
    else {
        return Err(format!("first round: {first}"));
    };
    let state = first["result"]["requestState"].clone();
    let second = send(call(json!({"requestState": state, "inputResponses": {
        key: {"action": "accept", "content": {"city": "Nice"}}}})))
    .await?;
    if second["result"]["content"][0]["text"] != "Nice: sunny" {
        return Err(format!("second round: {second}"));
    }
    Ok(())
}

/// The attack of a hostile review: listen streams from many principals and many peer
/// addresses, until the server takes no more. Before streams had their own budget they
/// took every connection, and a legitimate `server/discover` was reset. Now they stop
/// at the stream budget (here the default: three quarters of 24 connections), and the
/// connections left over serve a legitimate caller's discover and 2-round call within 2 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_from_many_principals_and_addresses_leave_connections_for_requests() {
    let h = start(HttpConfig::default().max_connections(24)).await;
    let url = h.url();
    // 12 peer addresses, 16 principals, 48 attempts: more than every limit.
    let clients: Vec<reqwest::Client> = (0..12).map(|i| client_from(10 + i)).collect();
    let mut open = Vec::new();
    let mut refused = Vec::new();
    for i in 0..48u64 {
        let client = &clients[(i % 12) as usize];
        let who = format!("attacker-{}", i % 16);
        match open_listen(client, &url, &who, i).await {
            Ok(stream) => open.push(stream),
            Err(why) => refused.push(why),
        }
    }
    assert!(
        !refused.is_empty() && !open.is_empty(),
        "the attacker filled what it could: {} open, refused: {refused:?}",
        open.len()
    );
    // The streams are still open, and new ones are still refused.
    let again = open_listen(&clients[0], &url, "attacker-99", 99).await;
    assert!(again.is_err(), "one more stream was refused");

    let t = Instant::now();
    let served = legitimate_calls(&url).await;
    let took = t.elapsed();
    assert!(
        served.is_ok(),
        "a legitimate caller was not served while {} streams were open: {served:?}",
        open.len()
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // the default budget of 24 connections: 18 streams, 6 connections for requests
    assert_eq!(open.len(), 18, "refused: {refused:?}");
    drop(open);
}

/// A legacy request as `who`.
fn legacy(r: reqwest::RequestBuilder, who: &str) -> reqwest::RequestBuilder {
    r.header("accept", "application/json, text/event-stream")
        .bearer_auth(who)
}

/// Opens a legacy session (with form elicitation) as `who` from `client`: its id.
async fn legacy_session(client: &reqwest::Client, url: &str, who: &str) -> Result<String, String> {
    let legacy = |r| legacy(r, who);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "stream-budget", "version": "1"}}});
    let resp = legacy(client.post(url).json(&init))
        .send()
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    if resp.status() != 200 {
        return Err(format!("initialize: {}", resp.status()));
    }
    let session = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(resp.bytes().await);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let sent = legacy(client.post(url).json(&note))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .map_err(|e| format!("initialized: {e}"))?;
    assert_eq!(sent.status(), 202);
    drop(sent.bytes().await);
    Ok(session)
}

/// Opens a legacy session as `who` from `client`, then its standalone `GET` stream: the
/// open stream, or what refused it.
async fn open_get(
    client: &reqwest::Client,
    url: &str,
    who: &str,
) -> Result<reqwest::Response, String> {
    let session = legacy_session(client, url, who).await?;
    let get = legacy(client.get(url), who)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25");
    let resp = tokio::time::timeout(Duration::from_secs(2), get.send())
        .await
        .map_err(|_| "GET: no answer in time".to_owned())?
        .map_err(|e| format!("GET: {e}"))?;
    if resp.status() != 200 {
        return Err(refused(resp).await);
    }
    Ok(resp)
}

/// A refusal as `"{status} {retry-after=…} {body}"`.
async fn refused(resp: reqwest::Response) -> String {
    let status = resp.status().as_u16();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| format!("retry-after={}", v.to_str().unwrap_or("?")))
        .unwrap_or_default();
    let body = resp.text().await.unwrap_or_default();
    format!("{status} {retry} {body}")
}

/// A listen as `who` over a raw connection from 127.0.0.23: everything the server sent
/// before it closed the connection (within 2 s).
async fn raw_listen(addr: SocketAddr, who: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 23)), 0))
        .unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    let body = listen_request(9).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {who}\r\n\
         Mcp-Protocol-Version: {VERSION}\r\nMcp-Method: subscriptions/listen\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut got))
        .await
        .expect("the server closes the connection")
        .unwrap();
    String::from_utf8_lossy(&got).into_owned()
}

/// Retries `open` (20 times, 50 ms apart) while it is refused: a slot is given back once
/// the server has dropped the stream, a moment after its client saw it end.
async fn reopened<F, Fut>(mut open: F) -> reqwest::Response
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<reqwest::Response, String>>,
{
    let mut last = String::new();
    for _ in 0..20 {
        match open().await {
            Ok(r) => return r,
            Err(why) => last = why,
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("still refused after 1 s: {last}");
}

/// Listens and legacy `GET` streams take from one budget, capped per principal (`429`),
/// per peer address (`429`) and in all (`503` with `Retry-After: 1`), each refusal closing
/// its connection; a legitimate caller is served meanwhile, and a slot given back is
/// taken again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listens_and_get_streams_share_one_budget_with_caps_per_principal_and_address() {
    let h = start(
        HttpConfig::default()
            .max_connections(16)
            .max_streams(6)
            .max_streams_per_principal(2)
            .max_streams_per_address(3),
    )
    .await;
    let url = h.url();
    let (a, b, c) = (client_from(20), client_from(21), client_from(22));
    let l1 = open_listen(&a, &url, "p1", 1).await.unwrap();
    let _l2 = open_listen(&a, &url, "p1", 2).await.unwrap();
    let why = open_listen(&a, &url, "p1", 3).await.unwrap_err();
    assert!(why.starts_with("429  "), "per principal: {why}");
    assert!(why.contains("this caller"), "{why}");
    let _g1 = open_get(&a, &url, "p2").await.unwrap();
    let why = open_listen(&a, &url, "p3", 4).await.unwrap_err();
    assert!(why.starts_with("429  "), "per address: {why}");
    assert!(why.contains("this address"), "{why}");
    let why = open_get(&a, &url, "p3").await.unwrap_err();
    assert!(why.starts_with("429  "), "a GET per address: {why}");
    let _g2 = open_get(&b, &url, "p3").await.unwrap();
    let _l3 = open_listen(&b, &url, "p4", 5).await.unwrap();
    let _l4 = open_listen(&b, &url, "p5", 6).await.unwrap();
    let why = open_get(&c, &url, "p6").await.unwrap_err();
    assert!(why.starts_with("503 retry-after=1 "), "in all: {why}");
    let why = open_listen(&c, &url, "p6", 7).await.unwrap_err();
    assert!(why.starts_with("503 retry-after=1 "), "in all: {why}");
    assert!(why.contains("\"id\":7") && why.contains("-32000"), "{why}");

    // on the wire: the refusal closes its connection
    let raw = raw_listen(h.local_addr(), "p7").await;
    assert!(raw.starts_with("HTTP/1.1 503"), "{raw}");
    assert!(
        raw.to_ascii_lowercase().contains("connection: close"),
        "{raw}"
    );

    let t = Instant::now();
    legitimate_calls(&url).await.unwrap();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    drop(l1);
    let _g3 = reopened(|| open_get(&c, &url, "p6")).await;
}

/// Anonymous callers are held more tightly, all together and per address; so is every
/// caller when the authenticator admits anyone (`BearerDemoAuth`: a name costs nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_streams_are_capped_together_and_per_address() {
    let tight = || {
        HttpConfig::default()
            .max_anonymous_streams(3)
            .max_anonymous_streams_per_address(2)
    };
    for demo in [false, true] {
        let config = if demo {
            tight().authenticator(mcp_tool_runtime::transport::auth::BearerDemoAuth::new())
        } else {
            tight()
        };
        let h = start_as(config).await;
        let url = h.url();
        let (a, b) = (client_from(30), client_from(31));
        let _s1 = open_listen(&a, &url, "x1", 1).await.unwrap();
        let _s2 = open_listen(&a, &url, "x2", 2).await.unwrap();
        let why = open_listen(&a, &url, "x3", 3).await.unwrap_err();
        assert!(why.starts_with("429  "), "per address ({demo}): {why}");
        assert!(why.contains("anonymous"), "{why}");
        let _s3 = open_listen(&b, &url, "x4", 4).await.unwrap();
        let why = open_listen(&b, &url, "x5", 5).await.unwrap_err();
        assert!(why.starts_with("429  "), "together ({demo}): {why}");
        legitimate_calls(&url).await.unwrap();
    }
}

/// A stream ends gracefully at its maximum lifetime: a listen stream with its
/// `subscriptions/listen` result (and the client listens again), a legacy `GET` stream by
/// ending; each gives its slot back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ends_gracefully_at_its_maximum_lifetime() {
    let lifetime = Duration::from_millis(400);
    let h = start(
        HttpConfig::default()
            .max_connections(8)
            .max_streams(1)
            .max_stream_lifetime(lifetime)
            .listen_keep_alive(Duration::from_millis(100)),
    )
    .await;
    let url = h.url();
    let a = client_from(40);
    let t = Instant::now();
    let mut listen = open_listen(&a, &url, "p1", 7).await.unwrap();
    let rest = read_to_end(&mut listen).await;
    let took = t.elapsed();
    assert!(took >= lifetime, "{took:?}");
    assert!(took < lifetime * 5, "{took:?}");
    let last = rest
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("event: message\ndata: "))
        .last()
        .expect("the result as the last event");
    let last: Value = serde_json::from_str(last).unwrap();
    assert_eq!(last["id"], 7, "{last}");
    assert_eq!(last["result"]["resultType"], "complete", "{last}");
    assert!(
        rest.contains(":\n\n"),
        "keep-alives before the end: {rest:?}"
    );

    // the slot is free again: a legacy GET stream, which also ends at its lifetime
    let t = Instant::now();
    let mut get = reopened(|| open_get(&a, &url, "p2")).await;
    let _ = read_to_end(&mut get).await;
    assert!(t.elapsed() >= lifetime, "{:?}", t.elapsed());
    // and a listen again
    let _again = reopened(|| open_listen(&a, &url, "p1", 8)).await;
}

/// A stream budget that is not below the connection limit is refused before anything is
/// bound, saying why.
#[tokio::test]
async fn a_stream_budget_not_below_the_connection_limit_is_refused() {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let config = HttpConfig::default().max_connections(8).max_streams(8);
    let e = http::spawn(addr, server(), config.clone())
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        e.to_string()
            .contains("max_streams (8) must be below max_connections (8)"),
        "{e}"
    );
    let e = http::serve(addr, server(), config)
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let ok = http::spawn(
        addr,
        server(),
        HttpConfig::default().max_connections(8).max_streams(7),
    )
    .await;
    assert!(ok.is_ok());
}

/// A legacy `get_weather` call on an SSE stream, as `who` in a new session from `client`,
/// read until it waits on a person (its `elicitation/create`): the open stream, or what
/// refused it.
async fn open_waiting_call(
    client: &reqwest::Client,
    url: &str,
    who: &str,
) -> Result<reqwest::Response, String> {
    let session = legacy_session(client, url, who).await?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "get_weather"}});
    let post = legacy(client.post(url).json(&call), who)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25");
    let mut resp = tokio::time::timeout(Duration::from_secs(2), post.send())
        .await
        .map_err(|_| "call: no answer in time".to_owned())?
        .map_err(|e| format!("call: {e}"))?;
    if resp.status() != 200 {
        return Err(refused(resp).await);
    }
    read_until(&mut resp, "elicitation/create").await?;
    Ok(resp)
}

/// A legacy call waiting on a person holds its SSE stream for as long as the person takes:
/// it takes from the same stream budget as listens and `GET` streams.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_calls_waiting_on_a_person_take_from_the_stream_budget() {
    let h = start(HttpConfig::default().max_connections(8).max_streams(2)).await;
    let url = h.url();
    let a = client_from(50);
    let waiting = open_waiting_call(&a, &url, "p1").await.unwrap();
    let _listen = open_listen(&a, &url, "p2", 1).await.unwrap();
    let why = open_waiting_call(&a, &url, "p3").await.unwrap_err();
    assert!(why.starts_with("503 retry-after=1 "), "{why}");
    assert!(why.contains("\"id\":1"), "{why}");
    let why = open_get(&a, &url, "p3").await.unwrap_err();
    assert!(why.starts_with("503 retry-after=1 "), "{why}");
    legitimate_calls(&url).await.unwrap();
    drop(waiting);
    let _next = reopened(|| open_waiting_call(&a, &url, "p3")).await;
}
