//! What a legacy (2025-11-25) session hears of the server's changes: `resources/subscribe`
//! and `resources/unsubscribe`, `notifications/resources/updated` and
//! `notifications/*/list_changed` on the standalone `GET` stream (one per session) or as
//! stdout lines on stdio — and what a client can make a session hold (subscriptions, the
//! stream's buffer) bounded, with legitimate requests served meanwhile.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_tool_runtime::State;
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::LegacyConfig;
use mcp_tool_runtime::server::{Server, WeakRegistry};
use mcp_tool_runtime::store::Change;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};
use mcp_tool_runtime::{ToolContext, ToolError, mcp_resource, mcp_tool};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const WATCHED: &str = "mem://watched";

/// A resource to watch.
#[mcp_resource(uri = "mem://watched", name = "watched")]
async fn watched(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("content".into())
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Id {
    id: String,
}

/// Many resources, by id.
#[mcp_resource(template = "mem://t/{id}", name = "by-id")]
async fn by_id(_cx: &mut ToolContext, v: Id) -> Result<String, ToolError> {
    Ok(v.id)
}

/// Changes the watched resource (raises its update on the hub).
#[mcp_tool]
async fn touch(_cx: &mut ToolContext, r: State<WeakRegistry>) -> Result<String, ToolError> {
    let r = r.upgrade().ok_or_else(|| ToolError::internal("gone"))?;
    r.changes().publish(Change::ResourceUpdated {
        uri: WATCHED.into(),
    });
    Ok("touched".into())
}

/// A tool added at run time.
#[mcp_tool]
async fn extra(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("extra".into())
}

const MAX_SUBS: usize = 3;

fn server() -> Server {
    Server::builder(Implementation::new("notify", "1"))
        .dynamic(true)
        .tool(touch::tool())
        .resource(watched::resource())
        .resource(by_id::resource())
        .legacy(LegacyConfig::default().max_subscriptions_per_session(MAX_SUBS))
        .build()
        .unwrap()
}

async fn start(server: Server, config: HttpConfig) -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(addr, server, config).await.unwrap()
}

/// A legacy client over HTTP (JSON answers; the GET stream for notifications).
struct Client {
    http: reqwest::Client,
    url: String,
    session: String,
    next: i64,
}

impl Client {
    async fn open(url: String) -> (Self, Value) {
        let http = reqwest::Client::new();
        let resp = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "notify-test", "version": "1"}}}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let session = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let init: Value = resp.json().await.unwrap();
        let c = Client {
            http,
            url,
            session,
            next: 1,
        };
        let r = c
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        (c, init)
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("accept", "application/json")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-11-25")
            .json(body)
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let resp = self.post(&body).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        resp.json().await.unwrap()
    }

    async fn get(&self) -> reqwest::Response {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap()
    }
}

/// The messages of an SSE stream, one at a time (comment lines skipped).
struct Events {
    resp: reqwest::Response,
    buf: String,
}

impl Events {
    fn new(resp: reqwest::Response) -> Self {
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        Events {
            resp,
            buf: String::new(),
        }
    }

    /// The next message; `None` when the stream ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return Some(serde_json::from_str(data).unwrap());
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.resp.chunk())
                .await
                .expect("an event in time")
                .ok()??;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

