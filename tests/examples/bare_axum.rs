//! The ceiling of `scripts/throughput.sh` and `scripts/memory.sh`: a bare axum server that
//! does no MCP work. Each POST to `/mcp` has its body parsed as JSON-RPC into a
//! `serde_json::Value` tree (the whole body, as `serve`'s transport parses it), its `id`
//! read, and a fixed `input_required` result sent back with that id (`--result-bytes`,
//! default 520 bytes of response body; `get_weather`'s answers are 595 bytes in round 1,
//! 327 in round 2). A body that is not JSON, or has no `id`, gets 400.
//!
//! ```text
//! cargo run --release -p mcp-tool-tests --example bare_axum -- 127.0.0.1:0 [--result-bytes N]
//! ```
//!
//! Prints `listening on http://ADDR/mcp` to stderr once bound; serves until killed. Same
//! runtime as `serve` (tokio, multi-threaded, all cores), so that the two differ only in the
//! work done per request.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// The fixed result, serialized once, padded to about `bytes` bytes of response body.
fn fixed_result(bytes: usize) -> String {
    let head = r#"{"resultType":"input_required","inputRequests":{"github_login":{"method":"elicitation/create","params":{"mode":"form","message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"Your GitHub username."}},"required":["name"]}}}},"requestState":""#;
    let tail = r#""}"#;
    // the envelope around the result: {"jsonrpc":"2.0","id":1,"result":…}
    let envelope = 33;
    let pad = bytes.saturating_sub(head.len() + tail.len() + envelope);
    let state: String = "A".repeat(pad);
    format!("{head}{state}{tail}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut addr: SocketAddr = "127.0.0.1:0".parse()?;
    let mut bytes = 520usize;
    while let Some(a) = args.next() {
        if a == "--result-bytes" {
            bytes = args.next().ok_or("--result-bytes N")?.parse()?;
        } else {
            addr = a.parse()?;
        }
    }
    if !addr.ip().is_loopback() {
        return Err("serves loopback addresses only".into());
    }
    let result: Arc<str> = fixed_result(bytes).into();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: Bytes| {
            let result = result.clone();
            async move { answer(&body, &result) }
        }),
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

/// Parses the JSON-RPC body and answers the fixed result with its id.
fn answer(body: &[u8], result: &str) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = message.get("id") else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let id = id.to_string();
    let mut out = String::with_capacity(result.len() + id.len() + 40);
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(&id);
    out.push_str(r#","result":"#);
    out.push_str(result);
    out.push('}');
    ([(header::CONTENT_TYPE, "application/json")], out).into_response()
}
