//! An AWS Lambda entry point for an [`mcp_tool_runtime`] [`Server`]: the same Streamable
//! HTTP endpoint as [`transport::http::router`](mcp_tool_runtime::transport::http::router),
//! run by [`lambda_http`] behind a function URL or an API Gateway HTTP API (payload format
//! 2.0).
//!
//! ```no_run
//! # async fn demo(server: mcp_tool_runtime::Server) -> Result<(), mcp_tool_lambda::LambdaError> {
//! use mcp_tool_runtime::transport::http::HttpConfig;
//! // `server` built with `.modern_only()` and a sealer whose key every instance shares
//! mcp_tool_lambda::run(server, HttpConfig::default()).await
//! # }
//! ```
//!
//! Every round of a multi round-trip call is its own invocation, on whichever instance the
//! platform picks, possibly a cold one: the round's `requestState` is all it needs, sealed
//! with the key every instance shares (`MCP_TOOL_STATE_KEY`). Nothing else lives in the
//! function between rounds; tasks and single-use claims belong in a shared store
//! (PostgreSQL or Redis), never in the instance.
//!
//! **Changes across replicas.** A function cannot hold a listener: an instance is frozen
//! between invocations, so a `LISTEN` or `SUBSCRIBE` connection (the stores' change feeds,
//! `ChangeFeed`) would miss everything in between, and `subscriptions/listen` streams belong
//! on long-running replicas. A function could only *publish* on its store's feed (so that
//! listeners on those replicas hear of what it changed); the runtime's hub connects a feed
//! for both directions only, so the example `lambda` connects none, and changes made on
//! Lambda reach no listener today.
//!
//! What differs from [`transport::http::serve`](mcp_tool_runtime::transport::http::serve):
//! - **Modern (2026-07-28) requests only.** A 2025-11-25 session lives in the process that
//!   opened it: the `Mcp-Session-Id`, the tool's pending `elicitation/create`, the open SSE
//!   stream the client's answers are routed back to. A function platform keeps none of that:
//!   the next request of the session may reach another instance, or the instance may be
//!   frozen or gone between two requests, and no request can wait for a person beyond the
//!   function's timeout. [`service`] refuses a server that still serves legacy sessions
//!   ([`LambdaError::LegacySessions`]: build it with `ServerBuilder::modern_only`), so a
//!   legacy `initialize` gets the modern-only error naming the versions served.
//! - **Plain JSON answers.** The response is buffered by the platform, so an SSE stream
//!   would arrive whole at the end anyway: the `Accept` header is narrowed to
//!   `application/json` before routing, and progress notifications are not sent (a client
//!   that wants them needs a long-lived server, `serve` or a fleet).
//! - The connection bounds of `serve` (connections, header and write timeouts) are the
//!   platform's; the request bounds of [`HttpConfig`] (body size, request timeout) still
//!   apply. Set the function's timeout above [`HttpConfig::request_timeout`].

#![warn(missing_docs)]

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::Bytes;
use axum::http::header::ACCEPT;
use axum::http::{HeaderMap, HeaderValue, Request};
use axum::response::Response;
use mcp_tool_runtime::Server;
use mcp_tool_runtime::transport::http::{HttpConfig, router};

/// Why the function cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum LambdaError {
    /// The server opens 2025-11-25 sessions, which cannot live on a function platform (see
    /// the crate documentation): build it with `ServerBuilder::modern_only()`.
    #[error(
        "the server serves legacy (2025-11-25) sessions, which cannot live on a function \
         platform (a session is held by the process that opened it): build it with \
         `ServerBuilder::modern_only()`"
    )]
    LegacySessions,
    /// A variable the platform (or its emulator) sets is missing: not running on Lambda.
    #[error(
        "{0} is not set: not running on AWS Lambda or its emulator (`cargo lambda watch` \
         prints the variables a function started by hand needs)"
    )]
    NotOnLambda(&'static str),
    /// The Lambda runtime stopped with an error (the Runtime API is unreachable, say).
    #[error("the Lambda runtime: {0}")]
    Runtime(lambda_http::Error),
}

/// The endpoint as a tower service for [`lambda_http::run`]: the HTTP transport's
/// [`router`], with every request's `Accept` narrowed to `application/json` (answers are
/// never SSE). Generic over the request body, so it also serves plain `http` requests (in
/// tests, or behind another adapter).
#[derive(Clone)]
pub struct LambdaService {
    router: Router,
}

impl std::fmt::Debug for LambdaService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LambdaService").finish_non_exhaustive()
    }
}

/// The service serving `server` with `config` (path, limits, authenticator) on Lambda.
///
/// # Errors
/// [`LambdaError::LegacySessions`] when `server` serves legacy sessions.
pub fn service(
    server: impl Into<Arc<Server>>,
    config: HttpConfig,
) -> Result<LambdaService, LambdaError> {
    let server: Arc<Server> = server.into();
    if server.serves_legacy() {
        return Err(LambdaError::LegacySessions);
    }
    // A function cannot hold a `subscriptions/listen` stream: listens are refused, and
    // `server/discover` stops declaring `listChanged` and `resources.subscribe`.
    server.close_subscriptions();
    Ok(LambdaService {
        router: router(server, config),
    })
}

/// The variables the platform sets that the runtime reads (it would panic without them).
pub const PLATFORM_VARIABLES: [&str; 4] = [
    "AWS_LAMBDA_RUNTIME_API",
    "AWS_LAMBDA_FUNCTION_NAME",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
    "AWS_LAMBDA_FUNCTION_VERSION",
];

/// Serves `server` on the Lambda Runtime API until the platform stops the instance.
///
/// # Errors
/// [`LambdaError::LegacySessions`] (see [`service`]), [`LambdaError::NotOnLambda`] when one
/// of [`PLATFORM_VARIABLES`] is missing (checked before anything else is started), or
/// [`LambdaError::Runtime`] when the runtime stops with an error.
pub async fn run(server: impl Into<Arc<Server>>, config: HttpConfig) -> Result<(), LambdaError> {
    let service = service(server, config)?;
    if let Some(missing) = PLATFORM_VARIABLES
        .into_iter()
        .find(|v| std::env::var_os(v).is_none())
    {
        return Err(LambdaError::NotOnLambda(missing));
    }
    lambda_http::run(service)
        .await
        .map_err(LambdaError::Runtime)
}

/// Narrows `Accept` to `application/json`: a buffered platform answers in one piece.
fn json_only(headers: &mut HeaderMap) {
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
}

impl<B> tower::Service<Request<B>> for LambdaService
where
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = <Router as tower::Service<Request<B>>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::<Request<B>>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        json_only(request.headers_mut());
        self.router.call(request)
    }
}
