//! The client side: ready-made [`Host`]s that answer input requests,
//! client transports and the [`Driver`] that runs a `tools/call` through its rounds.
//!
//! ```no_run
//! # async fn demo(server: mcp_tool_runtime::server::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_tool_runtime::client::{Driver, InProcessTransport, ScriptedHost};
//! use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult};
//!
//! let mut content = serde_json::Map::new();
//! content.insert("name".into(), "Ada".into());
//! let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
//!     .answer("name", ElicitResult::accept(content));
//! let mut driver = Driver::new(InProcessTransport::new(server), host);
//! let outcome = driver.call_tool("greet", serde_json::json!({})).await?;
//! for entry in &outcome.transcript {
//!     println!("{entry}");
//! }
//! # Ok(()) }
//! ```

pub mod driver;
#[cfg(feature = "http-client")]
mod http;
pub mod listen;
pub mod retry;
pub mod scripted;
pub mod stdio;
pub mod transport;

pub use crate::error::BoxFuture;
pub use crate::host::{Host, HostError};
pub use driver::{
    CallOutcome, DEFAULT_MAX_ROUNDS, Direction, Driver, DriverError, TranscriptEntry,
};
pub use retry::{RetryPolicy, RetryTransport};
pub use scripted::ScriptedHost;
pub use stdio::{ChildTransport, LineTransport};
#[cfg(feature = "http-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
pub use transport::HttpTransport;
pub use transport::{ClientTransport, Exchange, InProcessTransport, Listening, TransportError};
