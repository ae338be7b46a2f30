//! Live heap over many calls: a counting allocator measures the bytes allocated and not
//! freed by the whole process (server, HTTP transport and client in one) after a warm-up
//! and again after many more mixed multi-round calls over loopback HTTP. A leak grows with
//! the number of calls; allocator caching and fragmentation (what RSS also shows) do not
//! count here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

use mcp_tool_client::{ClientTransport, Driver, HttpTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use serde_json::json;

struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: defers every call to the system allocator; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn flows() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("summarize_repo", json!({"audience": "developer"})),
        (
            "summarize_repo",
            json!({"audience": "ops", "critique": true}),
        ),
        ("get_weather", json!({"location": "Oslo"})),
        ("link_accounts", json!({})),
        ("sum_of_squares", json!({"n": 400, "chunk": 100})),
        ("list_roots", json!({})),
        ("prune_branches", json!({"branches": ["a", "b"]})),
    ]
}

/// A tampered `requestState` for `get_weather`, refused with -32602 (and logged).
async fn tampered(raw: &HttpTransport, id: u64) {
    let call = |id: u64, extra: serde_json::Value| {
        let mut params = json!({"name": "get_weather", "arguments": {"location": "Oslo"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}});
        if let serde_json::Value::Object(m) = extra {
            for (k, v) in m {
                params[k] = v;
            }
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let first = raw.send(call(id, json!({}))).await.unwrap().unwrap();
    let mut state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let last = state.pop().unwrap();
    state.push(if last == 'A' { 'B' } else { 'A' });
    let retry = json!({"requestState": state,
        "inputResponses": {"github_login": {"action": "accept", "content": {"name": "x"}}}});
    let r = raw.send(call(id + 1, retry)).await.unwrap().unwrap();
    assert_eq!(r["error"]["code"], -32602);
}

/// `n` calls through a fresh client of principal `who` (the fake host records every key it
/// is asked, so one driver for the whole test would grow by itself); every tenth a
/// tampered state.
async fn client(url: String, who: &'static str, n: usize) {
    let mut d = Driver::new(HttpTransport::new(&url).bearer(who), FakeModel::new());
    let raw = HttpTransport::new(&url).bearer(who);
    let flows = flows();
    for i in 0..n {
        if i % 10 == 9 {
            tampered(&raw, i as u64 * 2).await;
            continue;
        }
        let (tool, args) = &flows[i % flows.len()];
        let out = d.call_tool(tool, args.clone()).await.expect("call");
        assert!(!out.is_error(), "{tool}");
        let _ = d.take_transcript();
    }
}

/// `n` calls from each of two principals at once.
async fn run(url: &str, n: usize) {
    let a = tokio::spawn(client(url.to_owned(), "alice", n));
    let b = tokio::spawn(client(url.to_owned(), "bob", n));
    a.await.unwrap();
    b.await.unwrap();
}

/// The live heap once the closed connections' tasks on both sides have finished: the
/// first of several reads 100 ms apart that equals the one before it (at most 5 s).
async fn settled() -> i64 {
    let mut last = LIVE.load(Ordering::Relaxed);
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let now = LIVE.load(Ordering::Relaxed);
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// Two batches of warm-up (lazy initialisation, pools, the blocking threads), then four
/// more, each of `n` calls from two principals at once (one in ten with a tampered state,
/// whose refusal is logged): the live heap after the last is within 16 KiB of the lowest
/// one measured (a leak of 10 bytes a call would show). `HEAP_CALLS` sets `n` (default
/// 200). Measured in release with `HEAP_CALLS=2000` (16,000 calls after the warm-up):
/// 150,518 → 151,116 bytes, +598.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_heap_does_not_grow_with_calls() {
    let n: usize = std::env::var("HEAP_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    // Warnings are formatted as `serve` formats them (and thrown away).
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::sink)
        .with_max_level(tracing::Level::WARN)
        .try_init();
    let server = mcp_tool_examples::example_server(
        None,
        mcp_tool_examples::repo::Repo::embedded_demo().unwrap(),
        mcp_tool_examples::notes::Notes::temporary().unwrap(),
    )
    .unwrap();
    let handle = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        server,
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let url = handle.url();
    run(&url, n).await;
    run(&url, n).await;
    let after_warmup = settled().await;
    let mut samples = vec![after_warmup];
    for _ in 0..4 {
        run(&url, n).await;
        samples.push(settled().await);
    }
    // Measured from the lowest sample: what the warm-up left behind may still be freed
    // (idle blocking threads exit), a leak only ever adds.
    let low = samples.iter().copied().min().unwrap_or(after_warmup);
    let growth = samples.last().copied().unwrap_or(low) - low;
    println!(
        "live heap after the warm-up and after each 2 x {n} calls: {samples:?}; growth {growth} B"
    );
    assert!(
        growth < 16 * 1024,
        "live heap grew {growth} bytes over {} calls: {samples:?}",
        8 * n
    );
}
