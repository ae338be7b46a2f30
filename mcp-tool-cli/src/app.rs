//! The client's command line ([`Cli`]) and its session ([`run`]): discover, list, then one
//! call (`--call`) or calls asked at the prompt until an empty tool name or end of input;
//! or, with the `listen` subcommand, one `subscriptions/listen` stream printed as JSON
//! lines.

use std::io::{BufReader, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;
use mcp_tool_client::{
    CallOutcome, ChildTransport, ClientTransport, Driver, HttpTransport, RetryPolicy,
    RetryTransport,
};
use mcp_tool_runtime::protocol::Implementation;
use serde_json::Value;

use crate::host::{ConsoleHost, Showing, split_command};
use crate::interactive::{AnswerConfig, Console, RootEntry, SamplingResponder};

/// Interactive client for MCP 2026-07-28 servers (multi round-trip requests).
#[derive(Parser, Debug)]
#[command(name = "mcp-tool", version)]
pub struct Cli {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp or https://….
    #[arg(long, conflicts_with = "stdio", required_unless_present = "stdio")]
    pub url: Option<String>,
    /// A server to start and speak to over stdio, e.g. "serve --repo ." (shell words, quotes allowed).
    #[arg(long)]
    pub stdio: Option<String>,
    /// Bearer token sent as `Authorization: Bearer TOKEN` (HTTP only).
    #[arg(long, requires = "url")]
    pub bearer: Option<String>,
    /// Also trust the certificate authorities in this PEM file for https:// (e.g. a private
    /// or self-signed CA); the usual roots stay trusted. Certificates are always verified.
    #[arg(long, value_name = "FILE", requires = "url")]
    pub ca_cert: Option<PathBuf>,
    /// Retries of a round that no server answered (HTTP only: connection failures, 502-504,
    /// the server's busy answers, after its `Retry-After`); 0 = never retry.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub retries: u32,
    /// Only list the tools, then exit.
    #[arg(long)]
    pub list: bool,
    /// Call this tool once, then exit (status 1 when the call fails or the result is an error).
    #[arg(long)]
    pub call: Option<String>,
    /// Arguments of `--call` as a JSON object (for scripts); without it they are asked field
    /// by field from the tool's `inputSchema`.
    #[arg(long, requires = "call", value_name = "JSON")]
    pub args: Option<String>,
    /// How to answer sampling requests: `fixed:TEXT`, `echo`, or `prompt` (type the answer).
    #[arg(long, default_value = "prompt")]
    pub sampling: SamplingResponder,
    /// Do not declare the sampling capability.
    #[arg(long)]
    pub no_sampling: bool,
    /// Do not declare the elicitation capability.
    #[arg(long)]
    pub no_elicitation: bool,
    /// A directory offered to `roots/list` (repeatable; declares the roots capability).
    #[arg(long = "root")]
    pub roots: Vec<PathBuf>,
    /// Print every JSON-RPC message in full.
    #[arg(long, short)]
    pub verbose: bool,
    /// What to do instead of calling tools.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Listen (`subscriptions/listen`, HTTP) and print every message of the stream on its
    /// own line as JSON (the acknowledgement first) until the stream ends: status 0 after
    /// the server's graceful result, 1 when it closed without one (list again and listen
    /// again).
    Listen {
        /// The filter as a JSON object, e.g.
        /// '{"toolsListChanged": true, "resourceSubscriptions": ["notes://notes/1"]}'.
        filter: String,
    },
}

type StdConsoleHost = ConsoleHost<BufReader<std::io::Stdin>, std::io::Stdout>;
type StdDriver = Driver<Showing<Box<dyn ClientTransport>>, StdConsoleHost>;

/// The transport `cli` asks for: HTTP (with retries and the extra CA) or a child process.
///
/// # Errors
/// An unreadable or invalid `--ca-cert`, a `--stdio` command that does not split into words
/// or does not start.
pub fn transport(cli: &Cli) -> anyhow::Result<Box<dyn ClientTransport>> {
    match (&cli.url, &cli.stdio) {
        (Some(url), _) => {
            let mut t = HttpTransport::new(url.clone());
            if let Some(path) = &cli.ca_cert {
                let pem = std::fs::read(path)
                    .with_context(|| format!("reading --ca-cert {}", path.display()))?;
                t = t
                    .trusting_pem(&pem)
                    .with_context(|| format!("--ca-cert {}", path.display()))?;
            }
            if let Some(token) = &cli.bearer {
                t = t.bearer(token);
            }
            let policy = RetryPolicy {
                max_retries: cli.retries,
                ..RetryPolicy::default()
            };
            Ok(Box::new(RetryTransport::new(t, policy)))
        }
        (None, Some(cmd)) => {
            let argv = split_command(cmd).map_err(anyhow::Error::msg)?;
            let Some((program, args)) = argv.split_first() else {
                bail!("empty command");
            };
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            Ok(Box::new(
                ChildTransport::spawn(command).with_context(|| format!("starting {cmd:?}"))?,
            ))
        }
        (None, None) => bail!("give --url or --stdio"),
    }
}

/// Prints every message of a `subscriptions/listen` stream as one JSON line.
async fn listen(driver: &mut StdDriver, filter: Value) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let mut stream = driver
        .listen(filter)
        .await
        .context("subscriptions/listen")?;
    let mut out = std::io::stdout();
    while let Some(message) = stream.next().await {
        let message = message.context("the listen stream")?;
        writeln!(out, "{message}")?;
        out.flush()?;
        if message.get("result").is_some() {
            return Ok(ExitCode::SUCCESS);
        }
    }
    eprintln!("the stream closed without a result: list again and listen again");
    Ok(ExitCode::FAILURE)
}

