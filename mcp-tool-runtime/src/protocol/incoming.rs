//! One incoming JSON-RPC message, classified: a request, a notification, or a response to a
//! request the server sent (legacy sessions only). Shared by the stateless dispatcher and
//! the legacy session dispatcher.

use serde_json::Value;

use super::errors;
use super::{ErrorObject, JsonRpcResponse, RequestId};

/// A classified message (borrowing from the JSON value).
pub(crate) enum Incoming<'a> {
    /// A request: it gets a response.
    Request {
        id: RequestId,
        method: &'a str,
        /// `params` as sent (`None` when absent or `null`); methods want an object.
        params: Option<&'a Value>,
    },
    /// A notification: never answered.
    Notification {
        method: &'a str,
        params: Option<&'a Value>,
    },
    /// A response to a request the server sent: never answered.
    Response {
        id: RequestId,
        answer: Result<Value, ErrorObject>,
    },
}

/// Classifies `message`; the error response for what is not a valid JSON-RPC message
/// (`None` for a response-like message that cannot be routed, which is dropped).
pub(crate) fn classify(message: &Value) -> Result<Incoming<'_>, Option<JsonRpcResponse>> {
    let invalid = |id: Option<RequestId>, m: &str| {
        Err(Some(JsonRpcResponse::error(id, errors::invalid_request(m))))
    };
    let Value::Object(obj) = message else {
        return invalid(
            None,
            "Invalid Request: a JSON-RPC message must be an object",
        );
    };
    let params = match obj.get("params") {
        None | Some(Value::Null) => None,
        Some(p) => Some(p),
    };
    let method = obj.get("method");
    let id = match obj.get("id") {
        None => {
            return match method {
                Some(Value::String(m)) => Ok(Incoming::Notification { method: m, params }),
                // a response without an id (the client could not read our request) or a
                // malformed notification: nothing to answer
                _ if obj.contains_key("result") || obj.contains_key("error") => Err(None),
                Some(_) => Err(None),
                None => invalid(None, "Invalid Request: missing `method`"),
            };
        }
        Some(v) => match RequestId::from_value(v) {
            Some(id) => id,
            None => {
                return invalid(None, "Invalid Request: `id` must be a string or a number");
            }
        },
    };
    if method.is_none() && (obj.contains_key("result") || obj.contains_key("error")) {
        let answer = match (obj.get("result"), obj.get("error")) {
            (Some(r), None) => Ok(r.clone()),
            (None, Some(e)) => match serde_json::from_value::<ErrorObject>(e.clone()) {
                Ok(e) => Err(e),
                Err(_) => Err(ErrorObject::new(
                    crate::protocol::INTERNAL_ERROR,
                    "malformed error object",
                )),
            },
            _ => return Err(None),
        };
        return Ok(Incoming::Response { id, answer });
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(Some(id), "Invalid Request: `jsonrpc` must be \"2.0\"");
    }
    let Some(Value::String(method)) = method else {
        return invalid(Some(id), "Invalid Request: `method` must be a string");
    };
    Ok(Incoming::Request { id, method, params })
}
