//! Streamable HTTP (MCP 2026-07-28, and 2025-11-25 sessions of a dual-era server) on axum:
//! one endpoint path.
//!
//! ```no_run
//! # async fn demo(server: mcp_tool_runtime::server::Server) -> std::io::Result<()> {
//! use mcp_tool_runtime::transport::http::{self, HttpConfig};
//! // Mount in your own axum app ...
//! let app = axum::Router::new()
//!     .route("/health", axum::routing::get(|| async { "ok" }))
//!     .merge(http::router(server, HttpConfig::default()));
//! // ... or let the crate bind and serve it:
//! // http::serve("127.0.0.1:8080".parse().unwrap(), server, HttpConfig::default()).await?;
//! # let _ = app; Ok(()) }
//! ```
//!
//! What the endpoint does, in order, for each request:
//! 1. `GET` and every other method but `POST` and `DELETE`: `405 Method Not Allowed`
//!    (`Allow: POST`); there are no standalone streams. `DELETE` closes a legacy session (a
//!    modern-only server answers it 405 too).
//! 2. `Origin` present and not allowed: `403` (DNS-rebinding protection, see [`OriginPolicy`]).
//! 3. The [`Authenticator`] refuses: `401` with `WWW-Authenticate`. An authenticator that
//!    panics is a server bug, not a credential problem: `500` with a -32603 body (the
//!    request is not served, the connection stays up; with `panic = "abort"` nothing can
//!    be caught).
//! 4. More than [`HttpConfig::max_concurrent_requests`] requests in progress: `503` with
//!    `Retry-After: 1` and a JSON-RPC error [`LIMIT_EXCEEDED`] (-32000); nothing is queued.
//!    Body over [`HttpConfig::max_body_bytes`] (default 1 MiB): `413`.
//! 5. `Content-Type` present and not JSON: `415`.
//! 6. Not JSON: -32700. With `Mcp-Session-Id`, or an `initialize` request: a legacy
//!    session's, see the `session` module (steps 7 to 9 do not apply). Otherwise, not a single
//!    JSON-RPC request or notification object: -32600 (400).
//! 7. Notifications (no `id`): handed to the server, answered `202 Accepted` with no body.
//! 8. Header checks for requests, before the server checks the protocol version:
//!    `MCP-Protocol-Version` present and equal to `_meta` `io.modelcontextprotocol/protocolVersion`;
//!    `Mcp-Method` present and equal to `method`; `Mcp-Name` present and equal to
//!    `params.name` (`tools/call`, `prompts/get`) or `params.uri` (`resources/read`), after
//!    decoding the `=?base64?…?=` form; `Mcp-Param-{Name}` for arguments of the tool that
//!    its `inputSchema` marks with `x-mcp-header` (see [`params`](super::params)).
//!    Any failure: -32020 with HTTP 400.
//! 9. The server's answer as `application/json`, with the status from
//!    [`http_status_for_code`]; or, for a request whose
//!    `_meta` has a `progressToken` from a client whose `Accept` allows
//!    `text/event-stream`, a `200` SSE stream once the request produces its first
//!    notification: `notifications/progress` events as they happen, then the response,
//!    then the end of the stream (closing it early cancels the request). Without that
//!    `Accept`, progress is not reported and the answer is JSON.
//!
//! Bounds (all in [`HttpConfig`]; see each field for its default and why):
//! - the body must arrive within [`HttpConfig::body_read_timeout`], else `408` and the
//!   connection is closed (a client that sends a few bytes and stalls holds nothing for long);
//! - a request runs at most [`HttpConfig::request_timeout`] (the server's handling and an
//!   SSE stream alike), else `503` with [`LIMIT_EXCEEDED`] (or the end of the SSE stream);
//! - an SSE stream buffers at most [`HttpConfig::sse_buffer`] notifications: while the
//!   client does not read, further progress notifications are dropped (the response is not);
//! - [`serve`] and [`spawn`] also bound connections ([`HttpConfig::max_connections`]:
//!   more are closed as they are accepted) and the time to send a request's headers
//!   ([`HttpConfig::header_read_timeout`]). When you mount [`router`] in your own server,
//!   those two are yours to set (or your reverse proxy's).