/// Runs one session as `cli` says, on standard input and output.
///
/// # Errors
/// When the transport cannot be set up, discovery or listing fails, or `--args` is not a
/// JSON object.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = AnswerConfig {
        elicitation: !cli.no_elicitation,
        sampling: (!cli.no_sampling).then(|| cli.sampling.clone()),
        roots: cli.roots.iter().map(|p| RootEntry::from_path(p)).collect(),
    };
    let transport = transport(&cli)?;
    let echo = !std::io::stdin().is_terminal();
    let console =
        Console::new(BufReader::new(std::io::stdin()), std::io::stdout(), config).with_echo(echo);
    let mut driver = Driver::new(
        Showing::new(transport, cli.verbose),
        ConsoleHost::new(console),
    )
    .with_client_info(Some(Implementation::new(
        "mcp-tool",
        env!("CARGO_PKG_VERSION"),
    )));

    if let Some(Command::Listen { filter }) = &cli.command {
        let filter = json_object(filter).context("the listen filter")?;
        return listen(&mut driver, filter).await;
    }

    let discovered = driver.discover().await.context("server/discover")?;
    show_server(&discovered);
    let tools = driver.list_tools().await.context("tools/list")?;
    show_tools(&tools);
    if cli.list {
        return Ok(ExitCode::SUCCESS);
    }

    if let Some(name) = &cli.call {
        let args = match &cli.args {
            Some(text) => json_object(text).context("--args")?,
            None => match ask_arguments(&mut driver, &tools, name) {
                Some(args) => args,
                None => bail!("end of input while asking the arguments of {name}"),
            },
        };
        let ok = call(&mut driver, name, args).await;
        return Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }

    loop {
        let console = &mut driver.host_mut().console;
        let Some(line) =
            console.ask_line("\ntool to call (NAME, or NAME {JSON arguments}; empty to quit): ")
        else {
            break;
        };
        let line = line.trim();
        if line.is_empty() {
            break;
        }
        let (name, inline) = match line.split_once(char::is_whitespace) {
            Some((name, rest)) => (name.to_owned(), Some(rest.trim().to_owned())),
            None => (line.to_owned(), None),
        };
        let args = match inline {
            Some(text) => match json_object(&text) {
                Ok(v) => v,
                Err(e) => {
                    println!("   {e:#}");
                    continue;
                }
            },
            None => match ask_arguments(&mut driver, &tools, &name) {
                Some(args) => args,
                None => break,
            },
        };
        call(&mut driver, &name, args).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// `text` parsed as a JSON object.
fn json_object(text: &str) -> anyhow::Result<Value> {
    match serde_json::from_str::<Value>(text).context("not JSON")? {
        v @ Value::Object(_) => Ok(v),
        _ => bail!("not a JSON object"),
    }
}

/// The arguments of `name`, asked field by field from its `inputSchema` in the listing
/// (`{}` for a tool not listed or without properties); `None` at end of input.
fn ask_arguments(driver: &mut StdDriver, tools: &Value, name: &str) -> Option<Value> {
    let schema = tools
        .get("tools")
        .and_then(Value::as_array)
        .and_then(|list| {
            list.iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        })
        .and_then(|t| t.get("inputSchema"))
        .cloned()
        .unwrap_or(Value::Null);
    let console = &mut driver.host_mut().console;
    console.ask_arguments(name, &schema).map(Value::Object)
}

async fn call(driver: &mut StdDriver, name: &str, args: Value) -> bool {
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
