//! [`ToolContext`]: what a tool round sees — the caller, the declared client capabilities,
//! this round's answers, the journal — and where it registers its input requests.
//!
//! Two modes:
//! - **MRTR mode** (built by the server): requests registered with [`ToolContext::request`]
//!   go out in an `input_required` result; answers arrive on the next round and are taken
//!   with `take_*`. Awaiting a builder in this mode is a bug (the `#[mcp_tool]` transform
//!   splits the function at each `.await` of a builder) and yields [`ToolError::Internal`].
//! - **Direct mode** (built with a [`Host`]): awaiting a builder sends the request to the
//!   host and waits for its answer, so the unmodified linear function runs in-process.
//!   The host sees the keys the state machine would send: a builder's own key, else the key
//!   `#[mcp_tool]` derives from the `let` binding (set with a hidden default-key call in the
//!   function it keeps); only a builder with neither (awaited outside `#[mcp_tool]`) is named
//!   by its kind and a counter (`ask_1`, `sample_2`, …).

use std::collections::BTreeMap;
use std::future::IntoFuture;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::Host;
use crate::notify::ProgressReporter;
use crate::principal::Principal;
use crate::protocol::{
    ClientCapabilities, ElicitAction, InputRequest, InputRequests, InputResponse, InputResponses,
    Root,
};
use crate::requests::{
    Ask, Elicit, Elicitation, InputBuilder, Roots, Sample, SampleAnswer, UrlElicit, UrlOutcome,
};
use crate::tool::{BoxFuture, ToolError};

/// Message of the error returned when a builder is awaited without a host.
pub const OUTSIDE_TRANSFORM: &str = "suspension point reached outside #[mcp_tool]'s transform: \
     in MRTR mode register requests with ToolContext::request and return Step::Suspend \
     (or write the tool with #[mcp_tool]); awaiting a request builder needs a direct-mode host";

/// The context of one tool round.
pub struct ToolContext {
    principal: Principal,
    capabilities: ClientCapabilities,
    round: u32,
    answers: InputResponses,
    journal: Option<InputResponses>,
    outgoing: InputRequests,
    host: Option<Box<dyn Host>>,
    counter: u32,
    progress: Option<ProgressReporter>,
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
            .finish()
    }
}

impl ToolContext {
    /// An MRTR-mode context for round 0 (no answers, no journal).
    pub fn new(principal: Principal, capabilities: ClientCapabilities) -> Self {
        ToolContext {
            principal,
            capabilities,
            round: 0,
            answers: BTreeMap::new(),
            journal: None,
            outgoing: BTreeMap::new(),
            host: None,
            counter: 0,
            progress: None,
        }
    }

    /// A direct-mode context: awaiting a builder asks `host`. The principal is anonymous
    /// and the capabilities are the host's.
    pub fn direct(host: impl Host + 'static) -> Self {
        Self::with_host(Principal::anonymous(), host)
    }

    /// A direct-mode context for `principal`.
    pub fn with_host(principal: Principal, host: impl Host + 'static) -> Self {
        let capabilities = host.capabilities();
        let mut cx = Self::new(principal, capabilities);
        cx.host = Some(Box::new(host));
        cx
    }

    /// Sets the round number (how many `input_required` results preceded this round).
    pub fn with_round(mut self, round: u32) -> Self {
        self.round = round;
        self
    }

    /// Sets this round's answers (`inputResponses`, already validated).
    pub fn with_answers(mut self, answers: InputResponses) -> Self {
        self.answers = answers;
        self
    }

    /// Turns the journal on with the answers of earlier rounds.
    pub fn with_journal(mut self, journal: InputResponses) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Connects progress reporting: the request carried `_meta.progressToken` and its
    /// transport can deliver notifications (the server does this).
    pub fn with_progress(mut self, reporter: ProgressReporter) -> Self {
        self.progress = Some(reporter);
        self
    }

