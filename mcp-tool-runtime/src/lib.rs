//! MCP tools that ask for input in the middle of a call (protocol revision 2026-07-28:
//! stateless servers, multi round-trip requests), written as one linear `async fn`.
//!
//! # Example
//!
//! A tool written with [`mcp_tool`] (its page is the attribute reference: suspension points,
//! keys, kept values, flows, options, prompts and resources), registered, and driven through
//! its rounds in process by the `mcp-tool-client` crate's `Driver`:
//!
//! ```
//! use mcp_tool_client::{Driver, InProcessTransport};
//! use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, Implementation};
//! use mcp_tool_runtime::testing::ScriptedHost;
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
//! # Where things are
//!
//! The crate root holds what a tool's author writes with: the attributes ([`mcp_tool`],
//! [`mcp_flow`], [`mcp_prompt`], [`mcp_resource`]), [`ToolContext`] (whose methods are the
//! suspension points: `ask`, `elicit`, `sample`, `roots`, `round`, `checkpoint`), [`State`],
//! [`ToolError`], the answer types, [`Server`] and its builder. The rest by role:
//!
//! | module | for |
//! |---|---|
//! | [`testing`] | unit tests of tools: a context that asks a scripted host |
//! | [`requests`] | the request builders and what awaiting them returns |
//! | [`resource`] | URI templates and skills (a `SKILL.md` and its files served as resources; from a directory with the crate `mcp-tool-skills`) |
//! | [`server`] | the server (one JSON-RPC message in, one out), its registry and legacy sessions |
//! | [`transport`] | stdio, Streamable HTTP, authentication |
//! | [`seal`] | the sealed `requestState`: keys, rotation, protection |
//! | [`store`] | what replicas share: the ledger of single-use rounds, the change feed |
//! | [`tasks`] | tasks (SEP-2663) and their stores |
//! | [`telemetry`] | spans and metrics |
//! | [`protocol`] | the wire model of MCP 2026-07-28 |
//! | [`manual`] | tools written by hand as re-entrant functions |
//!
//! The client side (the `Driver` of MRTR calls and its transports: in process, child
//! process, Streamable HTTP) is the `mcp-tool-client` crate; a server does not compile it.
//!
//! `docs/ARCHITECTURE.md` in the repository draws the layers and says where each piece
//! lives; `docs/GUIDE.md` goes from one tool to a deployed fleet.
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
//! The core (the macros, sealing with HMAC, the server, stdio) needs none of them. The first
//! three are on by default.
//!
//! - `http-server`: the Streamable HTTP server, [`transport::http`] and [`transport::auth`]
//!   (axum, hyper).
//! - `aead`: [`seal::Protection::Aes256Gcm`] and [`seal::Protection::ChaCha20Poly1305`];
//!   without it the variants stay but sealing or opening under them fails with
//!   [`seal::SealError::AeadUnavailable`].
//! - `anyhow`: a [`ToolError`] carried through `anyhow::Error` by `?` keeps its meaning.
//! - `metrics` (not default): the server's counters and histograms through the `metrics`
//!   facade (`telemetry::metrics`); the application installs the recorder.
//! - `otel` (not default): the server spans in OpenTelemetry's trace context through
//!   tracing-opentelemetry (the `_meta` `traceparent` as parent, one trace per MRTR call
//!   across replicas). The crate `mcp-tool-otel` exports them (OTLP over HTTP or gRPC) and
//!   turns this feature on.
//!
//! Behind an identity provider, the authenticator is the crate `mcp-tool-oauth`'s
//! `OAuthResourceServer` (an OAuth 2.1 resource server: JWT access tokens against the
//! issuer's JWKS, RFC 7662 introspection, RFC 9728 metadata), on the `http-server` feature.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod throttle;

mod changes;
mod code;
mod context;
mod error;
mod flow;
mod host;
mod ledger;
mod legacy;
mod notify;
mod principal;
mod prompt;
pub mod protocol;
mod reconnect;
pub mod requests;
pub mod resource;
mod rounds;
mod schema;
pub mod seal;
pub mod server;
mod state;
pub mod store;
mod strings;
mod sync;
pub mod tasks;
pub mod telemetry;
mod tool;
pub mod transport;

pub use context::{FromContext, ToolContext};
pub use error::{RegistrationError, ToolError};
pub use flow::Flow;
pub use mcp_tool_macros::{mcp_flow, mcp_prompt, mcp_resource, mcp_tool};
pub use principal::Principal;
pub use prompt::{CompleteContext, Prompt, PromptInfo};
pub use requests::{Elicitation, Sample, SampleAnswer, UrlOutcome};
pub use resource::{Resource, ResourceInfo, UriTemplate};
pub use server::{Server, ServerBuilder};
pub use state::State;
pub use tool::{Tool, ToolInfo};

pub mod testing {
    //! Unit tests of tools: a [`ToolContext`](crate::ToolContext) built without a server.
    //!
    //! A tool's function runs in process against a [`Host`] that answers its requests
    //! ([`ScriptedHost`] with canned answers, or any host of the test's own) through
    //! [`direct`] or a [`ContextBuilder`], which also gives the caller and the application
    //! state. A hand-written re-entrant tool (see [`manual`](crate::manual)) is tested round
    //! by round with [`context`], which registers requests instead of sending them.

    pub use crate::context::{ContextBuilder, context, direct};
    pub use crate::host::{Host, HostError, ScriptedHost};
}

pub mod manual {
    //! Tools written by hand: a [`Tool`] implementation whose `step` runs one round and
    //! returns a [`Step`], registering requests and taking answers through [`Reentrant`].
    //! `#[mcp_tool]` writes this for an `async fn`; `examples/hand_written.rs` in the crate
    //! writes it out, and [`Reentrant`]'s page has a round of such a tool.
    //!
    //! Also here: what a hand-written tool's metadata and rounds are made of ([`Rounds`],
    //! [`RequiredCapabilities`], the schemas), and the pieces of `#[mcp_flow]`,
    //! `#[mcp_prompt]` and `#[mcp_resource]` a hand-written one implements.

    pub use crate::context::{Journal, JournalEntry, Reentrant};
    pub use crate::error::BoxFuture;
    pub use crate::flow::{FlowInfo, FlowStep};
    pub use crate::prompt::{Completer, IntoPrompt, completer};
    pub use crate::resource::IntoContents;
    pub use crate::schema::{
        STANDARD_FORMATS, StandardFormats, input_schema, non_standard_formats, output_schema,
        schema_for,
    };
    pub use crate::state::StateKey;
    pub use crate::strings::from_strings;
    pub use crate::tool::{
        RequiredCapabilities, Rounds, SCOPES_META_KEY, Step, Tool, ToolInfo, no_args,
        output_result, parse_args, parse_state,
    };
}

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
