//! Measures the example tools on the Lambda runtime emulator against `serve`
//! (`scripts/lambda.sh`): a 3-round `summarize_repo` and a 2-round `get_weather`, `--repeat`
//! times each.
//!
//! - **Lambda** (`cargo lambda watch --only-lambda-apis`, see
//!   [`mcp_tool_tests::lambda_emulator`]): every round on a fresh function process. *cold* is
//!   from starting the process to the answer (what a round pays when it meets a cold
//!   instance); *warm* is the same message sent again to that instance right after (what a
//!   round pays on a warm one). The cold start of an invocation is *cold − warm*.
//! - **serve**: the same rounds over Streamable HTTP to one long-running `serve --http`
//!   (the same binary's build, the same demo authenticator and key), one client connection.
//!
//! Prints one line per round with the medians in milliseconds, then a summary, as markdown
//! tables. The binaries are the ones next to this one (`example_lambda`, `example_serve`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use mcp_tool_client::{ClientTransport, Driver, HttpTransport, TransportError};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_tests::lambda_emulator::{ColdFunction, Emulator, TEST_KEY, cargo_lambda};
use serde_json::{Value, json};

#[derive(Parser, Debug)]
struct Cli {
    /// How many times each call is made on each side.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

/// The calls measured: tool, arguments, rounds.
fn calls() -> [(&'static str, Value, u32); 2] {
    [
        ("summarize_repo", json!({"audience": "developer"}), 3),
        ("get_weather", json!({"location": "Oslo"}), 2),
    ]
}

/// HTTP to `serve`, each exchange timed.
struct Timed {
    http: HttpTransport,
    times: Mutex<Vec<Duration>>,
}

impl ClientTransport for Timed {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        Box::pin(async move {
            let start = Instant::now();
            let answer = self.http.send(message).await;
            self.times
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(start.elapsed());
            answer
        })
    }
}

struct Serve(Child, String);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_serve(bin: &Path) -> anyhow::Result<Serve> {
    let mut child = Command::new(bin)
        .args(["--http", "127.0.0.1:0", "--store", "memory"])
        .env("MCP_TOOL_STATE_KEY", TEST_KEY)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let stderr = child.stderr.take().context("stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.trim().strip_prefix("listening on ") {
                    break url.to_owned();
                }
            }
            _ => bail!("serve did not announce its URL"),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok(Serve(child, url))
}

/// One round's samples in ms: its name, cold and warm on Lambda, and on `serve`.
type Row = (String, Vec<f64>, Vec<f64>, Vec<f64>);

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let here = std::env::current_exe()?;
    let dir = here.parent().context("binary directory")?;
    let (lambda_bin, serve_bin): (PathBuf, PathBuf) =
        (dir.join("example_lambda"), dir.join("example_serve"));
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = tokio::task::spawn_blocking(cargo_lambda)
        .await?
        .map_err(anyhow::Error::msg)?;
    let emulator = Emulator::start(&exe, &workspace).map_err(anyhow::Error::msg)?;
    let serve = start_serve(&serve_bin)?;

    let function =
        Arc::new(ColdFunction::new(&lambda_bin, &emulator, "alice").measuring_warm(true));
    let timed = Arc::new(Timed {
        http: HttpTransport::new(serve.1.clone()).bearer("alice"),
        times: Mutex::new(Vec::new()),
    });
    // per (tool, round): cold, warm, serve samples
    let mut rows: Vec<Row> = Vec::new();
    for (tool, _, rounds) in calls() {
        for k in 1..=rounds {
            rows.push((format!("{tool} {k}/{rounds}"), vec![], vec![], vec![]));
        }
    }
    // one warm-up call on serve (its first connection, its lazy initialisations)
    Driver::new(timed.clone(), FakeModel::new())
        .call_tool("get_weather", json!({"location": "Oslo"}))
        .await?;
    timed
        .times
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
    for _ in 0..cli.repeat {
        let mut row = 0;
        for (tool, args, rounds) in calls() {
            let before = function.timings().len();
            let outcome = Driver::new(function.clone(), FakeModel::new())
                .call_tool(tool, args.clone())
                .await
                .with_context(|| format!("{tool} on the emulator\n{}", emulator.log()))?;
            if outcome.rounds != rounds || outcome.is_error() {
                bail!("{tool} on the emulator: {:?}", outcome.result);
            }
            let lambda = function.timings()[before..].to_vec();
            timed
                .times
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            let outcome = Driver::new(timed.clone(), FakeModel::new())
                .call_tool(tool, args.clone())
                .await?;
            if outcome.rounds != rounds || outcome.is_error() {
                bail!("{tool} on serve: {:?}", outcome.result);
            }
            let served = timed
                .times
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            for k in 0..rounds as usize {
                let r = &mut rows[row + k];
                r.1.push(ms(lambda[k].cold));
                r.2.push(ms(lambda[k].warm.unwrap_or_default()));
                r.3.push(ms(served[k]));
            }
            row += rounds as usize;
        }
    }
    println!(
        "| round | Lambda, cold instance (ms) | Lambda, warm instance (ms) | cold start (cold − warm, ms) | serve (ms) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: |");
    let mut starts = Vec::new();
    for (name, cold, warm, served) in &rows {
        let start: Vec<f64> = cold.iter().zip(warm).map(|(c, w)| c - w).collect();
        starts.extend(start.iter().copied());
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.2} |",
            median(cold.clone()),
            median(warm.clone()),
            median(start),
            median(served.clone())
        );
    }
    let all = |i: usize| {
        median(
            rows.iter()
                .flat_map(|r| match i {
                    0 => r.1.clone(),
                    1 => r.2.clone(),
                    _ => r.3.clone(),
                })
                .collect(),
        )
    };
    println!(
        "\nmedians over {} rounds each: Lambda cold round {:.1} ms, warm round {:.1} ms, \
         cold start {:.1} ms; serve round {:.2} ms",
        rows.iter().map(|r| r.1.len()).sum::<usize>(),
        all(0),
        all(1),
        median(starts),
        all(2)
    );
    Ok(())
}
