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
//! 3. The [`Authenticator`](crate::transport::auth::Authenticator) refuses: `401` with `WWW-Authenticate`. An authenticator that
//!    panics is a server bug, not a credential problem: `500` with a -32603 body (the
//!    request is not served, the connection stays up; with `panic = "abort"` nothing can
//!    be caught).
//! 4. Body over [`HttpConfig::max_body_bytes`] (default 1 MiB): `413`.
//! 5. `Content-Type` present and not JSON: `415`.
//! 6. The body is received and parsed under the body budget
//!    ([`HttpConfig::max_body_bytes_in_flight`], bytes counted as they arrive, every request
//!    alike): spent, `503` with `Retry-After: 1` and [`LIMIT_EXCEEDED`], and the connection
//!    is closed. Not JSON: -32700. With `Mcp-Session-Id`, or an `initialize` request: a
//!    legacy session's, see the `session` module (steps 7 to 9 do not apply; a session's
//!    request takes its permit there). Otherwise more than
//!    [`HttpConfig::max_concurrent_requests`] requests in progress: `503` with
//!    `Retry-After: 1` and a JSON-RPC error [`LIMIT_EXCEEDED`] (-32000); nothing is queued.
//!    Not a single JSON-RPC request or notification object: -32600 (400).
//! 7. Notifications (no `id`): handed to the server, answered `202 Accepted` with no body.
//! 8. Header checks for requests, before the server checks the protocol version:
//!    `MCP-Protocol-Version` present and equal to `_meta` `io.modelcontextprotocol/protocolVersion`;
//!    `Mcp-Method` present and equal to `method`; `Mcp-Name` present and equal to
//!    `params.name` (`tools/call`, `prompts/get`) or `params.uri` (`resources/read`), after
//!    decoding the `=?base64?…?=` form; `Mcp-Param-{Name}` for arguments of the tool that
//!    its `inputSchema` marks with `x-mcp-header` (see [`params`](super::params)).
//!    Any failure: -32020 with HTTP 400.
//! 9. The server's answer as `application/json`, with the status from
//!    [`http_status_for_code`](crate::transport::http_status_for_code); or, for a request whose
//!    `_meta` has a `progressToken` from a client whose `Accept` allows
//!    `text/event-stream`, a `200` SSE stream once the request produces its first
//!    notification: `notifications/progress` events as they happen, then the response,
//!    then the end of the stream (closing it early cancels the request). Without that
//!    `Accept`, progress is not reported and the answer is JSON.
//! 10. `subscriptions/listen`: a `200` `text/event-stream` that stays open (the
//!     acknowledgement, then the subscription's notifications, `:` keep-alive comments every
//!     [`HttpConfig::listen_keep_alive`]) until the client closes it, the subscription lags
//!     (the stream ends without a result), or [`HttpHandle::shutdown`] or the stream's
//!     [`HttpConfig::max_stream_lifetime`] (the `subscriptions/listen` result, then the
//!     end); refused as JSON (-32602, -32021, -32000 busy with `503`; beyond the stream
//!     budget `503` or `429` with `Connection: close`), `406` without an `Accept` that
//!     allows SSE. It holds its request permit only while it is opened, and a slot of the
//!     stream budget for as long as it is open. When you mount [`router`] yourself, call
//!     [`Server::close_subscriptions`](crate::server::Server::close_subscriptions) before
//!     your graceful shutdown.
//!
//! Bounds (all in [`HttpConfig`]; see each field for its default and why):
//! - the body must arrive within [`HttpConfig::body_read_timeout`], else `408` and the
//!   connection is closed (a client that sends a few bytes and stalls holds nothing for
//!   long, and never a request permit: only the bytes it sent, of the body budget);
//! - a request runs at most [`HttpConfig::request_timeout`] (the server's handling and an
//!   SSE stream alike), else `503` with [`LIMIT_EXCEEDED`] (or the end of the SSE stream);
//! - an SSE stream buffers at most [`HttpConfig::sse_buffer`] notifications: while the
//!   client does not read, further progress notifications are dropped (the response is not);
//! - long-lived streams (`subscriptions/listen` streams, legacy sessions' `GET` streams and
//!   legacy calls waiting on a person) share one budget, below the connection limit so that requests always keep
//!   connections ([`HttpConfig::max_streams`]: by default 768 of the 1024 connections),
//!   capped per principal (16), per peer address (64; an IPv6 /64) and for anonymous
//!   callers (128 together, 8 per address), and each ends gracefully at
//!   [`HttpConfig::max_stream_lifetime`] (30 minutes; a waiting legacy call at
//!   [`HttpConfig::session_request_timeout`]);
//! - [`serve`] and [`spawn`] also bound connections ([`HttpConfig::max_connections`]:
//!   more are closed as they are accepted), the time to send a request's headers
//!   ([`HttpConfig::header_read_timeout`]), the time a write may make no progress
//!   ([`HttpConfig::write_timeout`]: a client that stops reading is disconnected) and the
//!   kernel send buffer of a connection ([`HttpConfig::send_buffer_bytes`]). When you
//!   mount [`router`] in your own server, those are yours to set (or your reverse proxy's).

mod admit;
mod config;
mod connection;
mod endpoint;
mod header_checks;
mod legacy_sessions;
mod listen;
mod post;
mod respond;
mod router;
mod serve;
mod sse;
mod streams;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

pub use crate::protocol::headers::{
    METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, decode_header_value, encode_header_value,
    name_field,
};
pub use config::*;
pub use legacy_sessions::SESSION_HEADER;
pub use router::router;
pub use serve::{HttpHandle, exposes_anyone, serve, spawn, warn_if_exposed};
