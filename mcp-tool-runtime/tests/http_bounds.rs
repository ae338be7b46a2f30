//! The Streamable HTTP transport's resource bounds over real loopback sockets (issue 11):
//! concurrency limit, body-read timeout (slow body), header-read timeout (slow headers),
//! connection limit, request timeout (JSON and SSE), and the warning for anonymous
//! callers on a public address; the client's `RetryTransport` honouring the busy answer's
//! `Retry-After`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_tool_client::{Driver, HttpTransport, RetryPolicy, RetryTransport, ScriptedHost};
use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, ClientCapabilities, Implementation};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::auth::{AnonymousAuth, BearerDemoAuth};
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::{
    Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;

use support::Hold;

/// Reports progress once, then sleeps for ten seconds.
struct Sleepy;

impl Tool for Sleepy {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("sleepy")
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            cx.progress(1.0, None, Some("started"));
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok(Step::Complete(CallToolResult::text("late")))
        })
    }
}

struct Fixture {
    handle: HttpHandle,
    inside: Arc<AtomicUsize>,
    gate: Arc<tokio::sync::Semaphore>,
}

async fn start(config: HttpConfig) -> Fixture {
    let inside = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let server = Server::builder(Implementation::new("bounds", "1"))
        .sealer(support::sealer("k", 1))
        .tool(Hold {
            inside: inside.clone(),
            gate: gate.clone(),
        })
        .tool(Sleepy)
        .build()
        .unwrap();
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let handle = http::spawn(addr, server, config).await.unwrap();
    Fixture {
        handle,
        inside,
        gate,
    }
}

fn call_body(id: u64, tool: &str, progress: bool) -> Value {
    let mut meta = support::meta(json!({}));
    if progress {
        meta["progressToken"] = json!(id);
    }
    support::request(
        id as i64,
        "tools/call",
        support::call_params(tool, json!({}), meta, json!({})),
    )
}

async fn post(url: &str, tool: &str, id: u64, sse: bool) -> reqwest::Response {
    let accept = if sse {
        "application/json, text/event-stream"
    } else {
        "application/json"
    };
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", accept)
        .header("mcp-protocol-version", support::VERSION)
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&call_body(id, tool, sse))
        .send()
        .await
        .unwrap()
}

/// N requests in progress: request N+1 is refused at once with 503 and `Retry-After`;
/// once they finish, requests are served again.
#[tokio::test]
async fn requests_beyond_the_concurrency_limit_are_refused_with_503() {
    let f = start(HttpConfig::default().max_concurrent_requests(2)).await;
    let url = f.handle.url();
    let held: Vec<_> = (1..=2)
        .map(|id| {
            let url = url.clone();
            tokio::spawn(async move { post(&url, "hold", id, false).await.status() })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while f.inside.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "the two requests never arrived");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = Instant::now();
    let refused = post(&url, "hold", 3, false).await;
    assert_eq!(refused.status(), 503);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "refused, not queued"
    );
    assert_eq!(refused.headers()["retry-after"], "1");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], http::LIMIT_EXCEEDED);
    assert_eq!(
        f.inside.load(Ordering::SeqCst),
        2,
        "the tool never ran for it"
    );

    f.gate.add_permits(100);
    for h in held {
        assert_eq!(h.await.unwrap(), 200);
    }
    let again = post(&url, "hold", 4, false).await;
    assert_eq!(again.status(), 200);
}

