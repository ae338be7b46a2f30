//! The responses the endpoint writes: JSON bodies, JSON-RPC errors with their HTTP status,
//! `405`, `503` on a timeout, and whether a client accepts an SSE answer.

use std::time::Duration;

use axum::http::header::{ACCEPT, ALLOW, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::protocol::{INSUFFICIENT_SCOPE, INTERNAL_ERROR, INVALID_REQUEST};
use crate::protocol::{JsonRpcResponse, Reply};
use crate::transport::auth::Authenticator;
use crate::transport::{error_response, http_status_for_code};

use super::config::*;

pub(super) async fn method_not_allowed() -> Response {
    let mut resp = StatusCode::METHOD_NOT_ALLOWED.into_response();
    resp.headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST"));
    resp
}

pub(super) fn json_response<T: serde::Serialize + ?Sized>(
    status: StatusCode,
    body: &T,
) -> Response {
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

pub(super) fn rpc_error(
    status: StatusCode,
    id: Option<&Value>,
    code: i64,
    message: &str,
) -> Response {
    json_response(status, &error_response(id, code, message))
}

/// `status` with [`INVALID_REQUEST`] and no id: a request refused as a whole.
pub(super) fn invalid_request(status: StatusCode, message: &str) -> Response {
    rpc_error(status, None, INVALID_REQUEST, message)
}

/// `500` with [`INTERNAL_ERROR`] and no id.
pub(super) fn internal_error() -> Response {
    rpc_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
        INTERNAL_ERROR,
        "Internal error",
    )
}

/// `503` with [`LIMIT_EXCEEDED`] for a request that ran out of time (it was cancelled).
pub(super) fn timed_out(id: Option<&Value>, timeout: Duration) -> Response {
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
pub(super) fn json_answer(response: Option<Reply>, id: Option<&Value>) -> Response {
    match response {
        None => StatusCode::ACCEPTED.into_response(),
        Some(response) => {
            let status = StatusCode::from_u16(http_status_for_code(response.error_code()))
                .unwrap_or(StatusCode::OK);
            // straight to bytes: no intermediate `Value` tree of the whole response
            match response.to_vec() {
                Ok(bytes) => json_bytes(status, bytes),
                Err(e) => {
                    tracing::error!(error = %e, "could not serialize a response");
                    rpc_error(StatusCode::OK, id, INTERNAL_ERROR, "Internal error")
                }
            }
        }
    }
}

/// A 2026-07-28 request's answer: [`json_answer`], except that a refusal for missing
/// scopes ([`INSUFFICIENT_SCOPE`]) is `403` with the authenticator's
/// [`insufficient_scope`](Authenticator::insufficient_scope) challenge
/// (`WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`, every scope the
/// operation needs) and the JSON-RPC error as its body.
pub(super) fn modern_answer(
    response: Option<Reply>,
    id: Option<&Value>,
    auth: &dyn Authenticator,
) -> Response {
    let challenge = response
        .as_ref()
        .and_then(Reply::error_object)
        .filter(|e| e.code == INSUFFICIENT_SCOPE)
        .map(|e| {
            let required: Vec<&str> = e
                .data
                .as_ref()
                .and_then(|d| d.get("requiredScopes"))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            auth.insufficient_scope(&required).challenge
        });
    // A busy answer that names when to come back (a single-use round still running):
    // `503` with `Retry-After`, as the transport's own busy answers.
    let retry_after = response
        .as_ref()
        .and_then(Reply::error_object)
        .filter(|e| e.code == LIMIT_EXCEEDED)
        .and_then(|e| e.data.as_ref()?.get("retryAfter")?.as_u64());
    let mut resp = json_answer(response, id);
    if let Some(secs) = retry_after {
        *resp.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        resp.headers_mut()
            .insert(axum::http::header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if let Some(challenge) = challenge {
        *resp.status_mut() = StatusCode::FORBIDDEN;
        let value = HeaderValue::from_str(&challenge).unwrap_or(HeaderValue::from_static(
            "Bearer error=\"insufficient_scope\"",
        ));
        resp.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    resp
}

/// Whether `Accept` names `text/event-stream` (without `q=0`), as MCP clients must.
/// Wildcards (`*/*`, the default of curl and many HTTP libraries) and a missing `Accept`
/// get JSON: such a client may not read SSE.
pub(super) fn accepts_sse(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';');
            let mime = parts.next().unwrap_or("").trim_ascii();
            let refused = parts.any(|p| {
                p.trim_ascii()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim_ascii().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            !refused && mime.eq_ignore_ascii_case("text/event-stream")
        })
}

/// A legacy session's answer: JSON-RPC errors with `200` (legacy clients read the error
/// from the body; an HTTP error status makes them drop it), `202` for none.
pub(super) fn legacy_json_answer(
    response: Option<JsonRpcResponse>,
    id: Option<&Value>,
) -> Response {
    match response {
        None => StatusCode::ACCEPTED.into_response(),
        Some(response) => match serde_json::to_vec(&response) {
            Ok(bytes) => json_bytes(StatusCode::OK, bytes),
            Err(e) => {
                tracing::error!(error = %e, "could not serialize a response");
                rpc_error(StatusCode::OK, id, INTERNAL_ERROR, "Internal error")
            }
        },
    }
}
