//! What padded requests cost while they wait in a slow tool, measured as the process's peak
//! resident set (`VmHWM`, reset through `/proc/self/clear_refs` before each measurement):
//! 64 concurrent 1 MiB `tools/call` requests, padded inside `_meta`'s `clientCapabilities`
//! (the whole body: refused, `_meta` is over its limit; or up to the limit, in unknown
//! members and `experimental`) or inside `arguments` (keys out of byte order, so the digest
//! cannot stream), held by a tool until a legitimate `server/discover` and call have been
//! answered within 2 s each. Each peak must stay under [`CEILING_MIB`]; the arguments at 2
//! and at 8 worker threads. Alone in its binary (the peak is the process's); the
//! measurements run one at a time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, Implementation};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::{
    Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod support;

use support::Hold;

/// The ceiling of the growth of the peak resident set: 64 bodies of 1 MiB held, the
/// client's side of the test, hyper's buffers and the allocator's slack.
const CEILING_MIB: usize = 256;

/// Growth past which the test stops the attack early (today's failure mode costs
/// gigabytes): the gate is opened and the measurement fails.
const ABORT_MIB: usize = 768;

/// Concurrent padded requests.
const ATTACKERS: usize = 64;

/// One measurement at a time: the peak is the process's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A `/proc/self/status` field, in MiB (Linux); `None` elsewhere.
fn status_mib(field: &str) -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Resets the peak resident set to the current one (Linux `clear_refs` 5).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Answers at once.
struct Quick;

impl Tool for Quick {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("quick")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move { Ok(Step::Complete(CallToolResult::text("quick"))) })
    }
}

/// `[{"a":0},{"a":0},…]` of `n` bytes or a little less: the worst shape known for a tree.
fn padding(n: usize) -> String {
    support::array_of("{\"a\":0}", n)
}

/// Where the padding goes.
#[derive(Clone, Copy, Debug)]
enum Padded {
    /// An unknown member of `clientCapabilities`, the whole body long (`_meta` over its
    /// limit: refused).
    WholeMeta,
    /// An unknown member and `experimental` in `clientCapabilities`, `_meta` just under its
    /// limit; the rest of the body in an unknown member of `params`.
    Capabilities,
    /// The arguments, their keys out of byte order.
    Arguments,
}

/// A `tools/call` of `hold` of 1 MiB or a little less, padded where `at` says.
fn padded_body(at: Padded) -> Vec<u8> {
    let room = 1024 * 1024 - 400;
    let meta = |caps: &str| {
        format!(
            "{{\"io.modelcontextprotocol/protocolVersion\":\"{}\",\
             \"io.modelcontextprotocol/clientCapabilities\":{caps}}}",
            support::VERSION
        )
    };
    let meta_room = mcp_tool_runtime::protocol::MAX_META_BYTES / 2 - 400;
    let (meta, args, pad) = match at {
        Padded::WholeMeta => (
            meta(&format!("{{\"padding\":{{\"x\":{}}}}}", padding(room))),
            "{}".to_owned(),
            "0".to_owned(),
        ),
        Padded::Capabilities => (
            meta(&format!(
                "{{\"padding\":{{\"x\":{}}},\"experimental\":{{\"x\":{}}}}}",
                padding(meta_room),
                padding(meta_room)
            )),
            "{}".to_owned(),
            padding(room - 2 * meta_room),
        ),
        Padded::Arguments => (
            meta("{}"),
            format!("{{\"b\":0,\"a\":{}}}", padding(room)),
            "0".to_owned(),
        ),
    };
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"hold\",\
         \"_meta\":{meta},\"pad\":{pad},\"arguments\":{args}}}}}"
    );
    assert!(body.len() <= 1024 * 1024, "{}", body.len());
    body.into_bytes()
}

fn post(
    client: &reqwest::Client,
    url: &str,
    method: &str,
    name: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut r = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", support::VERSION)
        .header("mcp-method", method);
    if let Some(name) = name {
        r = r.header("mcp-name", name);
    }
    r
}

