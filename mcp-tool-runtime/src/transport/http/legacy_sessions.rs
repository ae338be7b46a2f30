//! Legacy (2025-11-25) sessions on the Streamable HTTP endpoint, beside the stateless
//! 2026-07-28 path (see [`crate::legacy`]).
//!
//! - `POST initialize` (no `Mcp-Session-Id`): opens a session, kept in
//!   [`Server::sessions`](crate::server::Server::sessions) (bounded: `503` with `Retry-After`
//!   when full; `429` when the caller has as many sessions as
//!   [`LegacyConfig`](crate::legacy::LegacyConfig) lets one principal, or all anonymous
//!   callers, have), and answers the `InitializeResult` with the new `Mcp-Session-Id`. A
//!   modern-only server answers `400` with an error naming the versions it serves.
//! - `POST` with `Mcp-Session-Id`: the session's. An unknown, expired or closed session —
//!   or another principal's — is `404` (the client starts a new session). An
//!   `MCP-Protocol-Version` other than the negotiated one is `400`.
//!   - a request: its answer is JSON, or — when `Accept` allows `text/event-stream` — an SSE
//!     stream as soon as it sends something to the client first: the tool's
//!     `elicitation/create`, `sampling/createMessage` and `roots/list` requests and its
//!     progress, then the response. JSON-RPC errors come with `200` (legacy clients read
//!     them from the body). It may run up to [`HttpConfig::session_request_timeout`]
//!     (people answer forms); closing the stream cancels it. Such a call (`tools/call`,
//!     `prompts/get`, `resources/read` with an SSE answer) waits on a person: it takes a
//!     place in the waiting budget of its session and principal
//!     ([`Sessions::wait_slot`](crate::legacy::Sessions::wait_slot); `429` beyond it), never
//!     one of the request permits, so waiting calls cannot lock out anyone else's requests;
//!     and, since its stream may stay open as long as the person takes, a slot of the
//!     stream budget listen and `GET` streams take from ([`HttpConfig::max_streams`] and the
//!     caps beside it), so waiting calls cannot take the connections kept for requests.
//!     Every other request of a session takes a request permit, as a modern one does.
//!   - the client's responses to those requests, and its notifications
//!     (`notifications/cancelled`, `notifications/initialized`): routed at once, `202`,
//!     without a permit (they complete at once; a full server cannot deadlock on them).
//! - `DELETE` with `Mcp-Session-Id`: closes the session (its calls stop), `200`; unknown
//!   is `404`.
//! - `GET` with `Mcp-Session-Id` and `Accept: text/event-stream`: the session's standalone
//!   notification stream (`notifications/{tools,prompts,resources}/list_changed` of a
//!   dynamic server, `notifications/resources/updated` for the session's subscriptions),
//!   until the session closes or the client goes. One per session: a second `GET` while one
//!   is open is `409`. Events carry no id and nothing is replayed (resumability is a MAY
//!   of 2025-11-25): a client that reconnects, with or without `Last-Event-ID`, gets a fresh
//!   stream and re-lists what it cares about. A slow reader never makes the server hold
//!   more than [`HttpConfig::sse_buffer`] events for it: when they stay unsent for
//!   [`SLOW_READER`], its stream is closed (so is a stream that fell
//!   [`HUB_CAPACITY`](crate::changes::HUB_CAPACITY) changes behind the hub); the client
//!   reconnects and re-lists. A comment line after each [`KEEPALIVE`] of quiet keeps
//!   proxies from closing an idle stream. The stream takes a slot of
//!   the stream budget it shares with `subscriptions/listen` streams
//!   ([`HttpConfig::max_streams`] and the caps beside it: `503` or `429` beyond them), and
//!   ends at [`HttpConfig::max_stream_lifetime`] (the client opens a new one). Without a
//!   session id, or on a modern-only server, `GET` is `405`.
//!
//! Origin and authentication are checked as for every request; a session belongs to the
//! principal that opened it.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::admit::admit;
use super::endpoint::Endpoint;
use super::respond::{
    accepts_sse, internal_error, invalid_request, json_answer, json_response, legacy_json_answer,
    method_not_allowed, rpc_error, timed_out,
};
use super::sse::{Handler, Streamed, sse_event, streaming_answer};
use super::streams::{Opener, peer_of, refusal};
use crate::legacy::{Missing, OpenError, Session};
use crate::notify::NotificationSink;
use crate::principal::Principal;
use crate::protocol::INVALID_REQUEST;
use crate::protocol::errors;
use crate::protocol::headers::PROTOCOL_VERSION_HEADER;
use crate::server::SessionNotice;