    /// The request's progress token, when the client asked for progress and the
    /// transport can deliver it.
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
    /// # use mcp_tool_runtime::{Principal, ToolContext};
    /// # use mcp_tool_runtime::notify::{NotificationSink, ProgressReporter};
    /// let (sink, mut rx) = NotificationSink::channel();
    /// let cx = ToolContext::new(Principal::anonymous(), Default::default())
    ///     .with_progress(ProgressReporter::new(serde_json::json!("t"), sink));
    /// cx.progress(50.0, Some(100.0), Some("halfway"));
    /// assert_eq!(rx.try_recv().unwrap()["params"]["progress"], 50.0);
    /// ```
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.progress
            .as_ref()
            .is_some_and(|p| p.report(progress, total, message))
    }

    /// The authenticated caller.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The client capabilities declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// How many `input_required` results preceded this round (0 on the first call).
    pub fn round_number(&self) -> u32 {
        self.round
    }

    /// Whether this context runs in direct mode (has a host).
    pub fn is_direct(&self) -> bool {
        self.host.is_some()
    }

    /// Whether the journal is on.
    pub fn journal_enabled(&self) -> bool {
        self.journal.is_some()
    }

    /// The journal (answers of earlier rounds by key), when on.
    pub fn journal(&self) -> Option<&InputResponses> {
        self.journal.as_ref()
    }

    /// Whether an answer for `key` is available (this round or the journal).
    pub fn has_answer(&self, key: &str) -> bool {
        self.answers.contains_key(key) || self.journal.as_ref().is_some_and(|j| j.contains_key(key))
    }

    /// This round's answers not taken yet.
    pub fn answers(&self) -> &InputResponses {
        &self.answers
    }

    /// The requests registered this round.
    pub fn outgoing(&self) -> &InputRequests {
        &self.outgoing
    }

    /// Takes the requests registered this round (the server does this after `step`).
    pub fn take_outgoing(&mut self) -> InputRequests {
        std::mem::take(&mut self.outgoing)
    }

    // --- Low level --------------------------------------------------------------------

    /// Registers an input request of this round under `key`. A duplicate key in one round
    /// is an internal error.
    pub fn request(
        &mut self,
        key: impl Into<String>,
        req: impl Into<InputRequest>,
    ) -> Result<(), ToolError> {
        let key = key.into();
        if self.outgoing.contains_key(&key) {
            return Err(ToolError::Internal(format!(
                "duplicate input request key `{key}` in one round"
            )));
        }
        self.outgoing.insert(key, req.into());
        Ok(())
    }

    /// Registers the request of a builder under `key`.
    pub fn request_builder<B: InputBuilder>(
        &mut self,
        key: impl Into<String>,
        builder: B,
    ) -> Result<(), ToolError> {
        let req = builder.into_request()?;
        self.request(key, req)
    }

    /// True when every outgoing request already has an answer (from the journal after a
    /// restart); the outgoing requests are then cleared and the code continues without
    /// suspending. False when nothing is outgoing (a checkpoint always suspends).
    pub fn round_ready(&mut self) -> bool {
        if self.outgoing.is_empty() {
            return false;
        }
        if self.outgoing.keys().all(|k| self.has_answer(k)) {
            self.outgoing.clear();
            true
        } else {
            false
        }
    }

    /// Removes and returns the raw answer for `key` (this round's answers first, then the
    /// journal, which keeps its copy).
    pub fn take_response(&mut self, key: &str) -> Option<InputResponse> {
        if let Some(a) = self.answers.remove(key) {
            return Some(a);
        }
        self.journal.as_ref().and_then(|j| j.get(key).cloned())
    }

    fn take_or_missing(&mut self, key: &str) -> Result<InputResponse, ToolError> {
        self.take_response(key).ok_or_else(|| {
            ToolError::Internal(format!("no answer for input request `{key}` in this round"))
        })
    }

    /// Takes the answer to a form elicitation and deserializes accepted content into `T`.
    pub fn take_elicitation<T: DeserializeOwned>(
        &mut self,
        key: &str,
    ) -> Result<Elicitation<T>, ToolError> {
        match self.take_or_missing(key)? {
            InputResponse::Elicit(r) => match r.action {
                ElicitAction::Accept => {
                    let content = Value::Object(r.content.unwrap_or_default());
                    serde_path_to_error::deserialize(content)
                        .map(Elicitation::Accept)
                        .map_err(|e| {
                            ToolError::invalid_input(
                                key,
                                format!("elicitation content does not match the requested schema at `{}`: {}", e.path(), e.inner()),
                            )
                        })
                }
                ElicitAction::Decline => Ok(Elicitation::Decline),
                ElicitAction::Cancel => Ok(Elicitation::Cancel),
            },
            other => Err(wrong_kind(key, "ElicitResult", &other)),
        }
    }

    /// Takes the answer to a form elicitation; decline/cancel become errors.
    pub fn take_ask<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, ToolError> {
        self.take_elicitation::<T>(key)?.into_result(key)
    }

    /// Takes the answer to a URL-mode elicitation.
    pub fn take_url_elicitation(&mut self, key: &str) -> Result<UrlOutcome, ToolError> {
        match self.take_or_missing(key)? {
            InputResponse::Elicit(r) => Ok(match r.action {
                ElicitAction::Accept => UrlOutcome::Accept,
                ElicitAction::Decline => UrlOutcome::Decline,
                ElicitAction::Cancel => UrlOutcome::Cancel,
            }),
            other => Err(wrong_kind(key, "ElicitResult", &other)),
        }
    }

    /// Takes the answer to a sampling request.
    pub fn take_sampling(&mut self, key: &str) -> Result<SampleAnswer, ToolError> {
        match self.take_or_missing(key)? {
            InputResponse::Sample(r) => Ok(SampleAnswer::new(key, r)),
            other => Err(wrong_kind(key, "CreateMessageResult", &other)),
        }
    }

    /// Takes the answer to a roots request.
    pub fn take_roots(&mut self, key: &str) -> Result<Vec<Root>, ToolError> {
        match self.take_or_missing(key)? {
            InputResponse::Roots(r) => Ok(r.roots),
            other => Err(wrong_kind(key, "ListRootsResult", &other)),
        }
    }

    /// Takes the answer for `key` as the builder type `B` expects.
    pub fn take_answer<B: InputBuilder>(&mut self, key: &str) -> Result<B::Output, ToolError> {
        B::take(self, key)
    }

    // --- Linear, author-facing API ------------------------------------------------------

    /// Form elicitation of a `T`; decline/cancel become [`ToolError::Declined`]/[`ToolError::Cancelled`].
    pub fn ask<T>(&mut self, message: impl Into<String>) -> Pending<'_, Ask<T>>
    where
        T: schemars::JsonSchema + DeserializeOwned + Send,
    {
        Pending::new(self, Ask::new(message))
    }

    /// Form elicitation of a `T`, with decline/cancel as values.
    pub fn elicit<T>(&mut self, message: impl Into<String>) -> Pending<'_, Elicit<T>>
    where
        T: schemars::JsonSchema + DeserializeOwned + Send,
    {
        Pending::new(self, Elicit::new(message))
    }

    /// URL-mode elicitation.
    pub fn elicit_url(
        &mut self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Pending<'_, UrlElicit> {
        Pending::new(self, UrlElicit::new(message, url))
    }

    /// Sampling.
    pub fn sample(&mut self, sample: Sample) -> Pending<'_, Sample> {
        Pending::new(self, sample)
    }

    /// Roots listing.
    pub fn roots(&mut self) -> Pending<'_, Roots> {
        Pending::new(self, Roots::new())
    }

    /// Several requests in one round: `cx.round((Ask::<A>::new(".."), Sample::user("..")))`.
    pub fn round<S: RoundSet>(&mut self, set: S) -> RoundPending<'_, S> {
        RoundPending { cx: self, set }
    }

    /// A round with no input request, only `requestState` (load shedding).
    pub fn checkpoint(&mut self) -> Checkpoint<'_> {
        Checkpoint { cx: self }
    }

    // --- Direct mode --------------------------------------------------------------------

    fn next_key<B: InputBuilder>(&mut self, b: &B) -> String {
        match b.explicit_key() {
            Some(k) => k.to_owned(),
            None => {
                self.counter = self.counter.saturating_add(1);
                format!("{}_{}", B::key_prefix(), self.counter)
            }
        }
    }

    /// Direct mode: sends one builder's request to the host and takes the answer.
    async fn direct_one<B: InputBuilder>(&mut self, builder: B) -> Result<B::Output, ToolError> {
        let key = self.next_key(&builder);
        let req = builder.into_request()?;
        let Some(host) = self.host.as_mut() else {
            return Err(ToolError::Internal(OUTSIDE_TRANSFORM.to_owned()));
        };
        let answer = host
            .respond(&key, &req)
            .await
            .map_err(|e| ToolError::Internal(format!("host could not answer `{key}`: {e}")))?;
        self.answers.insert(key.clone(), answer);
        B::take(self, &key)
    }
}

