//! [`ToolContext`]: what a tool round sees — the caller, the declared client capabilities,
//! this round's answers, the journal — and where it registers its input requests.
//!
//! Two modes:
//! - **MRTR mode** (built by the server): requests registered with [`Reentrant::request`]
//!   go out in an `input_required` result; answers arrive on the next round and are taken
//!   with `take_*`. Awaiting a builder in this mode is a bug (the `#[mcp_tool]` transform
//!   splits the function at each `.await` of a builder) and yields [`ToolError::Internal`].
//! - **Direct mode** (built with a [`Host`]): awaiting a builder sends the request to the
//!   host and waits for its answer, so the unmodified linear function runs in-process.
//!   The host sees the keys the state machine would send: a builder's own key, else the key
//!   `#[mcp_tool]` derives from the `let` binding (set with a hidden default-key call in the
//!   function it keeps); only a builder with neither (awaited outside `#[mcp_tool]`) is named
//!   by its kind and a counter (`ask_1`, `sample_2`, …).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::error::ToolError;
use crate::host::Host;
use crate::notify::{Logger, Notifiers, ProgressReporter};
use crate::principal::Principal;
use crate::protocol::{
    ClientCapabilities, InputRequest, InputRequests, InputResponse, InputResponses, LogLevel,
};
use crate::state::{State, StateMap};

/// Message of the error returned when a builder is awaited without a host.
pub const OUTSIDE_TRANSFORM: &str = "suspension point reached outside #[mcp_tool]'s transform: \
     a function that awaits requests must be an #[mcp_tool] or an #[mcp_flow] (hand-written \
     tools register requests with ToolContext::request and return Step::Suspend); awaiting a \
     request builder needs a direct-mode host";

/// The separator between a flow's call-site name and the keys of the requests it makes:
/// `login/github_login` is the request `github_login` of the flow called at `login`.
pub const SITE_SEPARATOR: char = '/';

