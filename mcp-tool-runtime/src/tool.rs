//! The [`Tool`] contract: what the `#[mcp_tool]` macro implements and what a person can
//! implement by hand.

use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::context::ToolContext;
pub use crate::error::{BoxFuture, RegistrationError, ToolError};
use crate::protocol::{
    self, CallToolResult, Capability, ClientCapabilities, JsonObject, StructuredContent,
};
use crate::state::StateKey;

/// The client capabilities a tool may need during a call. Checked against the declared
/// `clientCapabilities` before any tool code runs (-32021 when one is missing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RequiredCapabilities {
    /// The tool may elicit (form or URL).
    pub elicitation: bool,
    /// The tool may sample.
    pub sampling: bool,
    /// The tool may list roots.
    pub roots: bool,
}

impl RequiredCapabilities {
    /// Nothing required.
    pub fn none() -> Self {
        Self::default()
    }

    /// Everything `self` or `other` requires (a tool's own needs and its flows').
    pub fn union(self, other: RequiredCapabilities) -> Self {
        RequiredCapabilities {
            elicitation: self.elicitation || other.elicitation,
            sampling: self.sampling || other.sampling,
            roots: self.roots || other.roots,
        }
    }

    /// Adds `cap`.
    pub fn with(mut self, cap: Capability) -> Self {
        match cap {
            Capability::Elicitation => self.elicitation = true,
            Capability::Sampling => self.sampling = true,
            Capability::Roots => self.roots = true,
        }
        self
    }

    /// Whether `cap` is required.
    pub fn contains(&self, cap: Capability) -> bool {
        match cap {
            Capability::Elicitation => self.elicitation,
            Capability::Sampling => self.sampling,
            Capability::Roots => self.roots,
        }
    }

    /// The required capabilities the client did not declare, as a `requiredCapabilities`
    /// object (`{"sampling": {}}`); `None` when everything needed is declared.
    pub fn missing_from(&self, declared: &ClientCapabilities) -> Option<JsonObject> {
        let mut missing = JsonObject::new();
        if self.elicitation && declared.elicitation.is_none() {
            missing.insert("elicitation".into(), Value::Object(JsonObject::new()));
        }
        if self.sampling && declared.sampling.is_none() {
            missing.insert("sampling".into(), Value::Object(JsonObject::new()));
        }
        if self.roots && declared.roots.is_none() {
            missing.insert("roots".into(), Value::Object(JsonObject::new()));
        }
        (!missing.is_empty()).then_some(missing)
    }
}

/// Static description of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Programmatic name (unique in a server).
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Description for the model.
    pub description: Option<String>,
    /// JSON Schema of the arguments; root `"type": "object"`.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`.
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    pub annotations: Option<protocol::ToolAnnotations>,
    /// The client capabilities the tool may need.
    pub capabilities: RequiredCapabilities,
    /// How many `input_required` results one call may produce.
    pub max_rounds: u32,
    /// Lifetime of sealed states (default: the sealer's).
    pub state_ttl: Option<Duration>,
    /// Fingerprint of the state layout; a state of another layout does not resume.
    pub layout: String,
    /// Keep answers by key so that a call can restart from the top after a layout change.
    pub journal: bool,
    /// Offer answers that arrive on a first call (no `requestState`) to the tool. Off by
    /// default: nothing was asked yet, so such answers are unsolicited and ignored.
    pub early_answers: bool,
    /// Whether a call runs as a task (the Tasks extension, SEP-2663; default: never).
    pub task: crate::tasks::TaskSupport,
    /// Where a task-supporting call becomes a task (default: at the call).
    pub task_start: crate::tasks::TaskStart,
    /// The OAuth scopes a caller must hold (RFC 6749 scope tokens; empty: none beyond
    /// what the authenticator requires). Checked before any code runs, on every round,
    /// unless the server [ignores scopes](crate::server::ServerBuilder::ignore_scopes);
    /// listed in the descriptor's `_meta` under [`SCOPES_META_KEY`].
    pub scopes: Vec<String>,
    /// Single use (`#[mcp_tool(once)]`): every state it issues carries a unique id, and a
    /// round that opens one is claimed in the server's [ledger](crate::store::Ledger) before its
    /// code runs; a replay of that state gets the first presentation's stored response
    /// instead of a second run. The first round (no state) has nothing to claim: put the
    /// effect in a later round. See `docs/SECURITY.md` for the guarantee and its limits.
    pub once: bool,
}