use std::collections::HashMap;
use std::future::poll_fn;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::State;
use axum::http::header::{
    ACCEPT, ALLOW, CACHE_CONTROL, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, ORIGIN, RETRY_AFTER,
    WWW_AUTHENTICATE,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

use super::auth::{AnonymousAuth, Authenticator};
use super::{error_response, http_status_for_code};
use crate::legacy::{self, Route};
use crate::notify::{NotificationSink, wants_notifications};
use crate::principal::Principal;
use crate::protocol::headers::{HeaderParam, check_param_headers, header_params};
pub use crate::protocol::headers::{
    METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, decode_header_value, encode_header_value,
    name_field,
};
use crate::protocol::{HEADER_MISMATCH, INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR};
use crate::protocol::{JsonRpcResponse, META_PROTOCOL_VERSION};
use crate::server::Server;

/// At most one warning per second for one kind of refusal, so that a flood of refused
/// requests or connections cannot flood the log (the rest are logged at `debug`).
struct Throttle(std::sync::atomic::AtomicU64);

impl Throttle {
    const fn new() -> Self {
        Throttle(std::sync::atomic::AtomicU64::new(0))
    }

    /// Whether this event may be logged at `warn`.
    fn ready(&self) -> bool {
        use std::sync::atomic::Ordering;
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let now = START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs()
            + 1;
        let last = self.0.load(Ordering::Relaxed);
        now > last
            && self
                .0
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// `tracing::warn!` at most once a second from each call site (a [`Throttle`] of its own),
/// `tracing::debug!` otherwise.
macro_rules! throttled_warn {
    ($($arg:tt)+) => {{
        static THROTTLE: Throttle = Throttle::new();
        if THROTTLE.ready() {
            tracing::warn!($($arg)+);
        } else {
            tracing::debug!($($arg)+);
        }
    }};
}

mod session;
pub use session::SESSION_HEADER;

/// Default endpoint path.
pub const DEFAULT_PATH: &str = "/mcp";
/// Default request body limit: 1 MiB.
///
/// Why: JSON grows when parsed into a `serde_json::Value`. `tests/body_expansion.rs`
/// measures the peak while parsing a 1 MiB body: `[{},{},…]` 24x (a 32-byte `Value` per
/// 3 bytes, plus the array's reallocation), `[[],[],…]` 24x, `[[[]],…]` 34x, and the
/// worst shape we know, `[{"a":0},…]` (one map node per 8 bytes), 83x: at most about
/// 90 MiB per request, so [`DEFAULT_MAX_CONCURRENT_REQUESTS`] (32) bodies parsing at once
/// cost at most about 2.8 GiB. The largest legitimate body is far smaller: the server
/// caps the answers a round uses at 256 KiB and a `requestState` at 64 KiB, and tool
/// arguments are typically a few KiB. Raise it (with [`HttpConfig::max_body_bytes`]) for
/// tools with large arguments; lower both limits for small containers.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default limit of requests in progress at once: 32 (see [`DEFAULT_MAX_BODY_BYTES`]).
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 32;
/// Default time allowed to receive a request body: 10 seconds.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a request may run, its SSE stream included: 30 seconds.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`HttpConfig::session_request_timeout`]: 30 minutes.
pub const DEFAULT_SESSION_REQUEST_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default time allowed to receive a request's headers ([`serve`], [`spawn`]): 10 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default limit of open connections ([`serve`], [`spawn`]): 1024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default number of notifications an SSE stream buffers: 32.
pub const DEFAULT_SSE_BUFFER: usize = 32;
/// The JSON-RPC error code of answers refused by a transport limit (`503`: too many
/// requests in progress, or a request that ran out of time): -32000, in JSON-RPC's
/// range for implementation-defined server errors.
pub const LIMIT_EXCEEDED: i64 = -32000;
/// Which `Origin` header values are accepted. Requests without `Origin` (non-browser
/// clients) are always accepted; a present `Origin` must match this policy or the
/// request gets `403 Forbidden`.
#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    /// Accept `http(s)://localhost`, `127.0.0.1` and `[::1]` on any port.
    /// `None` (the default) means: yes for [`router`], and for [`serve`]/[`spawn`]
    /// only when bound to a loopback address.
    pub allow_localhost: Option<bool>,
    /// Exact origins to accept (`scheme://host[:port]`, compared case-insensitively).
    pub allowed: Vec<String>,
    /// Accept every origin (turns DNS-rebinding protection off; not recommended).
    pub allow_any: bool,
}

impl OriginPolicy {
    /// Accept only the listed origins (no localhost default).
    pub fn only<I, S>(origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow_localhost: Some(false),
            allowed: origins.into_iter().map(Into::into).collect(),
            allow_any: false,
        }
    }

    /// Accept every origin. Only for servers that are protected otherwise.
    pub fn any() -> Self {
        Self {
            allow_localhost: Some(true),
            allowed: Vec::new(),
            allow_any: true,
        }
    }

    /// Whether `origin` is accepted (with `None` for `allow_localhost` taken as `true`).
    pub fn allows(&self, origin: &str) -> bool {
        if self.allow_any {
            return true;
        }
        let origin = origin.trim().trim_end_matches('/');
        if self.allow_localhost.unwrap_or(true) && is_localhost_origin(origin) {
            return true;
        }
        self.allowed
            .iter()
            .any(|a| a.trim().trim_end_matches('/').eq_ignore_ascii_case(origin))
    }
}

/// Whether `origin` is `http(s)://localhost|127.0.0.1|[::1]` with an optional port.
fn is_localhost_origin(origin: &str) -> bool {
    let lower = origin.to_ascii_lowercase();
    let rest = match lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    {
        Some(r) => r,
        None => return false,
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, port)) if port.is_empty() || valid_port(port) => return h == "::1",
            _ => return false,
        }
    } else {
        match rest.split_once(':') {
            Some((h, port)) if valid_port(port) => h,
            Some(_) => return false,
            None => rest,
        }
    };
    host == "localhost" || host == "127.0.0.1"
}

fn valid_port(p: &str) -> bool {
    p.strip_prefix(':')
        .unwrap_or(p)
        .parse::<u16>()
        .is_ok_and(|_| !p.is_empty())
}

/// Configuration of the Streamable HTTP endpoint.
#[derive(Clone)]
pub struct HttpConfig {
    /// The endpoint path (default `/mcp`).
    pub path: String,
    /// The request body limit in bytes (default 1 MiB, see [`DEFAULT_MAX_BODY_BYTES`]
    /// for why); larger bodies get `413`.
    pub max_body_bytes: usize,
    /// Which `Origin` values are accepted.
    pub origins: OriginPolicy,
    /// Turns each request into the principal states are bound to (default: anonymous).
    pub authenticator: Arc<dyn Authenticator>,
    /// Requests in progress at once, SSE streams counted until they end (default 32).
    /// One more is refused at once with `503`, `Retry-After: 1` and [`LIMIT_EXCEEDED`]
    /// (refused rather than queued: a queue only moves the wait into the client's
    /// timeout, and a load balancer can send the retry elsewhere).
    pub max_concurrent_requests: usize,
    /// Time allowed to receive the whole body once the headers are in (default 10 s);
    /// then `408` and the connection is closed.
    pub body_read_timeout: Duration,
    /// Time a request may run once its body is in (default 30 s): the server's handling,
    /// and an SSE stream until its last event. Then `503` with [`LIMIT_EXCEEDED`] (an SSE
    /// stream just ends) and the request is cancelled.
    pub request_timeout: Duration,
    /// Time a request of a legacy session may run (default 30 minutes): its tool may wait
    /// for a person to answer forms ([`LegacyConfig::response_timeout`] bounds each wait).
    ///
    /// [`LegacyConfig::response_timeout`]: crate::legacy::LegacyConfig::response_timeout
    pub session_request_timeout: Duration,
    /// Notifications an SSE stream buffers (default 32). While a client does not read,
    /// further progress notifications are dropped (each supersedes the previous one);
    /// the response always gets through.
    pub sse_buffer: usize,
    /// [`serve`] and [`spawn`] only: time allowed to receive a request's headers
    /// (default 10 s), counted from when the server starts waiting for them, so it also
    /// closes a connection that stays silent (at first, or idle between requests).
    pub header_read_timeout: Duration,
    /// [`serve`] and [`spawn`] only: open connections at once (default 1024); more are
    /// closed as soon as they are accepted.
    pub max_connections: usize,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("path", &self.path)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("origins", &self.origins)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("session_request_timeout", &self.session_request_timeout)
            .field("sse_buffer", &self.sse_buffer)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("max_connections", &self.max_connections)
            .finish_non_exhaustive()
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.to_owned(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            origins: OriginPolicy::default(),
            authenticator: Arc::new(AnonymousAuth),
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            session_request_timeout: DEFAULT_SESSION_REQUEST_TIMEOUT,
            sse_buffer: DEFAULT_SSE_BUFFER,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

impl HttpConfig {
    /// Sets the endpoint path (a leading `/` is added when missing).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let p = path.into();
        self.path = if p.starts_with('/') {
            p
        } else {
            format!("/{p}")
        };
        self
    }

    /// Sets the request body limit in bytes.
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// Replaces the origin policy.
    pub fn origins(mut self, policy: OriginPolicy) -> Self {
        self.origins = policy;
        self
    }

    /// Accepts one more origin (in addition to the current policy).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.allowed.push(origin.into());
        self
    }

