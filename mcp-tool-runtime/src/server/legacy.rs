//! The server side of a legacy session: `initialize`, then every message of the session —
//! requests answered with legacy results, the client's responses routed to the calls that
//! wait for them, `notifications/cancelled` stopping a call.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Server;
use super::execute::Era;
use super::guard::{catch_panic, request_panicked};
use crate::error::BoxFuture;
use crate::legacy::lifecycle::{self, to_legacy};
use crate::legacy::{LEGACY_METHODS, Session, new_session_id};
use crate::notify::{NotificationSink, Notifiers};
use crate::principal::Principal;
use crate::protocol::errors;
use crate::protocol::incoming::{Incoming, classify};
use crate::protocol::{ErrorObject, JsonObject, JsonRpcResponse, LogLevel, RequestId};

impl Server {
    /// Whether `initialize` opens legacy sessions (a dual-era server, the default); `false`
    /// for a modern-only server.
    pub fn serves_legacy(&self) -> bool {
        self.legacy_config().enabled
    }

    /// The capabilities `initialize` answers in a legacy session: the server's, with
    /// `listChanged: true` when it is dynamic (a session hears list changes on its `GET`
    /// stream or stdout) and `resources.subscribe: true` (a session serves
    /// `resources/subscribe`), and without the Tasks extension, which does not exist in
    /// 2025-11-25 sessions (SEP-2663).
    pub fn session_capabilities(&self) -> crate::protocol::ServerCapabilities {
        let mut capabilities = self.capabilities_with(true);
        capabilities.extensions = None;
        if let Some(r) = capabilities.resources.as_mut() {
            r.insert("subscribe".into(), Value::Bool(true));
        }
        capabilities
    }

    /// Answers an `initialize` request from `principal`. A dual-era server opens a session
    /// (the transport keeps it: the stdio process's, or in [`Server::sessions`] for HTTP) and
    /// answers the `InitializeResult` of the negotiated version; a modern-only server
    /// answers an error naming the versions it serves. Invalid params are -32602.
    pub fn initialize(
        &self,
        message: &Value,
        principal: &Principal,
    ) -> (Option<Arc<Session>>, JsonRpcResponse) {
        let (id, params) = match classify(message) {
            Ok(Incoming::Request { id, params, .. }) => (id, params),
            Err(Some(answer)) => return (None, answer),
            _ => {
                return (
                    None,
                    JsonRpcResponse::error(
                        None,
                        errors::invalid_request("Invalid Request: initialize must be a request"),
                    ),
                );
            }
        };
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        if !self.serves_legacy() {
            return (
                None,
                JsonRpcResponse::error(Some(id), lifecycle::modern_only(requested)),
            );
        }
        let params = match params {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => {
                let e = errors::invalid_params("Invalid params: `params` must be an object");
                return (None, JsonRpcResponse::error(Some(id), e));
            }
        };
        let (hello, requested) = match lifecycle::parse_initialize(params) {
            Ok(h) => h,
            Err(e) => return (None, JsonRpcResponse::error(Some(id), e)),
        };
        let capabilities = self.session_capabilities();
        let result = json!({
            "protocolVersion": hello.version,
            "capabilities": capabilities,
            "serverInfo": self.info(),
            "instructions": self.instructions(),
        });
        let mut result = result;
        if let Some(m) = result.as_object_mut() {
            m.retain(|_, v| !v.is_null());
        }
        // client strings escaped and cut: no forged line, no terminal escape, no flood
        tracing::info!(
            version = hello.version,
            requested = %errors::for_log(requested),
            client = %errors::for_log(&hello.client_info.name),
            "legacy session opened"
        );
        let session = Arc::new(Session::new(
            new_session_id(),
            hello,
            principal.clone(),
            self.legacy_config(),
        ));
        (Some(session), JsonRpcResponse::result(id, result))
    }

