//! The client side of [`mcp_tool_runtime`]: the [`Driver`] that runs a `tools/call` of MCP
//! 2026-07-28 through its rounds (multi round-trip requests), the [`Host`]s that answer its
//! input requests, and the transports that reach a server.
//!
//! - [`InProcessTransport`]: calls a [`Server`](mcp_tool_runtime::Server) in the same
//!   process (tests, demos; no I/O).
//! - [`LineTransport`] / [`ChildTransport`]: newline-delimited JSON-RPC over a child
//!   process's stdin/stdout or any pair of async streams.
//! - [`HttpTransport`] (feature `http`, on by default): Streamable HTTP with reqwest and
//!   rustls, so `https://` works without OpenSSL.
//! - [`RetryTransport`]: sends a round again when the replica that took it went away.
//!
//! [`Host`], [`HostError`], [`ScriptedHost`] and [`BoxFuture`] are the runtime's
//! (`mcp_tool_runtime::testing`, `mcp_tool_runtime::manual`), re-exported here: a tool's
//! unit tests ask the same hosts in process.
//!
//! # Example
//!
//! A tool that asks for a name, driven through its two rounds in process by a host that
//! answers from a script:
//!
//! ```
//! use mcp_tool_client::{Driver, InProcessTransport, ScriptedHost};
//! use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, Implementation};
//! use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
//! use mcp_tool_runtime::{Server, ToolContext, ToolError, mcp_tool};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Name {
//!     /// Your name.
//!     name: String,
//! }
//!
//! /// Greets the caller by name.
//! #[mcp_tool]
//! async fn greet(cx: &mut ToolContext) -> Result<String, ToolError> {
//!     let who: Name = cx.ask("What is your name?").await?;
//!     Ok(format!("Hello, {}!", who.name))
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(Implementation::new("greeter", "1.0"))
//!     .sealer(Sealer::new(Keyring::new("k1", vec![7; 32])?, SealConfig::default()))
//!     .tool(greet::tool())
//!     .build()?;
//!
//! let mut name = serde_json::Map::new();
//! name.insert("name".into(), "Ada".into());
//! let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
//!     .answer("who", ElicitResult::accept(name));
//! let mut driver = Driver::new(InProcessTransport::new(server), host);
//! let outcome = tokio::runtime::Runtime::new()?
//!     .block_on(driver.call_tool("greet", json!({})))?;
//! assert_eq!(outcome.rounds, 2); // `input_required`, then `complete`
//! assert_eq!(outcome.text(), "Hello, Ada!");
//! for entry in &outcome.transcript {
//!     println!("{entry}");
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Over Streamable HTTP, the same driver takes `HttpTransport::new("http://127.0.0.1:8080/mcp")`.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod driver;
#[cfg(feature = "http")]
mod http;
pub mod listen;
pub mod retry;
pub mod stdio;
pub mod transport;

pub use driver::{
    CallOutcome, DEFAULT_MAX_ROUNDS, Direction, Driver, DriverError, TranscriptEntry,
};
pub use mcp_tool_runtime::manual::BoxFuture;
pub use mcp_tool_runtime::testing::{Host, HostError, ScriptedHost};
pub use retry::{RetryPolicy, RetryTransport};
pub use stdio::{ChildTransport, LineTransport};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use transport::HttpTransport;
pub use transport::{ClientTransport, Exchange, InProcessTransport, Listening, TransportError};
