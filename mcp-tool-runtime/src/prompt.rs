//! The [`Prompt`] contract (what `#[mcp_prompt]` implements), and argument completion shared
//! with resource templates.
//!
//! A prompt is written like a tool: a linear `async fn` that may ask (`cx.ask`, `cx.sample`,
//! …) before it answers, so `prompts/get` may answer `input_required` and resume on any
//! replica. Its arguments come from a schemars type (each field a `prompts/list` argument:
//! name, description from the doc comment, required unless `Option`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::context::ToolContext;
use crate::error::{BoxFuture, RegistrationError, ToolError};
use crate::principal::Principal;
use crate::protocol::{GetPromptResult, PromptArgument, PromptDescriptor, PromptMessage};
use crate::state::{State, StateKey, StateMap};
use crate::tool::{Rounds, Step};

/// Static description of a prompt.
#[derive(Clone)]
pub struct PromptInfo {
    /// Programmatic name (unique in a server).
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// The arguments.
    pub arguments: Vec<PromptArgument>,
    /// Round settings (capabilities, `max_rounds`, state TTL, layout, journal).
    pub rounds: Rounds,
    /// Completers of arguments, by argument name.
    pub completions: BTreeMap<String, Completer>,
    /// The OAuth scopes a caller must hold (RFC 6749 scope tokens; empty: none beyond
    /// what the authenticator requires). Checked before any code runs, on every round,
    /// unless the server [ignores scopes](crate::server::ServerBuilder::ignore_scopes);
    /// listed in the descriptor's `_meta` under [`SCOPES_META_KEY`](crate::tool::SCOPES_META_KEY).
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for PromptInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptInfo")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("rounds", &self.rounds)
            .field("scopes", &self.scopes)
            .field("completions", &self.completions.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl PromptInfo {
    /// A prompt with a name and defaults everywhere else.
    pub fn new(name: impl Into<String>) -> Self {
        PromptInfo {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            rounds: Rounds::default(),
            completions: BTreeMap::new(),
            scopes: Vec::new(),
        }
    }

    /// Requires `scopes` (space-separated lists) of every caller; see [`PromptInfo::scopes`].
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        crate::tool::add_scopes(&mut self.scopes, scopes);
        self
    }

    /// The descriptor listed by `prompts/list`.
    pub fn descriptor(&self) -> PromptDescriptor {
        PromptDescriptor {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            arguments: (!self.arguments.is_empty()).then(|| self.arguments.clone()),
            extra: crate::tool::scopes_extra(&self.scopes),
        }
    }
}

/// One MCP prompt: a static description and one async step per round. Object safe.
pub trait Prompt: Send + Sync + 'static {
    /// Static description; called once at registration.
    fn info(&self) -> PromptInfo;

    /// Registration-time checks (elicitation schemas).
    fn validate(&self) -> Result<(), RegistrationError> {
        Ok(())
    }

    /// The application state types it takes.
    fn required_state(&self) -> Vec<StateKey> {
        Vec::new()
    }

    /// One round: `args` is the `arguments` object (string values), `state` the prompt's
    /// own state from the previous round.
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step<GetPromptResult>, ToolError>>;

    /// The prompt's function run once, as written, in direct mode (see [`Tool::direct`]);
    /// `None` by default.
    ///
    /// [`Tool::direct`]: crate::tool::Tool::direct
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
    ) -> Option<BoxFuture<'a, Result<GetPromptResult, ToolError>>> {
        let _ = (cx, args);
        None
    }
}

/// What a completer sees: the argument being completed, what the user typed so far, the
/// other arguments already filled in (`context.arguments`), the caller and the state.
#[derive(Clone, Debug)]
pub struct CompleteContext {
    /// The argument (prompt argument or template variable) being completed.
    pub argument: String,
    /// Its current value.
    pub value: String,
    /// The arguments already resolved (`context.arguments`), untrusted.
    pub arguments: BTreeMap<String, String>,
    /// The caller.
    pub principal: Principal,
    state: Arc<StateMap>,
}

