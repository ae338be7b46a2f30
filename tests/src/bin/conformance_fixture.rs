//! The conformance fixture server: every fixture tool of [`mcp_tool_tests::fixture`] over
//! Streamable HTTP at `http://ADDR/mcp`, for `scripts/conformance.sh`.
//!
//! ```text
//! conformance_fixture --http 127.0.0.1:8080
//! ```
//!
//! The sealing key is random per process. Logs go to stderr (`RUST_LOG` filters them;
//! default `info`).

use std::net::SocketAddr;
use std::process::ExitCode;

use mcp_tool_runtime::transport::http::{self, HttpConfig};

const USAGE: &str = "usage: conformance_fixture --http ADDR   (e.g. 127.0.0.1:8080)";

fn parse_addr() -> Result<SocketAddr, String> {
    let mut args = std::env::args().skip(1);
    let mut addr = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--http" => {
                let v = args.next().ok_or("--http needs an address")?;
                addr = Some(v.parse().map_err(|e| format!("--http {v}: {e}"))?);
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    addr.ok_or_else(|| USAGE.to_owned())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let addr = match parse_addr() {
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
    match http::serve(addr, server, HttpConfig::default()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance_fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