    /// Sets the authenticator.
    pub fn authenticator(mut self, auth: impl Authenticator + 'static) -> Self {
        self.authenticator = Arc::new(auth);
        self
    }

    /// Sets the limit of requests in progress at once (at least 1).
    pub fn max_concurrent_requests(mut self, n: usize) -> Self {
        self.max_concurrent_requests = n.max(1);
        self
    }

    /// Sets the time allowed to receive a request body.
    pub fn body_read_timeout(mut self, t: Duration) -> Self {
        self.body_read_timeout = t;
        self
    }

    /// Sets the time a request may run.
    pub fn request_timeout(mut self, t: Duration) -> Self {
        self.request_timeout = t;
        self
    }

    /// Sets the time a request of a legacy session may run.
    pub fn session_request_timeout(mut self, t: Duration) -> Self {
        self.session_request_timeout = t;
        self
    }

    /// Sets the number of notifications an SSE stream buffers (at least 1).
    pub fn sse_buffer(mut self, n: usize) -> Self {
        self.sse_buffer = n.max(1);
        self
    }

    /// Sets the time allowed to receive a request's headers ([`serve`], [`spawn`]).
    pub fn header_read_timeout(mut self, t: Duration) -> Self {
        self.header_read_timeout = t;
        self
    }

    /// Sets the limit of open connections ([`serve`], [`spawn`]; at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }
}

struct Endpoint {
    server: Arc<Server>,
    config: HttpConfig,
    /// One permit per request in progress ([`HttpConfig::max_concurrent_requests`]).
    permits: Arc<tokio::sync::Semaphore>,
    /// `x-mcp-header` parameters by tool name (tools whose annotations are valid).
    params: HashMap<String, Vec<HeaderParam>>,
}

impl Endpoint {
    /// A permit for one request in progress, or the `503` that refuses it.
    fn permit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, Box<Response>> {
        self.permits.clone().try_acquire_owned().map_err(|_| {
            throttled_warn!(
                max = self.config.max_concurrent_requests,
                "too many requests in progress: answering 503"
            );
            let mut resp = rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                LIMIT_EXCEEDED,
                "Server busy: too many requests in progress, retry later",
            );
            resp.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            Box::new(resp)
        })
    }
}

fn tool_params(server: &Server) -> HashMap<String, Vec<HeaderParam>> {
    let mut map = HashMap::new();
    for info in server.tools() {
        match header_params(&info.input_schema) {
            Ok(p) if p.is_empty() => {}
            Ok(p) => {
                map.insert(info.name.clone(), p);
            }
            Err(e) => {
                tracing::warn!(tool = %info.name, error = %e, "invalid x-mcp-header annotation; its headers are not checked")
            }
        }
    }
    map
}

/// The Streamable HTTP endpoint as an axum [`Router`] (route [`HttpConfig::path`]),
/// ready to be served or merged into an application.
pub fn router(server: impl Into<Arc<Server>>, config: HttpConfig) -> Router {
    let path = config.path.clone();
    let server: Arc<Server> = server.into();
    let params = tool_params(&server);
    let permits = Arc::new(tokio::sync::Semaphore::new(
        config.max_concurrent_requests.max(1),
    ));
    let endpoint = Arc::new(Endpoint {
        server,
        config,
        permits,
        params,
    });
    Router::new()
        .route(
            &path,
            post(handle_post)
                .delete(session::delete)
                .fallback(method_not_allowed),
        )
        .with_state(endpoint)
}

/// Binds `addr` and serves the endpoint until the process ends. With the default
/// [`OriginPolicy`], localhost origins are accepted only when `addr` is a loopback address.
///
/// # Errors
/// When binding or serving fails.
pub async fn serve(
    addr: SocketAddr,
    server: impl Into<Arc<Server>>,
    config: HttpConfig,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let config = resolve_for(config, &local);
    tracing::info!(address = %local, path = %config.path, "serving MCP over Streamable HTTP");
    let limits = ConnectionLimits::of(&config);
    accept_loop(
        listener,
        router(server, config),
        limits,
        std::future::pending(),
    )
    .await;
    Ok(())
}

/// What [`accept_loop`] enforces per connection.
#[derive(Clone, Copy)]
struct ConnectionLimits {
    max_connections: usize,
    header_read_timeout: Duration,
}

impl ConnectionLimits {
    fn of(config: &HttpConfig) -> Self {
        Self {
            max_connections: config.max_connections.max(1),
            header_read_timeout: config.header_read_timeout,
        }
    }
}