impl CompleteContext {
    /// A context (the server builds it; public for tests).
    pub fn new(
        argument: impl Into<String>,
        value: impl Into<String>,
        arguments: BTreeMap<String, String>,
        principal: Principal,
    ) -> Self {
        CompleteContext {
            argument: argument.into(),
            value: value.into(),
            arguments,
            principal,
            state: Arc::new(StateMap::new()),
        }
    }

    /// With the application state.
    pub(crate) fn with_state_map(mut self, state: Arc<StateMap>) -> Self {
        self.state = state;
        self
    }

    /// Adds an application value (tests).
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.state).insert(value);
        self
    }

    /// The application value of type `T`.
    pub fn state<T: Send + Sync + 'static>(&self) -> Result<State<T>, ToolError> {
        self.state.require()
    }
}

/// A completer: suggestions for one argument, best first (the server sends at most 100 and
/// says how many there are).
pub type Completer = Arc<
    dyn Fn(CompleteContext) -> BoxFuture<'static, Result<Vec<String>, ToolError>> + Send + Sync,
>;

/// A completer from an `async fn(CompleteContext) -> Result<Vec<String>, ToolError>`.
pub fn completer<F, Fut>(f: F) -> Completer
where
    F: Fn(CompleteContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<String>, ToolError>> + Send + 'static,
{
    Arc::new(move |cx| Box::pin(f(cx)))
}

// `Prompt` for smart pointers to a prompt.
crate::tool::forward_to_pointee!(Prompt for [Arc] {
    fn info(&self) -> PromptInfo;
    fn validate(&self) -> Result<(), RegistrationError>;
    fn required_state(&self) -> Vec<StateKey>;
    fn step<'a>(&'a self, cx: &'a mut ToolContext, args: &'a RawValue, state: Option<&'a RawValue>)
        -> BoxFuture<'a, Result<Step<GetPromptResult>, ToolError>>;
    fn direct<'a>(&'a self, cx: &'a mut ToolContext, args: &'a RawValue)
        -> Option<BoxFuture<'a, Result<GetPromptResult, ToolError>>>;
});

/// The `prompts/list` arguments of a prompt whose arguments type is `T`: one per property
/// of its schema (the description from the doc comment; required unless optional).
pub fn prompt_arguments<T: schemars::JsonSchema>() -> Vec<PromptArgument> {
    let schema = crate::schema::schema_for::<T>();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| PromptArgument {
            name: name.clone(),
            title: p.get("title").and_then(Value::as_str).map(str::to_owned),
            description: p
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            required: Some(required.contains(&name.as_str())),
        })
        .collect()
}

/// A prompt's output as a `GetPromptResult`.
pub fn finish_prompt<T: IntoPrompt>(v: T) -> Result<GetPromptResult, ToolError> {
    Ok(v.into_prompt())
}

/// What a prompt may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the output of a prompt",
    label = "a prompt returns `Result<T, E>` with `T` = `GetPromptResult`, `Vec<PromptMessage>`, `PromptMessage` or `String` (one user message)"
)]
pub trait IntoPrompt {
    /// The result.
    fn into_prompt(self) -> GetPromptResult;
}

impl IntoPrompt for GetPromptResult {
    fn into_prompt(self) -> GetPromptResult {
        self
    }
}

impl IntoPrompt for Vec<PromptMessage> {
    fn into_prompt(self) -> GetPromptResult {
        GetPromptResult::new(self)
    }
}

impl IntoPrompt for PromptMessage {
    fn into_prompt(self) -> GetPromptResult {
        GetPromptResult::new(vec![self])
    }
}

impl IntoPrompt for String {
    fn into_prompt(self) -> GetPromptResult {
        GetPromptResult::new(vec![PromptMessage::user(self)])
    }
}
