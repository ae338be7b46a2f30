//! The README's first command: `cargo run -p mcp-tool-examples --bin demo`.
//!
//! Starts the example server in-process, plays the host with the deterministic fake model
//! ([`FakeModel`]) and prints every JSON-RPC request and response — `server/discover`,
//! `tools/list`, then the `summarize_repo` rounds (each retry a new request with a new id,
//! the latest answers and the echoed `requestState`) — ending with the final result.
//!
//! ```text
//! demo                         # audience "developer", two sampling rounds
//! demo --critique              # a third round: the model critiques its summary
//! demo --audience manager --repo ~/src/project
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use mcp_tool_client::{Direction, Driver, InProcessTransport, TranscriptEntry};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_runtime::protocol::{ClientCapabilities, Implementation};
use mcp_tool_runtime::seal::Sealer;
use serde_json::{Value, json};

/// Watch summarize_repo's multi round-trip flow, message by message.
#[derive(Parser, Debug)]
#[command(name = "demo", version)]
struct Cli {
    /// Who the summary is for.
    #[arg(long, default_value = "developer")]
    audience: String,
    /// Ask for a critique of the summary (a third round).
    #[arg(long)]
    critique: bool,
    /// Summarize this directory instead of the embedded demo repository.
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let repo = match &cli.repo {
        Some(path) => Repo::open(path).with_context(|| format!("--repo {}", path.display()))?,
        None => Repo::embedded_demo().context("the embedded demo repository")?,
    };
    // One process plays both sides, so a random state key is fine here.
    // The notes tools are registered too (not called here): a store in a temporary directory.
    let notes = Notes::temporary().context("the notes store")?;
    let server = Arc::new(mcp_tool_examples::example_server(
        Some(Sealer::random()),
        repo,
        notes,
    )?);
    // Like the lesson's client, declare sampling only.
    let host = || FakeModel::new().with_capabilities(ClientCapabilities::none().with_sampling());
    let client_info = Some(Implementation::new(
        "mcp-tool-demo",
        env!("CARGO_PKG_VERSION"),
    ));
    let mut driver = Driver::new(InProcessTransport::new(server.clone()), host())
        .with_client_info(client_info.clone());

    banner("server/discover");
    driver.discover().await?;
    print_transcript(&driver.take_transcript());

    banner("tools/list");
    driver.list_tools().await?;
    print_transcript(&driver.take_transcript());

    banner("tools/call summarize_repo (one independent request per round)");
    // Every request stands alone, so a fresh client numbers the rounds 1, 2, 3 as the lesson does.
    let mut driver =
        Driver::new(InProcessTransport::new(server), host()).with_client_info(client_info);
    let args = json!({"audience": cli.audience, "critique": cli.critique});
    let outcome = driver.call_tool("summarize_repo", args).await;
    print_transcript(&driver.take_transcript());
    let outcome = outcome.context("summarize_repo failed")?;

    banner(&format!("final result after {} requests", outcome.rounds));
    println!("{}", outcome.text());
    Ok(())
}

fn banner(title: &str) {
    println!("\n=== {title} ===");
}

fn print_transcript(entries: &[TranscriptEntry]) {
    for e in entries {
        let (arrow, what) = match e.direction {
            Direction::Sent => ("client -> server", describe(&e.message, true)),
            Direction::Received => ("server -> client", describe(&e.message, false)),
        };
        println!("\n--- {arrow}{what}");
        println!(
            "{}",
            serde_json::to_string_pretty(&e.message).unwrap_or_default()
        );
    }
}

fn describe(msg: &Value, sent: bool) -> String {
    let id = msg
        .get("id")
        .map(|i| format!(" id {i}"))
        .unwrap_or_default();
    if sent {
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("?");
        format!(": {method}{id}")
    } else if msg.get("error").is_some() {
        format!(":{id} error")
    } else {
        let kind = msg
            .pointer("/result/resultType")
            .and_then(Value::as_str)
            .unwrap_or("complete");
        format!(":{id} {kind}")
    }
}
