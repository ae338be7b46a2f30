//! `POST` to the endpoint: one JSON-RPC message, after admission, routed by era (a legacy
//! session's to [`legacy`](super::legacy)), header-checked and answered as JSON or SSE.

use std::future::Future;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::legacy::{self, Route};
use crate::notify::NotificationSink;
use crate::principal::Principal;
use crate::protocol::text::{self, MessageIn};
use crate::protocol::{HEADER_MISMATCH, INVALID_REQUEST, PARSE_ERROR};

use super::admit::*;
use super::endpoint::*;
use super::header_checks::*;
use super::respond::*;
use super::sse::*;

/// `POST` to the endpoint. Not an `async fn`: the request is split before the future is
/// made, so the future holds its parts once (an `async fn` holds its arguments and what they
/// are moved into). The future is what each connection's slot holds while a request is in
/// flight, and what is moved into it, so its size is a cost every request pays.
pub(super) fn handle_post(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> impl Future<Output = Response> + Send + 'static {
    let (parts, body) = request.into_parts();
    async move {
        let principal = match admit(&endpoint.config, &parts).await {
            Ok(p) => p,
            Err(refused) => return *refused,
        };
        let headers = &parts.headers;
        let (bytes, reserved) = match receive(&endpoint, headers, body).await {
            Ok(received) => received,
            Err(refused) => return refused,
        };
        let peer = super::streams::peer_of(&parts);
        answer(&endpoint, headers, principal, peer, bytes, reserved).await
    }
}

