//! Between rmcp's types and our wire: an rmcp request (its params and the request's
//! `_meta`) becomes the JSON-RPC request our [`Server`](mcp_tool_runtime::Server) takes, and
//! our answer (a complete result, an `input_required` result with its sealed
//! `requestState`, or a JSON-RPC error) becomes rmcp's result or [`ErrorData`]. Both sides
//! speak the same JSON, so the translation goes through `serde_json` and carries every
//! field, `_meta` included.

use mcp_tool_runtime::protocol::{ErrorObject, JsonRpcResponse, errors};
use rmcp::ErrorData;
use rmcp::model::{ErrorCode, InputRequiredResult};
use rmcp::service::{RequestContext, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// The `_meta` key that marks a 2026-07-28 request.
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Our `method` request for rmcp's `params`, with the request's own `_meta` (what rmcp
/// parsed into the context; the params' copy if the context has none) and rmcp's id.
pub(crate) fn request(
    method: &str,
    params: &impl Serialize,
    cx: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let mut body = match serde_json::to_value(params) {
        Ok(Value::Object(m)) => m,
        Ok(_) | Err(_) => return Err(internal(format!("{method} params did not serialize"))),
    };
    let from_params = match body.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let meta = match serde_json::to_value(&cx.meta) {
        Ok(Value::Object(m)) if !m.is_empty() => m,
        _ => from_params,
    };
    if !meta.is_empty() {
        body.insert("_meta".into(), Value::Object(meta));
    }
    let id = serde_json::to_value(&cx.id).unwrap_or(Value::from(0));
    Ok(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": body}))
}

/// Whether `request` (from [`request`]) comes from a legacy session: it carries no
/// per-request protocol version, the client having negotiated one at `initialize`.
pub(crate) fn is_legacy(request: &Value) -> bool {
    request["params"]["_meta"].get(PROTOCOL_VERSION).is_none()
}

/// The result of our answer, or its JSON-RPC error as rmcp's.
pub(crate) fn answer(reply: Option<JsonRpcResponse>) -> Result<Value, ErrorData> {
    let reply = reply.ok_or_else(|| internal("no response"))?;
    if let Some(e) = reply.error_object() {
        return Err(error(e));
    }
    reply
        .result_value()
        .cloned()
        .ok_or_else(|| internal("a response with neither result nor error"))
}

/// rmcp's MRTR response for one of our results: `input_required` or `complete` as its
/// `resultType` says (a legacy session's results carry none: complete).
pub(crate) fn mrtr<T: DeserializeOwned, R>(
    result: Value,
    complete: impl FnOnce(T) -> R,
    input_required: impl FnOnce(InputRequiredResult) -> R,
) -> Result<R, ErrorData> {
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        Ok(input_required(parse(result)?))
    } else {
        Ok(complete(parse(result)?))
    }
}

/// One of our results as rmcp's type.
pub(crate) fn parse<T: DeserializeOwned>(result: Value) -> Result<T, ErrorData> {
    serde_json::from_value(result).map_err(|e| internal(format!("result not representable: {e}")))
}

/// Our JSON-RPC error as rmcp's (code, message and data unchanged).
pub(crate) fn error(e: &ErrorObject) -> ErrorData {
    let code = i32::try_from(e.code).unwrap_or(ErrorCode::INTERNAL_ERROR.0);
    ErrorData::new(ErrorCode(code), e.message.clone(), e.data.clone())
}

/// -32603 with the fixed message; the detail goes to the log only.
pub(crate) fn internal(detail: impl std::fmt::Display) -> ErrorData {
    tracing::error!(
        detail = %errors::for_log_cut(&detail.to_string(), errors::MAX_LOGGED_DETAIL),
        "mcp-tool-rmcp: could not translate"
    );
    ErrorData::internal_error("Internal error", None)
}
