//! The JSON-RPC 2.0 envelope.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// `-32700`: the message is not valid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// `-32600`: the message is not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// `-32601`: unknown or removed method (`initialize`, `ping`, ...).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// `-32602`: invalid parameters (including every `requestState` failure).
pub const INVALID_PARAMS: i64 = -32602;
/// `-32603`: internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// `-32020`: HTTP headers disagree with the body, or a required header is missing.
pub const HEADER_MISMATCH: i64 = -32020;
/// `-32021`: the request needs a client capability the client did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022`: the request's protocol version is not supported.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// `-31403` (this implementation's, not the MCP specification's): the caller is
/// authenticated but lacks a scope the tool, prompt or resource declares (`scopes = "…"`);
/// `data` is `{"requiredScopes": [...], "missingScopes": [...]}`. Outside the JSON-RPC
/// reserved range `-32768..=-32000`, as the 2026-07-28 specification asks of codes it does
/// not define (`-32000..=-32019` is closed to new codes, `-32020..=-32099` is the
/// specification's own). Over HTTP a 2026-07-28 request refused so is answered
/// `403` with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`.
pub const INSUFFICIENT_SCOPE: i64 = -31403;

/// The `jsonrpc: "2.0"` marker; (de)serializes only as the string `"2.0"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(serde::de::Error::custom("jsonrpc must be \"2.0\""))
        }
    }
}

/// A request id: a string or a number (`RequestId = string | number` in schema.ts).
///
/// A numeric id is kept as the [`serde_json::Number`] that was read, so it is echoed
/// back as received: every integer in `i64`/`u64` range exactly, and non-integers
/// (which MCP clients should not send, but JSON-RPC allows) as serde_json reads them
/// (an integer beyond `u64` becomes the nearest `f64`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value (`None` for anything but a string or a number).
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => Some(RequestId::Number(n.clone())),
            _ => None,
        }
    }

    /// This id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::Number(n.clone()),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n.into())
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

variant_from!(RequestId: String(String));

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A request that expects a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters (an object in MCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl JsonRpcRequest {
    /// A request with the given id, method and params.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Value) -> Self {
        JsonRpcRequest {
            jsonrpc: JsonRpcVersion,
            id: id.into(),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A notification: no id, never answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcNotification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The method name.
    pub method: String,
    /// The parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// The error object of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short, single-sentence description.
    pub message: String,
    /// Additional information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

/// A successful response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResultResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    pub id: RequestId,
    /// The result object (carries `resultType`).
    pub result: Value,
}

/// An error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered; absent when it could not be determined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

/// A response: a result or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonRpcResponse {
    /// A successful response.
    Result(JsonRpcResultResponse),
    /// An error response.
    Error(JsonRpcErrorResponse),
}

impl JsonRpcResponse {
    /// A successful response.
    pub fn result(id: RequestId, result: Value) -> Self {
        JsonRpcResponse::Result(JsonRpcResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        })
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        JsonRpcResponse::Error(JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        })
    }

    /// The error code, when this is an error response (used to map HTTP statuses).
    pub fn error_code(&self) -> Option<i64> {
        match self {
            JsonRpcResponse::Error(e) => Some(e.error.code),
            JsonRpcResponse::Result(_) => None,
        }
    }

    /// The error object, when this is an error response.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match self {
            JsonRpcResponse::Error(e) => Some(&e.error),
            JsonRpcResponse::Result(_) => None,
        }
    }

    /// The result value, when this is a successful response.
    pub fn result_value(&self) -> Option<&Value> {
        match self {
            JsonRpcResponse::Result(r) => Some(&r.result),
            JsonRpcResponse::Error(_) => None,
        }
    }

    /// The id of the request answered.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            JsonRpcResponse::Result(r) => Some(&r.id),
            JsonRpcResponse::Error(e) => e.id.as_ref(),
        }
    }

    /// This response as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Any JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonRpcMessage {
    /// A request (has `id` and `method`).
    Request(JsonRpcRequest),
    /// A notification (has `method`, no `id`).
    Notification(JsonRpcNotification),
    /// A response.
    Response(JsonRpcResponse),
}
