//! Contexts for unit tests of tools, re-exported as [`crate::testing`].

use std::sync::Arc;

use super::ToolContext;
use crate::host::Host;
use crate::notify::Logger;
use crate::principal::Principal;
use crate::protocol::ClientCapabilities;

/// A [`ToolContext`] in *direct mode*, for a unit test: awaiting `cx.ask(..)`, `cx.sample(..)`
/// or `cx.roots()` sends the request to `host` and waits for its answer, so a tool's linear
/// function runs in process, unmodified, from its first line to its result. The principal is
/// anonymous and the client capabilities are the host's; [`ContextBuilder`] sets the rest.
///
/// ```
/// use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult};
/// use mcp_tool_runtime::testing::{self, ScriptedHost};
/// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
/// use serde_json::json;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct NoArgs {}
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// struct Name {
///     /// Your name.
///     name: String,
/// }
///
/// /// Greets the caller.
/// #[mcp_tool]
/// async fn greet(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
///     let who: Name = cx.ask("Who are you?").await?;
///     Ok(format!("Hello, {}!", who.name))
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
///     .answer("who", ElicitResult::accept(json!({"name": "Ada"}).as_object().cloned().unwrap()));
/// let mut cx = testing::direct(host);
/// assert_eq!(greet(&mut cx, NoArgs {}).await?, "Hello, Ada!");
/// # Ok::<(), ToolError>(())
/// # }).unwrap();
/// ```
pub fn direct(host: impl Host + 'static) -> ToolContext {
    ContextBuilder::direct(host).build()
}

/// A [`ToolContext`] as a server builds it for the first round of a call (no host, no
/// answers), for a unit test of a hand-written re-entrant tool (see
/// [`manual`](crate::manual)): its requests are registered, not sent.
pub fn context(capabilities: ClientCapabilities) -> ToolContext {
    ContextBuilder::rounds(capabilities).build()
}

/// A [`ToolContext`] for a unit test, with the caller and the application state a test
/// needs:
///
/// ```
/// use mcp_tool_runtime::protocol::ClientCapabilities;
/// use mcp_tool_runtime::testing::{ContextBuilder, ScriptedHost};
/// use mcp_tool_runtime::{Principal, ToolContext};
///
/// struct Notes(Vec<String>);
///
/// let cx: ToolContext = ContextBuilder::direct(ScriptedHost::new(ClientCapabilities::all()))
///     .principal(Principal::named("ada"))
///     .state(Notes(vec!["milk".into()]))
///     .build();
/// assert_eq!(cx.state::<Notes>().unwrap().0, ["milk"]);
/// assert_eq!(cx.principal().id(), "ada");
/// ```
#[must_use = "a builder does nothing until `build()`"]
pub struct ContextBuilder {
    cx: ToolContext,
}

impl ContextBuilder {
    /// A direct-mode context asking `host` (see [`direct`]).
    pub fn direct(host: impl Host + 'static) -> Self {
        let mut cx = ToolContext::new(Principal::anonymous(), host.capabilities());
        cx.host = Some(Box::new(host));
        ContextBuilder { cx }
    }

    /// A context without a host for a client declaring `capabilities` (see [`context`]).
    pub fn rounds(capabilities: ClientCapabilities) -> Self {
        ContextBuilder {
            cx: ToolContext::new(Principal::anonymous(), capabilities),
        }
    }

    /// The caller (anonymous unless set).
    pub fn principal(mut self, principal: Principal) -> Self {
        self.cx.principal = principal;
        self
    }

    /// Adds an application value, as
    /// [`ServerBuilder::state`](crate::ServerBuilder::state) does for a server: a
    /// `State<T>` parameter (or `cx.state::<T>()`) receives it. An `Arc<T>` is shared, not
    /// copied, and serves `State<T>` too.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.cx.state).insert(value);
        self
    }

    /// Sends the tool's `cx.log(..)` messages to `logger` (a server connects one when the
    /// client asked for a level).
    pub fn logger(mut self, logger: Logger) -> Self {
        self.cx.log = Some(logger);
        self
    }

    /// The context.
    pub fn build(self) -> ToolContext {
        self.cx
    }
}
