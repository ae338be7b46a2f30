//! Linear MRTR tools inside an existing [rmcp](https://docs.rs/rmcp/3.11.0) 3.11 server.
//!
//! A team already serving MCP with rmcp keeps its `#[tool]`s and its `ServerHandler`, and
//! adds tools written with `#[mcp_tool]` (straight-line `async fn`s that ask the client for
//! input mid-call) in three lines:
//!
//! ```no_run
//! # use mcp_tool_runtime::{Server, ToolContext, ToolError, mcp_tool};
//! # use mcp_tool_runtime::protocol::Implementation;
//! # #[derive(serde::Deserialize, schemars::JsonSchema)]
//! # struct Args { city: String }
//! # /// The weather in a city.
//! # #[mcp_tool]
//! # async fn forecast(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> { Ok(args.city) }
//! # #[derive(Clone, Default)]
//! # struct TeamServer { db: std::sync::Arc<u32> }
//! # impl rmcp::ServerHandler for TeamServer {}
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let team = TeamServer::default();
//! use mcp_tool_rmcp::LinearTools;
//! let ours = Server::builder(Implementation::new("desk", "1.0")).state(team.db.clone()).tool(forecast::tool()).build()?;
//! let handler = team.with_linear_tools(ours);   // serve `handler` as before
//! # let _ = handler; Ok(()) }
//! ```
//!
//! Our prompts and resources (`#[mcp_prompt]`, `#[mcp_resource]`, their completers) are
//! mounted the same way. What they get is exactly what our own transports give them, because
//! our [`Server`](mcp_tool_runtime::Server) handles each call: the sealed `requestState` (bound
//! to the principal, the method, the tool and the digest of the arguments, with an expiry),
//! the capability gate before any tool code runs (-32021), the validation of answers and the
//! asking again for missing ones, the round limit, and our schemas in rmcp's `tools/list`.
//!
//! - [`Mounted`] (in `mounted`) is the `ServerHandler` combinator: it merges the lists,
//!   routes `tools/call`, `prompts/get`, `resources/read` and `completion/complete` of our
//!   names and URIs to our server, and forwards everything else to the team's handler.
//! - `catalog` is what we mount, in rmcp's types, and the capabilities it adds.
//! - `translate` turns rmcp's request (its params and `_meta`) into our JSON-RPC request and
//!   our answer back into rmcp's types (`CallToolResponse`, `GetPromptResponse`,
//!   `ReadResourceResponse`, `CompleteResult`) or `ErrorData`.
//! - `caller` decides the [`Principal`](mcp_tool_runtime::Principal): from rmcp's HTTP
//!   request parts (a `Principal` extension, or an [`Authenticator`] on the headers), and
//!   **anonymous on stdio**.
//! - `notify` forwards a tool's progress and log notifications to the rmcp peer.
//! - `legacy` serves callers in a legacy rmcp session (`initialize`, 2025-11-25): the tool
//!   runs in our direct mode, its questions sent to the client as real requests.
//!
//! Application state: give the mounted tools the values they take as `State<T>` when
//! building our server, cloned from the team's struct
//! (`Server::builder(..).state(team.db.clone())`); both then share the same value.
//!
//! Limits, said plainly: a name (or resource URI) of ours hides the team's item of the same
//! name (a warning is logged when it is listed); our items are listed after the team's, on
//! its last page; an authenticator's refusal is a JSON-RPC error, the HTTP status is rmcp's.
//!
//! [`Authenticator`]: mcp_tool_runtime::transport::auth::Authenticator

#![warn(missing_docs)]

mod caller;
mod catalog;
mod legacy;
mod mounted;
mod notify;
mod translate;

pub use caller::UNAUTHORIZED;
pub use mounted::Mounted;

/// `.with_linear_tools(server)` on any rmcp [`ServerHandler`](rmcp::ServerHandler).
pub trait LinearTools: rmcp::ServerHandler + Sized {
    /// This handler with `server`'s tools mounted beside its own (see [`Mounted`]).
    fn with_linear_tools(self, server: mcp_tool_runtime::Server) -> Mounted<Self> {
        Mounted::new(self, server)
    }
}

impl<H: rmcp::ServerHandler> LinearTools for H {}
