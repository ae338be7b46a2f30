//! The benchmark tool of `tests/benches/mrtr.rs` (`forecast(city)`: a form elicitation, a
//! sampling request, a structured result) outside criterion, for the measurements that need
//! a process of their own:
//!
//! ```text
//! bench_tool serve --impl macro|hand [--http 127.0.0.1:0] [--max-concurrent 64]
//!     # Streamable HTTP at /mcp; prints `listening on URL` to stderr (scripts/throughput.sh)
//! bench_tool rounds --impl macro|hand --round 0|1|2 --calls N
//!     # N requests of one round in process (`Server::handle_text`), for instruction counts
//!     # under callgrind (scripts/callgrind.sh: run with N and with 0, subtract, divide);
//!     # with MCP_TOOL_BENCH_TELEMETRY set, a subscriber records the runtime's spans
//!     # (scripts/telemetry_cost.sh)
//! ```
//!
//! `--impl macro` is the `#[mcp_tool]` version (`benches/mrtr/macro_tool.rs`), `--impl hand`
//! the hand-written one (`benches/mrtr/hand_written.rs`); both are compiled from the bench's
//! own source files. The sealing key is fixed (measurement only).

#[path = "../../benches/mrtr/domain.rs"]
mod domain;
#[path = "../../benches/mrtr/hand_written.rs"]
mod hand_written;
#[path = "../../benches/mrtr/macro_tool.rs"]
mod macro_tool;

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::NotificationSink;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::{Principal, Server};
use serde_json::{Value, json};

/// Serve or drive the MRTR benchmark tool.
#[derive(Parser, Debug)]
#[command(name = "bench_tool")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the tool over Streamable HTTP.
    Serve {
        /// Which version of the tool.
        #[arg(long = "impl", value_enum)]
        which: Impl,
        /// Where to listen (loopback).
        #[arg(long, default_value = "127.0.0.1:0")]
        http: SocketAddr,
        /// Requests in progress at once before 503.
        #[arg(long, default_value_t = 256)]
        max_concurrent: usize,
    },
    /// Handle one round's request `--calls` times in process.
    Rounds {
        /// Which version of the tool.
        #[arg(long = "impl", value_enum)]
        which: Impl,
        /// The round: 0 (asks the login), 1 (opens, asks the model), 2 (opens, completes).
        #[arg(long)]
        round: usize,
        /// How many times.
        #[arg(long)]
        calls: u64,
    },
}

/// The versions of the tool.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Impl {
    /// `#[mcp_tool]`.
    Macro,
    /// Hand-written against the `Tool` trait.
    Hand,
}

fn server(which: Impl) -> anyhow::Result<Server> {
    let sealer = Sealer::new(
        Keyring::new("k1", b"bench-key-0123456789abcdef-0123456789".to_vec())?,
        SealConfig::default().with_ttl(Duration::from_secs(3600)),
    );
    let b = Server::builder(Implementation::new("bench", "0")).sealer(sealer);
    let b = match which {
        Impl::Macro => b.tool(macro_tool::forecast::tool()),
        Impl::Hand => b.tool(hand_written::Forecaster),
    };
    Ok(b.build()?)
}

fn request(id: u64, answers: Option<Value>, state: Option<&str>) -> String {
    let mut params = json!({"name": "forecast", "arguments": {"city": "Oslo"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
    }});
    if let Some(a) = answers {
        params["inputResponses"] = a;
    }
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

fn answer(req: &Value) -> anyhow::Result<Value> {
    Ok(match req["method"].as_str() {
        Some("elicitation/create") => json!({"action": "accept", "content": {"name": "octocat"}}),
        Some("sampling/createMessage") => json!({"role": "assistant",
            "content": {"type": "text", "text": "great"}, "model": "m", "stopReason": "endTurn"}),
        other => bail!("unexpected input request {other:?}"),
    })
}

/// The request line of each of the three rounds of one call.
async fn round_requests(server: &Server) -> anyhow::Result<Vec<String>> {
    let anyone = Principal::anonymous();
    let mut lines = vec![request(1, None, None)];
    loop {
        let line = lines.last().context("a request")?.clone();
        let resp = server
            .handle_text(&line, &anyone, NotificationSink::none())
            .await
            .context("no response")?
            .into_response()
            .to_value();
        let result = &resp["result"];
        if result["resultType"] == "complete" {
            break;
        }
        let mut answers = serde_json::Map::new();
        for (k, r) in result["inputRequests"]
            .as_object()
            .context("inputRequests")?
        {
            answers.insert(k.clone(), answer(r)?);
        }
        let id = lines.len() as u64 + 1;
        lines.push(request(
            id,
            Some(Value::Object(answers)),
            result["requestState"].as_str(),
        ));
    }
    Ok(lines)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Serve {
            which,
            http: addr,
            max_concurrent,
        } => {
            if !addr.ip().is_loopback() {
                bail!("bench_tool serves loopback addresses only");
            }
            let config = HttpConfig::default().max_concurrent_requests(max_concurrent);
            let handle = http::spawn(addr, server(which)?, config).await?;
            eprintln!("listening on {}", handle.url());
            tokio::signal::ctrl_c().await?;
        }
        Command::Rounds {
            which,
            round,
            calls,
        } => {
            // Telemetry on (scripts/telemetry_cost.sh): a subscriber that records every
            // span of the runtime as OpenTelemetry spans, all sampled (tracing-opentelemetry
            // over an SDK tracer provider with no exporter), as a deployment exporting
            // every trace pays for it on the request's thread.
            let _telemetry = std::env::var_os("MCP_TOOL_BENCH_TELEMETRY").map(|_| {
                use opentelemetry::trace::TracerProvider as _;
                use tracing_subscriber::Layer as _;
                use tracing_subscriber::layer::SubscriberExt as _;
                let filter = tracing_subscriber::filter::Targets::new()
                    .with_target("mcp_tool_runtime", tracing::Level::INFO);
                let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
                let otel = tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer("bench"))
                    .with_location(false)
                    .with_threads(false)
                    .with_target(false)
                    .with_tracked_inactivity(false)
                    .with_filter(filter);
                tracing::subscriber::set_default(tracing_subscriber::registry().with(otel))
            });
            let server = server(which)?;
            let lines = round_requests(&server).await?;
            let line = lines.get(round).context("--round is 0, 1 or 2")?;
            let anyone = Principal::anonymous();
            // JSON text in, JSON bytes out, as a transport does (`Server::handle_text`: a
            // result the server writes from its typed form is copied, not rebuilt).
            for _ in 0..calls {
                let resp = server
                    .handle_text(black_box(line), &anyone, NotificationSink::none())
                    .await;
                black_box(resp.map(|r| r.to_vec()));
            }
            println!("{which:?} round {round}: {calls} requests handled");
        }
    }
    Ok(())
}
