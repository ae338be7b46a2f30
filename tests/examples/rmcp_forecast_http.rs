//! The rmcp 3.11 peer of the MRTR benchmark (`benches/mrtr/rmcp_peer.rs`: the `forecast`
//! tool on rmcp's server side, its state sealed by rmcp's `RequestStateCodec`) served over
//! rmcp's own Streamable HTTP server in stateless mode (`legacy_session_mode: false`, JSON
//! responses), for the side-by-side HTTP throughput of `scripts/throughput.sh`.
//!
//! ```text
//! cargo run --release -p mcp-tool-tests --example rmcp_forecast_http -- 127.0.0.1:0
//! ```
//!
//! Prints `listening on http://ADDR/mcp` to stderr once bound; serves until killed.
//! An example (not a binary) because rmcp is a dev-dependency of this package.
#![allow(deprecated)] // rmcp 3.11 marks sampling deprecated (SEP-2577); it is in 2026-07-28

#[path = "../benches/mrtr/domain.rs"]
mod domain;
#[allow(dead_code)]
#[path = "../benches/mrtr/rmcp_peer.rs"]
mod rmcp_peer;

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

/// The sealing key of every version of the benchmark tool.
const KEY: &[u8] = b"bench-key-0123456789abcdef-0123456789";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = mcp_tool_tests::loopback_arg()?;
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        || Ok(rmcp_peer::ForecastServer::new(KEY)),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