/// The busy answer's `Retry-After: 1`, end to end: with the only request permit held,
/// `RetryTransport` waits the second the server asked for (its backoff alone would have tried
/// again within tens of milliseconds, and all five retries within 340 ms) and then gets through.
#[tokio::test]
async fn retry_transport_waits_for_the_busy_answers_retry_after() {
    let f = start(HttpConfig::default().max_concurrent_requests(1)).await;
    let url = f.handle.url();
    let policy = RetryPolicy {
        max_retries: 5,
        backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        max_retry_after: Duration::from_secs(5),
    };
    let retrying = RetryTransport::new(HttpTransport::new(url.clone()), policy);
    let mut d = Driver::new(
        retrying.clone(),
        ScriptedHost::new(ClientCapabilities::default()),
    );
    d.discover().await.unwrap();

    let holder = tokio::spawn(async move { post(&url, "hold", 1, false).await.status() });
    let deadline = Instant::now() + Duration::from_secs(10);
    while f.inside.load(Ordering::SeqCst) < 1 {
        assert!(
            Instant::now() < deadline,
            "the holding request never arrived"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Released long before the Retry-After is over, long after the backoff alone would be.
    let gate = f.gate.clone();
    let opener = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        gate.add_permits(100);
    });

    let started = Instant::now();
    let out = d.call_tool("hold", json!({})).await.unwrap();
    let waited = started.elapsed();
    assert_eq!(out.text(), "released");
    assert_eq!(retrying.retries(), 1, "one busy answer, one retry");
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(4),
        "waited {waited:?}"
    );
    opener.await.unwrap();
    assert_eq!(holder.await.unwrap(), 200);
}

/// A client that sends the headers and a few bytes of a body, then stalls, gets 408 after
/// the body-read timeout and the connection is closed.
#[tokio::test]
async fn a_slow_body_is_cut_off_with_408_and_the_connection_closed() {
    let f = start(HttpConfig::default().body_read_timeout(Duration::from_millis(300))).await;
    let addr = f.handle.local_addr();
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: 200\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\r\n{{\"jso"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut reply))
        .await
        .expect("the server answers and closes")
        .unwrap();
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&reply);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("Request body not received in time"), "{text}");
    assert!(elapsed >= Duration::from_millis(250), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

/// A body that arrives in several pieces (a pause between two writes, or chunked
/// encoding) is gathered whole, within the limits.
#[tokio::test]
async fn a_body_in_several_pieces_is_gathered() {
    let f = start(HttpConfig::default()).await;
    let addr = f.handle.local_addr();
    f.gate.add_permits(10);
    let body = call_body(5, "hold", false).to_string();
    let (a, b) = body.split_at(body.len() / 2);
    for chunked in [false, true] {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let framing = if chunked {
            "Transfer-Encoding: chunked".to_owned()
        } else {
            format!("Content-Length: {}", body.len())
        };
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{framing}\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: hold\r\n\
             Connection: close\r\n\r\n"
        );
        let piece = |p: &str| {
            if chunked {
                format!("{:x}\r\n{p}\r\n", p.len())
            } else {
                p.to_owned()
            }
        };
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(piece(a).as_bytes()).await.unwrap();
        s.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        s.write_all(piece(b).as_bytes()).await.unwrap();
        if chunked {
            s.write_all(b"0\r\n\r\n").await.unwrap();
        }
        let mut reply = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut reply))
            .await
            .expect("answered")
            .unwrap();
        let text = String::from_utf8_lossy(&reply);
        assert!(
            text.starts_with("HTTP/1.1 200"),
            "chunked {chunked}: {text}"
        );
        assert!(text.contains("released"), "chunked {chunked}: {text}");
    }
}

/// A client that never finishes its headers is disconnected after the header-read timeout.
#[tokio::test]
async fn slow_headers_are_disconnected() {
    let f = start(HttpConfig::default().header_read_timeout(Duration::from_millis(300))).await;
    let mut s = TcpStream::connect(f.handle.local_addr()).await.unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Ty")
        .await
        .unwrap();
    let started = Instant::now();
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut reply))
        .await
        .expect("the server hangs up");
    // Closed (EOF, perhaps after a 408) or reset: either way the connection is gone.
    let _ = read;
    assert!(
        reply.is_empty() || String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 408"),
        "{:?}",
        String::from_utf8_lossy(&reply)
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// A connection that sends nothing (at first, or after a request) is closed after the
/// header-read timeout too: idle connections do not pile up.
#[tokio::test]
async fn idle_connections_are_closed_after_the_header_timeout() {
    let f = start(HttpConfig::default().header_read_timeout(Duration::from_millis(300))).await;
    let mut s = TcpStream::connect(f.handle.local_addr()).await.unwrap();
    let started = Instant::now();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut reply))
        .await
        .expect("the server hangs up on a silent connection");
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// Beyond `max_connections` open connections a new one is closed at once; when one closes
/// there is room again.
#[tokio::test]
async fn connections_beyond_the_limit_are_closed() {
    let f = start(HttpConfig::default().max_connections(2)).await;
    let addr = f.handle.local_addr();
    let a = TcpStream::connect(addr).await.unwrap();
    let _b = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(5), c.read(&mut buf))
        .await
        .expect("the third connection is closed at once")
        .unwrap_or(0);
    assert_eq!(n, 0, "closed without a byte");
    drop(a);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A real request on a fresh connection goes through.
    f.gate.add_permits(1);
    let ok = post(&f.handle.url(), "hold", 9, false).await;
    assert_eq!(ok.status(), 200);
}

