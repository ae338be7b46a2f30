//! The soak driver behind `scripts/soak.sh`: mixed multi-round calls of every example tool
//! over loopback Streamable HTTP against a running `serve`, bounded in time and in count,
//! while sampling the server's resident memory (`VmRSS`, `RssAnon` and `RssFile` in
//! `/proc/<pid>/status`).
//!
//! ```text
//! soak --url http://127.0.0.1:PORT/mcp --pid PID [--duration 600] [--warmup 120]
//!      [--concurrency 4] [--pause-ms 5] [--sample-every 10] [--max-calls 2000000]
//!      [--max-growth-pct 5] [--metric total|anon]
//! ```
//!
//! "Flat" means: the largest RSS sampled after the warm-up exceeds the RSS at the end of
//! the warm-up by less than `--max-growth-pct` percent (default 5 %), on `VmRSS` (default)
//! or on its anonymous part. The run also fails when any call ends other than expected.
//! Only loopback URLs are accepted.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use mcp_tool_client::{ClientTransport, Driver, HttpTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::load::{check_outcome, example_flows, is_loopback_url};
use serde_json::{Value, json};

/// Soak a running `serve` with mixed multi-round calls and watch its memory.
#[derive(Parser, Debug)]
#[command(name = "soak")]
struct Cli {
    /// The endpoint, e.g. http://127.0.0.1:8080/mcp (loopback only).
    #[arg(long)]
    url: String,
    /// The server's process id (its RSS is sampled).
    #[arg(long)]
    pid: u32,
    /// Total seconds of load.
    #[arg(long, default_value_t = 600)]
    duration: u64,
    /// Seconds of warm-up before the baseline RSS is taken.
    #[arg(long, default_value_t = 120)]
    warmup: u64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Pause between two calls of one client, in milliseconds.
    #[arg(long, default_value_t = 5)]
    pause_ms: u64,
    /// Seconds between two RSS samples.
    #[arg(long, default_value_t = 10)]
    sample_every: u64,
    /// Stop after this many calls in all, whatever the time.
    #[arg(long, default_value_t = 2_000_000)]
    max_calls: u64,
    /// Largest accepted growth after the warm-up, in percent.
    #[arg(long, default_value_t = 5.0)]
    max_growth_pct: f64,
    /// What must stay flat: `anon` (anonymous RSS: heap and stacks, where a leak shows) or
    /// `total` (all of VmRSS, file-backed pages of the binary included).
    #[arg(long, value_enum, default_value_t = Metric::Total)]
    metric: Metric,
}

/// The memory figure the flatness check uses.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Metric {
    /// `RssAnon`.
    Anon,
    /// `VmRSS`.
    Total,
}

/// Longest a call (all its rounds) may take before it counts as a failure.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Default)]
struct Counters {
    calls: AtomicU64,
    rounds: AtomicU64,
    refused_as_expected: AtomicU64,
    failures: AtomicU64,
}

/// Resident memory of a process, in KiB: all of it, its anonymous part (heap, stacks:
/// where a leak shows) and its file-backed part (the binary's and libraries' pages, which
/// grow as more code runs, up to the files' size).
#[derive(Debug, Clone, Copy)]
struct Rss {
    total: u64,
    anon: u64,
    file: u64,
}

fn rss_kib(pid: u32) -> anyhow::Result<Rss> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let field = |name: &str| -> anyhow::Result<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("no {name} line"))
    };
    Ok(Rss {
        total: field("VmRSS:")?,
        anon: field("RssAnon:")?,
        file: field("RssFile:")?,
    })
}

/// Growth of the peak after the warm-up over the value at its end, in percent.
fn growth(samples: &[(u64, Rss)], warmup: u64, pick: impl Fn(&Rss) -> u64) -> (u64, u64, u64, f64) {
    let after: Vec<u64> = samples
        .iter()
        .filter(|(t, _)| *t >= warmup)
        .map(|(_, r)| pick(r))
        .collect();
    let baseline = after.first().copied().unwrap_or(0);
    let peak = after.iter().copied().max().unwrap_or(baseline);
    let last = after.last().copied().unwrap_or(baseline);
    let pct = (peak as f64 - baseline as f64) * 100.0 / (baseline.max(1) as f64);
    (baseline, peak, last, pct)
}