/// The body, received and checked under the body budget before anything else is taken (a
/// slow sender holds the bytes it sent, not a request permit), or the answer refusing it.
async fn receive(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Bytes, Reserved), Response> {
    let config = &endpoint.config;
    // Size.
    let too_large = || invalid_request(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large");
    let declared_len = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_ascii().parse::<u64>().ok());
    if declared_len.is_some_and(|len| len > config.max_body_bytes as u64) {
        return Err(too_large());
    }

    // Content type.
    if let Some(ct) = headers.get(CONTENT_TYPE) {
        let is_json = ct.to_str().is_ok_and(|ct| {
            let mime = ct.split(';').next().unwrap_or("").trim_ascii();
            mime.eq_ignore_ascii_case("application/json")
                || mime.to_ascii_lowercase().ends_with("+json")
        });
        if !is_json {
            return Err(invalid_request(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/json",
            ));
        }
    }

    let expected = declared_len.map_or(0, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let read = read_body(body, config.max_body_bytes, expected, &endpoint.body_bytes);
    match tokio::time::timeout(config.body_read_timeout, read).await {
        Ok(Ok(received)) => Ok(received),
        Err(_) => {
            throttled_warn!(
                timeout_ms = config.body_read_timeout.as_millis() as u64,
                "request body not received in time: answering 408 and closing"
            );
            let mut resp = invalid_request(
                StatusCode::REQUEST_TIMEOUT,
                "Request body not received in time",
            );
            resp.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            Err(resp)
        }
        Ok(Err(BodyError::TooLarge)) => Err(too_large()),
        Ok(Err(BodyError::Read)) => Err(invalid_request(
            StatusCode::BAD_REQUEST,
            "Could not read the request body",
        )),
        Ok(Err(BodyError::Busy)) => {
            throttled_warn!(
                max = config.max_body_bytes_in_flight,
                "too many request-body bytes in flight: answering 503 and closing"
            );
            crate::telemetry::metrics::concurrency_refused("request_bodies");
            let mut resp = busy("Server busy: too many request bodies in flight, retry later");
            resp.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            Err(resp)
        }
    }
}

/// The answer to the message in `bytes`, received from `principal` with `headers` (from
/// the peer address `peer`, when known).
async fn answer(
    endpoint: &Arc<Endpoint>,
    headers: &HeaderMap,
    principal: Principal,
    peer: Option<std::net::IpAddr>,
    bytes: Bytes,
    reserved: Reserved,
) -> Response {
    let config = &endpoint.config;
    // The message read from its text (the typed request path); a tree only for a legacy
    // session's message, an `initialize`, or a body that is not one JSON object.
    let message = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| MessageIn::parse(text).ok());
    let route = message.as_ref().map(legacy::route_in);
    let session = headers.get(&super::legacy_sessions::SESSION_NAME);
    let modern = session.is_none() && route != Some(Route::Initialize);
    let Some(message) = message.as_ref().filter(|_| modern) else {
        let tree = serde_json::from_slice::<Value>(&bytes);
        drop(bytes);
        let tree = match tree {
            Ok(v) => v,
            Err(_) => return rpc_error(StatusCode::BAD_REQUEST, None, PARSE_ERROR, "Parse error"),
        };
        drop(reserved);
        // Dual era: a legacy session's messages (there a request takes a permit, a call
        // that may wait on a person a place in its session's waiting budget; responses to
        // the server's requests and notifications take none), and `initialize` opening one.
        if let Some(id) = session {
            return super::legacy_sessions::post(endpoint, headers, id, principal, peer, tree)
                .await;
        }
        if route == Some(Route::Initialize) {
            return super::legacy_sessions::initialize(endpoint, &principal, &tree);
        }
        return invalid_request(
            StatusCode::BAD_REQUEST,
            "Invalid Request: the body must be one JSON-RPC request or notification object",
        );
    };

    // Load: one permit per request in progress, held until its answer (or SSE stream)
    // ends; the body's bytes are given back once it is taken.
    let permit = match endpoint.permit() {
        Ok(p) => p,
        Err(busy) => return *busy,
    };
    drop(reserved);

    let id = message.id.map(|raw| text::tree(raw).unwrap_or(Value::Null));
    let Some(method) = message.method() else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            INVALID_REQUEST,
            "Invalid Request: missing method (clients must not send responses)",
        );
    };
    let method = method.as_ref();

    if id.is_none() {
        // A notification: header requirements are not defined for notification POSTs;
        // a present Mcp-Method must still agree with the body.
        if let Some(h) = headers.get(&super::header_checks::METHOD_NAME)
            && h.to_str().ok() != Some(method)
        {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                HEADER_MISMATCH,
                "Header mismatch: Mcp-Method does not match the body's method",
            );
        }
        let handled = endpoint
            .server
            .dispatch_in(message, principal, NotificationSink::none());
        if tokio::time::timeout(config.request_timeout, handled)
            .await
            .is_err()
        {
            throttled_warn!("a notification ran out of time and was cancelled");
        }
        return StatusCode::ACCEPTED.into_response();
    }

    let params = message.fields();
    if let Err(msg) = check_headers(headers, params, method, &|t: &str| {
        endpoint.server.tool_header_params(t)
    }) {
        // the client's values in `msg` went through `for_log` (escaped and cut)
        tracing::debug!(%msg, "header validation failed");
        return rpc_error(StatusCode::BAD_REQUEST, id.as_ref(), HEADER_MISMATCH, &msg);
    }

    // what answers as a stream takes the message as a tree
    let tree = || serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null);
    if method == crate::server::listen::LISTEN_METHOD {
        let sse = accepts_sse(headers);
        // boxed: a rare method's future, not to be carried in every request's
        return Box::pin(super::listen::listen_answer(
            endpoint,
            tree(),
            principal,
            peer,
            permit,
            sse,
        ))
        .await;
    }
    // the body first: most requests want no notifications, and `Accept` takes parsing
    if params.is_some_and(|p| p.wants_notifications()) && accepts_sse(headers) {
        let stream = Streamed {
            server: endpoint.server.clone(),
            handler: Handler::Stateless(principal, config.authenticator.clone()),
            timeout: config.request_timeout,
            buffer: config.sse_buffer,
            permit: Box::new(permit),
        };
        return streaming_answer(stream, tree(), id).await;
    }
    let handled = endpoint
        .server
        .dispatch_in(message, principal, NotificationSink::none());
    match tokio::time::timeout(config.request_timeout, handled).await {
        Ok(response) => modern_answer(response, id.as_ref(), &*config.authenticator),
        Err(_) => timed_out(id.as_ref(), config.request_timeout),
    }
}