    /// Handles one message of `session`: a request is answered (`None` when the client
    /// cancelled it, or the session closed, before it completed); a notification or a
    /// response to the server's own request never is. `sink` carries the messages the
    /// request sends to the client before its response (the requests of a tool in direct
    /// mode, progress): stdout lines, or the POST's SSE stream.
    pub fn handle_in_session(
        &self,
        session: Arc<Session>,
        message: Value,
        sink: NotificationSink,
    ) -> BoxFuture<'_, Option<JsonRpcResponse>> {
        Box::pin(async move { self.session_message(&session, message, sink, None).await })
    }

    /// Like [`handle_in_session`](Self::handle_in_session), for a message that came with
    /// `principal`'s current credentials (the HTTP transport authenticates every request of
    /// a session): the request runs as `principal`, so its scopes, not those the session
    /// was opened with, are checked — a caller that stepped up uses its new scopes, one
    /// whose token lost a scope is refused. `principal` must be the session's (same issuer
    /// and subject); another is answered as if the session did not exist.
    pub fn handle_in_session_as(
        &self,
        session: Arc<Session>,
        message: Value,
        sink: NotificationSink,
        principal: &Principal,
    ) -> BoxFuture<'_, Option<JsonRpcResponse>> {
        let principal = principal.clone();
        Box::pin(async move {
            if principal != *session.principal() {
                let id = message.get("id").and_then(RequestId::from_value);
                return id.map(|id| {
                    JsonRpcResponse::error(
                        Some(id),
                        errors::invalid_request("Invalid Request: session not found"),
                    )
                });
            }
            self.session_message(&session, message, sink, Some(principal))
                .await
        })
    }

    async fn session_message(
        &self,
        session: &Arc<Session>,
        message: Value,
        sink: NotificationSink,
        principal: Option<Principal>,
    ) -> Option<JsonRpcResponse> {
        session.touch();
        let (id, method, params) = match classify(&message) {
            Ok(Incoming::Request { id, method, params }) => (id, method, params),
            Ok(Incoming::Response { id, answer }) => {
                if !session.deliver(&id, answer) {
                    tracing::debug!(session = session.id(), id = %logged(&id), "response to no waiting request; ignored");
                }
                return None;
            }
            Ok(Incoming::Notification { method, params }) => {
                self.session_notification(session, method, params);
                return None;
            }
            Err(answer) => return answer,
        };
        let params = match params {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => {
                let error = if LEGACY_METHODS.contains(&method) {
                    errors::invalid_params("Invalid params: `params` must be an object")
                } else {
                    errors::method_not_found(method)
                };
                return Some(JsonRpcResponse::error(Some(id), error));
            }
        };
        let Some(stop) = session.begin(id.clone()) else {
            return Some(JsonRpcResponse::error(
                Some(id),
                errors::invalid_request(
                    "Invalid Request: a request with this id is already in progress",
                ),
            ));
        };
        let mut closed = session.closed_signal();
        let work =
            catch_panic(self.session_method(session, method, params, sink, principal.as_ref()));
        let outcome = tokio::select! {
            outcome = work => Some(outcome),
            _ = stop => None,
            _ = closed.wait_for(|c| *c) => None,
        };
        session.end(&id);
        let outcome = match outcome {
            Some(Ok(outcome)) => outcome,
            Some(Err(panic)) => Err(request_panicked(method, &panic)),
            None => {
                tracing::debug!(session = session.id(), id = %logged(&id), method = %errors::for_log(method), "request cancelled; no response");
                return None;
            }
        };
        Some(match outcome {
            Ok(result) => JsonRpcResponse::result(id, to_legacy(result)),
            Err(e) => JsonRpcResponse::error(Some(id), e),
        })
    }

    fn session_notification(&self, session: &Session, method: &str, params: Option<&Value>) {
        match method {
            "notifications/initialized" => session.mark_initialized(),
            "notifications/cancelled" => {
                let id = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value);
                match id {
                    Some(id) => {
                        let reason = params
                            .and_then(|p| p.get("reason"))
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        let stopped = session.cancel(&id);
                        tracing::debug!(session = session.id(), id = %logged(&id), reason = %errors::for_log(reason), stopped, "client cancelled a request");
                    }
                    None => tracing::debug!("notifications/cancelled without a valid requestId"),
                }
            }
            // roots/list_changed, progress, …: nothing of ours depends on them
            other => {
                tracing::debug!(method = %errors::for_log(other), "legacy notification ignored")
            }
        }
    }

    async fn session_method(
        &self,
        session: &Arc<Session>,
        method: &str,
        params: Option<&JsonObject>,
        sink: NotificationSink,
        current: Option<&Principal>,
    ) -> Result<Value, ErrorObject> {
        let empty = JsonObject::new();
        let params = params.unwrap_or(&empty);
        let principal = current.unwrap_or(session.principal());
        // Declared scopes, with the credentials of this request, before any code runs.
        if LEGACY_METHODS.contains(&method) {
            self.check_request_scopes(method, params, principal)?;
        }
        let notifiers = Notifiers::new(Some(params), session.log_level(), &sink);
        let era = || Era::Legacy {
            session,
            sink: sink.clone(),
        };
        match method {
            "initialize" => Err(errors::invalid_request(
                "Invalid Request: this session is already initialized",
            )),
            "ping" => Ok(json!({})),
            "logging/setLevel" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .and_then(LogLevel::parse)
                    .ok_or_else(|| {
                        errors::invalid_params(
                            "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency",
                        )
                    })?;
                session.set_log_level(level);
                Ok(json!({}))
            }
            "tools/list" => self.list_tools(params),
            "tools/call" => {
                // read as a modern request's: from its text
                let text = serde_json::value::to_raw_value(params)
                    .map_err(|e| errors::internal(format!("params do not serialize: {e}")))?;
                let params = crate::protocol::text::ParamsIn::parse(&text).unwrap_or_default();
                self.call(&params, era(), principal, notifiers)
                    .await
                    .map(crate::protocol::Answer::into_value)
            }
            "prompts/list" => self.list_prompts(params),
            "prompts/get" => self.get_prompt(params, era(), principal, notifiers).await,
            "resources/list" => self.list_resources(params),
            "resources/templates/list" => self.list_resource_templates(params),
            "resources/read" => {
                self.read_resource(params, era(), principal, notifiers)
                    .await
            }
            "resources/subscribe" => self.subscribe(session, params, principal),
            "resources/unsubscribe" => self.unsubscribe(session, params),
            "completion/complete" => self.complete_argument(params, principal).await,
            other => Err(errors::method_not_found(other)),
        }
    }
}

/// A client's request id made fit for the log (a string id is the client's text).
fn logged(id: &RequestId) -> String {
    errors::for_log(&id.to_string()).into_owned()
}