/// The `_meta` key under which `tools/list`, `prompts/list`, `resources/list` and
/// `resources/templates/list` name the scopes an entry requires (an array of strings,
/// present only when it requires some), so that a client can ask for them up front.
pub const SCOPES_META_KEY: &str = "mcp-tool/scopes";

/// The `_meta` object naming `scopes` (see [`SCOPES_META_KEY`]), or `None` for no scopes.
pub fn scopes_meta(scopes: &[String]) -> Option<JsonObject> {
    (!scopes.is_empty()).then(|| JsonObject::from_iter([(SCOPES_META_KEY.into(), json!(scopes))]))
}

/// The `extra` members of a prompt or resource descriptor: `_meta` naming `scopes`
/// (see [`SCOPES_META_KEY`]), or nothing.
pub(crate) fn scopes_extra(scopes: &[String]) -> JsonObject {
    JsonObject::from_iter(scopes_meta(scopes).map(|meta| ("_meta".into(), Value::Object(meta))))
}

/// Reads a scope list: space-separated tokens (`"notes:read notes:write"`), each item of
/// the iterator may hold several; blank items are skipped.
fn scope_list<I, S>(scopes: I) -> impl Iterator<Item = String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    scopes.into_iter().flat_map(|s| {
        s.as_ref()
            .split(' ')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    })
}

/// Adds `more` scopes to `scopes` (space-separated lists), without repeats.
pub fn add_scopes<I, S>(scopes: &mut Vec<String>, more: I)
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    for s in scope_list(more) {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
}

/// The first entry of `scopes` that is not an RFC 6749 scope token, as a registration
/// message.
pub(crate) fn check_scopes(scopes: &[String]) -> Result<(), String> {
    match scopes.iter().find(|s| !crate::principal::is_scope_token(s)) {
        None => Ok(()),
        Some(bad) => Err(format!(
            "scope {bad:?} is not an RFC 6749 scope token (printable ASCII without space, `\"` and `\\`)"
        )),
    }
}

/// The settings of a resumable request (a tool call, a prompt, a resource read): what it may
/// ask for and how its state is sealed.
#[derive(Debug, Clone, PartialEq)]
pub struct Rounds {
    /// The client capabilities it may need.
    pub capabilities: RequiredCapabilities,
    /// How many `input_required` results one request may produce.
    pub max_rounds: u32,
    /// Lifetime of sealed states (default: the sealer's).
    pub state_ttl: Option<Duration>,
    /// Fingerprint of the state layout; a state of another layout does not resume.
    pub layout: String,
    /// Keep answers by key so that a request can restart from the top after a layout change.
    pub journal: bool,
    /// Offer answers that arrive on a first request (no `requestState`).
    pub early_answers: bool,
    /// Single use: see [`ToolInfo::once`] (tools only; a prompt or resource setting it is
    /// refused at registration).
    pub once: bool,
}

impl Default for Rounds {
    fn default() -> Self {
        Rounds {
            capabilities: RequiredCapabilities::default(),
            max_rounds: ToolInfo::DEFAULT_MAX_ROUNDS,
            state_ttl: None,
            layout: "v1".into(),
            journal: false,
            early_answers: false,
            once: false,
        }
    }
}