/// Accepts HTTP/1.1 connections until `shutdown` resolves, then lets open connections
/// finish (graceful shutdown). Beyond `max_connections` a new connection is closed at once;
/// a client that does not send its headers within `header_read_timeout` is disconnected.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let open = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                throttled_warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            throttled_warn!(
                max_connections = limits.max_connections,
                "connection limit reached: closing a new connection"
            );
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// A server started by [`spawn`]: its address, and shutdown on [`HttpHandle::shutdown`] or drop.
#[derive(Debug)]
pub struct HttpHandle {
    addr: SocketAddr,
    path: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl HttpHandle {
    /// The bound address (useful after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL, e.g. `http://127.0.0.1:41234/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// Stops accepting connections and waits for the server task to end.
    ///
    /// # Errors
    /// The server task's I/O error, if it failed.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => task
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string()))),
            None => Ok(()),
        }
    }
}

impl Drop for HttpHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds `addr` (port 0 picks a free port) and serves the endpoint on a background task.
///
/// # Errors
/// When binding fails.
pub async fn spawn(
    addr: SocketAddr,
    server: impl Into<Arc<Server>>,
    config: HttpConfig,
) -> std::io::Result<HttpHandle> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let config = resolve_for(config, &local);
    let path = config.path.clone();
    let limits = ConnectionLimits::of(&config);
    let app = router(server, config);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        accept_loop(listener, app, limits, async move {
            let _ = rx.await;
        })
        .await;
        Ok(())
    });
    Ok(HttpHandle {
        addr: local,
        path,
        shutdown: Some(tx),
        task: Some(task),
    })
}

fn resolve_for(mut config: HttpConfig, addr: &SocketAddr) -> HttpConfig {
    if config.origins.allow_localhost.is_none() {
        config.origins.allow_localhost = Some(addr.ip().is_loopback());
    }
    warn_if_exposed(addr, &config);
    config
}

/// Whether serving `config` at `addr` lets anyone in from beyond this machine: a
/// non-loopback address with an authenticator that [admits
/// anyone](Authenticator::admits_anyone) (the default [`AnonymousAuth`] among them).
pub fn exposes_anyone(addr: &SocketAddr, config: &HttpConfig) -> bool {
    !addr.ip().is_loopback() && config.authenticator.admits_anyone()
}

/// Logs a warning when [`exposes_anyone`] holds ([`serve`] and [`spawn`] call it).
pub fn warn_if_exposed(addr: &SocketAddr, config: &HttpConfig) {
    if exposes_anyone(addr, config) {
        tracing::warn!(
            address = %addr,
            "serving MCP on a non-loopback address with an authenticator that admits anyone \
             (anonymous or unverified callers): every caller on the network can use the tools; \
             configure a real Authenticator (HttpConfig::authenticator) or bind 127.0.0.1"
        );
    }
}

async fn method_not_allowed() -> Response {
    let mut resp = StatusCode::METHOD_NOT_ALLOWED.into_response();
    resp.headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST"));
    resp
}

fn json_response<T: serde::Serialize + ?Sized>(status: StatusCode, body: &T) -> Response {
    json_bytes(
        status,
        serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec()),
    )
}

/// A JSON body already serialized.
pub(super) fn json_bytes(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut resp = (status, bytes).into_response();
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn rpc_error(status: StatusCode, id: Option<&Value>, code: i64, message: &str) -> Response {
    json_response(status, &error_response(id, code, message))
}

enum BodyError {
    TooLarge,
    Read,
}

/// Reads the body, at most `limit` bytes. A body that arrives in one frame (the usual
/// case) is kept as that frame's buffer, not copied; one in several frames is gathered
/// once, into a buffer sized from `Content-Length` (`expected`, capped at `limit`).
async fn read_body(mut body: Body, limit: usize, expected: usize) -> Result<Bytes, BodyError> {
    let mut first: Option<Bytes> = None;
    let mut gathered: Option<Vec<u8>> = None;
    let mut len = 0usize;
    loop {
        let frame = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        let data = match frame {
            None => break,
            Some(Err(_)) => return Err(BodyError::Read),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue, // trailers
            },
        };
        len = len.saturating_add(data.len());
        if len > limit {
            return Err(BodyError::TooLarge);
        }
        match (&mut gathered, first.take()) {
            (Some(buf), _) => buf.extend_from_slice(&data),
            (None, None) => first = Some(data),
            (None, Some(head)) => {
                let mut buf = Vec::with_capacity(expected.min(limit).max(len));
                buf.extend_from_slice(&head);
                buf.extend_from_slice(&data);
                gathered = Some(buf);
            }
        }
    }
    Ok(match (gathered, first) {
        (Some(buf), _) => Bytes::from(buf),
        (None, Some(head)) => head,
        (None, None) => Bytes::new(),
    })
}

/// The checks every request passes first: `Origin` (403) and the authenticator (401, or
/// 500 when it panics). The principal it names.
fn admit(config: &HttpConfig, headers: &HeaderMap) -> Result<Principal, Box<Response>> {
    // Origin (DNS rebinding).
    if let Some(origin) = headers.get(ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| config.origins.allows(o));
        if !ok {
            throttled_warn!(origin = ?origin, "refused request from a foreign Origin");
            return Err(Box::new(rpc_error(
                StatusCode::FORBIDDEN,
                None,
                INVALID_REQUEST,
                "Forbidden: Origin not allowed",
            )));
        }
    }

    // Authentication. A panic in a user-supplied authenticator must not take the
    // connection down: it fails closed with 500/-32603 (not 401, which would send the
    // client after new credentials for what is a server bug). `AssertUnwindSafe`: after a
    // panic nothing of the authenticator's is used by this request, and its own state
    // (say, a poisoned lock) is its business on the next call.
    let auth = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        config.authenticator.authenticate(headers)
    }));
    match auth {
        Ok(Ok(p)) => Ok(p),
        Err(_) => {
            // The payload may quote a credential: it stays with the panic hook.
            tracing::error!("the authenticator panicked; answering 500");
            Err(Box::new(rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                None,
                INTERNAL_ERROR,
                "Internal error",
            )))
        }
        Ok(Err(e)) => {
            let mut resp = rpc_error(
                StatusCode::UNAUTHORIZED,
                None,
                INVALID_REQUEST,
                &e.to_string(),
            );
            if let Ok(v) = HeaderValue::from_str(&e.challenge) {
                resp.headers_mut().insert(WWW_AUTHENTICATE, v);
            } else {
                resp.headers_mut()
                    .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            Err(Box::new(resp))
        }
    }
}

