//! The request-body budget of the Streamable HTTP transport (issue 18, items 4 and 8): a
//! body is received and parsed under a bounded budget of bytes in flight before a request
//! permit is taken, with or without `Mcp-Session-Id`. Slow senders hold the bytes they
//! sent, never the permits, so a legitimate client still gets through; and requests naming
//! any session go through the same budget.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;

async fn start(config: HttpConfig) -> HttpHandle {
    let server = Server::builder(Implementation::new("budget", "1"))
        .sealer(support::sealer("k", 1))
        .build()
        .unwrap();
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(addr, server, config).await.unwrap()
}

/// A connection that sends the headers of a `declared`-byte body, then `sent` bytes of it,
/// then stalls (held open by the caller).
async fn stalled(addr: SocketAddr, declared: usize, sent: usize, session: bool) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let session = if session {
        "Mcp-Session-Id: bogus\r\n"
    } else {
        ""
    };
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {declared}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\n{session}\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut body = vec![b' '; sent];
    body[0] = b'{';
    s.write_all(&body).await.unwrap();
    s.flush().await.unwrap();
    s
}

/// One whole raw request of `len` bytes with `Mcp-Session-Id: bogus`; the status line.
async fn bogus_session_body(addr: SocketAddr, len: usize) -> String {
    let Ok(mut s) = TcpStream::connect(addr).await else {
        return "connect failed".to_owned();
    };
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {len}\r\nMcp-Session-Id: bogus\r\nConnection: close\r\n\r\n"
    );
    let mut body = vec![b' '; len];
    body[0] = b'[';
    body[len - 1] = b']';
    // the server may answer (and close) before the whole body is sent
    let _ = s.write_all(head.as_bytes()).await;
    let _ = s.write_all(&body).await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(15), s.read_to_end(&mut reply)).await;
    String::from_utf8_lossy(&reply)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

async fn discover(url: &str) -> (reqwest::StatusCode, String) {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"server/discover",
        "params":{"_meta": support::meta(json!({}))}});
    let resp = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", support::VERSION)
        .header("mcp-method", "server/discover")
        .json(&body)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// 48 connections that each announce a 1000-byte body, send one byte and stall (40 of them
/// without a session id, more than the 32 permits; 8 with a bogus `Mcp-Session-Id`), while
/// 64 whole 1 MiB bodies with a bogus `Mcp-Session-Id` arrive at once: a legitimate
/// `server/discover` is answered within 2 s, again and again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_and_bogus_sessions_do_not_lock_out_a_legitimate_client() {
    let handle = start(HttpConfig::default()).await;
    let addr = handle.local_addr();
    let url = handle.url();

    let mut held = Vec::new();
    for i in 0..48 {
        held.push(stalled(addr, 1000, 1, i >= 40).await);
    }
    // let the server take in every stalled request
    tokio::time::sleep(Duration::from_millis(300)).await;

    let flood: Vec<_> = (0..64)
        .map(|_| tokio::spawn(bogus_session_body(addr, 1024 * 1024)))
        .collect();

    for round in 0..3 {
        let started = Instant::now();
        let (status, text) = tokio::time::timeout(Duration::from_secs(2), discover(&url))
            .await
            .unwrap_or_else(|_| panic!("round {round}: server/discover took over 2 s"));
        let elapsed = started.elapsed();
        assert_eq!(status, 200, "round {round}: {text}");
        assert!(text.contains("\"result\""), "round {round}: {text}");
        assert!(
            elapsed < Duration::from_secs(2),
            "round {round}: {elapsed:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let mut statuses = Vec::new();
    for f in flood {
        statuses.push(f.await.unwrap());
    }
    assert!(
        statuses
            .iter()
            .all(|s| s.starts_with("HTTP/1.1 404") || s.starts_with("HTTP/1.1 503")),
        "{statuses:?}"
    );
    drop(held);
}

/// Bodies naming a session (`Mcp-Session-Id: bogus`) are counted against the body budget
/// like every other: once stalled bodies hold it, one more is refused with `503` and
/// `Retry-After` before it is read whole, and the connection is closed. When they go, the
/// budget is back.
#[tokio::test]
async fn bodies_with_a_session_id_go_through_the_body_budget() {
    let handle = start(
        HttpConfig::default()
            .max_body_bytes_in_flight(256 * 1024)
            .body_read_timeout(Duration::from_secs(5)),
    )
    .await;
    let addr = handle.local_addr();
    let url = handle.url();

    // four bodies of 1 MiB announced, 96 KiB sent each: about 384 KiB wanted of 256 KiB
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(stalled(addr, 1024 * 1024, 96 * 1024, true).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut refused = 0;
    let mut replies = Vec::new();
    for s in &mut held {
        let mut reply = vec![0u8; 4096];
        if let Ok(Ok(n)) =
            tokio::time::timeout(Duration::from_millis(500), s.read(&mut reply)).await
        {
            let text = String::from_utf8_lossy(&reply[..n]).into_owned();
            if text.starts_with("HTTP/1.1 503") {
                assert!(
                    text.to_ascii_lowercase().contains("retry-after: 1"),
                    "{text}"
                );
                assert!(text.contains("-32000"), "{text}");
                refused += 1;
            }
            replies.push(text);
        }
    }
    assert!(refused >= 1, "no body was refused: {replies:?}");

    drop(held);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, text) = discover(&url).await;
    assert_eq!(status, 200, "{text}");
}
