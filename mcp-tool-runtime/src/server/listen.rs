//! `subscriptions/listen` (MCP 2026-07-28, SEP-2575): opening a subscription from a request
//! (its `_meta`, its filter, the subset the server agrees to, the caps on open
//! subscriptions) and the [`Subscription`] a streaming transport drains — the
//! acknowledgement first, then each matching change of the hub, until the client goes, the
//! subscription lags, or the server closes it gracefully.
//!
//! Policy (docs/SECURITY.md): a subscription holds no buffer of its own. It is a cursor
//! into the hub's ring of [`HUB_CAPACITY`](crate::changes::HUB_CAPACITY) changes; one that
//! falls that far behind (its client does not read) has lost changes and is ENDED
//! ([`Listened::Lagged`]): on HTTP its stream closes without a result, on stdio the server
//! sends `notifications/cancelled` for it. Either way the client re-lists and listens again.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

pub use super::listeners::{
    DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_MAX_SUBSCRIPTIONS_PER_PRINCIPAL, ListenLimits,
};

use super::Server;
use crate::changes::Change;
use crate::principal::Principal;
use crate::protocol::errors;
use crate::protocol::{ErrorObject, JsonObject, JsonRpcResponse, RequestId};

/// The method.
pub const LISTEN_METHOD: &str = "subscriptions/listen";

/// `_meta` key of the subscription id on every message of a listen stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Most entries of `resourceSubscriptions` or `taskIds` in one request (more: -32602).
pub const MAX_FILTER_ENTRIES: usize = 100;

/// Longest URI or task id accepted in a filter (longer: -32602).
pub const MAX_FILTER_ENTRY_BYTES: usize = 2048;

/// Which lists a listener may hear change of (see [`Server::list_may_change`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list` and `resources/templates/list`.
    Resources,
}

/// The filter the server agreed to: what the acknowledgement names and all a subscription
/// delivers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agreed {
    /// `toolsListChanged`.
    pub tools: bool,
    /// `promptsListChanged`.
    pub prompts: bool,
    /// `resourcesListChanged`.
    pub resources: bool,
    /// `resourceSubscriptions` (`None`: not asked).
    pub uris: Option<Vec<String>>,
    /// `taskIds` (`None`: not asked).
    pub task_ids: Option<Vec<String>>,
}

impl Agreed {
    /// As a `SubscriptionFilter` object (only what was agreed; a list the client asked
    /// for is named even when empty, so it sees what was refused).
    pub fn to_wire(&self) -> Value {
        let mut m = JsonObject::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                m.insert(key.into(), Value::Bool(true));
            }
        }
        if let Some(uris) = &self.uris {
            m.insert("resourceSubscriptions".into(), json!(uris));
        }
        if let Some(ids) = &self.task_ids {
            m.insert("taskIds".into(), json!(ids));
        }
        Value::Object(m)
    }
}

/// What a [`Subscription`] produced next.
#[derive(Debug, Clone, PartialEq)]
pub enum Listened {
    /// A notification to send (the acknowledgement first), carrying the subscription id.
    Notification(Value),
    /// The server closes the subscription gracefully (shutdown): send this response to the
    /// `subscriptions/listen` request, then end the stream.
    Closed(JsonRpcResponse),
    /// The subscription fell behind the hub and lost changes: end it without a result (on
    /// HTTP close the stream; on stdio send [`Subscription::cancelled`]).
    Lagged,
}

/// One open `subscriptions/listen` subscription. Counts against the caps until dropped.
pub struct Subscription {
    server: Server,
    id: RequestId,
    principal: Principal,
    key: String,
    agreed: Agreed,
    rx: broadcast::Receiver<Arc<Change>>,
    closing: watch::Receiver<bool>,
    acked: bool,
    ended: bool,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("agreed", &self.agreed)
            .finish_non_exhaustive()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.server.inner.listeners.give_back(&self.key);
    }
}

impl Subscription {
    /// The id of the `subscriptions/listen` request (the subscription's id).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// What the server agreed to deliver.
    pub fn agreed(&self) -> &Agreed {
        &self.agreed
    }