fn wrong_kind(key: &str, expected: &str, got: &InputResponse) -> ToolError {
    let got = match got {
        InputResponse::Elicit(_) => "ElicitResult",
        InputResponse::Sample(_) => "CreateMessageResult",
        InputResponse::Roots(_) => "ListRootsResult",
    };
    ToolError::invalid_input(key, format!("expected {expected}, got {got}"))
}

/// A builder bound to a context: `.key(..)` names it, `.await` runs it (direct mode).
#[must_use = "a request does nothing until awaited (direct mode) or split by #[mcp_tool]"]
pub struct Pending<'a, B> {
    cx: &'a mut ToolContext,
    builder: B,
}

impl<'a, B: InputBuilder> Pending<'a, B> {
    /// Wraps `builder`.
    pub fn new(cx: &'a mut ToolContext, builder: B) -> Self {
        Pending { cx, builder }
    }

    /// Sets the `inputRequests` key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.builder.set_key(key.into());
        self
    }

    /// Sets the key derived by `#[mcp_tool]` (the `let` binding's name) unless the builder
    /// already has one (a literal or computed `.key(..)`, or a key set where the builder was
    /// made), so that direct mode asks the host with the keys the state machine sends.
    #[doc(hidden)]
    pub fn __mcp_default_key(mut self, key: &str) -> Self {
        if self.builder.explicit_key().is_none() {
            self.builder.set_key(key.to_owned());
        }
        self
    }

    /// The builder.
    pub fn into_builder(self) -> B {
        self.builder
    }
}