async fn handle_post(
    State(endpoint): State<Arc<Endpoint>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let config = &endpoint.config;

    let principal = match admit(config, &headers) {
        Ok(p) => p,
        Err(refused) => return *refused,
    };

    // Load: one permit per request in progress, held until its answer (or SSE stream) ends.
    // A legacy session's messages take theirs once the body is read (its responses to the
    // server's requests take none: a call waiting for one holds a permit already).
    let session_id = headers.get(session::SESSION_HEADER).cloned();
    let permit = match session_id {
        Some(_) => None,
        None => match endpoint.permit() {
            Ok(p) => Some(p),
            Err(busy) => return *busy,
        },
    };

    // Size.
    let too_large = || {
        rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            INVALID_REQUEST,
            "Request body too large",
        )
    };
    let declared_len = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared_len.is_some_and(|len| len > config.max_body_bytes as u64) {
        return too_large();
    }

    // Content type.
    if let Some(ct) = headers.get(CONTENT_TYPE) {
        let is_json = ct.to_str().is_ok_and(|ct| {
            let mime = ct.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case("application/json")
                || mime.to_ascii_lowercase().ends_with("+json")
        });
        if !is_json {
            return rpc_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                INVALID_REQUEST,
                "Content-Type must be application/json",
            );
        }
    }

    let expected = declared_len.map_or(0, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let read = read_body(body, config.max_body_bytes, expected);
    let bytes = match tokio::time::timeout(config.body_read_timeout, read).await {
        Ok(Ok(b)) => b,
        Err(_) => {
            throttled_warn!(
                timeout_ms = config.body_read_timeout.as_millis() as u64,
                "request body not received in time: answering 408 and closing"
            );
            let mut resp = rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                None,
                INVALID_REQUEST,
                "Request body not received in time",
            );
            resp.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            return resp;
        }
        Ok(Err(BodyError::TooLarge)) => return too_large(),
        Ok(Err(BodyError::Read)) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                INVALID_REQUEST,
                "Could not read the request body",
            );
        }
    };

    let message: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(_) => return rpc_error(StatusCode::BAD_REQUEST, None, PARSE_ERROR, "Parse error"),
    };

    // Dual era: a legacy session's messages, and `initialize` opening one.
    if let Some(id) = session_id {
        return session::post(&endpoint, &headers, &id, principal, message).await;
    }
    if legacy::route(&message) == Route::Initialize {
        return session::initialize(&endpoint, &principal, &message);
    }
    let Some(permit) = permit else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            INTERNAL_ERROR,
            "Internal error",
        );
    };

    let Some(obj) = message.as_object() else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            INVALID_REQUEST,
            "Invalid Request: the body must be one JSON-RPC request or notification object",
        );
    };
    let id = obj.get("id");
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_REQUEST,
            "Invalid Request: missing method (clients must not send responses)",
        );
    };

    if id.is_none() {
        // A notification: header requirements are not defined for notification POSTs;
        // a present Mcp-Method must still agree with the body.
        if let Some(h) = headers.get(METHOD_HEADER)
            && h.to_str().ok() != Some(method)
        {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                HEADER_MISMATCH,
                "Header mismatch: Mcp-Method does not match the body's method",
            );
        }
        let handled = endpoint.server.handle(message, &principal);
        if tokio::time::timeout(config.request_timeout, handled)
            .await
            .is_err()
        {
            throttled_warn!("a notification ran out of time and was cancelled");
        }
        return StatusCode::ACCEPTED.into_response();
    }

    if let Err(msg) = check_headers(&headers, obj, method, &endpoint.params) {
        tracing::debug!(%msg, "header validation failed");
        return rpc_error(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, &msg);
    }

    let id = id.cloned();
    if accepts_sse(&headers) && wants_notifications(obj.get("params").and_then(Value::as_object)) {
        let stream = Streamed {
            server: endpoint.server.clone(),
            handler: Handler::Stateless(principal),
            timeout: config.request_timeout,
            buffer: config.sse_buffer,
            permit,
        };
        return streaming_answer(stream, message, id).await;
    }
    let handled = endpoint.server.handle(message, &principal);
    match tokio::time::timeout(config.request_timeout, handled).await {
        Ok(response) => json_answer(response, id.as_ref()),
        Err(_) => timed_out(id.as_ref(), config.request_timeout),
    }
}

/// `503` with [`LIMIT_EXCEEDED`] for a request that ran out of time (it was cancelled).
fn timed_out(id: Option<&Value>, timeout: Duration) -> Response {
    throttled_warn!(
        timeout_ms = timeout.as_millis() as u64,
        "a request ran out of time and was cancelled: answering 503"
    );
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        LIMIT_EXCEEDED,
        "Request timed out",
    )
}

/// The server's answer as `application/json` (`202` for none), with the status of its
/// error code.
fn json_answer(response: Option<JsonRpcResponse>, id: Option<&Value>) -> Response {
    match response {
        None => StatusCode::ACCEPTED.into_response(),
        Some(response) => {
            let status = StatusCode::from_u16(http_status_for_code(response.error_code()))
                .unwrap_or(StatusCode::OK);
            // straight to bytes: no intermediate `Value` tree of the whole response
            match serde_json::to_vec(&response) {
                Ok(bytes) => json_bytes(status, bytes),
                Err(e) => {
                    tracing::error!(error = %e, "could not serialize a response");
                    rpc_error(StatusCode::OK, id, INTERNAL_ERROR, "Internal error")
                }
            }
        }
    }
}

/// Whether `Accept` names `text/event-stream` (without `q=0`), as MCP clients must.
/// Wildcards (`*/*`, the default of curl and many HTTP libraries) and a missing `Accept`
/// get JSON: such a client may not read SSE.
fn accepts_sse(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';');
            let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            !refused && mime == "text/event-stream"
        })
}

/// What the task running a streamed request reports.
enum StreamEvent {
    Notification(Value),
    Done(Option<JsonRpcResponse>),
    /// The request ran out of time: the stream ends without a response.
    TimedOut,
}

