//! The stateless MCP server: a registry of tools behind a transport-independent entry
//! point — one JSON-RPC message and the caller's principal in, zero or one message out.
//!
//! ```
//! use mcp_tool_runtime::Principal;
//! use mcp_tool_runtime::protocol::Implementation;
//! use mcp_tool_runtime::server::Server;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let server = Server::builder(Implementation::new("demo", "1.0")).build().unwrap();
//! let reply = server
//!     .handle(
//!         json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
//!             "io.modelcontextprotocol/protocolVersion": "2026-07-28",
//!             "io.modelcontextprotocol/clientCapabilities": {}
//!         }}}),
//!         &Principal::anonymous(),
//!     )
//!     .await
//!     .unwrap();
//! assert_eq!(reply.result_value().unwrap()["supportedVersions"], json!(["2026-07-28"]));
//! # });
//! ```

mod builder;
mod call;
mod catalog;
/// The JSON-RPC error constructors (at home in [`crate::protocol::errors`]) and the mapping
/// of [`ToolError`](crate::ToolError) to the wire.
pub mod errors {
    pub use crate::error::{Mapped, map_tool_error};
    pub use crate::protocol::errors::*;
}
mod execute;
pub(crate) mod guard;
mod legacy;
pub mod listen;
mod listeners;
mod live;
mod once;
mod registry;
pub mod request_meta;
mod scopes;
mod skills;
mod subscribe;
mod tasks;

pub(crate) use crate::protocol::to_value;
pub(crate) use execute::Era;

use std::sync::Arc;

use serde_json::Value;
use tracing::Instrument as _;

pub use crate::legacy::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_ANONYMOUS_SESSIONS, DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION, DEFAULT_MAX_WAITING,
    DEFAULT_MAX_WAITING_PER_PRINCIPAL, DEFAULT_MAX_WAITING_PER_SESSION, DEFAULT_RESPONSE_TIMEOUT,
    LegacyConfig, Session, Sessions,
};
pub use crate::notify::{Logger, NotificationSink, ProgressReporter};
pub use crate::principal::Identity;
pub use builder::ServerBuilder;
pub use errors::INVALID_REQUEST_STATE;
pub use listen::{Agreed, ListKind, ListenLimits, Listened, Subscription};
pub(crate) use live::{Registered, RegisteredResource};
pub use registry::{Registry, WeakRegistry};
pub use subscribe::SessionNotice;
pub use tasks::TOO_MANY_TASKS;

use crate::error::BoxFuture;
use crate::notify::Notifiers;
use crate::principal::Principal;
use crate::protocol::incoming::{self, Kind};
use crate::protocol::text::{MessageIn, ParamsIn};
use crate::protocol::{
    Answer, CacheScope, DiscoverResult, ErrorObject, Implementation, JsonObject, JsonRpcResponse,
    ListChangedCapability, ListToolsResult, Reply, ResultType, ServerCapabilities,
};
use crate::seal::Sealer;
use crate::tool::ToolInfo;

pub(crate) struct Inner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    /// The stateless round engine (sealer, answer bounds, application state).
    pub(crate) engine: crate::rounds::Engine,
    /// The tools, prompts and resources served now (see `registry.rs`).
    pub(crate) catalog: live::Live,
    /// Whether the catalog may change at run time (`ServerBuilder::dynamic`).
    pub(crate) dynamic: bool,
    pub(crate) discover_ttl_ms: u64,
    pub(crate) list_ttl_ms: u64,
    pub(crate) cache_scope: CacheScope,
    /// The Skills extension's catalog, when skills are served.
    pub(crate) skills: Option<crate::resource::skills::SkillsCatalog>,
    /// Cache TTL of `resources/read` results, in milliseconds.
    pub(crate) read_ttl_ms: u64,
    /// Items per page of list results.
    pub(crate) page_size: usize,
    /// Settings of legacy sessions.
    pub(crate) legacy: crate::legacy::LegacyConfig,
    /// The open legacy HTTP sessions.
    pub(crate) sessions: crate::legacy::Sessions,
    /// The task engine (store, settings, the tasks running here), when tasks are on.
    pub(crate) tasks: Option<Arc<crate::tasks::engine::Engine>>,
    /// Whether declared scopes are checked (off after `ServerBuilder::ignore_scopes`).
    pub(crate) enforce_scopes: bool,
    /// The ledger of single-use rounds.
    pub(crate) ledger: Arc<dyn crate::ledger::Ledger>,
    /// Settings of single-use rounds.
    pub(crate) once: crate::ledger::OnceConfig,
    /// When the ledger's expired entries were last removed (Unix ms).
    pub(crate) ledger_swept_ms: std::sync::atomic::AtomicU64,
    /// The hub of changes (list changes, resource updates, task statuses) and their
    /// listeners.
    pub(crate) changes: crate::changes::Changes,
    /// The open `subscriptions/listen` subscriptions (caps, graceful close).
    pub(crate) listeners: listeners::Listeners,
}

