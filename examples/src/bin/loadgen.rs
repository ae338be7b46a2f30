//! A bounded load generator for a running MCP server over loopback Streamable HTTP:
//! `--concurrency` clients each run full multi-round calls (the project's [`Driver`], the
//! deterministic [`FakeModel`] answering every input request), through a
//! [`RetryTransport`] that sends a round again when the replica that took it went away.
//! It stops starting calls after `--duration` seconds or `--max-flows` calls, lets the calls
//! in progress finish, and prints one summary line:
//!
//! ```text
//! RESULT started=… completed=… retried=… retries=… lost=… failed=… elapsed_s=… flows_per_s=… p50_ms=… p99_ms=…
//! ```
//!
//! `retried`: calls that needed at least one retry; `retries`: the retries themselves;
//! `lost`: calls started but not completed as expected (`failed` of them ended with an
//! error or an unexpected result, the rest timed out). It exits with an error when any call
//! was lost.
//!
//! ```text
//! loadgen --url http://127.0.0.1:PORT/mcp [--concurrency 8] [--duration 30] [--max-flows 1000000]
//!         [--tool NAME --args JSON --rounds N] [--retries 12] [--report-every 5]
//! ```
//!
//! Without `--tool` the calls cycle through the example server's tools
//! ([`mcp_tool_examples::load::example_flows`]). Only loopback URLs are accepted.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use mcp_tool_client::{Driver, HttpTransport, RetryPolicy, RetryTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::load::{Flow, check_outcome, example_flows, is_loopback_url, quantile};
use tokio::sync::Mutex;

/// Run bounded concurrent multi-round calls against a server and count how they end.
#[derive(Parser, Debug)]
#[command(name = "loadgen")]
struct Cli {
    /// The endpoint, e.g. http://127.0.0.1:8080/mcp (loopback only).
    #[arg(long)]
    url: String,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Seconds after which no new call starts.
    #[arg(long, default_value_t = 30)]
    duration: u64,
    /// Calls to start in all, at most.
    #[arg(long, default_value_t = 1_000_000)]
    max_flows: u64,
    /// Call only this tool (with --args and --rounds) instead of the example mix.
    #[arg(long, requires_all = ["args", "rounds"])]
    tool: Option<String>,
    /// The arguments of --tool, as JSON.
    #[arg(long)]
    args: Option<String>,
    /// The requests a successful call of --tool takes.
    #[arg(long)]
    rounds: Option<u32>,
    /// Retries of one request when no replica answered it. The default (12: 20 ms doubling to
    /// 500 ms, about 4 s in all) outlasts a load balancer that marks every replica down for a
    /// couple of seconds during a rolling restart (nginx `fail_timeout=2s` in
    /// scripts/scaleout.sh); 8 (about 2.1 s) lost 13 of 83,924 calls in one run.
    #[arg(long, default_value_t = 12)]
    retries: u32,
    /// Seconds between two progress lines (0: none).
    #[arg(long, default_value_t = 5)]
    report_every: u64,
    /// Longest a call (all its rounds and retries) may take before it counts as lost.
    #[arg(long, default_value_t = 60)]
    call_timeout: u64,
}

#[derive(Default)]
struct Counters {
    started: AtomicU64,
    completed: AtomicU64,
    failed: AtomicU64,
    retried: AtomicU64,
    retries: AtomicU64,
}

struct Worker {
    n: usize,
    url: String,
    flows: Arc<Vec<Flow>>,
    policy: RetryPolicy,
    call_timeout: Duration,
    deadline: Instant,
    max_flows: u64,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    latencies: Arc<Mutex<Vec<f64>>>,
}

impl Worker {
    fn driver(&self, retries: &Arc<AtomicU64>) -> Driver<RetryTransport<HttpTransport>, FakeModel> {
        let principal = format!("loadgen-user-{}", self.n);
        let http = HttpTransport::new(self.url.clone()).bearer(&principal);
        let transport = RetryTransport::new(http, self.policy).with_counter(retries.clone());
        Driver::new(transport, FakeModel::new())
    }

