//! Runtime for stateless MCP tools (protocol revision 2026-07-28) with multi round-trip
//! requests. See `docs/ARCHITECTURE.md` in the repository for how the pieces fit.

#![warn(missing_docs)]

pub mod client;
pub mod context;
pub mod notify;
pub mod principal;
pub mod protocol;
pub mod requests;
pub mod seal;
pub mod server;
pub mod tool;
pub mod transport;

pub use context::ToolContext;
pub use mcp_tool_macros::mcp_tool;
pub use principal::Principal;
pub use requests::{
    Ask, Elicit, Elicitation, InputBuilder, Roots, Sample, SampleAnswer, SchemaError, UrlElicit,
    UrlOutcome,
};
pub use server::{Server, ServerBuilder};
pub use tool::{
    BoxFuture, RegistrationError, RequiredCapabilities, Step, Tool, ToolError, ToolInfo,
};

#[doc(hidden)]
pub mod __private;