impl ToolInfo {
    /// The tool's round settings.
    pub fn rounds(&self) -> Rounds {
        Rounds {
            capabilities: self.capabilities,
            max_rounds: self.max_rounds,
            state_ttl: self.state_ttl,
            layout: self.layout.clone(),
            journal: self.journal,
            early_answers: self.early_answers,
            once: self.once,
        }
    }

    /// Default maximum number of rounds.
    pub const DEFAULT_MAX_ROUNDS: u32 = 8;

    /// A tool with a name, an empty-object input schema and defaults everywhere else.
    pub fn new(name: impl Into<String>) -> Self {
        ToolInfo {
            name: name.into(),
            title: None,
            description: None,
            input_schema: JsonObject::from_iter([("type".into(), json!("object"))]),
            output_schema: None,
            annotations: None,
            capabilities: RequiredCapabilities::default(),
            max_rounds: Self::DEFAULT_MAX_ROUNDS,
            state_ttl: None,
            layout: "v1".into(),
            journal: false,
            early_answers: false,
            task: crate::tasks::TaskSupport::Forbidden,
            task_start: crate::tasks::TaskStart::Call,
            scopes: Vec::new(),
            once: false,
        }
    }

    /// Requires `scopes` (space-separated lists, e.g. `["notes:write"]` or
    /// `["notes:read notes:write"]`) of every caller; see [`ToolInfo::scopes`].
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        add_scopes(&mut self.scopes, scopes);
        self
    }

    /// Sets the task support (see [`ToolInfo::task`]).
    pub fn task(mut self, support: crate::tasks::TaskSupport) -> Self {
        self.task = support;
        self
    }

    /// Sets where a task starts (see [`ToolInfo::task_start`]).
    pub fn task_start(mut self, start: crate::tasks::TaskStart) -> Self {
        self.task_start = start;
        self
    }

    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// Sets the title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.title = Some(t.into());
        self
    }

    /// Sets the input schema (must have root `"type": "object"`).
    pub fn input_schema(mut self, s: JsonObject) -> Self {
        self.input_schema = s;
        self
    }

    /// Sets the input schema from a type, with schemars.
    pub fn input_schema_of<T: schemars::JsonSchema>(self) -> Self {
        self.input_schema(crate::schema::input_schema::<T>())
    }

    /// Sets the output schema.
    pub fn output_schema(mut self, s: JsonObject) -> Self {
        self.output_schema = Some(s);
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, a: protocol::ToolAnnotations) -> Self {
        self.annotations = Some(a);
        self
    }

    /// Declares that the tool may need `cap`.
    pub fn needs(mut self, cap: Capability) -> Self {
        self.capabilities = self.capabilities.with(cap);
        self
    }

    /// Sets the maximum number of rounds.
    pub fn max_rounds(mut self, n: u32) -> Self {
        self.max_rounds = n;
        self
    }

    /// Sets the state TTL.
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = Some(ttl);
        self
    }

    /// Sets the layout fingerprint.
    pub fn layout(mut self, layout: impl Into<String>) -> Self {
        self.layout = layout.into();
        self
    }

    /// Makes the tool single use (see [`ToolInfo::once`]), or not.
    pub fn once(mut self, on: bool) -> Self {
        self.once = on;
        self
    }

    /// Turns the journal on or off.
    pub fn journal(mut self, on: bool) -> Self {
        self.journal = on;
        self
    }

    /// Offers answers sent on a first call to the tool (see [`ToolInfo::early_answers`]).
    pub fn early_answers(mut self, on: bool) -> Self {
        self.early_answers = on;
        self
    }

    /// The descriptor listed by `tools/list`.
    pub fn descriptor(&self) -> protocol::ToolDescriptor {
        protocol::ToolDescriptor {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            output_schema: self.output_schema.clone(),
            annotations: self.annotations.clone(),
            meta: scopes_meta(&self.scopes),
            extra: match self.task {
                crate::tasks::TaskSupport::Forbidden => JsonObject::new(),
                t => JsonObject::from_iter([(
                    "execution".into(),
                    json!({"taskSupport": t.as_str()}),
                )]),
            },
        }
    }
}