/// A legitimate `server/discover` and a `tools/call` of `quick`: each answered within 2 s.
async fn legitimate(client: &reqwest::Client, url: &str) {
    let discover = support::request(
        7,
        "server/discover",
        json!({"_meta": support::meta(json!({}))}),
    );
    let started = Instant::now();
    let r = post(client, url, "server/discover", None)
        .json(&discover)
        .send()
        .await
        .expect("discover sent");
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.expect("JSON");
    assert!(v["result"].is_object(), "{v}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let call = support::request(
        8,
        "tools/call",
        support::call_params(
            "quick",
            json!({"b": 1, "a": 2}),
            support::meta(json!({})),
            json!({}),
        ),
    );
    let started = Instant::now();
    let r = post(client, url, "tools/call", Some("quick"))
        .json(&call)
        .send()
        .await
        .expect("call sent");
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.expect("JSON");
    assert_eq!(v["result"]["content"][0]["text"], "quick", "{v}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// Runs the attack padded at `at` on a runtime of `workers` threads: the growth of the
/// peak resident set in MiB (`None` without `/proc`).
fn peak_growth(at: Padded, workers: usize) -> Option<usize> {
    let refused = matches!(at, Padded::WholeMeta);
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let inside = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let server = Server::builder(Implementation::new("padded", "1"))
            .sealer(support::sealer("k", 1))
            .tool(Hold {
                inside: inside.clone(),
                gate: gate.clone(),
            })
            .tool(Quick)
            .build()
            .expect("server");
        let config = HttpConfig::default()
            .max_concurrent_requests(ATTACKERS + 8)
            .max_body_bytes_in_flight((ATTACKERS + 8) << 20)
            // an unoptimized build on two threads takes its time over 64 MiB of bodies
            .body_read_timeout(Duration::from_secs(240))
            .request_timeout(Duration::from_secs(600));
        let handle = http::spawn("127.0.0.1:0".parse().expect("address"), server, config)
            .await
            .expect("serving");
        let url = handle.url();
        let client = reqwest::Client::new();
        // every path once before measuring
        legitimate(&client, &url).await;
        let body: &'static [u8] = Box::leak(padded_body(at).into_boxed_slice());
        tokio::time::sleep(Duration::from_millis(100)).await;
        if !reset_peak() {
            return None;
        }
        let before = status_mib("VmRSS:")?;
        // a watchdog opens the gate when the growth passes ABORT_MIB
        let aborted = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let (gate, aborted, done) = (gate.clone(), aborted.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    if status_mib("VmRSS:").unwrap_or(0).saturating_sub(before) > ABORT_MIB {
                        aborted.store(true, Ordering::SeqCst);
                        gate.add_permits(ATTACKERS * 2);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        let attack: Vec<_> = (0..ATTACKERS)
            .map(|_| {
                let (client, url) = (client.clone(), url.clone());
                tokio::spawn(async move {
                    post(&client, &url, "tools/call", Some("hold"))
                        .body(body)
                        .send()
                        .await
                        .map(|r| r.status().as_u16())
                        .unwrap_or(0)
                })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(240);
        while !attack.iter().all(|a| a.is_finished())
            && inside.load(Ordering::SeqCst) < ATTACKERS
            && !aborted.load(Ordering::SeqCst)
            && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let held = inside.load(Ordering::SeqCst);
        if !aborted.load(Ordering::SeqCst) {
            legitimate(&client, &url).await;
        }
        let peak = status_mib("VmHWM:")?;
        done.store(true, Ordering::SeqCst);
        gate.add_permits(ATTACKERS * 2);
        let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
        for a in attack {
            *statuses.entry(a.await.expect("joined")).or_default() += 1;
        }
        let _ = watchdog.join();
        let grown = peak.saturating_sub(before);
        eprintln!(
            "{at:?} at {workers} workers: {held} held, peak +{grown} MiB, statuses {statuses:?}{}",
            if aborted.load(Ordering::SeqCst) {
                " (stopped early)"
            } else {
                ""
            }
        );
        let _ = handle.shutdown().await;
        if !aborted.load(Ordering::SeqCst) {
            // refused with -32602 (HTTP 400) when `_meta` is too long; else served
            let want = if refused { 400 } else { 200 };
            assert_eq!(
                statuses.get(&want),
                Some(&ATTACKERS),
                "{at:?}: {statuses:?}"
            );
        }
        Some(grown)
    })
}

fn assert_under_ceiling(at: Padded, workers: usize) {
    if let Some(grown) = peak_growth(at, workers) {
        assert!(
            grown <= CEILING_MIB,
            "{at:?} at {workers} workers: peak +{grown} MiB"
        );
    }
}

#[test]
fn a_meta_over_its_limit_is_refused_under_the_ceiling() {
    assert_under_ceiling(Padded::WholeMeta, 2);
}

#[test]
fn padded_capabilities_stay_under_the_ceiling() {
    assert_under_ceiling(Padded::Capabilities, 2);
}

#[test]
fn padded_arguments_stay_under_the_ceiling_at_2_workers() {
    assert_under_ceiling(Padded::Arguments, 2);
}

#[test]
fn padded_arguments_stay_under_the_ceiling_at_8_workers() {
    assert_under_ceiling(Padded::Arguments, 8);
}
