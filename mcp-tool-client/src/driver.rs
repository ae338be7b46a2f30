//! The [`Driver`]: runs `server/discover`, `tools/list` and drives a `tools/call` through
//! its rounds of multi round-trip requests.
//!
//! Each round is a new JSON-RPC request with a new id (1, 2, 3, … over the driver's
//! life), the same method and arguments, `_meta` with the host's capabilities, the
//! answers to *this* round's `inputRequests` only (obtained from the [`Host`]), and the
//! previous round's `requestState` echoed byte for byte. Every message sent and received
//! is kept in a transcript.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::transport::{ClientTransport, TransportError};
use crate::{Host, HostError};
use mcp_tool_runtime::protocol::{
    ErrorObject, Implementation, InputRequest, META_PROGRESS_TOKEN, PROGRESS_METHOD,
    PROTOCOL_VERSION, RequestMeta,
};

/// Default maximum number of requests one `tools/call` may take (first call + retries).
pub const DEFAULT_MAX_ROUNDS: u32 = 16;

/// Which way a transcript message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server (a request or notification).
    Sent,
    /// Server to client (a response).
    Received,
}

/// One message in a [`Driver`] transcript (requests sent, and what came back: the
/// notifications about a request, such as `notifications/progress`, then its response).
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptEntry {
    /// Which way it went.
    pub direction: Direction,
    /// The JSON-RPC message as sent or received.
    pub message: Value,
}

/// The params of a call by name (`tools/call`, `prompts/get`): `name` and `arguments`.
fn named(name: &str, arguments: Value) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("name".into(), Value::String(name.to_owned()));
    params.insert("arguments".into(), arguments);
    params
}

impl fmt::Display for TranscriptEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let arrow = match self.direction {
            Direction::Sent => "client -> server",
            Direction::Received => "server -> client",
        };
        let body = serde_json::to_string_pretty(&self.message).unwrap_or_default();
        write!(f, "{arrow}\n{body}")
    }
}

/// Why a driven request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DriverError {
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The server answered with a JSON-RPC error.
    #[error("{method} failed: {error}")]
    Rpc {
        /// The request's method.
        method: String,
        /// The JSON-RPC error object (code, message, data).
        error: ErrorObject,
    },
    /// The host could not answer an input request.
    #[error("host could not answer `{key}`: {source}")]
    Host {
        /// The `inputRequests` key.
        key: String,
        /// The host's reason.
        source: HostError,
    },
    /// The server asked for input more often than the driver allows.
    #[error("too many rounds (limit {limit})")]
    TooManyRounds {
        /// The limit that was reached.
        limit: u32,
    },
    /// A request got no response (the server treated it as a notification).
    #[error("no response to {method}")]
    NoResponse {
        /// The request's method.
        method: String,
    },
    /// The response was not a valid answer to the request.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
}

impl DriverError {
    /// The JSON-RPC error code, when the server answered with an error.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            DriverError::Rpc { error, .. } => Some(error.code),
            _ => None,
        }
    }
}

/// The outcome of a driven `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The final (`complete`) result object.
    pub result: Value,
    /// How many requests the call took (1 = no input was required).
    pub rounds: u32,
    /// The messages of this call only, in order.
    pub transcript: Vec<TranscriptEntry>,
}

impl CallOutcome {
    /// Whether the result has `isError: true`.
    pub fn is_error(&self) -> bool {
        self.result.get("isError").and_then(Value::as_bool) == Some(true)
    }

