//! The conformance fixture server: every fixture tool of [`mcp_tool_tests::fixture`] over
//! Streamable HTTP at `http://ADDR/mcp` (for `scripts/conformance.sh`) or over stdio (one
//! JSON-RPC message per line; the rmcp child-process test uses it).
//!
//! ```text
//! conformance_fixture --http 127.0.0.1:8080
//! conformance_fixture --stdio
//! ```
//!
//! The sealing key is random per process. Logs go to stderr (`RUST_LOG` filters them;
//! default `info`).

use std::net::SocketAddr;
use std::process::ExitCode;

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
        Mode::Http(addr) => http::serve(addr, server, HttpConfig::default()).await,
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
