//! Between rmcp's types and our wire: an rmcp `tools/call` (its params and the request's
//! `_meta`) becomes the JSON-RPC request our [`Server`](mcp_tool_runtime::Server) takes,
//! and our answer (a complete result, an `input_required` result with its sealed
//! `requestState`, or a JSON-RPC error) becomes rmcp's [`CallToolResponse`] or
//! [`ErrorData`]. Both sides speak the same JSON, so the translation goes through
//! `serde_json` and carries every field, `_meta` included.

use mcp_tool_runtime::protocol::{ErrorObject, JsonRpcResponse};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, InputRequiredResult,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

/// `_meta` keys of a 2026-07-28 request.
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The revision our server speaks.
const MODERN: &str = "2026-07-28";

/// The message to hand our server, and whether the caller is a legacy (`initialize`)
/// session rather than a 2026-07-28 request.
pub(crate) struct Outgoing {
    pub(crate) message: Value,
    pub(crate) legacy: bool,
}

/// Our `tools/call` request for rmcp's `params`, with the request's own `_meta` (what
/// rmcp parsed into the context; the params' copy if the context has none). A caller in a
/// legacy session sends no per-request `_meta`: its capabilities are the ones it declared
/// at `initialize`, and the request is marked `legacy`.
pub(crate) fn call_request(
    params: &CallToolRequestParams,
    cx: &RequestContext<RoleServer>,
) -> Result<Outgoing, ErrorData> {
    let mut body = match serde_json::to_value(params) {
        Ok(Value::Object(m)) => m,
        Ok(_) | Err(_) => return Err(internal("tools/call params did not serialize")),
    };
    let from_params = match body.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut meta = match serde_json::to_value(&cx.meta) {
        Ok(Value::Object(m)) if !m.is_empty() => m,
        _ => from_params,
    };
    let legacy = !meta.contains_key(PROTOCOL_VERSION);
    if legacy {
        let (capabilities, client) = match cx.peer.peer_info() {
            Some(info) => (
                serde_json::to_value(&info.capabilities).unwrap_or_else(|_| json!({})),
                serde_json::to_value(&info.client_info).ok(),
            ),
            None => (json!({}), None),
        };
        meta.insert(PROTOCOL_VERSION.into(), MODERN.into());
        meta.insert(CLIENT_CAPABILITIES.into(), capabilities);
        if let Some(c) = client {
            meta.entry(CLIENT_INFO).or_insert(c);
        }
    }
    body.insert("_meta".into(), Value::Object(meta));
    let id = serde_json::to_value(&cx.id).unwrap_or(Value::from(0));
    Ok(Outgoing {
        message: json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": body}),
        legacy,
    })
}

/// rmcp's response for our server's answer to a `tools/call`.
pub(crate) fn call_response(reply: Option<JsonRpcResponse>) -> Result<CallToolResponse, ErrorData> {
    let reply = reply.ok_or_else(|| internal("no response to tools/call"))?;
    if let Some(e) = reply.error_object() {
        return Err(error(e));
    }
    let result = reply
        .result_value()
        .ok_or_else(|| internal("a response with neither result nor error"))?;
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        let ir: InputRequiredResult = serde_json::from_value(result.clone())
            .map_err(|e| internal(format!("input_required result: {e}")))?;
        return Ok(CallToolResponse::InputRequired(ir));
    }
    let done: CallToolResult = serde_json::from_value(result.clone())
        .map_err(|e| internal(format!("tools/call result: {e}")))?;
    Ok(CallToolResponse::Complete(done))
}

/// Our JSON-RPC error as rmcp's (code, message and data unchanged).
pub(crate) fn error(e: &ErrorObject) -> ErrorData {
    let code = i32::try_from(e.code).unwrap_or(ErrorCode::INTERNAL_ERROR.0);
    ErrorData::new(ErrorCode(code), e.message.clone(), e.data.clone())
}

/// -32603 with the fixed message; the detail goes to the log only.
pub(crate) fn internal(detail: impl std::fmt::Display) -> ErrorData {
    tracing::error!(%detail, "mcp-tool-rmcp: could not translate");
    ErrorData::internal_error("Internal error", None)
}
