//! Runtime for stateless MCP tools (protocol revision 2026-07-28) with multi round-trip
//! requests. See `docs/ARCHITECTURE.md` in the repository for how the pieces fit.
//!
//! The layers, one module each, data flowing one way: [`protocol`] (the serde model) →
//! [`seal`] (sealed `requestState`) → [`context`] and [`requests`] (typed input requests) →
//! [`server`] (one JSON-RPC message and a principal in, zero or one message out) →
//! [`transport`] (stdio, Streamable HTTP); [`client`] is the other side of the wire.
//!
//! # Example
//!
//! A tool written with [`mcp_tool`] (its page is the attribute reference: suspension points,
//! keys, kept values, flows, options, prompts and resources), registered, and driven through
//! its rounds in process:
//!
//! ```
//! use mcp_tool_runtime::client::{Driver, InProcessTransport, ScriptedHost};
//! use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, Implementation};
//! use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
//! use mcp_tool_runtime::{Server, ToolContext, ToolError, mcp_tool};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct GreetArgs {
//!     /// The greeting to use.
//!     greeting: String,
//! }
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Name {
//!     /// Your name.
//!     name: String,
//! }
//!
//! /// Greets the caller by name.
//! #[mcp_tool]
//! async fn greet(cx: &mut ToolContext, args: GreetArgs) -> Result<String, ToolError> {
//!     let who: Name = cx.ask("What is your name?").await?;
//!     Ok(format!("{}, {}!", args.greeting, who.name))
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let key = [7u8; 32]; // in production: a secret shared by every replica
//! let server = Server::builder(Implementation::new("greeter", "1.0"))
//!     .sealer(Sealer::new(Keyring::new("k1", key.to_vec())?, SealConfig::default()))
//!     .tool(greet::tool())
//!     .build()?;
//!
//! let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
//!     .answer("who", ElicitResult::accept(json!({"name": "Ada"}).as_object().cloned().unwrap()));
//! let mut driver = Driver::new(InProcessTransport::new(server), host);
//! let outcome = tokio::runtime::Runtime::new()?
//!     .block_on(driver.call_tool("greet", json!({"greeting": "Hello"})))?;
//! assert_eq!(outcome.rounds, 2); // `input_required`, then `complete`
//! assert_eq!(outcome.text(), "Hello, Ada!");
//! # Ok(())
//! # }
//! ```
//!
//! # One dependency
//!
//! The macros' generated code reaches `serde`, `serde_json` and `schemars` through this crate,
//! which re-exports them ([`serde`], [`serde_json`], [`schemars`]): `mcp-tool-runtime` is the
//! only dependency a tool crate needs, plus `serde`/`schemars` if it derives with its own (or
//! `#[derive(mcp_tool_runtime::serde::Deserialize, mcp_tool_runtime::schemars::JsonSchema)]`
//! with `#[serde(crate = "mcp_tool_runtime::serde")]` and `#[schemars(crate =
//! "mcp_tool_runtime::schemars")]`). A crate that re-exports this one
//! (`pub use mcp_tool_runtime as mcp;`) gives its users `#[mcp_tool(crate = "::framework::mcp")]`
//! (the same option on `mcp_flow`, `mcp_prompt`, `mcp_resource`).
//!
//! # Features
//!
//! The core (the macros, sealing with HMAC, the server, stdio, the in-process and
//! child-process client transports) needs none of them. The first four are on by default.
//!
//! - `http-server`: the Streamable HTTP server, [`transport::http`] and [`transport::auth`]
//!   (axum, hyper).
//! - `http-client`: [`client::HttpTransport`] (reqwest with rustls, so `https://` works).
//! - `aead`: [`seal::Protection::Aes256Gcm`] and [`seal::Protection::ChaCha20Poly1305`];
//!   without it the variants stay but sealing or opening under them fails with
//!   [`seal::SealError::AeadUnavailable`].
//! - `anyhow`: a [`ToolError`] carried through `anyhow::Error` by `?` keeps its meaning.
//! - `oauth` (not default; implies `http-server`): `transport::oauth`, an OAuth 2.1
//!   resource server (`OAuthResourceServer`: JWT access tokens against the issuer's JWKS,
//!   RFC 7662 introspection, RFC 9728 metadata), with jsonwebtoken (RustCrypto) and reqwest.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod throttle;

pub mod changes;
pub mod client;
mod code;
pub mod context;
pub mod error;
pub mod flow;
pub mod host;
pub mod ledger;
pub mod legacy;
pub mod notify;
pub mod principal;
pub mod prompt;
pub mod protocol;
pub mod requests;
pub mod resource;
mod rounds;
pub mod schema;
pub mod seal;
pub mod server;
pub mod state;
pub mod store;
pub mod strings;
pub mod tasks;
pub mod telemetry;
pub mod tool;
pub mod transport;

pub use context::{FromContext, ToolContext};
pub use flow::Flow;
pub use mcp_tool_macros::{mcp_flow, mcp_prompt, mcp_resource, mcp_tool};
pub use principal::Principal;
pub use prompt::{CompleteContext, Prompt, PromptInfo};
pub use requests::{
    Ask, Elicit, Elicitation, InputBuilder, Roots, Sample, SampleAnswer, SchemaError, UrlElicit,
    UrlOutcome,
};
pub use resource::{Resource, ResourceInfo, UriTemplate};
pub use server::{Server, ServerBuilder};
pub use state::State;
pub use tasks::{TaskStart, TaskSupport};
pub use tool::{
    BoxFuture, RegistrationError, RequiredCapabilities, Rounds, Step, Tool, ToolError, ToolInfo,
    no_args, output_result, parse_args, parse_state,
};

/// `schemars`, as the runtime uses it: `#[derive(mcp_tool_runtime::schemars::JsonSchema)]`
/// with `#[schemars(crate = "mcp_tool_runtime::schemars")]` needs no `schemars` dependency.
pub use schemars;
/// `serde`, as the runtime uses it: generated code reaches it through here, and a crate
/// without its own `serde` dependency can derive with it
/// (`#[derive(mcp_tool_runtime::serde::Deserialize)]` with
/// `#[serde(crate = "mcp_tool_runtime::serde")]`).
pub use serde;
/// `serde_json`, as the runtime uses it (its `Value` is the arguments' and results' type).
pub use serde_json;

#[doc(hidden)]
pub mod __private;