/// The stateless server. Cheap to clone (shared inside).
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.catalog().order)
            .finish_non_exhaustive()
    }
}

/// Methods this server implements.
pub const METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "skills/list",
    "skills/get",
    "resources/directory/read",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// `method` as a metrics label: a method this server knows (in either era), else `_OTHER`.
/// The client chooses the method it sends; an unknown one must not add a label value (the
/// recorder would keep a series per value: memory an anonymous client could grow).
#[cfg(feature = "metrics")]
fn metric_method(method: &str) -> &'static str {
    METHODS
        .iter()
        .chain(crate::legacy::LEGACY_METHODS)
        .find(|m| **m == method)
        .copied()
        .unwrap_or("_OTHER")
}

impl Server {
    /// Starts building a server that identifies as `info`.
    pub fn builder(info: Implementation) -> ServerBuilder {
        ServerBuilder::new(info)
    }

    /// The server's implementation info (`serverInfo`).
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The tools served now, in registration order.
    pub fn tools(&self) -> Vec<ToolInfo> {
        let catalog = self.catalog();
        catalog
            .order
            .iter()
            .filter_map(|n| catalog.tools.get(n).map(|r| r.info.clone()))
            .collect()
    }

    /// The `x-mcp-header` parameters of the tool `name` served now (`None`: no such tool).
    pub fn tool_header_params(
        &self,
        name: &str,
    ) -> Option<Vec<crate::protocol::headers::HeaderParam>> {
        self.catalog()
            .tools
            .get(name)
            .map(|r| r.header_params.clone())
    }

    /// The settings of legacy sessions.
    pub fn legacy_config(&self) -> &crate::legacy::LegacyConfig {
        &self.inner.legacy
    }

    /// The open legacy HTTP sessions (kept by the HTTP transport; stdio keeps its one
    /// session itself).
    pub fn sessions(&self) -> &crate::legacy::Sessions {
        &self.inner.sessions
    }

    /// `instructions` for the client, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// The application state shared with every tool.
    pub(crate) fn state_map(&self) -> Arc<crate::state::StateMap> {
        self.inner.engine.state.clone()
    }

    /// The hub of this server's changes: raise one with
    /// [`Changes::publish`](crate::changes::Changes::publish); connect a fleet's feed with
    /// [`Changes::connect`](crate::changes::Changes::connect) so that the listeners of every
    /// replica hear it.
    pub fn changes(&self) -> &crate::changes::Changes {
        &self.inner.changes
    }

    /// The sealer.
    pub fn sealer(&self) -> &Sealer {
        &self.inner.engine.sealer
    }