/// How long a standalone stream's full buffer ([`HttpConfig::sse_buffer`] events) may stay
/// full before the stream is closed as too slow.
pub const SLOW_READER: std::time::Duration = std::time::Duration::from_secs(5);

/// After how long a quiet standalone stream gets a comment line (`: keepalive`, axum's
/// `KeepAlive`).
pub const KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(25);

/// The methods whose code may ask the client (direct mode) and so wait on a person.
const MAY_WAIT: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// The session header (`Mcp-Session-Id`).
pub const SESSION_HEADER: &str = "mcp-session-id";

/// [`SESSION_HEADER`] as a header name, made once (looked up on every POST).
pub(super) static SESSION_NAME: HeaderName = HeaderName::from_static(SESSION_HEADER);

/// `POST initialize` without a session: a new session and its id, or the error.
pub(super) fn initialize(endpoint: &Endpoint, principal: &Principal, message: &Value) -> Response {
    let server = &endpoint.server;
    let (session, response) = server.initialize(message, principal);
    let Some(session) = session else {
        // modern-only, or invalid params: the error with its HTTP status (400)
        return json_answer(Some(response.into()), message.get("id"));
    };
    match server.sessions().insert(session.clone()) {
        Ok(()) => {}
        Err(e @ OpenError::PrincipalFull(_)) => {
            throttled_warn!(error = %e, "a caller's session limit reached: answering 429");
            return rpc_error(
                StatusCode::TOO_MANY_REQUESTS,
                message.get("id"),
                super::LIMIT_EXCEEDED,
                "Too many sessions: this caller has as many open sessions as it may; close one \
                 (DELETE) or let one expire",
            );
        }
        Err(e @ OpenError::Full(_)) => {
            throttled_warn!(error = %e, "legacy session table full: answering 503");
            let mut resp = rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                message.get("id"),
                super::LIMIT_EXCEEDED,
                "Server busy: too many sessions, retry later",
            );
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                HeaderValue::from_static("5"),
            );
            return resp;
        }
    }
    let mut resp = json_response(StatusCode::OK, &response.to_value());
    match HeaderValue::from_str(session.id()) {
        Ok(v) => {
            resp.headers_mut().insert(SESSION_HEADER, v);
            resp
        }
        Err(_) => internal_error(),
    }
}

/// The session named by `id` for `principal`, or the `404` that sends the client to a new
/// one, or the `400` of an `MCP-Protocol-Version` header that is not the session's (the
/// error names `request_id`).
fn find(
    endpoint: &Endpoint,
    id: &HeaderValue,
    principal: &Principal,
    headers: &HeaderMap,
    request_id: Option<&Value>,
) -> Result<Arc<Session>, Box<Response>> {
    let session = find_session(endpoint, id, principal)?;
    if let Some(v) = headers.get(PROTOCOL_VERSION_HEADER)
        && v.to_str().ok() != Some(session.version())
    {
        return Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            request_id,
            INVALID_REQUEST,
            &format!(
                "Bad Request: MCP-Protocol-Version does not match the session's {}",
                session.version()
            ),
        )));
    }
    Ok(session)
}

