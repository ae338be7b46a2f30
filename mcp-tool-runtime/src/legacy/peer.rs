//! The host of a legacy session: each input request a tool makes in direct mode becomes a
//! real JSON-RPC request to the client (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`), sent on the stream of the call that made it, and the tool waits for the
//! client's response, which the transport routes back with [`Session::deliver`].
//!
//! - A request the client's declared capabilities do not allow is never sent
//!   ([`HostError::Unsupported`]).
//! - The wait is bounded ([`LegacyConfig::response_timeout`](super::LegacyConfig)); on
//!   timeout the server sends `notifications/cancelled` for its request and the tool fails.
//! - When the tool stops waiting for another reason (the client cancelled the call, the
//!   session closed), the request is cancelled the same way.
//! - The client's answer is checked against the shape the request asks for
//!   ([`HostError::InvalidAnswer`]); a JSON-RPC error from the client fails the tool
//!   ([`HostError::Failed`]) with the client's message.

use std::sync::Arc;

use serde_json::{Value, json};

use super::session::Session;
use crate::error::BoxFuture;
use crate::host::{Host, HostError};
use crate::notify::NotificationSink;
use crate::protocol::{ClientCapabilities, InputRequest, InputResponse, RequestId};

/// `notifications/cancelled` for the request `id`.
pub(crate) fn cancelled(id: &RequestId, reason: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": { "requestId": id.to_value(), "reason": reason },
    })
}

/// The direct-mode host of one call in a legacy session.
pub(crate) struct PeerHost {
    session: Arc<Session>,
    /// Where the call's messages go: stdout lines, or the POST's SSE stream.
    sink: NotificationSink,
}

impl PeerHost {
    pub(crate) fn new(session: Arc<Session>, sink: NotificationSink) -> Self {
        PeerHost { session, sink }
    }
}

/// Cancels a request to the client that is still waiting when dropped (timeout, or the
/// call itself stopped).
struct Outstanding {
    session: Arc<Session>,
    sink: NotificationSink,
    id: RequestId,
    reason: &'static str,
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        if self.session.forget(&self.id) && !self.session.is_closed() {
            tracing::debug!(session = self.session.id(), id = %self.id, reason = self.reason,
                "cancelling a request to the client");
            self.sink.send(cancelled(&self.id, self.reason));
        }
    }
}

impl Host for PeerHost {
    fn capabilities(&self) -> ClientCapabilities {
        self.session.capabilities().clone()
    }

    fn respond<'a>(
        &'a mut self,
        key: &'a str,
        req: &'a InputRequest,
    ) -> BoxFuture<'a, Result<InputResponse, HostError>> {
        // A client span of its own: the request to the client, and the wait for its answer
        // (a person may be filling a form). The key is the code's name, not a value.
        let span = tracing::info_span!(
            target: "mcp_tool_runtime::legacy",
            "mcp_tool.legacy.request",
            otel.kind = "client",
            otel.name = req.method(),
            mcp.method.name = req.method(),
            mcp_tool.request.key = key,
            error.type = tracing::field::Empty,
        );
        let inner = span.clone();
        let fut = async move {
            let out = self.request(key, req).await;
            if out.is_err() {
                crate::telemetry::failed(&inner, "host_error");
            }
            out
        };
        Box::pin(tracing::Instrument::instrument(fut, span))
    }
}

impl PeerHost {
    /// One request to the client and its answer (see [`Host::respond`]).
    async fn request(&mut self, key: &str, req: &InputRequest) -> Result<InputResponse, HostError> {
        {
            let method = req.method();
            if !req.allowed_by(self.session.capabilities()) {
                return Err(HostError::Unsupported {
                    key: key.to_owned(),
                    method: format!("{method} (the client did not declare the capability)"),
                });
            }
            if !self.sink.is_connected() {
                return Err(HostError::Failed(format!(
                    "`{method}` cannot be sent to the client on this transport"
                )));
            }
            let params = match serde_json::to_value(req) {
                Ok(Value::Object(mut m)) => m.remove("params").unwrap_or(json!({})),
                _ => return Err(HostError::Failed(format!("`{key}` does not serialize"))),
            };
            let id = self.session.next_request_id();
            let answer = self.session.expect(id.clone());
            let mut outstanding = Outstanding {
                session: self.session.clone(),
                sink: self.sink.clone(),
                id: id.clone(),
                reason: "the call that made this request stopped",
            };
            self.sink.send(json!({
                "jsonrpc": "2.0",
                "id": id.to_value(),
                "method": method,
                "params": params,
            }));
            let timeout = self.session.response_timeout;
            let answer = match tokio::time::timeout(timeout, answer).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(_)) => {
                    return Err(HostError::Failed(
                        "the client can no longer answer (its input ended or the session closed)"
                            .to_owned(),
                    ));
                }
                Err(_) => {
                    outstanding.reason = "timed out";
                    return Err(HostError::Failed(format!(
                        "the client did not answer `{method}` within {} s",
                        timeout.as_secs_f64()
                    )));
                }
            };
            drop(outstanding);
            match answer {
                Ok(result) => req
                    .parse_response(result)
                    .map_err(|e| HostError::InvalidAnswer {
                        key: key.to_owned(),
                        reason: format!("not a valid answer to `{method}`: {e}"),
                    }),
                Err(error) => Err(HostError::Failed(format!(
                    "the client answered `{method}` with error {}: {}",
                    error.code, error.message
                ))),
            }
        }
    }
}