impl<'a> Pending<'a, Sample> {
    /// Modifies the sampling request (`.with(|s| s.system("..").max_tokens(100))`).
    pub fn with(mut self, f: impl FnOnce(Sample) -> Sample) -> Self {
        self.builder = f(self.builder);
        self
    }
}

impl<'a, B> IntoFuture for Pending<'a, B>
where
    B: InputBuilder + 'a,
{
    type Output = Result<B::Output, ToolError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { self.cx.direct_one(self.builder).await })
    }
}

/// Several builders answered in one round. Implemented for tuples of up to 6 builders.
pub trait RoundSet: Send {
    /// The tuple of answers.
    type Output: Send;
    /// Direct mode: asks the host for each request in order.
    fn run_direct<'a>(
        self,
        cx: &'a mut ToolContext,
    ) -> BoxFuture<'a, Result<Self::Output, ToolError>>
    where
        Self: 'a;
    /// MRTR mode: registers every request under its explicit key, or under
    /// `keys[i]` when the builder has none.
    fn register(self, cx: &mut ToolContext, keys: &[&str]) -> Result<(), ToolError>;
    /// Gives every builder without a key the key `keys[i]` (the names `#[mcp_tool]` derives
    /// from the tuple pattern), so that direct mode uses the state machine's keys.
    #[doc(hidden)]
    fn __mcp_default_keys(self, keys: &[&str]) -> Self
    where
        Self: Sized,
    {
        let _ = keys;
        self
    }
}

macro_rules! round_set {
    ($($B:ident $b:ident $i:tt),+) => {
        impl<$($B: InputBuilder),+> RoundSet for ($($B,)+) {
            type Output = ($($B::Output,)+);
            fn run_direct<'a>(self, cx: &'a mut ToolContext) -> BoxFuture<'a, Result<Self::Output, ToolError>>
            where
                Self: 'a,
            {
                let ($($b,)+) = self;
                Box::pin(async move {
                    Ok(($(cx.direct_one($b).await?,)+))
                })
            }
            fn register(self, cx: &mut ToolContext, keys: &[&str]) -> Result<(), ToolError> {
                let ($($b,)+) = self;
                $(
                    let key = match $b.explicit_key() {
                        Some(k) => k.to_owned(),
                        None => keys.get($i).map(|k| (*k).to_owned()).ok_or_else(|| {
                            ToolError::Internal(format!("no key for request {} of the round", $i))
                        })?,
                    };
                    cx.request_builder(key, $b)?;
                )+
                Ok(())
            }
            fn __mcp_default_keys(self, keys: &[&str]) -> Self {
                let ($(mut $b,)+) = self;
                $(
                    if $b.explicit_key().is_none()
                        && let Some(k) = keys.get($i)
                    {
                        $b.set_key((*k).to_owned());
                    }
                )+
                ($($b,)+)
            }
        }
    };
}

round_set!(A a 0);
round_set!(A a 0, B b 1);
round_set!(A a 0, B b 1, C c 2);
round_set!(A a 0, B b 1, C c 2, D d 3);
round_set!(A a 0, B b 1, C c 2, D d 3, E e 4);
round_set!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);

/// `cx.round(..)` bound to a context; `.await` runs it (direct mode).
#[must_use = "a round does nothing until awaited (direct mode) or split by #[mcp_tool]"]
pub struct RoundPending<'a, S> {
    cx: &'a mut ToolContext,
    set: S,
}

impl<'a, S: RoundSet> RoundPending<'a, S> {
    /// Per-element `Pending::__mcp_default_key`: `keys[i]` for each builder without a key.
    #[doc(hidden)]
    pub fn __mcp_default_keys(self, keys: &[&str]) -> Self {
        RoundPending {
            cx: self.cx,
            set: self.set.__mcp_default_keys(keys),
        }
    }
}

impl<'a, S: RoundSet + 'a> IntoFuture for RoundPending<'a, S> {
    type Output = Result<S::Output, ToolError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        if !self.cx.is_direct() {
            return Box::pin(std::future::ready(Err(ToolError::Internal(
                OUTSIDE_TRANSFORM.to_owned(),
            ))));
        }
        self.set.run_direct(self.cx)
    }
}

/// `cx.checkpoint()`; in direct mode it completes at once.
#[must_use = "a checkpoint does nothing until awaited (direct mode) or split by #[mcp_tool]"]
pub struct Checkpoint<'a> {
    cx: &'a mut ToolContext,
}

impl<'a> IntoFuture for Checkpoint<'a> {
    type Output = Result<(), ToolError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let r = if self.cx.is_direct() {
            Ok(())
        } else {
            Err(ToolError::Internal(OUTSIDE_TRANSFORM.to_owned()))
        };
        Box::pin(std::future::ready(r))
    }
}