    /// The next message of the subscription: the acknowledgement first, then each matching
    /// change as it is raised; after [`Listened::Closed`] or [`Listened::Lagged`], always
    /// `Lagged`/`Closed` again (the subscription is over).
    pub async fn next(&mut self) -> Listened {
        if !self.acked {
            self.acked = true;
            let params = json!({
                "_meta": { META_SUBSCRIPTION_ID: self.id.to_value() },
                "notifications": self.agreed.to_wire(),
            });
            return Listened::Notification(notification(
                "notifications/subscriptions/acknowledged",
                params,
            ));
        }
        if self.ended {
            return Listened::Lagged;
        }
        loop {
            if *self.closing.borrow() {
                self.ended = true;
                return Listened::Closed(self.close());
            }
            let change = tokio::select! {
                biased;
                _ = self.closing.changed() => continue,
                change = self.rx.recv() => change,
            };
            match change {
                Ok(change) => {
                    if let Some(n) = self.deliver(&change).await {
                        return Listened::Notification(n);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(lost)) => {
                    throttled_warn!(
                        lost,
                        "a subscription fell behind the changes and was ended (its client re-lists)"
                    );
                    self.ended = true;
                    return Listened::Lagged;
                }
                Err(broadcast::error::RecvError::Closed) => {
                    self.ended = true;
                    return Listened::Closed(self.close());
                }
            }
        }
    }

    /// The graceful end: the `subscriptions/listen` result,
    /// `{resultType: "complete", _meta: {subscriptionId}}`.
    pub fn close(&self) -> JsonRpcResponse {
        JsonRpcResponse::result(
            self.id.clone(),
            json!({
                "resultType": "complete",
                "_meta": { META_SUBSCRIPTION_ID: self.id.to_value() },
            }),
        )
    }

    /// The `notifications/cancelled` the server sends on stdio to end this subscription
    /// on its own (when it lagged).
    pub fn cancelled(&self) -> Value {
        notification(
            "notifications/cancelled",
            json!({
                "requestId": self.id.to_value(),
                "reason": "the subscription fell behind and lost changes; list again and listen again",
            }),
        )
    }

    /// The notification for `change`, when this subscription asked for it.
    async fn deliver(&self, change: &Change) -> Option<Value> {
        let (method, mut params) = match change {
            Change::ToolsListChanged if self.agreed.tools => {
                ("notifications/tools/list_changed", JsonObject::new())
            }
            Change::PromptsListChanged if self.agreed.prompts => {
                ("notifications/prompts/list_changed", JsonObject::new())
            }
            Change::ResourcesListChanged if self.agreed.resources => {
                ("notifications/resources/list_changed", JsonObject::new())
            }
            Change::ResourceUpdated { uri }
                if self.agreed.uris.as_ref().is_some_and(|u| u.contains(uri)) =>
            {
                let p = JsonObject::from_iter([("uri".into(), Value::String(uri.clone()))]);
                ("notifications/resources/updated", p)
            }
            Change::TaskStatus {
                task_id,
                owner,
                status,
            } if *owner == self.key
                && self
                    .agreed
                    .task_ids
                    .as_ref()
                    .is_some_and(|t| t.contains(task_id)) =>
            {
                // The task as `tasks/get` shows it now, read from the store (a feed
                // carries only the id); the record's owner is checked again. A change that
                // arrives after the task moved on is skipped: the later status has its own
                // change, and the listener would otherwise hear that status twice.
                let engine = self.server.inner.tasks.as_ref()?;
                match engine.load(task_id).await {
                    Ok(Some((rec, _)))
                        if rec.owned_by(&self.principal) && rec.status.as_str() == status =>
                    {
                        ("notifications/tasks", rec.to_wire(true))
                    }
                    Ok(_) => return None,
                    Err(e) => {
                        throttled_warn!(error = %e, "a task status notification could not read its task");
                        return None;
                    }
                }
            }
            _ => return None,
        };
        let mut meta = JsonObject::new();
        meta.insert(META_SUBSCRIPTION_ID.into(), self.id.to_value());
        params.insert("_meta".into(), Value::Object(meta));
        Some(notification(method, Value::Object(params)))
    }
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// The owner string of a task's [`Change::TaskStatus`]: its principal key, `""` when
/// anonymous (the key [`Subscription`] compares with its caller's).
pub(crate) fn owner_of(principal_key: Option<&str>) -> String {
    principal_key.unwrap_or("").to_owned()
}

/// Whether `message` is a `subscriptions/listen` request (a streaming transport serves
/// those with [`Server::listen`]).
pub fn is_listen(message: &Value) -> bool {
    message.get("method").and_then(Value::as_str) == Some(LISTEN_METHOD)
        && message.get("id").is_some()
}

impl Server {
    /// Whether listeners may hear that the list of `kind` changed: always on a dynamic
    /// server ([`ServerBuilder::dynamic`](crate::server::ServerBuilder::dynamic): its
    /// registry may change any list); otherwise when the server has such things (a
    /// program may still raise the change on the hub).
    pub fn list_may_change(&self, kind: ListKind) -> bool {
        if self.inner.dynamic {
            return true;
        }
        let catalog = self.catalog();
        match kind {
            ListKind::Tools => !catalog.tools.is_empty(),
            ListKind::Prompts => !catalog.prompts.is_empty(),
            ListKind::Resources => !catalog.resources.is_empty(),
        }
    }

    /// How many subscriptions are open in this process now.
    pub fn open_subscriptions(&self) -> usize {
        self.inner.listeners.total()
    }

    /// Ends every open subscription gracefully (each yields [`Listened::Closed`]) and
    /// refuses new ones: for a shutdown. Transports call it before they stop.
    pub fn close_subscriptions(&self) {
        self.inner.listeners.close();
    }

    /// Opens a subscription from a `subscriptions/listen` request `message` of
    /// `principal`, or the error response that refuses it: `_meta` checked like every
    /// request's; a filter of the wrong shape -32602 (unknown members ignored); `taskIds`
    /// from a request that does not declare the Tasks extension -32021; the caps reached
    /// -32000 (busy). The agreed subset: list changes of lists that may change; resource
    /// URIs that name a registered resource or match a template and whose declared scopes
    /// the principal holds; task ids of the principal's own tasks.
    pub async fn listen(
        &self,
        message: &Value,
        principal: &Principal,
    ) -> Result<Subscription, JsonRpcResponse> {
        let id = message.get("id").and_then(RequestId::from_value);
        let Some(id) = id else {
            return Err(JsonRpcResponse::error(
                None,
                errors::invalid_request("Invalid Request: subscriptions/listen needs an id"),
            ));
        };
        let fail = |e: ErrorObject| JsonRpcResponse::error(Some(id.clone()), e);
        let params = match message.get("params") {
            Some(Value::Object(p)) => Some(p),
            None | Some(Value::Null) => None,
            Some(_) => {
                return Err(fail(errors::invalid_params(
                    "Invalid params: `params` must be an object",
                )));
            }
        };
        let meta = super::request_meta::validate_meta(params).map_err(fail)?;
        let filter = Filter::parse(params).map_err(fail)?;
        if filter.task_ids.is_some() && !crate::tasks::declares_tasks(&meta.capabilities) {
            return Err(fail(crate::tasks::missing_tasks_extension()));
        }
        if self.inner.listeners.closing() {
            return Err(fail(errors::busy("Server shutting down", 1)));
        }
        let agreed = self.agree(filter, principal).await;
        let key = owner_of(principal.key().as_deref());
        self.inner.listeners.take(&key).map_err(fail)?;
        // From here the subscription counts (its Drop gives the slot back); it hears
        // every change raised from now on.
        Ok(Subscription {
            server: self.clone(),
            id,
            principal: principal.clone(),
            key,
            agreed,
            rx: self.inner.changes.subscribe(),
            closing: self.inner.listeners.watch_closing(),
            acked: false,
            ended: false,
        })
    }

    async fn agree(&self, filter: Filter, principal: &Principal) -> Agreed {
        let uris = filter.uris.map(|uris| {
            let mut agreed: Vec<String> = Vec::new();
            for uri in uris {
                let readable = self
                    .find_resource(&uri)
                    .is_some_and(|(r, _)| self.require_scopes(&r.info.scopes, principal).is_ok());
                if readable && !agreed.contains(&uri) {
                    agreed.push(uri);
                }
            }
            agreed
        });
        let task_ids = match filter.task_ids {
            None => None,
            Some(ids) => {
                let mut agreed: Vec<String> = Vec::new();
                if let Some(engine) = &self.inner.tasks {
                    for id in ids {
                        if agreed.contains(&id) {
                            continue;
                        }
                        if let Ok(Some((rec, _))) = engine.load(&id).await
                            && rec.owned_by(principal)
                        {
                            agreed.push(id);
                        }
                    }
                }
                Some(agreed)
            }
        };
        Agreed {
            tools: filter.tools && self.list_may_change(ListKind::Tools),
            prompts: filter.prompts && self.list_may_change(ListKind::Prompts),
            resources: filter.resources && self.list_may_change(ListKind::Resources),
            uris,
            task_ids,
        }
    }
}

/// The filter as asked.
#[derive(Debug, Default)]
struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Option<Vec<String>>,
    task_ids: Option<Vec<String>>,
}

impl Filter {
    fn parse(params: Option<&JsonObject>) -> Result<Self, ErrorObject> {
        let f = match params.and_then(|p| p.get("notifications")) {
            Some(Value::Object(f)) => f,
            Some(_) => {
                return Err(errors::invalid_params(
                    "Invalid params: `notifications` must be an object",
                ));
            }
            None => {
                return Err(errors::invalid_params(
                    "Invalid params: missing `notifications` (the subscription filter)",
                ));
            }
        };
        let flag = |key: &str| match f.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(errors::invalid_params(format!(
                "Invalid params: `notifications.{key}` must be a boolean"
            ))),
        };
        let list = |key: &str| match f.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(a)) => {
                if a.len() > MAX_FILTER_ENTRIES {
                    return Err(errors::invalid_params(format!(
                        "Invalid params: `notifications.{key}` has more than {MAX_FILTER_ENTRIES} entries"
                    )));
                }
                a.iter()
                    .map(|v| match v {
                        Value::String(s) if s.len() <= MAX_FILTER_ENTRY_BYTES => Ok(s.clone()),
                        Value::String(_) => Err(errors::invalid_params(format!(
                            "Invalid params: an entry of `notifications.{key}` is longer than {MAX_FILTER_ENTRY_BYTES} bytes"
                        ))),
                        _ => Err(errors::invalid_params(format!(
                            "Invalid params: `notifications.{key}` must be an array of strings"
                        ))),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some)
            }
            Some(_) => Err(errors::invalid_params(format!(
                "Invalid params: `notifications.{key}` must be an array of strings"
            ))),
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris: list("resourceSubscriptions")?,
            task_ids: list("taskIds")?,
        })
    }
}