/// The session named by `id` for `principal`, or the `404` that sends the client to a new one.
fn find_session(
    endpoint: &Endpoint,
    id: &HeaderValue,
    principal: &Principal,
) -> Result<Arc<Session>, Box<Response>> {
    let found = match id.to_str() {
        Ok(id) => endpoint
            .server
            .sessions()
            .lookup(id, principal)
            .inspect_err(|m| {
                if *m == Missing::OtherPrincipal {
                    // another principal's id: worth a warning, but never the id itself (it
                    // is the victim's credential for the session), and never a flood
                    throttled_warn!(
                        session = %short_id(id),
                        "session used by another principal; refused"
                    );
                }
            })
            .ok(),
        Err(_) => None,
    };
    found.ok_or_else(|| {
        Box::new(invalid_request(
            StatusCode::NOT_FOUND,
            "Session not found: it expired or was closed; initialize a new session",
        ))
    })
}

/// The first characters of a session id, enough to match log lines, not to use the id.
fn short_id(id: &str) -> String {
    let head: String = id.chars().take(6).collect();
    format!("{}…", errors::for_log(&head))
}

/// `POST` with `Mcp-Session-Id` (from the peer address `peer`, when known).
pub(super) async fn post(
    endpoint: &Arc<Endpoint>,
    headers: &HeaderMap,
    id: &HeaderValue,
    principal: Principal,
    peer: Option<std::net::IpAddr>,
    message: Value,
) -> Response {
    let session = match find(endpoint, id, &principal, headers, message.get("id")) {
        Ok(s) => s,
        Err(refused) => return *refused,
    };
    let is_request = message.get("method").is_some() && message.get("id").is_some();
    if !is_request {
        // a response to the server's request, or a notification: routed now
        let answer = endpoint
            .server
            .handle_in_session(session, message, NotificationSink::none())
            .await;
        return match answer {
            None => StatusCode::ACCEPTED.into_response(),
            Some(error) => json_response(StatusCode::BAD_REQUEST, &error.to_value()),
        };
    }
    let config = &endpoint.config;
    let request_id = message.get("id").cloned();
    if accepts_sse(headers) {
        // A call that can ask the client waits on a person, for minutes: it takes a place in
        // the session's waiting budget, never one of the permits of request processing.
        let method = message.get("method").and_then(Value::as_str);
        let permit: Box<dyn Send> = if method.is_some_and(|m| MAY_WAIT.contains(&m)) {
            match endpoint.server.sessions().wait_slot(&session) {
                // Its stream may stay open as long as the person takes: it takes a slot of
                // the stream budget too, as listen and `GET` streams do.
                Ok(slot) => {
                    let opener = Opener::of(&principal, config.authenticator.admits_anyone(), peer);
                    match endpoint.streams.take(opener) {
                        Ok(stream) => Box::new((slot, stream)),
                        Err(why) => return refusal(why, config, request_id.as_ref()),
                    }
                }
                Err(e) => {
                    throttled_warn!(error = %e, "legacy calls waiting on the client: answering 429");
                    return rpc_error(
                        StatusCode::TOO_MANY_REQUESTS,
                        request_id.as_ref(),
                        super::LIMIT_EXCEEDED,
                        &format!(
                            "Too many calls waiting for the client: {e}; answer or cancel one first"
                        ),
                    );
                }
            }
        } else {
            match endpoint.permit() {
                Ok(p) => Box::new(p),
                Err(busy) => return *busy,
            }
        };
        let run = Streamed {
            server: endpoint.server.clone(),
            handler: Handler::Session(session, principal),
            timeout: config.session_request_timeout,
            buffer: config.sse_buffer,
            permit,
        };
        return streaming_answer(run, message, request_id).await;
    }
    let permit = match endpoint.permit() {
        Ok(p) => p,
        Err(busy) => return *busy,
    };
    // JSON only: the client cannot receive the server's requests (a tool that asks fails,
    // saying so); everything else works.
    let handled = endpoint.server.handle_in_session_as(
        session,
        message,
        NotificationSink::none(),
        &principal,
    );
    let answer = tokio::time::timeout(config.session_request_timeout, handled).await;
    drop(permit);
    match answer {
        Ok(response) => legacy_json_answer(response, request_id.as_ref()),
        Err(_) => timed_out(request_id.as_ref(), config.session_request_timeout),
    }
}