/// A request that runs past the request timeout is cancelled: 503 with `LIMIT_EXCEEDED`,
/// and its concurrency permit is free again.
#[tokio::test]
async fn a_request_that_runs_too_long_gets_503_and_frees_its_slot() {
    let f = start(
        HttpConfig::default()
            .request_timeout(Duration::from_millis(300))
            .max_concurrent_requests(1),
    )
    .await;
    let started = Instant::now();
    let r = post(&f.handle.url(), "sleepy", 1, false).await;
    assert_eq!(r.status(), 503);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], http::LIMIT_EXCEEDED, "{body}");
    assert_eq!(body["error"]["message"], "Request timed out");
    assert_eq!(body["id"], 1);
    assert!(started.elapsed() < Duration::from_secs(3));
    f.gate.add_permits(1);
    let next = post(&f.handle.url(), "hold", 2, false).await;
    assert_eq!(next.status(), 200, "the slot was released");
}

/// The same for an SSE answer: the stream ends after the timeout without a response.
#[tokio::test]
async fn a_streamed_request_that_runs_too_long_ends_its_stream() {
    let f = start(
        HttpConfig::default()
            .request_timeout(Duration::from_millis(400))
            .max_concurrent_requests(1),
    )
    .await;
    let started = Instant::now();
    let r = post(&f.handle.url(), "sleepy", 1, true).await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = tokio::time::timeout(Duration::from_secs(5), r.text())
        .await
        .expect("the stream ends")
        .unwrap();
    assert!(text.contains("notifications/progress"), "{text}");
    assert!(!text.contains("\"result\""), "{text}");
    assert!(started.elapsed() < Duration::from_secs(3));
    f.gate.add_permits(1);
    let next = post(&f.handle.url(), "hold", 2, false).await;
    assert_eq!(next.status(), 200, "the slot was released");
}

/// `AnonymousAuth` (the default) and other authenticators that admit anyone on a
/// non-loopback address: `exposes_anyone` holds and `warn_if_exposed` logs a warning.
#[test]
fn anonymous_callers_on_a_public_address_are_warned_about() {
    let public: SocketAddr = "0.0.0.0:8080".parse().unwrap();
    let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
    let anon = HttpConfig::default();
    assert!(http::exposes_anyone(&public, &anon));
    assert!(!http::exposes_anyone(&loopback, &anon));
    assert!(http::exposes_anyone(
        &public,
        &HttpConfig::default().authenticator(BearerDemoAuth::new())
    ));
    assert!(!http::exposes_anyone(
        &public,
        &HttpConfig::default().authenticator(BearerDemoAuth::new().allow(["t"]))
    ));
    assert!(!http::exposes_anyone(
        &"[::]:1".parse().unwrap(),
        &HttpConfig::default().authenticator(|_: &axum::http::request::Parts| {
            Err(mcp_tool_runtime::transport::auth::AuthError::new(
                "Bearer", "no",
            ))
        })
    ));

    #[derive(Clone, Default)]
    struct Log(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Log {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        http::warn_if_exposed(&loopback, &anon);
        assert!(log.0.lock().unwrap().is_empty());
        http::warn_if_exposed(&public, &HttpConfig::default().authenticator(AnonymousAuth));
    });
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("WARN"), "{text}");
    assert!(text.contains("admits anyone"), "{text}");
}
