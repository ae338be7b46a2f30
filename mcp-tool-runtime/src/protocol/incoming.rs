//! One incoming JSON-RPC message, classified: a request, a notification, or a response to a
//! request the server sent (legacy sessions only). Shared by the stateless dispatcher and
//! the legacy session dispatcher.

use serde_json::Value;

use super::errors;
use super::text::{self, MessageIn};
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

/// What a message is, read from its text ([`classify_in`]).
pub(crate) enum Kind {
    /// A request with this id: it gets a response.
    Request(RequestId),
    /// A notification: never answered.
    Notification,
    /// A response to a request with this id.
    Response(RequestId),
}

/// Classifies `message`; the error response for what is not a valid JSON-RPC message
/// (`None` for a response-like message that cannot be routed, which is dropped).
pub(crate) fn classify_in(message: &MessageIn<'_>) -> Result<Kind, Option<JsonRpcResponse>> {
    let invalid = |id: Option<RequestId>, m: &str| {
        Err(Some(JsonRpcResponse::error(id, errors::invalid_request(m))))
    };
    let method = message.method;
    let Some(id) = message.id else {
        return match method {
            Some(m) if text::string(m).is_some() => Ok(Kind::Notification),
            // a response without an id (the client could not read our request) or a
            // malformed notification: nothing to answer
            Some(_) => Err(None),
            None if message.answers() => Err(None),
            None => invalid(None, "Invalid Request: missing `method`"),
        };
    };
    let Some(id) = text::request_id(id) else {
        return invalid(None, "Invalid Request: `id` must be a string or a number");
    };
    if method.is_none() && message.answers() {
        // exactly one of `result` and `error`, or nothing to route
        return match (message.result, message.error) {
            (Some(_), Some(_)) => Err(None),
            _ => Ok(Kind::Response(id)),
        };
    }
    if message.jsonrpc.and_then(text::string).as_deref() != Some("2.0") {
        return invalid(Some(id), "Invalid Request: `jsonrpc` must be \"2.0\"");
    }
    if message.method().is_none() {
        return invalid(Some(id), "Invalid Request: `method` must be a string");
    }
    Ok(Kind::Request(id))
}

/// The answer to a `text` that is not one JSON object: -32700 when it is not JSON, the
/// invalid request error otherwise.
pub(crate) fn not_a_message(text: &str) -> Option<JsonRpcResponse> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => classify(&v).err().flatten(),
        Err(e) => {
            tracing::debug!(error = %e, "unparseable JSON-RPC message");
            Some(JsonRpcResponse::error(None, errors::parse_error()))
        }
    }
}

/// Classifies `message` (a tree) as [`classify_in`] does its text, borrowing from it.
pub(crate) fn classify(message: &Value) -> Result<Incoming<'_>, Option<JsonRpcResponse>> {
    let Value::Object(obj) = message else {
        return Err(Some(JsonRpcResponse::error(
            None,
            errors::invalid_request("Invalid Request: a JSON-RPC message must be an object"),
        )));
    };
    let text = message.to_string();
    let kind = match MessageIn::parse(&text) {
        Ok(m) => classify_in(&m)?,
        Err(_) => return Err(Some(JsonRpcResponse::error(None, errors::parse_error()))),
    };
    let params = match obj.get("params") {
        None | Some(Value::Null) => None,
        Some(p) => Some(p),
    };
    let method = obj
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(match kind {
        Kind::Request(id) => Incoming::Request { id, method, params },
        Kind::Notification => Incoming::Notification { method, params },
        Kind::Response(id) => {
            let answer = match (obj.get("result"), obj.get("error")) {
                (Some(r), None) => Ok(r.clone()),
                (_, Some(e)) => match serde_json::from_value::<ErrorObject>(e.clone()) {
                    Ok(e) => Err(e),
                    Err(_) => Err(ErrorObject::new(
                        crate::protocol::INTERNAL_ERROR,
                        "malformed error object",
                    )),
                },
                _ => Err(ErrorObject::new(
                    crate::protocol::INTERNAL_ERROR,
                    "a response without an answer",
                )),
            };
            Incoming::Response { id, answer }
        }
    })
}
