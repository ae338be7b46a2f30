//! Runtime for stateless MCP tools (protocol revision 2026-07-28) with multi round-trip
//! requests. See `docs/ARCHITECTURE.md` in the repository for how the pieces fit.

pub mod client;
pub mod principal;
pub mod protocol;
pub mod seal;
pub mod server;
pub mod transport;

pub use mcp_tool_macros::mcp_tool;
pub use principal::Principal;
