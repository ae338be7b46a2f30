//! Sub-flows: helper `async fn`s with suspension points, shared among tools — a login, a
//! confirmation, a "pick a file" dialog — written with `#[mcp_flow]` and called from tools and
//! from other flows as `let login = github_login(cx).await?;`.
//!
//! ```
//! use mcp_tool_runtime::{ToolContext, ToolError, mcp_flow, mcp_tool};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct YesNo {
//!     /// Yes?
//!     ok: bool,
//! }
//!
//! /// Asks the user to confirm `what`.
//! #[mcp_flow]
//! async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
//!     let answer: YesNo = cx.ask(format!("{what}?")).await?;
//!     Ok(answer.ok)
//! }
//!
//! /// Deletes two things, each after a confirmation.
//! #[mcp_tool]
//! async fn delete_two(cx: &mut ToolContext) -> Result<String, ToolError> {
//!     let first = confirm(cx, "Delete the first".into()).await?;
//!     let second = confirm(cx, "Delete the second".into()).await?;
//!     Ok(format!("{first} {second}"))
//! }
//! ```
//!
//! How it works: `#[mcp_flow]` compiles the function into a state machine of its own, like
//! `#[mcp_tool]` does, behind a value that the call `confirm(cx, what)` builds (a tuple
//! struct named like the function). A tool (or flow) that awaits it keeps the flow's state
//! nested in its own state, under the call site; resuming resumes the flow where it stopped.
//! Awaited outside a transform (direct mode, tests), the value runs the function as written.
//!
//! **Keys.** A flow's requests are namespaced by its call site: the request `answer` of the
//! flow bound by `let first = confirm(..)` is sent as `first/answer` (the binding's name, else
//! the assignment target, else the flow's function name; a name used by two calls in one body
//! gets `_2`, `_3`, … in source order). `.key("…")` on the call (`confirm(cx, w).key("c1")`)
//! names the site explicitly, also with a value computed at run time (a flow in a loop with
//! `journal` needs one per iteration). Flows called from flows nest: `outer/inner/answer`.
//! The scheme depends only on the source, so it is stable across builds.
//!
//! **What the calling tool declares.** A flow's capabilities (elicitation, sampling, roots),
//! its application state types, its elicitation schema checks and its layout fingerprint are
//! folded into every calling tool's, so the -32021 gate still runs before any code, `build()`
//! still checks the state, and a state from a build with another version of the flow never
//! resumes.

use serde_json::value::RawValue;

use crate::context::ToolContext;
use crate::error::{BoxFuture, RegistrationError};
use crate::state::StateKey;
use crate::tool::RequiredCapabilities;

/// What one run of a flow's state machine produced.
#[derive(Debug)]
pub enum FlowStep<R> {
    /// The flow returned `R`.
    Done(R),
    /// The flow suspended; its state as JSON text (nested in the caller's).
    Suspended(Box<RawValue>),
}

/// What a calling tool takes from a flow (its own needs and those of the flows it calls).
#[derive(Debug, Clone)]
pub struct FlowInfo {
    /// The flow's function name.
    pub name: &'static str,
    /// The client capabilities its requests may need.
    pub capabilities: RequiredCapabilities,
    /// The application state types it takes.
    pub state: Vec<StateKey>,
    /// Its layout fingerprint (covering the flows it calls).
    pub layout: String,
    /// How many rounds it may take when it has no loop (its suspension points, nested flows
    /// included).
    pub rounds: u32,
    /// Whether a suspension point (or a flow call) sits inside a loop, or the flow is
    /// recursive: its number of rounds is not known.
    pub loops: bool,
    /// The result of its registration checks (elicitation schemas).
    pub validation: Result<(), RegistrationError>,
}

/// A flow call: the value `flow_fn(cx, args…)` builds. Implemented by `#[mcp_flow]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an `#[mcp_flow]`",
    label = "this call takes the `ToolContext` and is awaited inside `#[mcp_tool]` or `#[mcp_flow]`, so it may suspend",
    note = "only the transform can split a function at `ask`, `sample`, `roots`, …: add `#[mcp_flow]` to the called function (a flow is written like a tool: `async fn name(cx: &mut ToolContext, …) -> Result<T, E>`)",
    note = "if the function never suspends, pass what it needs instead of the context (e.g. `cx.principal()`)"
)]
pub trait Flow: Sized + Send {
    /// The flow function's return type.
    type Output: Send;
    /// The flow function's name (the default call-site name).
    const NAME: &'static str;
    /// The context the call was given.
    fn context(&mut self) -> &mut ToolContext;
    /// What a calling tool takes from this flow.
    fn info() -> FlowInfo;
    /// Runs the flow's state machine from the start, with the call's arguments.
    fn start<'s>(self) -> BoxFuture<'s, FlowStep<Self::Output>>
    where
        Self: 's;
    /// Resumes the flow's state machine from its saved `state`.
    fn resume(cx: &mut ToolContext, state: Box<RawValue>) -> BoxFuture<'_, FlowStep<Self::Output>>;
}

/// A flow call with an explicit call-site name: `confirm(cx, what).key("delete_1")`.
pub struct Keyed<F> {
    flow: F,
    site: String,
}

impl<F> Keyed<F> {
    /// Names the call site of `flow`.
    pub fn new(flow: F, site: impl Into<String>) -> Self {
        Keyed {
            flow,
            site: site.into(),
        }
    }

    /// The flow and the site.
    pub fn into_parts(self) -> (F, String) {
        (self.flow, self.site)
    }
}

impl<F: Flow + std::future::IntoFuture> std::future::IntoFuture for Keyed<F> {
    type Output = <F as std::future::IntoFuture>::Output;
    type IntoFuture = F::IntoFuture;

    fn into_future(mut self) -> Self::IntoFuture {
        self.flow.context().set_site(self.site);
        self.flow.into_future()
    }
}
