//! The conformance fixture server: every fixture tool of [`mcp_tool_tests::fixture`] over
//! Streamable HTTP at `http://ADDR/mcp` (for `scripts/conformance.sh`) or over stdio (one
//! JSON-RPC message per line; the rmcp and Python SDK child-process tests use it).
//!
//! ```text
//! conformance_fixture --http 127.0.0.1:8080
//! conformance_fixture --http 127.0.0.1:0      # a free port
//! conformance_fixture --stdio
//! ```
//!
//! In HTTP mode, once the port is bound, the binary prints one line to stdout,
//! `listening on http://ADDR/mcp`, with the bound address (the Python SDK tests start it
//! on port 0 and read the URL from that line).
//!
//! The sealing key is random per process. Logs go to stderr (`RUST_LOG` filters them;
//! default `info`).

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;

use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};

const USAGE: &str = "usage: conformance_fixture --http ADDR (e.g. 127.0.0.1:8080) | --stdio";

enum Mode {
    Http(SocketAddr),
    Stdio,
}

fn parse_mode() -> Result<Mode, String> {
    let mut args = std::env::args().skip(1);
    let mut mode = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--http" => {
                let v = args.next().ok_or("--http needs an address")?;
                mode = Some(Mode::Http(
                    v.parse().map_err(|e| format!("--http {v}: {e}"))?,
                ));
            }
            "--stdio" => mode = Some(Mode::Stdio),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    mode.ok_or_else(|| USAGE.to_owned())
}

/// Serves on `addr` until the process is killed, after announcing the bound URL on stdout.
async fn serve_http(addr: SocketAddr, server: Server) -> std::io::Result<()> {
    let handle = http::spawn(addr, server, HttpConfig::default()).await?;
    tracing::info!(url = %handle.url(), "serving MCP over Streamable HTTP");
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on {}", handle.url())?;
    out.flush()?;
    drop(out);
    // The handle stops the server when dropped: keep it for the life of the process.
    std::future::pending::<()>().await;
    drop(handle);
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let mode = match parse_mode() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let server = match mcp_tool_tests::fixture::server(None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("conformance_fixture: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = match mode {
        Mode::Http(addr) => serve_http(addr, server).await,
        Mode::Stdio => stdio::serve_stdio(server, StdioConfig::default()).await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance_fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
