//! Clients that stop reading (issue 18, item 5): a connection whose answers make no
//! progress for `HttpConfig::write_timeout` is closed, with what it held, so clients that
//! pipeline requests and never read cannot keep connections (and their queued answers)
//! open forever.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, Implementation};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::{
    Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use serde_json::json;
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

mod support;

/// Answers 200 KB of text.
struct Big;

impl Tool for Big {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("big")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move { Ok(Step::Complete(CallToolResult::text("z".repeat(200_000)))) })
    }
}

async fn start(config: HttpConfig) -> HttpHandle {
    let server = Server::builder(Implementation::new("write-bounds", "1"))
        .sealer(support::sealer("k", 1))
        .tool(Big)
        .build()
        .unwrap();
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(addr, server, config).await.unwrap()
}

/// A connection (with a small receive buffer) that sends `count` pipelined calls of `big`
/// and reads nothing.
async fn never_reads(addr: SocketAddr, count: usize) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    let body = support::request(
        1,
        "tools/call",
        support::call_params("big", json!({}), support::meta(json!({})), json!({})),
    )
    .to_string();
    let one = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: {}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: big\r\n\r\n{body}",
        body.len()
    );
    s.write_all(one.repeat(count).as_bytes()).await.unwrap();
    s.flush().await.unwrap();
    s
}

async fn discover(url: &str) -> reqwest::Result<reqwest::Response> {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"server/discover",
        "params":{"_meta": support::meta(json!({}))}});
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", support::VERSION)
        .header("mcp-method", "server/discover")
        .json(&body)
        .send()
        .await
}

/// Every connection the server allows is taken by a client that pipelines 40 calls with
/// 200 KB answers and never reads: after `write_timeout` (here 500 ms) they are closed and
/// a legitimate client's `server/discover` gets through within 2 s. Before, the connections
/// stayed open (holding megabytes of answers each) and every new one was closed at accept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_never_read_are_disconnected_after_the_write_timeout() {
    let handle = start(
        HttpConfig::default()
            .max_connections(3)
            .write_timeout(Duration::from_millis(500)),
    )
    .await;
    let addr = handle.local_addr();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(never_reads(addr, 40).await);
    }
    // the answers fill the buffers, the writes stall, the clock runs out
    tokio::time::sleep(Duration::from_millis(2500)).await;

    let started = Instant::now();
    let resp = tokio::time::timeout(Duration::from_secs(2), discover(&handle.url()))
        .await
        .expect("server/discover within 2 s")
        .expect("the connection was accepted");
    assert_eq!(resp.status(), 200);
    assert!(started.elapsed() < Duration::from_secs(2));

    // the stalled connections were closed: what they read now ends, far short of 40 answers
    for mut s in held {
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut got)).await;
        assert!(read.is_ok(), "a stalled connection is still open");
        assert!(got.len() < 40 * 200_000, "{} bytes", got.len());
    }
}
