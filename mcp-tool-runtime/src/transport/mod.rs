//! Transports that carry JSON-RPC messages to a [`Server`](crate::server::Server):
//!
//! - [`stdio`]: newline-delimited JSON-RPC on stdin/stdout (logs belong on stderr);
//! - [`http`]: Streamable HTTP (MCP 2026-07-28) as an axum [`Router`](axum::Router) that can
//!   be mounted in any axum application, plus a [`serve`](http::serve) convenience;
//! - [`auth`]: authenticators that turn an HTTP request into the [`Principal`](crate::principal::Principal)
//!   that sealed request states are bound to (the crate `mcp-tool-oauth` has the one of the
//!   MCP authorization spec, an OAuth 2.1 resource server).
//!
//! The transports are thin: every protocol decision is made by the server; the
//! transports only frame messages, check transport-level rules (headers, origin, size,
//! authentication) and map JSON-RPC error codes to HTTP statuses.

#[cfg(feature = "http-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub mod auth;
#[cfg(feature = "http-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub mod http;
/// The `x-mcp-header` codec, now at home in [`crate::protocol::headers`].
pub use crate::protocol::headers as params;
pub mod stdio;

use serde_json::{Value, json};

use crate::protocol::{
    HEADER_MISMATCH, INSUFFICIENT_SCOPE, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
};

/// The HTTP status for a JSON-RPC error code, as SPEC.md and the Streamable HTTP
/// transport require: -32602/-32020/-32021/-32022 and -32700/-32600 -> 400,
/// -32601 -> 404, -31403 (insufficient scope) -> 403, anything else (including successful
/// results) -> 200.
pub fn http_status_for_code(code: Option<i64>) -> u16 {
    match code {
        Some(
            INVALID_PARAMS
            | HEADER_MISMATCH
            | MISSING_REQUIRED_CLIENT_CAPABILITY
            | UNSUPPORTED_PROTOCOL_VERSION
            | PARSE_ERROR
            | INVALID_REQUEST,
        ) => 400,
        Some(METHOD_NOT_FOUND) => 404,
        Some(INSUFFICIENT_SCOPE) => 403,
        _ => 200,
    }
}

/// A JSON-RPC error response built by a transport (before the server sees the message).
/// `id` is omitted when the request's id is unknown, as the 2026-07-28 schema allows.
pub(crate) fn error_response(id: Option<&Value>, code: i64, message: &str) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("jsonrpc".into(), json!("2.0"));
    if let Some(id) = id
        && (id.is_string() || id.is_number())
    {
        obj.insert("id".into(), id.clone());
    }
    obj.insert("error".into(), json!({ "code": code, "message": message }));
    Value::Object(obj)
}