/// Who handles a streamed request: the stateless server as `principal`, or a legacy
/// session.
enum Handler {
    Stateless(Principal),
    Session(Arc<crate::legacy::Session>),
}

/// What a streamed request runs with.
struct Streamed {
    server: Arc<Server>,
    handler: Handler,
    timeout: Duration,
    buffer: usize,
    /// The request's concurrency permit: held until the stream ends.
    permit: tokio::sync::OwnedSemaphorePermit,
}

/// The sending half of an SSE stream: notifications are offered without waiting (and
/// dropped when `buffer` of them are unread), the response is always delivered.
fn sse_channel(
    buffer: usize,
) -> (
    NotificationSink,
    tokio::sync::mpsc::Sender<StreamEvent>,
    tokio::sync::mpsc::Receiver<StreamEvent>,
) {
    // One slot more than the notifications may use, kept for the response.
    let (tx, rx) = tokio::sync::mpsc::channel::<StreamEvent>(buffer.max(1) + 1);
    let notes = tx.clone();
    let sink = NotificationSink::from_fn(move |n| {
        // Leave the last slot to the response.
        if notes.capacity() <= 1 {
            tracing::debug!("SSE buffer full: dropping a notification");
            return;
        }
        if notes.try_send(StreamEvent::Notification(n)).is_err() {
            tracing::debug!("SSE buffer full or closed: dropping a notification");
        }
    });
    (sink, tx, rx)
}

/// Answers a request that asked for progress and accepts SSE. The request runs on its
/// own task; when it produces a notification before its response, the answer is a
/// `text/event-stream`: each notification as an event as soon as it is produced, then
/// the response, then the end of the stream. A request that is answered before any
/// notification gets the plain JSON answer (and its HTTP status). Closing the stream
/// early cancels the request, and so does the request timeout.
async fn streaming_answer(run: Streamed, message: Value, id: Option<Value>) -> Response {
    let (sink, tx, mut rx) = sse_channel(run.buffer);
    let timeout = run.timeout;
    let legacy = matches!(run.handler, Handler::Session(_));
    tokio::spawn(async move {
        let Streamed {
            server,
            handler,
            permit,
            ..
        } = run;
        let handling = match handler {
            Handler::Stateless(principal) => server.handle_with(message, &principal, sink),
            Handler::Session(session) => server.handle_in_session(session, message, sink),
        };
        let work = async {
            tokio::select! {
                response = handling => {
                    // Waits for room only if the client stopped reading; bounded by the timeout.
                    let _ = tx.send(StreamEvent::Done(response)).await;
                }
                () = tx.closed() => tracing::debug!("SSE response closed by the client; request cancelled"),
            }
        };
        if tokio::time::timeout(timeout, work).await.is_err() {
            throttled_warn!(
                timeout_ms = timeout.as_millis() as u64,
                "a streamed request ran out of time and was cancelled"
            );
            let _ = tx.try_send(StreamEvent::TimedOut);
        }
        drop(permit);
    });
    match rx.recv().await {
        Some(StreamEvent::Done(response)) if legacy => session::json_answer(response, id.as_ref()),
        Some(StreamEvent::Done(response)) => json_answer(response, id.as_ref()),
        Some(StreamEvent::TimedOut) => timed_out(id.as_ref(), timeout),
        Some(StreamEvent::Notification(first)) => {
            let body = SseBody {
                first: Some(first),
                rx: Some(rx),
            };
            let mut resp = Response::new(Body::new(body));
            let h = resp.headers_mut();
            h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            h.insert("x-accel-buffering", HeaderValue::from_static("no"));
            resp
        }
        None => rpc_error(
            StatusCode::OK,
            id.as_ref(),
            INTERNAL_ERROR,
            "Internal error",
        ),
    }
}

/// The body of an SSE answer: `event: message` events carrying compact JSON-RPC
/// messages; it ends after the response (or when the request runs out of time).
struct SseBody {
    first: Option<Value>,
    rx: Option<tokio::sync::mpsc::Receiver<StreamEvent>>,
}

fn sse_event(message: &impl serde::Serialize) -> Bytes {
    let json = serde_json::to_string(message).unwrap_or_else(|_| "{}".to_owned());
    Bytes::from(format!("event: message\ndata: {json}\n\n"))
}

impl HttpBody for SseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        use std::task::Poll;
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(http_body::Frame::data(sse_event(&first)))));
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(StreamEvent::Notification(n))) => {
                Poll::Ready(Some(Ok(http_body::Frame::data(sse_event(&n)))))
            }
            Poll::Ready(Some(StreamEvent::Done(response))) => {
                self.rx = None;
                Poll::Ready(response.map(|r| Ok(http_body::Frame::data(sse_event(&r)))))
            }
            Poll::Ready(Some(StreamEvent::TimedOut)) | Poll::Ready(None) => {
                self.rx = None;
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.rx.is_none()
    }
}

/// The value of a header as a string; `Err` when absent or not visible ASCII.
fn header_str<'h>(headers: &'h HeaderMap, name: &str, display: &str) -> Result<&'h str, String> {
    let mut values = headers.get_all(name).iter();
    let Some(v) = values.next() else {
        return Err(format!(
            "Header mismatch: missing required header {display}"
        ));
    };
    if values.next().is_some() {
        return Err(format!("Header mismatch: more than one {display} header"));
    }
    v.to_str()
        .map_err(|_| format!("Header mismatch: {display} contains invalid characters"))
}