/// `DELETE`: closes the session named by `Mcp-Session-Id`.
pub(super) async fn delete(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _body) = request.into_parts();
    let headers = &parts.headers;
    // A modern-only server has no sessions: DELETE is a method it does not allow.
    if !endpoint.server.serves_legacy() {
        return method_not_allowed().await;
    }
    let principal = match admit(&endpoint.config, &parts).await {
        Ok(p) => p,
        Err(refused) => return *refused,
    };
    let Some(id) = headers.get(&SESSION_NAME) else {
        return invalid_request(
            StatusCode::BAD_REQUEST,
            "Bad Request: DELETE needs the Mcp-Session-Id of the session to close",
        );
    };
    let removed = id
        .to_str()
        .is_ok_and(|id| endpoint.server.sessions().remove(id, &principal));
    if removed {
        StatusCode::OK.into_response()
    } else {
        invalid_request(StatusCode::NOT_FOUND, "Session not found")
    }
}

/// `GET`: the standalone notification stream of the session named by `Mcp-Session-Id`.
pub(super) async fn get_stream(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _body) = request.into_parts();
    let headers = &parts.headers;
    let Some(id) = headers.get(&SESSION_NAME).cloned() else {
        return method_not_allowed().await;
    };
    if !endpoint.server.serves_legacy() {
        return method_not_allowed().await;
    }
    let principal = match admit(&endpoint.config, &parts).await {
        Ok(p) => p,
        Err(refused) => return *refused,
    };
    if !accepts_sse(headers) {
        return invalid_request(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the standalone stream needs Accept: text/event-stream",
        );
    }
    let session = match find(&endpoint, &id, &principal, headers, None) {
        Ok(s) => s,
        Err(refused) => return *refused,
    };
    let Some(claim) = session.claim_stream() else {
        return invalid_request(
            StatusCode::CONFLICT,
            "Conflict: this session's standalone stream is already open",
        );
    };
    // The stream budget listen streams take from too: never the connections kept for
    // requests.
    let config = &endpoint.config;
    let opener = Opener::of(
        &principal,
        config.authenticator.admits_anyone(),
        peer_of(&parts),
    );
    let slot = match endpoint.streams.take(opener) {
        Ok(slot) => slot,
        Err(why) => return refusal(why, config, None),
    };
    // Listening starts now: changes from here on reach the stream.
    let mut changes = endpoint.server.changes().subscribe();
    let buffer = endpoint.config.sse_buffer.max(1);
    let (tx, rx) = tokio::sync::mpsc::channel::<axum::response::sse::Event>(buffer);
    let server = endpoint.server.clone();
    let lifetime = tokio::time::sleep(config.max_stream_lifetime);
    tokio::spawn(async move {
        let _claim = claim;
        tokio::pin!(lifetime);
        loop {
            let notice = tokio::select! {
                () = &mut lifetime => {
                    tracing::debug!("a standalone stream reached its maximum lifetime: ending it");
                    break;
                }
                notice = server.next_session_notification(&session, &mut changes) => notice,
                _ = tx.closed() => break,
            };
            match notice {
                SessionNotice::Message(m) => {
                    // room in the buffer within SLOW_READER, or the reader is too slow
                    match tokio::time::timeout(SLOW_READER, tx.send(sse_event(&m))).await {
                        Ok(Ok(())) => {}
                        Ok(Err(_)) => break,
                        Err(_) => {
                            throttled_warn!(
                                buffer,
                                "a standalone stream's reader is too slow: closing it"
                            );
                            break;
                        }
                    }
                }
                SessionNotice::Lagged => {
                    throttled_warn!(
                        "a standalone stream fell behind the hub of changes: closing it"
                    );
                    break;
                }
                SessionNotice::Closed => break,
            }
        }
    });
    let keep_alive = axum::response::sse::KeepAlive::new()
        .interval(KEEPALIVE)
        .text("keepalive");
    super::sse::sse_response(super::sse::queued(rx, slot), Some(keep_alive))
}
