//! An interactive MCP 2026-07-28 client for the terminal.
//!
//! ```text
//! client --stdio "cargo run -q -p mcp-tool-examples --bin serve"       # a server on stdio
//! client --url http://127.0.0.1:8080/mcp --bearer alice               # Streamable HTTP
//! client --url … --call get_weather --args '{"location":"Paris"}'     # one call, then exit
//! client --url … --sampling fixed:'["README.md"]' --root .            # answer sampling, offer roots
//! ```
//!
//! It discovers the server, lists its tools and calls one (from `--call`/`--args`, or asked at
//! the prompt, repeatedly until an empty tool name or end of input). Every round is shown as it
//! happens; elicitations are answered at the prompt (one question per form field, validated),
//! sampling by the `--sampling` responder, `roots/list` with the `--root` directories.

use std::io::{BufReader, IsTerminal};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Parser;
use mcp_tool_examples::client_cli::{ConsoleHost, Showing, split_command};
use mcp_tool_examples::interactive::{AnswerConfig, Console, RootEntry, SamplingResponder};
use mcp_tool_runtime::client::{
    CallOutcome, ChildTransport, ClientTransport, Driver, HttpTransport,
};
use mcp_tool_runtime::protocol::Implementation;
use serde_json::Value;

/// Interactive client for MCP 2026-07-28 servers (multi round-trip requests).
#[derive(Parser, Debug)]
#[command(name = "client", version)]
struct Cli {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp.
    #[arg(long, conflicts_with = "stdio", required_unless_present = "stdio")]
    url: Option<String>,
    /// A server to start and speak to over stdio, e.g. "serve --repo ." (quoted words allowed).
    #[arg(long)]
    stdio: Option<String>,
    /// Bearer token sent as `Authorization: Bearer TOKEN` (HTTP only).
    #[arg(long, requires = "url")]
    bearer: Option<String>,
    /// Only list the tools, then exit.
    #[arg(long)]
    list: bool,
    /// Call this tool once, then exit (status 1 when the call fails or the result is an error).
    #[arg(long)]
    call: Option<String>,
    /// Arguments of `--call` as a JSON object.
    #[arg(long, default_value = "{}", requires = "call")]
    args: String,
    /// How to answer sampling requests: `fixed:TEXT`, `echo`, or `prompt` (type the answer).
    #[arg(long, default_value = "prompt")]
    sampling: SamplingResponder,
    /// Do not declare the sampling capability.
    #[arg(long)]
    no_sampling: bool,
    /// Do not declare the elicitation capability.
    #[arg(long)]
    no_elicitation: bool,
    /// A directory offered to `roots/list` (repeatable; declares the roots capability).
    #[arg(long = "root")]
    roots: Vec<PathBuf>,
    /// Print every JSON-RPC message in full.
    #[arg(long, short)]
    verbose: bool,
}

type StdConsoleHost = ConsoleHost<BufReader<std::io::Stdin>, std::io::Stdout>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let config = AnswerConfig {
        elicitation: !cli.no_elicitation,
        sampling: (!cli.no_sampling).then(|| cli.sampling.clone()),
        roots: cli.roots.iter().map(|p| RootEntry::from_path(p)).collect(),
    };
    let transport: Box<dyn ClientTransport> = match (&cli.url, &cli.stdio) {
        (Some(url), _) => {
            let mut t = HttpTransport::new(url.clone());
            if let Some(token) = &cli.bearer {
                t = t.bearer(token);
            }
            Box::new(t)
        }
        (None, Some(cmd)) => {
            let argv = split_command(cmd).map_err(anyhow::Error::msg)?;
            // Indexing is safe: `split_command` refuses an empty command (an error above).
            let mut command = tokio::process::Command::new(&argv[0]);
            command.args(&argv[1..]);
            Box::new(ChildTransport::spawn(command).with_context(|| format!("starting {cmd:?}"))?)
        }
        (None, None) => bail!("give --url or --stdio"),
    };
    let echo = !std::io::stdin().is_terminal();
    let console =
        Console::new(BufReader::new(std::io::stdin()), std::io::stdout(), config).with_echo(echo);
    let mut driver = Driver::new(
        Showing::new(transport, cli.verbose),
        ConsoleHost::new(console),
    )
    .with_client_info(Some(Implementation::new(
        "mcp-tool-client",
        env!("CARGO_PKG_VERSION"),
    )));

    let discovered = driver.discover().await.context("server/discover")?;
    show_server(&discovered);
    let tools = driver.list_tools().await.context("tools/list")?;
    show_tools(&tools);
    if cli.list {
        return Ok(());
    }

    if let Some(name) = &cli.call {
        let args: Value = serde_json::from_str(&cli.args).context("--args is not JSON")?;
        let ok = call(&mut driver, name, args).await;
        std::process::exit(if ok { 0 } else { 1 });
    }

    loop {
        let console = &mut driver.host_mut().console;
        let Some(name) = console.ask_line("\ntool to call (empty to quit): ") else {
            break;
        };
        let name = name.trim().to_owned();
        if name.is_empty() {
            break;
        }
        let args = loop {
            let Some(line) = console.ask_line("arguments as a JSON object ({}): ") else {
                return Ok(());
            };
            let line = if line.trim().is_empty() {
                "{}"
            } else {
                line.trim()
            };
            match serde_json::from_str::<Value>(line) {
                Ok(v @ Value::Object(_)) => break v,
                Ok(_) => println!("   a JSON object, please"),
                Err(e) => println!("   not JSON ({e}); try again"),
            }
        };
        call(&mut driver, &name, args).await;
    }
    Ok(())
}

async fn call(
    driver: &mut Driver<Showing<Box<dyn ClientTransport>>, StdConsoleHost>,
    name: &str,
    args: Value,
) -> bool {
    match driver.call_tool(name, args).await {
        Ok(outcome) => {
            show_outcome(&outcome);
            !outcome.is_error()
        }
        Err(e) => {
            println!("call failed: {e}");
            false
        }
    }
}

fn show_server(discovered: &Value) {
    let info = discovered
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"));
    let name = info
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let version = info
        .and_then(|i| i.get("version"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let versions = discovered
        .get("supportedVersions")
        .map(Value::to_string)
        .unwrap_or_default();
    println!("server {name} {version}, protocol versions {versions}");
    if let Some(i) = discovered.get("instructions").and_then(Value::as_str) {
        println!("instructions: {i}");
    }
}

fn show_tools(tools: &Value) {
    let list = tools
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    println!("{} tool(s):", list.len());
    for t in list {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
        let desc = t.get("description").and_then(Value::as_str).unwrap_or("");
        let first = desc.lines().next().unwrap_or("");
        println!("  {name} — {first}");
        if let Some(props) = t
            .get("inputSchema")
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            && !props.is_empty()
        {
            let names: Vec<&str> = props.keys().map(String::as_str).collect();
            println!("      arguments: {}", names.join(", "));
        }
    }
}

fn show_outcome(outcome: &CallOutcome) {
    let label = if outcome.is_error() {
        "error result"
    } else {
        "result"
    };
    println!("{label} after {} round(s):", outcome.rounds);
    let text = outcome.text();
    if !text.is_empty() {
        println!("{text}");
    }
    if let Some(s) = outcome.structured() {
        println!(
            "structuredContent: {}",
            serde_json::to_string_pretty(s).unwrap_or_default()
        );
    }
}