/// What one round of a tool (or prompt, or resource) produced.
#[derive(Debug, Clone)]
pub enum Step<T = CallToolResult> {
    /// The call is complete.
    Complete(T),
    /// The call needs input: the requests registered on the context go out with `state`.
    Suspend {
        /// The tool's own state as JSON text, given back as `state` on the next round
        /// (see [`Step::suspend`]).
        state: Box<RawValue>,
    },
}

/// Two steps are equal when their values are, or their states' texts.
impl<T: PartialEq> PartialEq for Step<T> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Step::Complete(a), Step::Complete(b)) => a == b,
            (Step::Suspend { state: a }, Step::Suspend { state: b }) => a.get() == b.get(),
            _ => false,
        }
    }
}

impl<T> Step<T> {
    /// [`Step::Suspend`] with `state` written as JSON (read it back on the next round with
    /// [`parse_state`]). A state that does not serialize is [`ToolError::Internal`].
    ///
    /// ```
    /// use mcp_tool_runtime::manual::{parse_state, Step};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, Debug, PartialEq)]
    /// enum Phase {
    ///     AskedName,
    ///     AskedAge { name: String },
    /// }
    ///
    /// // round 1 ends: the server seals this text into `requestState`
    /// let step: Step = Step::suspend(&Phase::AskedAge { name: "Ada".into() })?;
    /// let Step::Suspend { state } = step else { unreachable!() };
    /// assert_eq!(state.get(), r#"{"AskedAge":{"name":"Ada"}}"#);
    /// // round 2: `Tool::step` gets the same text back as `state`
    /// let phase: Phase = parse_state(&state)?;
    /// assert_eq!(phase, Phase::AskedAge { name: "Ada".into() });
    /// # Ok::<(), mcp_tool_runtime::ToolError>(())
    /// ```
    pub fn suspend<S: serde::Serialize + ?Sized>(state: &S) -> Result<Self, ToolError> {
        let state = serde_json::value::to_raw_value(state).map_err(|e| {
            ToolError::Internal(format!("the tool's state does not serialize: {e}"))
        })?;
        Ok(Step::Suspend { state })
    }
}

/// Deserializes tool arguments from their JSON text (as [`Tool::step`] receives them); a
/// mismatch is [`ToolError::InvalidArguments`] naming the field (`isError: true` on the
/// wire).
pub fn parse_args<T: serde::de::DeserializeOwned>(args: &RawValue) -> Result<T, ToolError> {
    // Valid arguments are read directly; only refused ones are read again, tracking the
    // path, for the message naming the field (the same input fails the same way).
    match serde_json::from_str::<T>(args.get()) {
        Ok(parsed) => Ok(parsed),
        Err(_) => {
            let mut de = serde_json::Deserializer::from_str(args.get());
            serde_path_to_error::deserialize::<_, T>(&mut de)
                .map_err(crate::error::invalid_arguments)
        }
    }
}

/// Deserializes the state a tool suspended with ([`Step::suspend`]), given back as `state`
/// on the next round. It was sealed by this server, so a mismatch (a state written by
/// another version of the tool) is [`ToolError::InvalidState`].
pub fn parse_state<T: serde::de::DeserializeOwned>(state: &RawValue) -> Result<T, ToolError> {
    serde_json::from_str(state.get()).map_err(|e| {
        tracing::warn!(category = ?e.classify(), "a tool's state does not deserialize");
        ToolError::InvalidState
    })
}

/// The arguments `{}`: what a call without `arguments` (or with `null`) passes.
pub fn no_args() -> &'static RawValue {
    // a valid JSON text: the conversion cannot fail
    serde_json::from_str("{}").unwrap_or_else(|_| unreachable!())
}