    /// The concatenated `text` of the result's text content blocks.
    pub fn text(&self) -> String {
        self.result
            .get("content")
            .and_then(Value::as_array)
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    /// The result's `structuredContent`, if any.
    pub fn structured(&self) -> Option<&Value> {
        self.result.get("structuredContent")
    }

    /// The `params` of every `notifications/progress` received during the call, in order
    /// (only when the driver asked for progress, see [`Driver::with_progress`]).
    pub fn progress(&self) -> Vec<&Value> {
        self.transcript
            .iter()
            .filter(|e| e.direction == Direction::Received)
            .filter(|e| e.message.get("method").and_then(Value::as_str) == Some(PROGRESS_METHOD))
            .filter_map(|e| e.message.get("params"))
            .collect()
    }
}

/// Drives requests against a server through a [`ClientTransport`], answering input
/// requests with a [`Host`].
pub struct Driver<T, H> {
    transport: T,
    host: H,
    protocol_version: String,
    client_info: Option<Implementation>,
    max_rounds: u32,
    next_id: u64,
    transcript: Vec<TranscriptEntry>,
    progress: bool,
}

impl<T, H> fmt::Debug for Driver<T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("protocol_version", &self.protocol_version)
            .field("max_rounds", &self.max_rounds)
            .field("next_id", &self.next_id)
            .field("transcript_len", &self.transcript.len())
            .finish_non_exhaustive()
    }
}

impl<T: ClientTransport, H: Host> Driver<T, H> {
    /// A driver over `transport`, answering input requests with `host`.
    pub fn new(transport: T, host: H) -> Self {
        Self {
            transport,
            host,
            protocol_version: PROTOCOL_VERSION.to_owned(),
            client_info: Some(Implementation::new(
                "mcp-tool-driver",
                env!("CARGO_PKG_VERSION"),
            )),
            max_rounds: DEFAULT_MAX_ROUNDS,
            next_id: 1,
            transcript: Vec::new(),
            progress: false,
        }
    }

    /// Asks for progress on every `tools/call` request: `_meta.progressToken` is the
    /// request's id. The notifications that come back are in the transcript (and
    /// [`CallOutcome::progress`]) before the response they relate to.
    pub fn with_progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Sets the maximum number of requests per `tools/call` (at least 1).
    pub fn with_max_rounds(mut self, n: u32) -> Self {
        self.max_rounds = n.max(1);
        self
    }

    /// Sets `clientInfo` (`None` omits it).
    pub fn with_client_info(mut self, info: Option<Implementation>) -> Self {
        self.client_info = info;
        self
    }

