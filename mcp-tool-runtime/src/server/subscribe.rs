//! What a legacy (2025-11-25) session hears of the server's changes: `resources/subscribe`
//! and `resources/unsubscribe`, and the session's notifications drawn from the hub of
//! changes ([`Server::changes`]) — `notifications/{tools,prompts,resources}/list_changed`
//! (a dynamic server, which declares `listChanged`) and `notifications/resources/updated`
//! for the URIs the session subscribed to. The transports deliver them: the HTTP
//! standalone `GET` stream, stdout lines on stdio.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast::{Receiver, error::RecvError};

use super::Server;
use crate::changes::Change;
use crate::legacy::Session;
use crate::principal::Principal;
use crate::protocol::errors;
use crate::protocol::{ErrorObject, JsonObject};

/// What [`Server::next_session_notification`] found.
#[derive(Debug)]
pub enum SessionNotice {
    /// A notification for the session's client.
    Message(Value),
    /// The listener fell behind the hub and lost changes: the session's client should
    /// re-list (the HTTP stream is closed; stdio sends every `list_changed`).
    Lagged,
    /// The session closed, or the hub is gone: no more notifications.
    Closed,
}

impl Server {
    /// `resources/subscribe` in a legacy session: the URI must be a string that a resource
    /// or template of the server serves now, readable by `principal` (the scopes a
    /// `resources/read` of it needs); the session keeps at most
    /// [`LegacyConfig::max_subscriptions_per_session`](crate::legacy::LegacyConfig::max_subscriptions_per_session)
    /// URIs.
    pub(super) fn subscribe(
        &self,
        session: &Session,
        params: &JsonObject,
        principal: &Principal,
    ) -> Result<Value, ErrorObject> {
        let uri = subscription_uri(params)?;
        if !self.serves_resource(uri) {
            return Err(errors::resource_not_found(uri));
        }
        self.check_request_scopes("resources/read", params, principal)?;
        session
            .subscribe(uri)
            .map_err(|e| errors::invalid_params(format!("resources/subscribe: {e}")))?;
        Ok(json!({}))
    }

    /// `resources/unsubscribe` in a legacy session (an unknown URI is not an error: the
    /// outcome, no subscription, is the same).
    pub(super) fn unsubscribe(
        &self,
        session: &Session,
        params: &JsonObject,
    ) -> Result<Value, ErrorObject> {
        let uri = subscription_uri(params)?;
        session.unsubscribe(uri);
        Ok(json!({}))
    }

    /// The notification `change` makes for `session`'s client, if any: list changes when
    /// the server is dynamic (it declared `listChanged`), a resource update when the
    /// session subscribed to its URI. Task statuses do not exist in 2025-11-25 sessions.
    pub fn notification_for_session(&self, session: &Session, change: &Change) -> Option<Value> {
        let list = |what: &str| {
            self.is_dynamic()
                .then(|| json!({"jsonrpc": "2.0", "method": format!("notifications/{what}/list_changed")}))
        };
        match change {
            Change::ToolsListChanged => list("tools"),
            Change::PromptsListChanged => list("prompts"),
            Change::ResourcesListChanged => list("resources"),
            Change::ResourceUpdated { uri } => session.is_subscribed(uri).then(|| {
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
            }),
            Change::TaskStatus { .. } => None,
        }
    }

    /// Waits for the next notification of `session` on `changes` (a listener of
    /// [`Server::changes`], taken when the session's stream opened).
    pub async fn next_session_notification(
        &self,
        session: &Arc<Session>,
        changes: &mut Receiver<Arc<Change>>,
    ) -> SessionNotice {
        let mut closed = session.closed_signal();
        loop {
            let change = tokio::select! {
                change = changes.recv() => change,
                _ = closed.wait_for(|c| *c) => return SessionNotice::Closed,
            };
            match change {
                Ok(change) => {
                    if let Some(message) = self.notification_for_session(session, &change) {
                        return SessionNotice::Message(message);
                    }
                }
                Err(RecvError::Lagged(_)) => return SessionNotice::Lagged,
                Err(RecvError::Closed) => return SessionNotice::Closed,
            }
        }
    }

    /// Every `list_changed` notification this server may send (what a client that lost
    /// changes is told, so that it re-lists); none for a static server.
    pub fn all_list_changed(&self) -> Vec<Value> {
        [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
        ]
        .iter()
        .filter(|_| self.is_dynamic())
        .map(|c| {
            let what = match c {
                Change::ToolsListChanged => "tools",
                Change::PromptsListChanged => "prompts",
                _ => "resources",
            };
            json!({"jsonrpc": "2.0", "method": format!("notifications/{what}/list_changed")})
        })
        .collect()
    }
}

/// The `uri` of a subscribe or unsubscribe request.
fn subscription_uri(params: &JsonObject) -> Result<&str, ErrorObject> {
    match params.get("uri") {
        Some(Value::String(u)) if !u.is_empty() => Ok(u),
        _ => Err(errors::invalid_params(
            "Invalid params: `uri` must be a non-empty string",
        )),
    }
}