/// The context of one tool round.
pub struct ToolContext {
    principal: Principal,
    capabilities: Arc<ClientCapabilities>,
    round: u32,
    answers: InputResponses,
    journal: Option<Journal>,
    /// Keys requested in this run of a journaled call (a repeat is an error).
    used: BTreeSet<String>,
    outgoing: InputRequests,
    host: Option<Box<dyn Host>>,
    counter: u32,
    progress: Option<ProgressReporter>,
    log: Option<Logger>,
    state: Arc<StateMap>,
    /// `site/` of every flow entered, outermost first.
    prefix: String,
    /// The call-site name for the next flow entered (set just before the call).
    site: Option<String>,
    /// A failure of the generated plumbing (an invalid state, a duplicate key): it wins over
    /// whatever the tool's own error type made of it.
    abort: Option<ToolError>,
    /// `cx.detach()` was called: this round's suspension starts a task (SEP-2663).
    detached: bool,
    /// Outgoing keys whose request the code can make again from its state (the macro's
    /// suspension points): the server keeps only their kind in the sealed state.
    regenerable: BTreeSet<String>,
    /// This run only makes the requests of the stage it resumes again (their answers are
    /// missing); the server sends them with the state it received.
    reasking: bool,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("principal", &self.principal)
            .field("capabilities", &self.capabilities)
            .field("round", &self.round)
            .field("answers", &self.answers.keys().collect::<Vec<_>>())
            .field(
                "journal",
                &self.journal.as_ref().map(|j| j.keys().collect::<Vec<_>>()),
            )
            .field("outgoing", &self.outgoing.keys().collect::<Vec<_>>())
            .field("direct", &self.host.is_some())
            .field("progress", &self.progress.as_ref().map(|p| p.token()))
            .field("log", &self.log.as_ref().map(Logger::minimum))
            .field("state", &self.state)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl ToolContext {
    /// An MRTR-mode context for round 0 (no answers, no journal).
    pub(crate) fn new(principal: Principal, capabilities: ClientCapabilities) -> Self {
        Self::sharing(principal, Arc::new(capabilities))
    }

    /// [`new`](Self::new) with capabilities shared with the request that declared them.
    pub(crate) fn sharing(principal: Principal, capabilities: Arc<ClientCapabilities>) -> Self {
        ToolContext {
            principal,
            capabilities,
            round: 0,
            answers: BTreeMap::new(),
            journal: None,
            used: BTreeSet::new(),
            outgoing: BTreeMap::new(),
            host: None,
            counter: 0,
            progress: None,
            log: None,
            state: Arc::new(StateMap::new()),
            prefix: String::new(),
            site: None,
            abort: None,
            detached: false,
            regenerable: BTreeSet::new(),
            reasking: false,
        }
    }

    /// A direct-mode context (see [`testing::direct`](crate::testing::direct)).
    #[deprecated(note = "use `mcp_tool_runtime::testing::direct(host)`")]
    #[doc(hidden)]
    pub fn direct(host: impl Host + 'static) -> Self {
        Self::with_host(Principal::anonymous(), host)
    }

    /// A direct-mode context for `principal`.
    pub(crate) fn with_host(principal: Principal, host: impl Host + 'static) -> Self {
        let capabilities = host.capabilities();
        let mut cx = Self::new(principal, capabilities);
        cx.host = Some(Box::new(host));
        cx
    }

    /// Sets the round number (how many `input_required` results preceded this round).
    pub(crate) fn with_round(mut self, round: u32) -> Self {
        self.round = round;
        self
    }

    /// Sets this round's answers (`inputResponses`, already validated).
    pub(crate) fn with_answers(mut self, answers: InputResponses) -> Self {
        self.answers = answers;
        self
    }

    /// Turns the journal on with the answers of earlier rounds and the keys already
    /// requested in this run.
    pub(crate) fn with_journal(mut self, journal: Journal, used: BTreeSet<String>) -> Self {
        self.journal = Some(journal);
        self.used = used;
        self
    }

    /// The application state the server was given.
    pub(crate) fn with_state_map(mut self, state: Arc<StateMap>) -> Self {
        self.state = state;
        self
    }

    /// Adds an application value (see
    /// [`testing::ContextBuilder::state`](crate::testing::ContextBuilder::state)).
    #[deprecated(
        note = "use `mcp_tool_runtime::testing::ContextBuilder::direct(host).state(value)`"
    )]
    #[doc(hidden)]
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.state).insert(value);
        self
    }

    /// The application value of type `T` (what a `State<T>` parameter receives). Missing:
    /// [`ToolError::Internal`] (a server checks at `build()` that every tool's state types
    /// were given).
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    ///
    /// struct Greeting(&'static str);
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none());
    /// let cx = ContextBuilder::direct(host).state(Greeting("Hello")).build();
    /// assert_eq!(cx.state::<Greeting>().unwrap().0, "Hello");
    /// assert!(cx.state::<String>().is_err()); // not given
    /// ```
    pub fn state<T: Send + Sync + 'static>(&self) -> Result<State<T>, ToolError> {
        self.state.require()
    }

    /// Connects progress reporting and logging as the request asked for them (the server
    /// does this).
    pub(crate) fn with_notifiers(mut self, notifiers: Notifiers) -> Self {
        self.progress = notifiers.progress;
        self.log = notifiers.log;
        self
    }

    /// The least severe level the client wants to receive, when it asked for log messages
    /// and the transport can deliver them (then [`ToolContext::log`] sends).
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    /// use mcp_tool_runtime::Principal;
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    /// let mut cx = ContextBuilder::direct(host).principal(Principal::named("ada")).build();
    /// assert_eq!(cx.log_level(), None); // nobody asked for log messages
    /// assert!(!cx.log(mcp_tool_runtime::protocol::LogLevel::Info, "not sent"));
    /// # let _ = &mut cx;
    /// ```
    pub fn log_level(&self) -> Option<LogLevel> {
        self.log.as_ref().map(Logger::minimum)
    }

    /// Sends a log message (`notifications/message`) with `data` (any serializable value,
    /// typically a string) when the client asked for messages at `level` or below: with
    /// `_meta["io.modelcontextprotocol/logLevel"]` on a 2026-07-28 request, or with
    /// `logging/setLevel` in a 2025-11-25 session. Otherwise does nothing: the protocol
    /// forbids log messages the client did not ask for. Like [`ToolContext::progress`], it
    /// never suspends and never waits. Returns whether a message was sent (`false` too when
    /// `data` does not serialize).
    ///
    /// ```
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool, protocol::LogLevel};
    ///
    /// /// Imports rows, logging each batch.
    /// #[mcp_tool]
    /// async fn import(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     for batch in 1..=3 {
    ///         cx.log(LogLevel::Info, format!("batch {batch} imported"));
    ///     }
    ///     Ok("done".into())
    /// }
    /// # let _ = import::tool();
    /// ```
    pub fn log(&self, level: LogLevel, data: impl serde::Serialize) -> bool {
        self.log_as(level, None, data)
    }

    /// [`ToolContext::log`] with the name of the logger issuing the message.
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::{ClientCapabilities, LogLevel};
    /// use mcp_tool_runtime::server::{Logger, NotificationSink};
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    ///
    /// let (sink, mut rx) = NotificationSink::channel();
    /// let host = ScriptedHost::new(ClientCapabilities::none());
    /// let cx = ContextBuilder::direct(host).logger(Logger::new(LogLevel::Info, sink)).build();
    /// assert!(cx.log_as(LogLevel::Warning, Some("db"), "slow query"));
    /// assert_eq!(rx.try_recv().unwrap()["params"]["logger"], "db");
    /// ```
    pub fn log_as(
        &self,
        level: LogLevel,
        logger: Option<&str>,
        data: impl serde::Serialize,
    ) -> bool {
        let Some(log) = &self.log else {
            return false;
        };
        if level < log.minimum() {
            return false;
        }
        match serde_json::to_value(data) {
            Ok(data) => log.log(level, logger, data),
            Err(e) => {
                tracing::debug!(error = %e, "a log message did not serialize; dropped");
                false
            }
        }
    }

    /// The request's progress token, when the client asked for progress and the
    /// transport can deliver it.
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    /// use mcp_tool_runtime::Principal;
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    /// let mut cx = ContextBuilder::direct(host).principal(Principal::named("ada")).build();
    /// assert_eq!(cx.progress_token(), None); // the request carried none
    /// assert!(!cx.progress(0.5, Some(1.0), None)); // so nothing is sent
    /// # let _ = &mut cx;
    /// ```
    pub fn progress_token(&self) -> Option<&Value> {
        self.progress.as_ref().map(ProgressReporter::token)
    }

    /// Reports progress (`notifications/progress`) when the client asked for it with
    /// `_meta.progressToken`; otherwise does nothing. Never suspends and never waits, so it
    /// is an ordinary call inside `#[mcp_tool]` bodies. `progress` must increase with each
    /// call (values that do not are dropped); `total` is the expected final value, if known.
    /// Returns whether a notification was sent.
    ///
    /// ```
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    ///
    /// /// Counts to three, reporting progress.
    /// #[mcp_tool]
    /// async fn count(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     for i in 1..=3 {
    ///         cx.progress(f64::from(i), Some(3.0), Some("counting"));
    ///     }
    ///     Ok("done".into())
    /// }
    /// # let _ = count::tool();
    /// ```
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.progress
            .as_ref()
            .is_some_and(|p| p.report(progress, total, message))
    }

    /// Tells the server's listeners that the content of the resource `uri` changed: every
    /// `subscriptions/listen` subscription that agreed to `uri` (its
    /// `resourceSubscriptions`) gets `notifications/resources/updated`, on this replica and,
    /// with a fleet feed, on the others. Never waits. Returns whether a server's hub was
    /// reached (`false` in a direct-mode context, which has none).
    ///
    /// ```
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    ///
    /// /// Renames note 1.
    /// #[mcp_tool]
    /// async fn rename(cx: &mut ToolContext, title: String) -> Result<String, ToolError> {
    ///     // ... store the new title ...
    ///     cx.resource_updated("notes://notes/1");
    ///     Ok(title)
    /// }
    /// # let _ = rename::tool();
    /// ```
    pub fn resource_updated(&self, uri: impl Into<String>) -> bool {
        match self.changes() {
            Some(hub) => {
                hub.publish(crate::changes::Change::ResourceUpdated { uri: uri.into() });
                true
            }
            None => {
                tracing::debug!("resource_updated outside a server: no listener to tell");
                false
            }
        }
    }

    /// The server's hub of changes (`None` in a direct-mode context): what
    /// [`resource_updated`](Self::resource_updated) raises on, for code that raises other
    /// changes (a list change after it altered the registry, say).
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    /// use mcp_tool_runtime::Principal;
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    /// let mut cx = ContextBuilder::direct(host).principal(Principal::named("ada")).build();
    /// assert!(cx.changes().is_none()); // a server's context has its hub
    /// # let _ = &mut cx;
    /// ```
    pub fn changes(&self) -> Option<crate::changes::Changes> {
        self.state
            .get::<crate::changes::ServerChanges>()
            .map(|hub| hub.0.clone())
    }

    /// The authenticated caller.
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    /// use mcp_tool_runtime::Principal;
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    /// let mut cx = ContextBuilder::direct(host).principal(Principal::named("ada")).build();
    /// assert_eq!(cx.principal().id(), "ada");
    /// # let _ = &mut cx;
    /// ```
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The client capabilities declared on this request.
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    /// use mcp_tool_runtime::Principal;
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    /// let mut cx = ContextBuilder::direct(host).principal(Principal::named("ada")).build();
    /// assert!(cx.client_capabilities().elicitation.is_some());
    /// assert!(cx.client_capabilities().sampling.is_none());
    /// # let _ = &mut cx;
    /// ```
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// How many `input_required` results preceded this round (0 on the first call).
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    /// use mcp_tool_runtime::Principal;
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    /// let mut cx = ContextBuilder::direct(host).principal(Principal::named("ada")).build();
    /// assert_eq!(cx.round_number(), 0); // direct mode runs in one go
    /// # let _ = &mut cx;
    /// ```
    pub fn round_number(&self) -> u32 {
        self.round
    }

    /// Marks this round's suspension (the next `cx.checkpoint().await`) as the start of a
    /// task, for a tool with `#[mcp_tool(task = "…", task_start = "detach")]` called by a
    /// client that declares the tasks extension: the server answers `tools/call` with a
    /// `CreateTaskResult` and goes on from the checkpoint in the background. Input gathered
    /// before stays MRTR (SEP-2663: MRTR exchanges resolve before the task is created).
    /// Without the extension (or in a task already) the checkpoint is an ordinary one.
    ///
    /// ```
    /// use mcp_tool_runtime::protocol::ClientCapabilities;
    /// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
    /// use mcp_tool_runtime::Principal;
    ///
    /// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    /// let mut cx = ContextBuilder::direct(host).principal(Principal::named("ada")).build();
    /// cx.detach(); // the next checkpoint starts a task, when the client declared tasks
    /// ```
    pub fn detach(&mut self) {
        self.detached = true;
    }

    /// Makes this a re-asking run (see [`crate::__private::reasking`]).
    pub(crate) fn with_reask(mut self) -> Self {
        self.reasking = true;
        self
    }

    /// Whether the outgoing request under the full `key` can be made again by the code.
    pub(crate) fn is_regenerable(&self, key: &str) -> bool {
        self.regenerable.contains(key)
    }

    /// Takes the requests registered this round (the server does this after `step`).
    pub(crate) fn take_outgoing(&mut self) -> InputRequests {
        std::mem::take(&mut self.outgoing)
    }

    /// Takes the journal and the keys used in this run (the server seals them).
    pub(crate) fn take_journal(&mut self) -> Option<(Journal, BTreeSet<String>)> {
        let journal = self.journal.take()?;
        Some((journal, std::mem::take(&mut self.used)))
    }

    /// `key` inside the flows being run: the key itself, borrowed, outside any flow.
    fn scoped<'k>(&self, key: &'k str) -> Cow<'k, str> {
        if self.prefix.is_empty() {
            return Cow::Borrowed(key);
        }
        let mut k = String::with_capacity(self.prefix.len() + key.len());
        k.push_str(&self.prefix);
        k.push_str(key);
        Cow::Owned(k)
    }

    /// [`scoped`](Self::scoped) of an owned key: the key itself outside any flow.
    fn scoped_owned(&self, key: String) -> String {
        if self.prefix.is_empty() {
            key
        } else {
            self.scoped(&key).into_owned()
        }
    }

    // --- Flows (called by the code `#[mcp_flow]` generates) -----------------------------

    /// Names the call site of the next flow entered.
    pub(crate) fn set_site(&mut self, site: String) {
        self.site = Some(site);
    }

    /// Enters a flow: keys get `<site>/` in front (the site set with `set_site`, else
    /// `default_site`) until [`leave_flow`](Self::leave_flow) with the returned mark.
    pub(crate) fn enter_flow(&mut self, default_site: &str) -> usize {
        let mark = self.prefix.len();
        match self.site.take() {
            Some(site) => self.prefix.push_str(&site),
            None => self.prefix.push_str(default_site),
        }
        self.prefix.push(SITE_SEPARATOR);
        mark
    }

    /// Leaves the flow entered with `mark`.
    pub(crate) fn leave_flow(&mut self, mark: usize) {
        self.prefix.truncate(mark);
    }

    /// Records a failure of the generated plumbing (the first one wins).
    pub(crate) fn set_abort(&mut self, e: ToolError) {
        self.abort.get_or_insert(e);
    }

    /// Takes the recorded plumbing failure.
    pub(crate) fn take_abort(&mut self) -> Option<ToolError> {
        self.abort.take()
    }

    // --- Low level --------------------------------------------------------------------

    /// Registers `req` under the full (scoped) `key`.
    fn register(&mut self, key: String, req: InputRequest) -> Result<(), ToolError> {
        if self.outgoing.contains_key(&key) {
            return Err(ToolError::Internal(format!(
                "duplicate input request key `{key}` in one round"
            )));
        }
        // A key used earlier in the call is a repeat, unless its answer is here and not yet
        // taken: then it is the same request made again (a hand-written tool re-making its
        // requests every round).
        // (A re-asking run makes the requests of its stage again: they are not repeats.)
        if self.journal.is_some()
            && !self.reasking
            && !self.used.insert(key.clone())
            && !self.answers.contains_key(&key)
        {
            return Err(ToolError::Internal(format!(
                "input request key `{key}` repeats within one call: with `journal`, answers are \
                 kept by key, so every request of a call needs its own key (e.g. \
                 `.key(format!(\"confirm_{{id}}\"))` with an id that differs per item)"
            )));
        }
        self.outgoing.insert(key, req);
        Ok(())
    }

    fn take_or_missing(&mut self, key: &str) -> Result<InputResponse, ToolError> {
        self.take_response(key).ok_or_else(|| {
            ToolError::Internal(format!("no answer for input request `{key}` in this round"))
        })
    }
}

mod from_context;
mod journal;
mod manual;
mod pending;
mod testing;
#[cfg(test)]
mod tests;

pub use from_context::FromContext;
pub use journal::{Journal, JournalEntry, journaled, request_digest};
pub use manual::Reentrant;
pub use pending::{Checkpoint, Pending, RoundPending, RoundSet};
pub use testing::{ContextBuilder, context, direct};