#[tokio::test]
async fn a_subscribed_session_hears_updates_on_its_get_stream_until_it_unsubscribes() {
    let server = server();
    let registry = server.registry().unwrap();
    let handle = start(server, HttpConfig::default()).await;
    let (mut c, init) = Client::open(handle.url()).await;
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["resources"]["subscribe"], true, "{init}");
    assert_eq!(caps["resources"]["listChanged"], true, "{init}");
    assert_eq!(caps["tools"]["listChanged"], true, "{init}");

    let mut events = Events::new(c.get().await);
    let r = c
        .request("resources/subscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    let r = c
        .request("tools/call", json!({"name": "touch", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "touched", "{r}");
    let n = events.next().await.unwrap();
    assert_eq!(
        n,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": WATCHED}})
    );

    let r = c
        .request("resources/unsubscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    c.request("tools/call", json!({"name": "touch", "arguments": {}}))
        .await;
    // list changes reach every session; the update after unsubscribing did not come first
    registry.add_tool(extra::tool()).unwrap();
    let n = events.next().await.unwrap();
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    let r = c.request("tools/list", json!({})).await;
    let names: Vec<_> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["touch", "extra"]);
    assert!(registry.remove_resource("mem://t/{id}"));
    let n = events.next().await.unwrap();
    assert_eq!(n["method"], "notifications/resources/list_changed", "{n}");

    // DELETE ends the session and its stream
    let d = c
        .http
        .delete(&c.url)
        .header("mcp-session-id", &c.session)
        .send()
        .await
        .unwrap();
    assert_eq!(d.status(), 200);
    assert!(
        events.next().await.is_none(),
        "the stream ends with the session"
    );
}

#[tokio::test]
async fn subscriptions_are_validated_and_bounded_per_session() {
    let handle = start(server(), HttpConfig::default()).await;
    let (mut c, _) = Client::open(handle.url()).await;
    // a URI no resource or template serves
    let r = c
        .request("resources/subscribe", json!({"uri": "mem://nothing"}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Resource not found");
    let r = c.request("resources/subscribe", json!({})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // a URI the template matches, but longer than a session may keep
    let long = format!("mem://t/{}", "x".repeat(2000));
    let r = c.request("resources/subscribe", json!({"uri": long})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("too long"),
        "{r}"
    );

    for i in 0..MAX_SUBS {
        let r = c
            .request(
                "resources/subscribe",
                json!({"uri": format!("mem://t/{i}")}),
            )
            .await;
        assert_eq!(r["result"], json!({}), "{r}");
    }
    // the same URI again holds nothing more
    let r = c
        .request("resources/subscribe", json!({"uri": "mem://t/0"}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    let r = c
        .request("resources/subscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many subscriptions"),
        "{r}"
    );
    // the session still works, and so does another one
    let r = c.request("resources/read", json!({"uri": WATCHED})).await;
    assert_eq!(r["result"]["contents"][0]["text"], "content", "{r}");
    let (mut other, _) = Client::open(handle.url()).await;
    let r = other
        .request("resources/subscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    // freeing one makes room
    c.request("resources/unsubscribe", json!({"uri": "mem://t/1"}))
        .await;
    let r = c
        .request("resources/subscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
}

#[tokio::test]
async fn one_get_stream_per_session_and_none_without_one() {
    let handle = start(server(), HttpConfig::default()).await;
    let (c, _) = Client::open(handle.url()).await;
    let first = c.get().await;
    assert_eq!(first.status(), 200);
    let second = c.get().await;
    assert_eq!(second.status(), 409);
    // without a session: no standalone stream
    let r = reqwest::Client::new()
        .get(handle.url())
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    // an unknown session: 404
    let r = reqwest::Client::new()
        .get(handle.url())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", "nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    // once the first stream is gone, a new one may open
    drop(first);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let again = c.get().await;
        if again.status() == 200 {
            break;
        }
        assert_eq!(again.status(), 409);
        assert!(
            tokio::time::Instant::now() < deadline,
            "the claim was never given back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_get_reader_that_does_not_read_is_closed_not_buffered_for() {
    let server = server();
    let hub = server.changes().clone();
    let handle = start(server, HttpConfig::default().sse_buffer(4)).await;
    let (mut c, _) = Client::open(handle.url()).await;
    // the longest URI a session may keep: each update is about 1.1 KB on the wire
    let uri = format!("mem://t/{}", "x".repeat(1000));
    let r = c.request("resources/subscribe", json!({"uri": uri})).await;
    assert_eq!(r["result"], json!({}), "{r}");
    let stream = c.get().await;
    assert_eq!(stream.status(), 200);
    // 40 000 updates (about 44 MB), paced so the stream keeps up with the hub: only the
    // unread socket can hold them up
    const SENT: usize = 40_000;
    for i in 0..SENT {
        hub.publish(Change::ResourceUpdated { uri: uri.clone() });
        if i % 200 == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    // meanwhile the session is served
    let r = c.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}), "{r}");
    // the stream was closed: what it delivered ends, well short of what was sent
    let mut events = Events::new(stream);
    let mut read = 0;
    while events.next().await.is_some() {
        read += 1;
    }
    eprintln!("slow GET reader: {read} of {SENT} updates delivered before the stream closed");
    assert!(
        read < SENT / 2,
        "{read} of {SENT} delivered: the stream was not closed"
    );
    // and a new stream may open
    let again = c.get().await;
    assert_eq!(again.status(), 200);
}

#[tokio::test]
async fn stdio_writes_the_sessions_notifications_as_lines() {
    let server = server();
    let registry = server.registry().unwrap();
    let (client_out, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    let serve = tokio::spawn(stdio::serve(
        server,
        BufReader::new(server_in),
        server_out,
        StdioConfig::default(),
    ));
    let mut w = client_out;
    let mut lines = BufReader::new(client_in).lines();
    let mut send = async |v: Value| {
        w.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "stdio", "version": "1"}}}),
    )
    .await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": WATCHED}})).await;
    let mut next = async || -> Value {
        let l = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&l).unwrap()
    };
    let init = next().await;
    assert_eq!(
        init["result"]["capabilities"]["resources"]["subscribe"],
        true
    );
    assert_eq!(next().await["id"], 1);
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "touch", "arguments": {}}})).await;
    let mut got = vec![next().await, next().await];
    got.sort_by_key(|m| m.get("id").is_some());
    assert_eq!(
        got[0]["method"], "notifications/resources/updated",
        "{got:?}"
    );
    assert_eq!(got[0]["params"]["uri"], WATCHED);
    assert_eq!(got[1]["id"], 2);
    registry.add_tool(extra::tool()).unwrap();
    assert_eq!(next().await["method"], "notifications/tools/list_changed");
    drop(w);
    tokio::time::timeout(Duration::from_secs(10), serve)
        .await
        .expect("serving ends at end of input")
        .unwrap()
        .unwrap();
}
