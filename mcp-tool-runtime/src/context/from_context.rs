//! [`FromContext`]: the parameters of a tool, prompt or resource after its arguments, taken
//! from the context in every round (axum's extractor habit); [`State<T>`] is one.

use super::ToolContext;
use crate::error::ToolError;
use crate::state::{State, StateKey};

/// A parameter of a tool, prompt or resource that is taken from the context in every round
/// (never stored in `requestState`), in the habit of axum's extractors. [`State<T>`] is one;
/// a type of your own can be another, for instance a handle that takes a connection from a
/// pool given to the server builder as state:
///
/// ```
/// use mcp_tool_runtime::{FromContext, State, ToolContext, ToolError, mcp_tool};
/// use mcp_tool_runtime::manual::StateKey;
///
/// struct Pool { url: String }
/// struct Conn(String);
///
/// impl FromContext for Conn {
///     fn from_context(cx: &ToolContext) -> Result<Self, ToolError> {
///         let pool: State<Pool> = cx.state()?;
///         Ok(Conn(format!("connection to {}", pool.url)))
///     }
///     fn keys() -> Vec<StateKey> {
///         vec![StateKey::of::<Pool>()]
///     }
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Table { name: String }
///
/// /// Where a table lives.
/// #[mcp_tool]
/// async fn whereis(cx: &mut ToolContext, args: Table, db: Conn) -> Result<String, ToolError> {
///     Ok(format!("{} on {}", args.name, db.0))
/// }
/// ```
///
/// Which parameter is which: the first parameter is the context (`cx: &mut ToolContext`); the
/// one right after it is the arguments (`args: T` with `T: Deserialize + JsonSchema`), unless
/// its type is spelled `State<…>`; every other parameter is a `FromContext` (whatever its
/// name, so `mcp_tool_runtime::State<T>` and an alias `use mcp_tool_runtime::State as
/// AppState;` work). Only the parameter right after the context needs the spelling
/// `State<…>` to be taken as state rather than as arguments (a tool without arguments whose
/// first parameter is an alias or a type of its own takes an empty arguments struct first).
/// A flow's parameters are its caller's values, except those spelled `State<…>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a tool, prompt or resource: it does not implement `mcp_tool_runtime::FromContext`",
    label = "not `mcp_tool_runtime::FromContext`",
    note = "a tool takes `cx: &mut ToolContext`, then one arguments type (put every argument in one struct), \
            then parameters whose types implement `mcp_tool_runtime::FromContext`: `State<T>` (given to the server \
            with `.state(value)`) or a type of your own"
)]
pub trait FromContext: Sized {
    /// The value for this round.
    fn from_context(cx: &ToolContext) -> Result<Self, ToolError>;
    /// The state types it needs from the server builder (checked at `build()`); empty when
    /// it needs none.
    fn keys() -> Vec<StateKey>;
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(cx: &ToolContext) -> Result<Self, ToolError> {
        cx.state::<T>()
    }
    fn keys() -> Vec<StateKey> {
        vec![StateKey::of::<T>()]
    }
}