fn check_headers(
    headers: &HeaderMap,
    obj: &serde_json::Map<String, Value>,
    method: &str,
    tool_params: &HashMap<String, Vec<HeaderParam>>,
) -> Result<(), String> {
    let params = obj.get("params").and_then(Value::as_object);

    // MCP-Protocol-Version: required; must equal _meta's version when the body has one
    // (a missing or non-string body version is the server's -32602).
    let version = header_str(headers, PROTOCOL_VERSION_HEADER, "MCP-Protocol-Version")?;
    let body_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    if let Some(bv) = body_version
        && bv != version
    {
        return Err(format!(
            "Header mismatch: MCP-Protocol-Version header value '{version}' does not match body value '{bv}'"
        ));
    }

    // Mcp-Method: required, equal to the method.
    let hm = header_str(headers, METHOD_HEADER, "Mcp-Method")?;
    if hm != method {
        return Err(format!(
            "Header mismatch: Mcp-Method header value '{hm}' does not match body value '{method}'"
        ));
    }

    // Mcp-Name for tools/call, prompts/get (params.name) and resources/read (params.uri).
    if let Some(field) = name_field(method) {
        let body_name = params.and_then(|p| p.get(field));
        let present = headers.contains_key(NAME_HEADER);
        if !present && body_name.is_none() {
            // Nothing to mirror; the server reports the missing parameter (-32602).
            return Ok(());
        }
        let raw = header_str(headers, NAME_HEADER, "Mcp-Name")?;
        let decoded =
            decode_header_value(raw).map_err(|e| format!("Header mismatch: Mcp-Name: {e}"))?;
        match body_name.and_then(Value::as_str) {
            Some(b) if b == decoded => {}
            Some(b) => {
                return Err(format!(
                    "Header mismatch: Mcp-Name header value '{}' does not match body value '{}'",
                    decoded.escape_default(),
                    b.escape_default()
                ));
            }
            None => {
                return Err(format!(
                    "Header mismatch: Mcp-Name header present but params.{field} is not a string"
                ));
            }
        }
    }

    // Mcp-Param-{Name} for tools whose inputSchema annotates parameters with x-mcp-header.
    if method == "tools/call" {
        let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        if let Some(list) = tool.and_then(|t| tool_params.get(t)) {
            let empty = Value::Object(serde_json::Map::new());
            let arguments = params.and_then(|p| p.get("arguments")).unwrap_or(&empty);
            check_param_headers(list, arguments, |name| {
                let mut all = headers.get_all(name).iter();
                let v = all.next()?;
                if all.next().is_some() {
                    return Some(Err(()));
                }
                Some(v.to_str().map(str::to_owned).map_err(|_| ()))
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_origins() {
        for o in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://[::1]:80",
            "HTTP://LOCALHOST",
        ] {
            assert!(is_localhost_origin(o), "{o}");
        }
        for o in [
            "http://localhost.evil.com",
            "http://evil.com",
            "null",
            "http://127.0.0.1.nip.io",
            "ftp://localhost",
            "http://localhost:abc",
            "http://[::2]",
        ] {
            assert!(!is_localhost_origin(o), "{o}");
        }
    }

    #[test]
    fn policy() {
        let p = OriginPolicy::only(["https://app.example.com"]);
        assert!(p.allows("https://app.example.com"));
        assert!(p.allows("HTTPS://APP.EXAMPLE.COM/"));
        assert!(!p.allows("http://localhost"));
        assert!(OriginPolicy::default().allows("http://localhost:1"));
        assert!(!OriginPolicy::default().allows("https://evil.example"));
        assert!(OriginPolicy::any().allows("https://evil.example"));
    }

    #[test]
    fn header_value_codec() {
        for v in [
            "get_weather",
            "Hello, 世界",
            " padded ",
            "line1\nline2",
            "=?base64?literal?=",
        ] {
            assert_eq!(decode_header_value(&encode_header_value(v)).unwrap(), v);
        }
        assert_eq!(encode_header_value("get_weather"), "get_weather");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert!(decode_header_value("=?base64?!!!?=").is_err());
    }

    #[test]
    fn the_throttle_lets_one_warning_a_second_through() {
        let t = Throttle::new();
        assert!(t.ready());
        for _ in 0..1000 {
            assert!(!t.ready());
        }
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert!(t.ready());
        assert!(!t.ready());
    }

    /// While nobody reads, at most `buffer` notifications wait; the rest are dropped, and
    /// the response still has its slot.
    #[test]
    fn the_sse_channel_is_bounded_and_keeps_room_for_the_response() {
        let (sink, tx, mut rx) = sse_channel(4);
        for i in 0..1000 {
            sink.send(serde_json::json!({ "n": i }));
        }
        assert!(
            tx.try_send(StreamEvent::Done(None)).is_ok(),
            "room for the response"
        );
        let mut notes = 0;
        let mut done = false;
        while let Ok(ev) = rx.try_recv() {
            match ev {
                StreamEvent::Notification(_) => notes += 1,
                StreamEvent::Done(_) => done = true,
                StreamEvent::TimedOut => unreachable!(),
            }
        }
        assert_eq!(notes, 4);
        assert!(done);
        // Once read, there is room again.
        sink.send(serde_json::json!({ "n": "later" }));
        assert!(matches!(rx.try_recv(), Ok(StreamEvent::Notification(_))));
    }

    #[test]
    fn status_mapping() {
        use super::super::http_status_for_code as s;
        assert_eq!(s(None), 200);
        for c in [-32602, -32020, -32021, -32022, -32700, -32600] {
            assert_eq!(s(Some(c)), 400);
        }
        assert_eq!(s(Some(-32601)), 404);
        assert_eq!(s(Some(-32603)), 200);
    }
}

/// Fuzz targets for the transport's header parsing (`check_headers`, the `Mcp-Param-*`
/// checks, the Base64 sentinel codec, `Accept` and `Origin` parsing). Budget:
/// `MCP_FUZZ_CASES` (scripts/fuzz.sh), else small defaults.
#[cfg(test)]
mod fuzz {
    use super::*;
    use crate::protocol::headers::{HeaderParam, header_params, param_headers};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    use serde_json::json;

    fn run<S: Strategy>(
        name: &str,
        default: u32,
        strategy: S,
        test: impl Fn(S::Value) -> Result<(), TestCaseError>,
    ) where
        S::Value: std::fmt::Debug,
    {
        let n = std::env::var("MCP_FUZZ_CASES")
            .ok()
            .and_then(|v| v.replace('_', "").parse().ok())
            .unwrap_or(default);
        let mut runner = TestRunner::new(Config {
            cases: n,
            failure_persistence: None,
            ..Config::default()
        });
        let started = std::time::Instant::now();
        if let Err(e) = runner.run(&strategy, test) {
            panic!("fuzz target {name} failed: {e}");
        }
        println!(
            "fuzz target {name}: {n} cases, 0 failures, {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }

    fn header_text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("2026-07-28".to_owned()),
            Just("tools/call".to_owned()),
            Just("echo".to_owned()),
            "=\\?base64\\?[A-Za-z0-9+/=!]{0,12}\\?=",
            "[ -~]{0,16}",
            ".{0,8}",
        ]
    }

    fn headers() -> impl Strategy<Value = Vec<(String, String)>> {
        let name = prop_oneof![
            Just(PROTOCOL_VERSION_HEADER.to_owned()),
            Just(METHOD_HEADER.to_owned()),
            Just(NAME_HEADER.to_owned()),
            Just("mcp-param-region".to_owned()),
            Just("mcp-param-n".to_owned()),
            Just("accept".to_owned()),
            Just("origin".to_owned()),
            "[a-z-]{1,12}",
        ];
        prop::collection::vec((name, header_text()), 0..8)
    }

    fn header_map(pairs: &[(String, String)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            if let (Ok(k), Ok(v)) = (
                axum::http::HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_bytes(v.as_bytes()),
            ) {
                map.append(k, v);
            }
        }
        map
    }

    fn schema_params() -> Vec<HeaderParam> {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"}}});
        header_params(schema.as_object().expect("object")).expect("valid")
    }

    fn body() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            ".{0,10}".prop_map(Value::String),
            Just(json!("2026-07-28")),
            Just(json!("echo")),
        ];
        (
            prop_oneof![
                Just("tools/call"),
                Just("tools/list"),
                Just("resources/read")
            ],
            scalar.clone(),
            scalar.clone(),
            scalar.clone(),
            scalar,
        )
            .prop_map(|(method, version, name, region, n)| {
                json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {
                    "name": name, "uri": name,
                    "arguments": {"region": region, "n": n},
                    "_meta": {META_PROTOCOL_VERSION: version}}})
            })
    }

    /// Arbitrary headers against arbitrary bodies: never a panic; an `Ok` means the
    /// mirrored headers really agree with the body.
    #[test]
    fn fuzz_check_headers() {
        let mut params = HashMap::new();
        params.insert("echo".to_owned(), schema_params());
        run(
            "http_check_headers",
            3000,
            (headers(), body()),
            |(pairs, body)| {
                let map = header_map(&pairs);
                let obj = body.as_object().expect("object");
                let method = obj["method"].as_str().expect("method");
                if check_headers(&map, obj, method, &params).is_ok() {
                    let hm = map.get(METHOD_HEADER).and_then(|v| v.to_str().ok());
                    prop_assert_eq!(hm, Some(method));
                    prop_assert!(map.contains_key(PROTOCOL_VERSION_HEADER));
                }
                Ok(())
            },
        );
    }

    /// Headers built the way the client builds them always pass.
    #[test]
    fn fuzz_consistent_headers_pass() {
        let list = schema_params();
        let mut params = HashMap::new();
        params.insert("echo".to_owned(), list.clone());
        run(
            "http_consistent_headers",
            2000,
            (".{0,20}", any::<i32>(), any::<bool>()),
            |(region, n, flag)| {
                let args = json!({"region": region, "n": n, "flag": flag});
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "echo", "arguments": args,
                    "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}});
                let mut pairs = vec![
                    (PROTOCOL_VERSION_HEADER.to_owned(), "2026-07-28".to_owned()),
                    (METHOD_HEADER.to_owned(), "tools/call".to_owned()),
                    (NAME_HEADER.to_owned(), encode_header_value("echo")),
                ];
                pairs.extend(param_headers(&list, &args));
                let map = header_map(&pairs);
                let obj = body.as_object().expect("object");
                let r = check_headers(&map, obj, "tools/call", &params);
                prop_assert!(r.is_ok(), "{:?}", r);
                Ok(())
            },
        );
    }

    /// The sentinel codec round-trips any text, and decoding arbitrary text never panics.
    #[test]
    fn fuzz_header_value_codec() {
        run(
            "http_header_codec",
            5000,
            (".{0,40}", header_text()),
            |(text, raw)| {
                let encoded = encode_header_value(&text);
                prop_assert!(HeaderValue::from_str(&encoded).is_ok(), "{encoded:?}");
                prop_assert_eq!(decode_header_value(&encoded).expect("decodes"), text);
                let _ = decode_header_value(&raw);
                Ok(())
            },
        );
    }

    /// `Accept` and `Origin` parsing never panic; only http(s) localhost origins pass the
    /// localhost rule.
    #[test]
    fn fuzz_accept_and_origin() {
        run(
            "http_accept_origin",
            5000,
            (".{0,60}", ".{0,40}"),
            |(accept, origin)| {
                let mut map = HeaderMap::new();
                if let Ok(v) = HeaderValue::from_str(&accept) {
                    map.insert(ACCEPT, v);
                }
                let _ = accepts_sse(&map);
                if is_localhost_origin(&origin) {
                    let lower = origin.to_ascii_lowercase();
                    prop_assert!(lower.starts_with("http://") || lower.starts_with("https://"));
                }
                prop_assert!(
                    !OriginPolicy::only(["https://app.example"]).allows(&origin)
                        || origin
                            .trim()
                            .trim_end_matches('/')
                            .eq_ignore_ascii_case("https://app.example")
                );
                Ok(())
            },
        );
    }

    /// `x-mcp-header` annotations of any shape: registration-time parsing never panics.
    #[test]
    fn fuzz_header_param_schemas() {
        let value = prop_oneof![
            Just(json!("Region")),
            Just(json!({"type": "string", "x-mcp-header": "X"})),
            Just(json!({"type": "integer", "x-mcp-header": "X"})),
            Just(
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}})
            ),
            ".{0,8}".prop_map(Value::String),
            any::<i64>().prop_map(Value::from),
        ];
        let props = prop::collection::btree_map("[a-z]{1,4}", value, 0..5);
        run("http_param_schemas", 3000, props, |props| {
            let schema = json!({"type": "object", "properties": props});
            if let Ok(list) = header_params(schema.as_object().expect("object")) {
                let _ = param_headers(&list, &json!({"a": "x", "b": 1}));
            }
            Ok(())
        });
    }
}