    /// Handles one JSON-RPC message from `principal`. `None` for notifications (and
    /// responses), which are never answered.
    pub fn handle(
        &self,
        message: Value,
        principal: &Principal,
    ) -> BoxFuture<'_, Option<JsonRpcResponse>> {
        self.handle_with(message, principal, NotificationSink::none())
    }

    /// Like [`Server::handle`], with a sink for the notifications of this one request:
    /// when a `tools/call` carries `_meta.progressToken`, the tool's `cx.progress(..)`
    /// calls become `notifications/progress` messages sent to `sink` while the request
    /// runs (all of them before the response is returned).
    pub(crate) fn handle_with(
        &self,
        message: Value,
        principal: &Principal,
        sink: NotificationSink,
    ) -> BoxFuture<'_, Option<JsonRpcResponse>> {
        let principal = principal.clone();
        Box::pin(async move {
            self.dispatch(&message.to_string(), principal, sink)
                .await
                .map(Reply::into_response)
        })
    }

    /// Handles one JSON-RPC message read from its text, with a sink for the notifications of
    /// this one request (see [`NotificationSink`]), answering a [`Reply`]: the typed request
    /// path. No tree of the message is built: its envelope, `params` and `_meta` are read
    /// member by member from `text`, each member parsed where it is used (a tool's
    /// arguments, each answer in `inputResponses`, the `requestState`). What the
    /// transports call; -32700 when `text` is not JSON.
    ///
    /// ```
    /// use mcp_tool_runtime::Principal;
    /// use mcp_tool_runtime::server::NotificationSink;
    /// use mcp_tool_runtime::protocol::Implementation;
    /// use mcp_tool_runtime::server::Server;
    /// use serde_json::Value;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let server = Server::builder(Implementation::new("demo", "1.0")).build().unwrap();
    /// let text = r#"{"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": {
    ///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities": {}}}}"#;
    /// let reply = server
    ///     .handle_text(text, &Principal::anonymous(), NotificationSink::none())
    ///     .await
    ///     .unwrap();
    /// let sent: Value = serde_json::from_slice(&reply.to_vec().unwrap()).unwrap();
    /// assert_eq!(sent["id"], 7);
    /// let bad = server.handle_text("{", &Principal::anonymous(), NotificationSink::none());
    /// let sent: Value = serde_json::from_slice(&bad.await.unwrap().to_vec().unwrap()).unwrap();
    /// assert_eq!(sent["error"]["code"], -32700);
    /// # });
    /// ```
    pub fn handle_text<'a>(
        &'a self,
        text: &'a str,
        principal: &Principal,
        sink: NotificationSink,
    ) -> BoxFuture<'a, Option<Reply>> {
        let principal = principal.clone();
        Box::pin(self.dispatch(text, principal, sink))
    }

    async fn dispatch(
        &self,
        text: &str,
        principal: Principal,
        sink: NotificationSink,
    ) -> Option<Reply> {
        match MessageIn::parse(text) {
            Ok(message) => self.dispatch_in(&message, principal, sink).await,
            Err(_) => incoming::not_a_message(text).map(Reply::from),
        }
    }

    /// Handles one message read from its text (the typed request path).
    pub(crate) async fn dispatch_in(
        &self,
        message: &MessageIn<'_>,
        principal: Principal,
        sink: NotificationSink,
    ) -> Option<Reply> {
        let id = match incoming::classify_in(message) {
            Ok(Kind::Request(id)) => id,
            // A notification is never answered; this server sent no request to respond to.
            Ok(Kind::Notification) => return None,
            Ok(Kind::Response(id)) => {
                return Some(Reply::from(JsonRpcResponse::error(
                    Some(id),
                    errors::invalid_request(
                        "Invalid Request: a response to a request this server did not send",
                    ),
                )));
            }
            Err(answer) => return answer.map(Reply::from),
        };
        let method = message.method().unwrap_or_default();
        let method = method.as_ref();
        let params = message.fields();
        let (span, trace) = crate::telemetry::server_span(method, &id, params);
        let started = crate::telemetry::metrics::start();
        let (outcome, finished) = crate::telemetry::scope(
            trace,
            self.answer(method, message, principal, sink)
                .instrument(span.clone()),
        )
        .await;
        crate::telemetry::outcome(&span, &outcome);
        self.measure(method, params, &outcome, finished, started);
        Some(Reply::new(id, outcome))
    }

    /// One request's answer (its method's, or -32602 for params that are not an object).
    async fn answer(
        &self,
        method: &str,
        message: &MessageIn<'_>,
        principal: Principal,
        sink: NotificationSink,
    ) -> Result<Answer, ErrorObject> {
        // The method is checked first: an unknown or removed method (`initialize`) is
        // -32601 whatever its params. For a method of ours, params that are not an object
        // are invalid params (-32602): every MCP method's params is an object.
        if message.params_not_object() {
            let error = if METHODS.contains(&method) {
                errors::invalid_params("Invalid params: `params` must be an object")
            } else {
                errors::method_not_found(method)
            };
            return Err(error);
        }
        // A panic while handling (a bug in a tool, most likely) answers -32603; the
        // details go to the log only, and the server and connection live on.
        match guard::catch_panic(self.method(method, message, &principal, sink)).await {
            Ok(outcome) => outcome,
            Err(panic) => Err(guard::request_panicked(method, &panic)),
        }
    }

    /// The metrics of one finished request (nothing without the feature `metrics`).
    #[allow(unused_variables)]
    fn measure(
        &self,
        method: &str,
        params: Option<&ParamsIn<'_>>,
        outcome: &Result<Answer, ErrorObject>,
        finished: Option<crate::telemetry::Finished>,
        started: crate::telemetry::metrics::Started,
    ) {
        #[cfg(feature = "metrics")]
        {
            use crate::protocol::Outcome;
            use crate::telemetry::metrics;
            // Only a registered tool's name: a client cannot grow the label set.
            let name = (method == "tools/call")
                .then(|| params.and_then(ParamsIn::name))
                .flatten();
            let tool = name.and_then(|n| {
                self.catalog()
                    .tools
                    .get(n.as_ref())
                    .map(|r| r.label.clone())
            });
            let outcome = match outcome {
                Ok(a) => std::borrow::Cow::Borrowed(match a.outcome() {
                    Outcome::IsError => "tool_error",
                    Outcome::InputRequired => "input_required",
                    Outcome::Ok => "ok",
                }),
                Err(e) => {
                    if e.code == errors::BUSY {
                        metrics::concurrency_refused("busy");
                    }
                    metrics::error_outcome(e.code)
                }
            };
            let completed = matches!(&*outcome, "ok" | "tool_error");
            if let (Some(tool), true, Some(round)) =
                (&tool, completed, finished.and_then(|f| f.round))
            {
                metrics::call_rounds(tool.clone(), round.saturating_add(1));
            }
            metrics::operation(metric_method(method), tool, outcome, started.elapsed());
        }
    }

    async fn method(
        &self,
        method: &str,
        message: &MessageIn<'_>,
        principal: &Principal,
        sink: NotificationSink,
    ) -> Result<Answer, ErrorObject> {
        if !METHODS.contains(&method) {
            return Err(errors::method_not_found(method));
        }
        let params = message.fields();
        let request_meta::ValidMeta {
            capabilities,
            log_level,
            ..
        } = request_meta::validate_meta_in(params)?;
        // Progress only for a client that asked (a token) on a transport that can deliver it.
        let notifiers = Notifiers::with_token(
            || params.and_then(ParamsIn::progress_token),
            log_level,
            &sink,
        );
        // Shared, not copied: the round's context takes a handle (and this future, held
        // for the whole request, keeps a pointer rather than the capabilities themselves).
        let caps = Arc::new(capabilities);
        let round = params.map(|p| p.round).unwrap_or_default();
        let era = Era::Modern { round, caps: &caps };
        // Declared scopes, before any code of the tool, prompt or resource runs: on the
        // first call and on every retry (each carries the caller's current credentials).
        self.check_scopes_in(method, params, principal, || {
            message.params_object().ok()?.remove("ref")
        })?;
        if method == "tools/call" {
            let params = params.unwrap_or_else(|| ParamsIn::empty());
            return self.call(params, era, principal, notifiers).await;
        }
        // The other methods read their params as a tree (a parse error when it is nested
        // deeper than a tree is built).
        let params = match message.params_object() {
            Ok(p) => p,
            Err(_) => return Err(errors::parse_error()),
        };
        let params = &params;
        // The futures of these methods are boxed: held inline, the largest of them would
        // size this future, which every request (a `tools/call` most of all) allocates and
        // copies whole.
        let result = match method {
            "server/discover" => Ok(self.discover()),
            "tools/list" => self.list_tools(params),
            "prompts/list" => self.list_prompts(params),
            "prompts/get" => Box::pin(self.get_prompt(params, era, principal, notifiers)).await,
            "resources/list" => self.list_resources(params),
            "resources/templates/list" => self.list_resource_templates(params),
            "resources/read" => {
                Box::pin(self.read_resource(params, era, principal, notifiers)).await
            }
            "completion/complete" => Box::pin(self.complete_argument(params, principal)).await,
            "skills/list" | "skills/get" | "resources/directory/read" => {
                self.skills_method(method, params)
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                if !self.tasks_enabled() {
                    return Err(errors::method_not_found(method));
                }
                // SEP-2663: a request that does not declare the extension is refused.
                if !crate::tasks::declares_tasks(&caps) {
                    return Err(crate::tasks::missing_tasks_extension());
                }
                match method {
                    "tasks/get" => Box::pin(self.tasks_get(params, principal)).await,
                    "tasks/update" => Box::pin(self.tasks_update(params, principal)).await,
                    _ => Box::pin(self.tasks_cancel(params, principal)).await,
                }
            }
            other => Err(errors::method_not_found(other)),
        };
        result.map(Answer::Tree)
    }

    pub(crate) fn server_meta(&self) -> JsonObject {
        // made once at build (the engine's copy, the same `server_info_meta`)
        JsonObject::clone(&self.inner.engine.meta)
    }

    /// The server's capabilities: exactly what it has (`server/discover`; `initialize` in
    /// a legacy session adds to them, see [`Server::session_capabilities`]). A dynamic server
    /// ([`ServerBuilder::dynamic`]) declares `tools`, `prompts` and `resources` even while
    /// empty (any of them may appear), with `listChanged: true` where its changes are
    /// delivered: in this era on a `subscriptions/listen` stream (served by the stdio and
    /// HTTP transports). A static server declares what it has, without `listChanged` (its
    /// lists never change). `resources.subscribe` is declared whenever resources are served:
    /// a listen's `resourceSubscriptions` hears `cx.resource_updated`. After
    /// [`Server::close_subscriptions`] (a platform that cannot hold a stream, such as
    /// Lambda, closes them at start) neither is declared: nothing would deliver them.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.capabilities_with(!self.inner.listeners.closing())
    }

    /// The capabilities, `listChanged` declared when `delivered` (the era has a channel for
    /// the notifications) and the server is dynamic.
    pub(crate) fn capabilities_with(&self, delivered: bool) -> ServerCapabilities {
        let catalog = self.catalog();
        let dynamic = self.inner.dynamic;
        let announce = dynamic && delivered;
        let list_changed = || ListChangedCapability {
            list_changed: announce.then_some(true),
            ..ListChangedCapability::default()
        };
        let resources = || {
            let mut r = JsonObject::new();
            if delivered {
                // a listen's `resourceSubscriptions` (or a session's `resources/subscribe`)
                r.insert("subscribe".into(), Value::Bool(true));
            }
            if announce {
                r.insert("listChanged".into(), Value::Bool(true));
            }
            r
        };
        ServerCapabilities {
            tools: (dynamic || !catalog.tools.is_empty()).then(list_changed),
            prompts: (dynamic || !catalog.prompts.is_empty()).then(list_changed),
            resources: (dynamic || !catalog.resources.is_empty()).then(resources),
            completions: self.has_completions().then(JsonObject::new),
            // Any code may log (`cx.log`); messages go only to clients that ask for a level.
            logging: Some(JsonObject::new()),
            extensions: self.extensions(),
            ..ServerCapabilities::default()
        }
    }

    fn discover(&self) -> Value {
        let result = DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: crate::protocol::SUPPORTED_VERSIONS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            capabilities: self.capabilities(),
            instructions: self.inner.instructions.clone(),
            ttl_ms: self.inner.discover_ttl_ms,
            cache_scope: self.inner.cache_scope,
            meta: Some(self.server_meta()),
        };
        to_value(&result)
    }

    pub(crate) fn list_tools(&self, params: &JsonObject) -> Result<Value, ErrorObject> {
        let catalog = self.catalog();
        let all: Vec<_> = catalog
            .order
            .iter()
            .filter_map(|n| catalog.tools.get(n))
            .map(|r| r.info.descriptor())
            .collect();
        self.list::<ListToolsResult>("tools", catalog.generation, &all, params)
    }
}