    async fn run(self) {
        let retries = Arc::new(AtomicU64::new(0));
        let mut driver = self.driver(&retries);
        let mut mine = Vec::new();
        let mut i = self.n;
        loop {
            if self.stop.load(Ordering::Relaxed) || Instant::now() >= self.deadline {
                break;
            }
            if self.counters.started.fetch_add(1, Ordering::Relaxed) >= self.max_flows {
                self.counters.started.fetch_sub(1, Ordering::Relaxed);
                break;
            }
            let flow = &self.flows[i % self.flows.len()];
            i += 1;
            let before = retries.load(Ordering::Relaxed);
            let t0 = Instant::now();
            let call = tokio::time::timeout(
                self.call_timeout,
                driver.call_tool(flow.tool, flow.args.clone()),
            )
            .await;
            let elapsed = t0.elapsed();
            let after = retries.load(Ordering::Relaxed);
            if after > before {
                self.counters.retried.fetch_add(1, Ordering::Relaxed);
                self.counters
                    .retries
                    .fetch_add(after - before, Ordering::Relaxed);
            }
            match call {
                Err(_) => {
                    eprintln!("{}: no answer within {:?}", flow.tool, self.call_timeout);
                    // A fresh client: the old one may be stuck on a connection.
                    driver = self.driver(&retries);
                }
                Ok(outcome) => match check_outcome(flow, outcome) {
                    Ok(_) => {
                        self.counters.completed.fetch_add(1, Ordering::Relaxed);
                        mine.push(elapsed.as_secs_f64() * 1000.0);
                    }
                    Err(e) => {
                        eprintln!("{e}");
                        self.counters.failed.fetch_add(1, Ordering::Relaxed);
                    }
                },
            }
            // The transcript grows with every call: keep the client's memory flat.
            let _ = driver.take_transcript();
        }
        self.latencies.lock().await.extend(mine);
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if !is_loopback_url(&cli.url) {
        bail!("loadgen only targets loopback addresses (got {})", cli.url);
    }
    let flows = match (&cli.tool, &cli.args, cli.rounds) {
        (Some(tool), Some(args), Some(rounds)) => vec![Flow {
            tool: Box::leak(tool.clone().into_boxed_str()),
            args: serde_json::from_str(args).context("--args is not JSON")?,
            rounds,
        }],
        _ => example_flows(),
    };
    let flows = Arc::new(flows);
    let policy = RetryPolicy {
        max_retries: cli.retries,
        ..RetryPolicy::default()
    };
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let deadline = start + Duration::from_secs(cli.duration);
    let workers: Vec<_> = (0..cli.concurrency.max(1))
        .map(|n| {
            tokio::spawn(
                Worker {
                    n,
                    url: cli.url.clone(),
                    flows: flows.clone(),
                    policy,
                    call_timeout: Duration::from_secs(cli.call_timeout),
                    deadline,
                    max_flows: cli.max_flows,
                    stop: stop.clone(),
                    counters: counters.clone(),
                    latencies: latencies.clone(),
                }
                .run(),
            )
        })
        .collect();
    let report = {
        let counters = counters.clone();
        let every = cli.report_every;
        tokio::spawn(async move {
            if every == 0 {
                return;
            }
            loop {
                tokio::time::sleep(Duration::from_secs(every)).await;
                println!(
                    "t={:.0}s started={} completed={} retried={} failed={}",
                    start.elapsed().as_secs_f64(),
                    counters.started.load(Ordering::Relaxed),
                    counters.completed.load(Ordering::Relaxed),
                    counters.retried.load(Ordering::Relaxed),
                    counters.failed.load(Ordering::Relaxed),
                );
            }
        })
    };
    let grace = Duration::from_secs(cli.duration + cli.call_timeout + 10);
    for w in workers {
        if tokio::time::timeout_at((start + grace).into(), w)
            .await
            .is_err()
        {
            stop.store(true, Ordering::Relaxed);
        }
    }
    report.abort();
    let elapsed = start.elapsed().as_secs_f64();
    let mut lat = std::mem::take(&mut *latencies.lock().await);
    lat.sort_by(f64::total_cmp);
    let started = counters.started.load(Ordering::Relaxed);
    let completed = counters.completed.load(Ordering::Relaxed);
    let lost = started.saturating_sub(completed);
    println!(
        "RESULT started={started} completed={completed} retried={} retries={} lost={lost} \
         failed={} elapsed_s={elapsed:.2} flows_per_s={:.1} p50_ms={:.2} p99_ms={:.2}",
        counters.retried.load(Ordering::Relaxed),
        counters.retries.load(Ordering::Relaxed),
        counters.failed.load(Ordering::Relaxed),
        completed as f64 / elapsed,
        quantile(&lat, 0.50),
        quantile(&lat, 0.99),
    );
    if lost > 0 {
        bail!("{lost} of {started} calls were lost");
    }
    Ok(())
}
