//! Helpers shared by the in-process server tests (server.rs, hardening.rs, fuzz_server.rs,
//! the HTTP bound tests): a fixed-key sealer, the JSON-RPC messages they send to
//! `Server::handle`, a tool that holds its request until released, and padded JSON.
#![allow(dead_code)]

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::protocol::JsonRpcResponse;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use serde::Serialize;
use serde_json::{Value, json};

/// The protocol revision.
pub const VERSION: &str = "2026-07-28";

/// A sealer whose active key `kid` is 32 bytes of `byte` (default configuration).
pub fn sealer(kid: &str, byte: u8) -> Sealer {
    Sealer::new(
        Keyring::new(kid, vec![byte; 32]).expect("keyring"),
        SealConfig::default(),
    )
}

/// `_meta` with the protocol version and the client capabilities `caps`.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// A JSON-RPC request.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `tools/call` params for `name` with `arguments` and `_meta`, plus the members of `extra`
/// (`requestState`, `inputResponses`, ...).
pub fn call_params(name: &str, args: Value, meta: Value, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": args, "_meta": meta});
    if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
        p.extend(e);
    }
    params
}

/// The `tools/call` members that resume a call: its `requestState` and the `inputResponses`.
pub fn resume(state: impl Serialize, responses: impl Serialize) -> Value {
    json!({"requestState": state, "inputResponses": responses})
}

/// Sends `msg` as `principal`; every message these tests send is a request.
pub async fn send_as(server: &Server, principal: &Principal, msg: Value) -> JsonRpcResponse {
    server
        .handle(msg, principal)
        .await
        .expect("a request gets a response")
}

/// A tool that counts the calls inside it, then waits until `gate` gives it a permit:
/// it holds a request (and whatever the request holds) for as long as a test wants.
pub struct Hold {
    /// Calls that reached the tool.
    pub inside: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Opened by the test to let the calls finish.
    pub gate: std::sync::Arc<tokio::sync::Semaphore>,
}

impl mcp_tool_runtime::Tool for Hold {
    fn info(&self) -> mcp_tool_runtime::ToolInfo {
        mcp_tool_runtime::ToolInfo::new("hold")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut mcp_tool_runtime::ToolContext,
        _args: &'a serde_json::value::RawValue,
        _state: Option<&'a serde_json::value::RawValue>,
    ) -> mcp_tool_runtime::manual::BoxFuture<
        'a,
        Result<mcp_tool_runtime::manual::Step, mcp_tool_runtime::ToolError>,
    > {
        Box::pin(async move {
            self.inside
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _pass = self.gate.acquire().await;
            Ok(mcp_tool_runtime::manual::Step::Complete(
                mcp_tool_runtime::protocol::CallToolResult::text("released"),
            ))
        })
    }
}

/// `[unit,unit,…]`: as many copies of `unit` as fit in `n` bytes (the array at most `n`
/// bytes long), the shape of a padded body.
pub fn array_of(unit: &str, n: usize) -> String {
    let count = n.saturating_sub(2) / (unit.len() + 1);
    let mut s = String::with_capacity(n);
    s.push('[');
    for i in 0..count {
        if i > 0 {
            s.push(',');
        }
        s.push_str(unit);
    }
    s.push(']');
    s
}