/// A tampered `requestState` for `get_weather`: must be refused with -32602.
async fn hostile_retry(transport: &HttpTransport, id: u64) -> anyhow::Result<bool> {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let call = |id: u64, extra: Value| {
        let mut params =
            json!({"name": "get_weather", "arguments": {"location": "Oslo"}, "_meta": meta});
        if let Value::Object(m) = extra {
            for (k, v) in m {
                params[k] = v;
            }
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let first = transport
        .send(call(id, json!({})))
        .await?
        .context("no response")?;
    let Some(state) = first["result"]["requestState"].as_str() else {
        return Ok(false);
    };
    let mut tampered = state.to_owned();
    let last = tampered.pop().unwrap_or('A');
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let answer = json!({"inputResponses": {"github_login": {"action": "accept", "content": {"name": "x"}}},
                        "requestState": tampered});
    let r = transport
        .send(call(id + 1, answer))
        .await?
        .context("no response")?;
    Ok(r["error"]["code"] == -32602)
}

async fn client(
    n: usize,
    url: String,
    pause: Duration,
    stop: Arc<AtomicBool>,
    max_calls: u64,
    counters: Arc<Counters>,
) {
    let flows = example_flows();
    let principal = format!("soak-user-{n}");
    let mut driver = Driver::new(
        HttpTransport::new(url.clone()).bearer(&principal),
        FakeModel::new(),
    );
    let hostile = HttpTransport::new(url.clone()).bearer(&principal);
    let mut i = n;
    while !stop.load(Ordering::Relaxed) && counters.calls.load(Ordering::Relaxed) < max_calls {
        i += 1;
        counters.calls.fetch_add(1, Ordering::Relaxed);
        if i.is_multiple_of(10) {
            let retry = tokio::time::timeout(CALL_TIMEOUT, hostile_retry(&hostile, i as u64 * 2));
            match retry
                .await
                .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer in time")))
            {
                Ok(true) => {
                    counters.refused_as_expected.fetch_add(1, Ordering::Relaxed);
                }
                other => {
                    eprintln!("hostile retry not refused as expected: {other:?}");
                    counters.failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        } else {
            let flow = &flows[i % flows.len()];
            let call =
                tokio::time::timeout(CALL_TIMEOUT, driver.call_tool(flow.tool, flow.args.clone()));
            let Ok(outcome) = call.await else {
                eprintln!("{}: no answer within {CALL_TIMEOUT:?}", flow.tool);
                counters.failures.fetch_add(1, Ordering::Relaxed);
                // A fresh client: the old one may be stuck on a connection.
                driver = Driver::new(
                    HttpTransport::new(url.clone()).bearer(&principal),
                    FakeModel::new(),
                );
                continue;
            };
            match check_outcome(flow, outcome) {
                Ok(rounds) => {
                    counters
                        .rounds
                        .fetch_add(u64::from(rounds), Ordering::Relaxed);
                }
                Err(e) => {
                    eprintln!("{e}");
                    counters.failures.fetch_add(1, Ordering::Relaxed);
                }
            }
            // The transcript grows with every call: keep the client's memory flat too.
            let _ = driver.take_transcript();
        }
        tokio::time::sleep(pause).await;
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if !is_loopback_url(&cli.url) {
        bail!("soak only targets loopback addresses (got {})", cli.url);
    }
    if cli.warmup >= cli.duration {
        bail!("--warmup must be shorter than --duration");
    }
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..cli.concurrency.max(1))
        .map(|n| {
            tokio::spawn(client(
                n,
                cli.url.clone(),
                Duration::from_millis(cli.pause_ms),
                stop.clone(),
                cli.max_calls,
                counters.clone(),
            ))
        })
        .collect();

    let start = Instant::now();
    let end = start + Duration::from_secs(cli.duration);
    let mut samples: Vec<(u64, Rss)> = Vec::new();
    println!("     t_s    rss_kib   anon_kib   file_kib      calls     rounds  refused  failures");
    loop {
        let t = start.elapsed().as_secs();
        let rss = rss_kib(cli.pid)?;
        samples.push((t, rss));
        println!(
            "{t:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9}",
            rss.total,
            rss.anon,
            rss.file,
            counters.calls.load(Ordering::Relaxed),
            counters.rounds.load(Ordering::Relaxed),
            counters.refused_as_expected.load(Ordering::Relaxed),
            counters.failures.load(Ordering::Relaxed),
        );
        let done = counters.calls.load(Ordering::Relaxed) >= cli.max_calls;
        if Instant::now() >= end || done {
            break;
        }
        let next = Instant::now() + Duration::from_secs(cli.sample_every.max(1));
        tokio::time::sleep_until(next.min(end).into()).await;
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = tokio::time::timeout(Duration::from_secs(30), w).await;
    }

    anyhow::ensure!(
        samples.iter().any(|(t, _)| *t >= cli.warmup),
        "no sample after the warm-up"
    );
    let (base, peak, last, total_pct) = growth(&samples, cli.warmup, |r| r.total);
    let (abase, apeak, alast, anon_pct) = growth(&samples, cli.warmup, |r| r.anon);
    let (fbase, fpeak, _, _) = growth(&samples, cli.warmup, |r| r.file);
    let elapsed = start.elapsed().as_secs_f64();
    let calls = counters.calls.load(Ordering::Relaxed);
    let failures = counters.failures.load(Ordering::Relaxed);
    println!(
        "summary: {elapsed:.0} s, {calls} calls ({:.1}/s), {} rounds, {} tampered states refused, \
         {failures} failures",
        calls as f64 / elapsed,
        counters.rounds.load(Ordering::Relaxed),
        counters.refused_as_expected.load(Ordering::Relaxed),
    );
    println!(
        "RSS (KiB) at warm-up end / peak after / last: total {base} / {peak} / {last} \
         ({total_pct:+.2} %), anonymous {abase} / {apeak} / {alast} ({anon_pct:+.2} %), \
         file-backed {fbase} / {fpeak}"
    );
    let (metric, growth) = match cli.metric {
        Metric::Anon => ("anonymous RSS", anon_pct),
        Metric::Total => ("RSS", total_pct),
    };
    if failures > 0 {
        bail!("{failures} calls did not end as expected");
    }
    if growth >= cli.max_growth_pct {
        bail!(
            "{metric} grew {growth:.2} % after the warm-up (limit {})",
            cli.max_growth_pct
        );
    }
    println!("flat: yes");
    Ok(())
}
