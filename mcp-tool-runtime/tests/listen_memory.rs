//! What one idle `subscriptions/listen` subscription costs: 1,000 of them opened against
//! an in-process server (the [`Server::listen`] subscription alone, acknowledged and
//! waiting), then 1,000 open HTTP listen streams (the subscription, its stream task and
//! channel, hyper's connection and buffers, and the test's own socket halves), measured
//! with a counting allocator (live bytes before and after) and the resident set. The
//! figures are printed (`--nocapture`) and held under ceilings that docs/SECURITY.md
//! quotes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::{ListenLimits, Listened, Server};
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers every call to the system allocator; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The counters are global: one measuring test at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const N: usize = 1000;

fn rss_kib() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Does nothing.
#[mcp_tool_runtime::mcp_tool]
async fn noop(
    _cx: &mut mcp_tool_runtime::ToolContext,
) -> Result<String, mcp_tool_runtime::ToolError> {
    Ok("ok".into())
}

fn server() -> Server {
    Server::builder(Implementation::new("listen-memory", "1"))
        .tool(noop::tool())
        .listen_limits(ListenLimits {
            max_open: N + 10,
            max_per_principal: N + 10,
        })
        .build()
        .unwrap()
}

fn request(id: usize) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
        "notifications": {"toolsListChanged": true, "resourceSubscriptions": []},
    }})
}

#[tokio::test]
async fn an_idle_subscription_costs_under_a_kibibyte_in_process() {
    let _one = ONE_AT_A_TIME.lock().await;
    let server = server();
    let who = Principal::anonymous();
    // Warm up (lazy statics, the hub's first receiver).
    drop(server.listen(&request(0), &who).await.unwrap());
    let before = LIVE.load(Ordering::SeqCst);
    let mut subs = Vec::with_capacity(N);
    for i in 0..N {
        let mut s = server.listen(&request(i), &who).await.unwrap();
        assert!(matches!(s.next().await, Listened::Notification(_)));
        subs.push(s);
    }
    let per = LIVE.load(Ordering::SeqCst).saturating_sub(before) / N;
    println!("in process: {per} B per idle subscription (allocator, {N} open)");
    assert_eq!(server.open_subscriptions(), N);
    assert!(per < 1024, "{per} B per subscription");
    drop(subs);
    assert_eq!(server.open_subscriptions(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http_listen_stream_costs_under_32_kibibytes() {
    let _one = ONE_AT_A_TIME.lock().await;
    let server = server();
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let h = http::spawn(
        addr,
        server.clone(),
        HttpConfig::default()
            .max_connections(N + 10)
            .max_streams(N + 5)
            .max_anonymous_streams(N + 5)
            .max_anonymous_streams_per_address(N + 5)
            .max_streams_per_address(N + 5),
    )
    .await
    .unwrap();
    let addr = h.local_addr();
    let open = |i: usize| async move {
        let body = serde_json::to_string(&request(i)).unwrap();
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        // Read until the acknowledgement has arrived.
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        while !String::from_utf8_lossy(&got).contains("acknowledged") {
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        s
    };
    drop(open(0).await);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (live_before, rss_before) = (LIVE.load(Ordering::SeqCst), rss_kib());
    let mut streams = Vec::with_capacity(N);
    for i in 0..N {
        streams.push(open(i + 1).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let per = LIVE.load(Ordering::SeqCst).saturating_sub(live_before) / N;
    let rss_per = rss_before
        .zip(rss_kib())
        .map(|(b, a)| a.saturating_sub(b) * 1024 / N);
    println!(
        "over HTTP: {per} B per idle listen stream (allocator, server and client socket, {N} open); \
         resident set {rss_per:?} B per stream"
    );
    assert_eq!(server.open_subscriptions(), N);
    assert!(per < 32 * 1024, "{per} B per stream");
    drop(streams);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.open_subscriptions() > 0 {
        assert!(std::time::Instant::now() < deadline, "streams not dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.shutdown().await.unwrap();
}