    /// Sets the protocol version put in `_meta` (to test version negotiation).
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = version.into();
        self
    }

    /// The host.
    pub fn host(&self) -> &H {
        &self.host
    }

    /// The host, mutably (e.g. to script more answers).
    pub fn host_mut(&mut self) -> &mut H {
        &mut self.host
    }

    /// The transport.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Every message exchanged so far.
    pub fn transcript(&self) -> &[TranscriptEntry] {
        &self.transcript
    }

    /// Takes the transcript, leaving it empty.
    pub fn take_transcript(&mut self) -> Vec<TranscriptEntry> {
        std::mem::take(&mut self.transcript)
    }

    /// The transport and the host.
    pub fn into_parts(self) -> (T, H) {
        (self.transport, self.host)
    }

    /// The `_meta` object of every request.
    pub fn request_meta(&self) -> Value {
        let mut meta = RequestMeta::new(self.host.capabilities());
        meta.protocol_version = self.protocol_version.clone();
        meta.client_info = self.client_info.clone();
        meta.to_value()
    }

    fn params_with_meta(&self, params: Value) -> Result<Map<String, Value>, DriverError> {
        let mut params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            _ => {
                return Err(DriverError::InvalidResponse(
                    "params must be a JSON object".into(),
                ));
            }
        };
        let meta = self.request_meta();
        match params.get_mut("_meta") {
            Some(Value::Object(existing)) => {
                if let Value::Object(m) = meta {
                    for (k, v) in m {
                        existing.entry(k).or_insert(v);
                    }
                }
            }
            _ => {
                params.insert("_meta".into(), meta);
            }
        }
        Ok(params)
    }

    async fn exchange(
        &mut self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, DriverError> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.transcript.push(TranscriptEntry {
            direction: Direction::Sent,
            message: msg.clone(),
        });
        let exchange = self.transport.exchange(msg).await?;
        for n in exchange.notifications {
            self.transcript.push(TranscriptEntry {
                direction: Direction::Received,
                message: n,
            });
        }
        let Some(resp) = exchange.response else {
            return Err(DriverError::NoResponse {
                method: method.to_owned(),
            });
        };
        self.transcript.push(TranscriptEntry {
            direction: Direction::Received,
            message: resp.clone(),
        });
        if let Some(err) = resp.get("error") {
            let error: ErrorObject = serde_json::from_value(err.clone())
                .map_err(|e| DriverError::InvalidResponse(format!("bad error object: {e}")))?;
            return Err(DriverError::Rpc {
                method: method.to_owned(),
                error,
            });
        }
        if resp.get("id") != Some(&json!(id)) {
            return Err(DriverError::InvalidResponse(format!(
                "response id {:?} does not match request id {id}",
                resp.get("id")
            )));
        }
        match resp.get("result") {
            Some(Value::Object(_)) => Ok(resp.get("result").cloned().unwrap_or(Value::Null)),
            _ => Err(DriverError::InvalidResponse(
                "response has no result object".into(),
            )),
        }
    }

    /// Sends one request (`_meta` added) and returns its result object.
    ///
    /// # Errors
    /// Transport failures, JSON-RPC errors ([`DriverError::Rpc`]) and malformed responses.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, DriverError> {
        let params = self.params_with_meta(params)?;
        self.exchange(method, params).await
    }

    /// Sends a notification (no id, no `_meta` added).
    ///
    /// # Errors
    /// Transport failures.
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), DriverError> {
        let msg = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.transcript.push(TranscriptEntry {
            direction: Direction::Sent,
            message: msg.clone(),
        });
        if let Some(resp) = self.transport.send(msg).await? {
            self.transcript.push(TranscriptEntry {
                direction: Direction::Received,
                message: resp,
            });
        }
        Ok(())
    }

    /// Opens a `subscriptions/listen` subscription with `filter` (a `SubscriptionFilter`,
    /// e.g. `{"toolsListChanged": true, "resourceSubscriptions": ["notes://notes/1"]}`;
    /// `_meta` added) and returns its stream: the
    /// `notifications/subscriptions/acknowledged` first (its `params.notifications` is what
    /// the server agreed to), then the notifications, each with the subscription id (the
    /// request's id) in `_meta`. Drop it to close the subscription. Not in the transcript.
    ///
    /// # Errors
    /// The transport cannot listen or failed; the server refused
    /// ([`DriverError::Rpc`]: -32602 for a bad filter, -32021 for `taskIds` without the
    /// Tasks extension, -32000 when the subscription caps are reached); the stream ended
    /// before the acknowledgement.
    pub async fn listen(&mut self, filter: Value) -> Result<crate::Listening, DriverError> {
        let params = self.params_with_meta(json!({ "notifications": filter }))?;
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params });
        let mut listening = self.transport.listen(msg).await?;
        let first = match listening.next().await {
            Some(first) => first?,
            None => {
                return Err(DriverError::NoResponse {
                    method: "subscriptions/listen".into(),
                });
            }
        };
        if let Some(err) = first.get("error") {
            let error: ErrorObject = serde_json::from_value(err.clone())
                .map_err(|e| DriverError::InvalidResponse(format!("bad error object: {e}")))?;
            return Err(DriverError::Rpc {
                method: "subscriptions/listen".into(),
                error,
            });
        }
        if first.get("method").and_then(Value::as_str)
            != Some("notifications/subscriptions/acknowledged")
        {
            return Err(DriverError::InvalidResponse(format!(
                "the first message of a listen stream is not its acknowledgement: {first}"
            )));
        }
        listening.put_back(Ok(first));
        Ok(listening)
    }

    /// `server/discover`.
    ///
    /// # Errors
    /// See [`Driver::request`].
    pub async fn discover(&mut self) -> Result<Value, DriverError> {
        self.request("server/discover", json!({})).await
    }

    /// `tools/list` (first page).
    ///
    /// # Errors
    /// See [`Driver::request`].
    pub async fn list_tools(&mut self) -> Result<Value, DriverError> {
        self.request("tools/list", json!({})).await
    }

    /// Calls tool `name` with `arguments` and drives it through its rounds.
    ///
    /// # Errors
    /// See [`DriverError`]; [`DriverError::TooManyRounds`] when the server still asks
    /// for input after the driver's round limit.
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Result<CallOutcome, DriverError> {
        self.drive("tools/call", named(name, arguments)).await
    }

    /// Gets prompt `name` with `arguments` (an object of strings) and drives it through its
    /// rounds; the outcome's `result` is the `GetPromptResult`.
    ///
    /// # Errors
    /// See [`Driver::call_tool`].
    pub async fn get_prompt(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Result<CallOutcome, DriverError> {
        self.drive("prompts/get", named(name, arguments)).await
    }

    /// Reads resource `uri` and drives the read through its rounds; the outcome's `result` is
    /// the `ReadResourceResult`.
    ///
    /// # Errors
    /// See [`Driver::call_tool`].
    pub async fn read_resource(&mut self, uri: &str) -> Result<CallOutcome, DriverError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        self.drive("resources/read", params).await
    }

    /// Sends `method` with `base` params and drives it through its rounds: each
    /// `input_required` result is answered by the host, and the request is sent again (new
    /// id, the same params, the answers, the state echoed) until it completes.
    async fn drive(
        &mut self,
        method: &str,
        base: Map<String, Value>,
    ) -> Result<CallOutcome, DriverError> {
        let start = self.transcript.len();
        let mut rounds = 0u32;
        let mut answers: Option<Map<String, Value>> = None;
        let mut state: Option<Value> = None;
        loop {
            rounds += 1;
            let mut params = base.clone();
            if let Some(a) = answers.take() {
                params.insert("inputResponses".into(), Value::Object(a));
            }
            if let Some(s) = state.take() {
                params.insert("requestState".into(), s);
            }
            let mut params = self.params_with_meta(Value::Object(params))?;
            if self.progress
                && let Some(Value::Object(meta)) = params.get_mut("_meta")
            {
                // The id `exchange` gives this request: unique for the driver's life.
                meta.insert(META_PROGRESS_TOKEN.into(), json!(self.next_id));
            }
            let result = self.exchange(method, params).await?;
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => {
                    return Ok(CallOutcome {
                        result,
                        rounds,
                        transcript: self.transcript[start..].to_vec(),
                    });
                }
                Some("input_required") => {}
                Some(other) => {
                    return Err(DriverError::InvalidResponse(format!(
                        "unsupported resultType {other:?}"
                    )));
                }
            }
            if rounds >= self.max_rounds {
                return Err(DriverError::TooManyRounds {
                    limit: self.max_rounds,
                });
            }
            let requests = match result.get("inputRequests") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(m)) => m.clone(),
                Some(_) => {
                    return Err(DriverError::InvalidResponse(
                        "inputRequests is not an object".into(),
                    ));
                }
            };
            match result.get("requestState") {
                None | Some(Value::Null) => {}
                Some(s @ Value::String(_)) => state = Some(s.clone()),
                Some(_) => {
                    return Err(DriverError::InvalidResponse(
                        "requestState is not a string".into(),
                    ));
                }
            }
            if requests.is_empty() && state.is_none() {
                return Err(DriverError::InvalidResponse(
                    "input_required result without inputRequests or requestState".into(),
                ));
            }
            let mut out = Map::new();
            for (key, raw) in requests {
                let req: InputRequest = serde_json::from_value(raw).map_err(|e| {
                    DriverError::InvalidResponse(format!("input request `{key}`: {e}"))
                })?;
                let answer =
                    self.host
                        .respond(&key, &req)
                        .await
                        .map_err(|source| DriverError::Host {
                            key: key.clone(),
                            source,
                        })?;
                let answer = serde_json::to_value(&answer)
                    .map_err(|e| DriverError::InvalidResponse(format!("answer to `{key}`: {e}")))?;
                out.insert(key, answer);
            }
            if !out.is_empty() {
                answers = Some(out);
            }
        }
    }
}
