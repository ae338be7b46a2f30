//! Parameters of a generated stage: the arguments (parsed once, again per stage when
//! needed, or from strings) and [`FromContext`] parameters such as `State<T>`.

use serde::de::DeserializeOwned;

use super::*;

/// The arguments for one stage of the dispatch loop: the value parsed up front the first
/// time, parsed again from the raw arguments when a later stage needs them (each stage owns
/// its copy, so moving out of `args` in one stage does not affect another).
pub fn stage_args<T: DeserializeOwned>(
    parsed: &mut Option<T>,
    raw: &Value,
) -> Result<T, ToolError> {
    match parsed.take() {
        Some(a) => Ok(a),
        None => parse_args(raw.clone()),
    }
}

/// A prompt's arguments or a template's variables (strings) parsed into `T`.
pub fn parse_strings<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    crate::strings::from_strings(&args)
}

/// Like [`stage_args`], for [`parse_strings`].
pub fn stage_strings<T: DeserializeOwned>(
    parsed: &mut Option<T>,
    raw: &Value,
) -> Result<T, ToolError> {
    match parsed.take() {
        Some(a) => Ok(a),
        None => parse_strings(raw.clone()),
    }
}

/// A parameter taken from the context in every round (never stored): `State<T>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a tool or flow",
    label = "a tool takes `cx: &mut ToolContext`, at most one arguments type, and `State<T>` parameters",
    note = "application state is `mcp_tool_runtime::State<T>`, given to the server with `.state(value)`"
)]
pub trait FromContext: Sized {
    /// The value for this round.
    fn from_context(cx: &ToolContext) -> Result<Self, ToolError>;
    /// The state type it needs (checked at `build()`).
    fn key() -> StateKey;
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(cx: &ToolContext) -> Result<Self, ToolError> {
        cx.state::<T>()
    }
    fn key() -> StateKey {
        StateKey::of::<T>()
    }
}
