//! Prints the size of every sealed `requestState` of the example tools, round by round,
//! with compression of HMAC-protected states off (the format before) and on (now), and
//! `summarize_repo` on a generated repository of `--files` files (default 20,000).
//!
//! ```text
//! state_sizes [--files 20000]
//! ```
//!
//! Output: one Markdown table (`scripts/state_sizes.sh` puts it next to the benchmark tool's
//! sizes). Sizes are the length of the `requestState` string, in bytes; they do not depend
//! on the machine. State `k` is the one returned by the `k`-th request of the call.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use mcp_tool_client::{Direction, Driver, InProcessTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::load::{Flow, check_outcome, example_flows};
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use serde_json::json;

/// Print the sealed state sizes of the example tools, uncompressed and compressed.
#[derive(Parser, Debug)]
#[command(name = "state_sizes")]
struct Cli {
    /// Files in the generated repository `summarize_repo` reads.
    #[arg(long, default_value_t = 20_000)]
    files: usize,
    /// Also measure `summarize_repo` on this existing repository.
    #[arg(long, value_name = "PATH")]
    repo: Option<std::path::PathBuf>,
}

/// `bytes` of text that compresses about as well as prose or code (words drawn from a
/// vocabulary of 64 by a fixed pseudo-random sequence, in lines), not better.
fn text(seed: u64, bytes: usize) -> String {
    const WORDS: [&str; 64] = [
        "state",
        "round",
        "seal",
        "answer",
        "request",
        "tool",
        "model",
        "client",
        "server",
        "replica",
        "key",
        "token",
        "layout",
        "journal",
        "stage",
        "flow",
        "sample",
        "elicit",
        "roots",
        "file",
        "repo",
        "listing",
        "summary",
        "critique",
        "audience",
        "limit",
        "bytes",
        "digest",
        "binding",
        "principal",
        "expiry",
        "nonce",
        "salt",
        "cipher",
        "deflate",
        "inflate",
        "buffer",
        "stream",
        "socket",
        "header",
        "body",
        "status",
        "error",
        "retry",
        "backoff",
        "balance",
        "nginx",
        "upstream",
        "rotate",
        "previous",
        "active",
        "window",
        "cache",
        "schema",
        "field",
        "value",
        "object",
        "array",
        "string",
        "number",
        "boolean",
        "null",
        "async",
        "await",
    ];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = String::with_capacity(bytes + 16);
    let mut line = 0;
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = WORDS[(x % 64) as usize];
        out.push_str(w);
        line += w.len() + 1;
        if line > 72 {
            out.push('\n');
            line = 0;
        } else {
            out.push(' ');
        }
    }
    out
}

/// Writes a repository of `n` files: a README, a top-level source file and a document of
/// 6 KiB each (more than `summarize_repo` reads of a file), then small source files in
/// directories of 100.
fn generate_repo(root: &Path, n: usize) -> anyhow::Result<()> {
    std::fs::write(
        root.join("README.md"),
        format!("# generated\n\n{}", text(1, 6144)),
    )?;
    std::fs::write(
        root.join("main.rs"),
        format!("// {}\nfn main() {{}}\n", text(2, 6144)),
    )?;
    std::fs::create_dir_all(root.join("docs"))?;
    std::fs::write(
        root.join("docs/guide.md"),
        format!("## Guide\n\n{}", text(3, 6144)),
    )?;
    for i in 3..n {
        let dir = root.join(format!("src/pkg{:03}", i / 100));
        if i % 100 == 0 || i == 3 {
            std::fs::create_dir_all(&dir)?;
        }
        std::fs::write(
            dir.join(format!("module_{i:05}.rs")),
            format!("//! Module {i}.\npub fn f{i}() -> usize {{ {i} }}\n"),
        )?;
    }
    Ok(())
}

/// The state sizes of one call of `flow`, in order.
async fn sizes(repo: Repo, compress: bool, flow: &Flow) -> anyhow::Result<Vec<usize>> {
    let sealer = Sealer::new(
        Keyring::new("k1", vec![7u8; 32])?,
        SealConfig::default()
            .with_ttl(Duration::from_secs(600))
            .with_compress(compress),
    );
    let server = mcp_tool_examples::example_server(Some(sealer), repo, Notes::temporary()?)?;
    let mut driver = Driver::new(InProcessTransport::new(server), FakeModel::new());
    let outcome = driver.call_tool(flow.tool, flow.args.clone()).await;
    let transcript = match &outcome {
        Ok(out) => out.transcript.clone(),
        Err(_) => driver.transcript().to_vec(),
    };
    let states = transcript
        .iter()
        .filter(|e| e.direction == Direction::Received)
        .filter_map(|e| e.message.pointer("/result/requestState")?.as_str())
        .map(str::len)
        .collect();
    check_outcome(flow, outcome).map_err(anyhow::Error::msg)?;
    Ok(states)
}

fn cells(v: &[usize], width: usize) -> Vec<String> {
    (0..width)
        .map(|i| v.get(i).map_or_else(|| "–".to_owned(), usize::to_string))
        .collect()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let dir = tempfile::tempdir().context("a temporary directory")?;
    generate_repo(dir.path(), cli.files).context("generating the repository")?;
    let mut rows: Vec<(String, String, Vec<usize>, Vec<usize>)> = Vec::new();
    let mut flows: Vec<(String, Flow, Option<&Path>)> = example_flows()
        .into_iter()
        .map(|f| (format!("{} {}", f.tool, f.args), f, None))
        .collect();
    let big = Flow {
        tool: "summarize_repo",
        args: json!({"audience": "developer", "critique": true}),
        rounds: 4,
    };
    flows.push((
        format!("summarize_repo, {} generated files, critique", cli.files),
        big.clone(),
        Some(dir.path()),
    ));
    if let Some(path) = &cli.repo {
        flows.push((
            format!("summarize_repo on {}, critique", path.display()),
            big,
            Some(path),
        ));
    }
    for (label, flow, root) in &flows {
        let repo = || -> anyhow::Result<Repo> {
            Ok(match root {
                Some(root) => Repo::open(root)?,
                None => Repo::embedded_demo()?,
            })
        };
        let before = sizes(repo()?, false, flow).await?;
        let after = sizes(repo()?, true, flow).await?;
        let ratio = match (before.iter().max(), after.iter().max()) {
            (Some(b), Some(a)) => format!("{:.2}×", *a as f64 / *b as f64),
            _ => "–".to_owned(),
        };
        rows.push((label.clone(), ratio, before, after));
    }
    let width = rows.iter().map(|r| r.2.len()).max().unwrap_or(0);
    let heads: Vec<String> = (1..=width).map(|k| format!("state {k}")).collect();
    println!(
        "| call | {} | {} | largest after/before |",
        heads
            .iter()
            .map(|h| format!("{h} before"))
            .collect::<Vec<_>>()
            .join(" | "),
        heads
            .iter()
            .map(|h| format!("{h} after"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}---|", "---|".repeat(2 * width));
    for (label, ratio, before, after) in rows {
        println!(
            "| `{label}` | {} | {} | {ratio} |",
            cells(&before, width).join(" | "),
            cells(&after, width).join(" | ")
        );
    }
    Ok(())
}