/// Turns a tool's output into a result: a string becomes text content; an object becomes
/// `structuredContent` plus its JSON text; anything else becomes its JSON text.
pub fn output_result<T: serde::Serialize>(value: &T) -> Result<CallToolResult, ToolError> {
    let unserializable =
        |e: serde_json::Error| ToolError::Internal(format!("tool output does not serialize: {e}"));
    // serialized once; its kind is its text's first byte
    let v = StructuredContent::new(value).map_err(unserializable)?;
    Ok(match v.json().as_bytes().first() {
        Some(b'"') => CallToolResult::text(v.parse::<String>().map_err(unserializable)?),
        Some(b'{') => CallToolResult::structured(v),
        Some(b'n') => CallToolResult::success(Vec::new()),
        _ => CallToolResult::text(v.json()),
    })
}

/// One MCP tool: a static description and one async step per round. Object safe.
pub trait Tool: Send + Sync + 'static {
    /// Static description; called once at registration.
    fn info(&self) -> ToolInfo;

    /// Registration-time checks (e.g. every `ask::<T>` schema is in the elicitation subset).
    fn validate(&self) -> Result<(), RegistrationError> {
        Ok(())
    }

    /// The application state types the tool takes ([`State<T>`](crate::State) parameters,
    /// its flows' included). The server's `build()` fails when one was not given.
    fn required_state(&self) -> Vec<StateKey> {
        Vec::new()
    }

    /// One round. `args` are the call's arguments as the client sent them (a JSON object's
    /// text, `{}` when absent; read them with [`parse_args`]); `state` is the tool's own
    /// state from the previous round (`None` on the first; read it with [`parse_state`]).
    /// Input requests of this round are registered on `cx` ([`Reentrant::request`](crate::manual::Reentrant::request));
    /// returning [`Step::Suspend`] makes the server answer `input_required` with them and
    /// the sealed state.
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>>;

    /// The tool's function run once, as written, in *direct mode*: `cx` has a host that
    /// answers each request as it is made (a legacy 2025-11-25 session sends them to the client
    /// as real requests). `#[mcp_tool]` provides it; `None` (the default, e.g. a hand-written
    /// tool) makes a legacy session drive [`Tool::step`] round by round in the process instead.
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
    ) -> Option<BoxFuture<'a, Result<CallToolResult, ToolError>>> {
        let _ = (cx, args);
        None
    }
}

/// `$trait` for the smart pointers `[$ptr, …]` (each `$ptr<T>`) to one (`T: $trait + ?Sized`): each method
/// listed (by its signature) forwards to the pointee.
macro_rules! forward_to_pointee {
    ($trait:ident for [$($($ptr:ident)::+),+] $methods:tt) => {
        $(crate::tool::forward_to_pointee!(@one $trait for $($ptr)::+ $methods);)+
    };
    (@one $trait:ident for $($ptr:ident)::+ {
        $(fn $name:ident $(<$lt:lifetime>)? (&$($slt:lifetime)? self $(, $arg:ident: $ty:ty)*)
            -> $ret:ty;)*
    }) => {
        impl<T: $trait + ?Sized> $trait for $($ptr)::+<T> {
            $(fn $name $(<$lt>)? (&$($slt)? self $(, $arg: $ty)*) -> $ret {
                (**self).$name($($arg),*)
            })*
        }
    };
}
pub(crate) use forward_to_pointee;

forward_to_pointee!(Tool for [Box, std::sync::Arc] {
    fn info(&self) -> ToolInfo;
    fn validate(&self) -> Result<(), RegistrationError>;
    fn required_state(&self) -> Vec<StateKey>;
    fn step<'a>(&'a self, cx: &'a mut ToolContext, args: &'a RawValue, state: Option<&'a RawValue>)
        -> BoxFuture<'a, Result<Step, ToolError>>;
    fn direct<'a>(&'a self, cx: &'a mut ToolContext, args: &'a RawValue)
        -> Option<BoxFuture<'a, Result<CallToolResult, ToolError>>>;
});
