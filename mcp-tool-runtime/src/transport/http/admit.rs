//! Admission of a request before any JSON is parsed: `Origin`, authentication, and reading
//! the body within its size and time bounds.

use std::future::poll_fn;
use std::pin::Pin;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::header::{ORIGIN, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;

use crate::principal::Principal;
use crate::protocol::{INTERNAL_ERROR, INVALID_REQUEST};

use super::config::*;
use super::respond::*;

pub(super) enum BodyError {
    TooLarge,
    Read,
}

/// Reads the body, at most `limit` bytes. A body that arrives in one frame (the usual
/// case) is kept as that frame's buffer, not copied; one in several frames is gathered
/// once, into a buffer sized from `Content-Length` (`expected`, capped at `limit`).
pub(super) async fn read_body(
    mut body: Body,
    limit: usize,
    expected: usize,
) -> Result<Bytes, BodyError> {
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
pub(super) fn admit(config: &HttpConfig, headers: &HeaderMap) -> Result<Principal, Box<Response>> {
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
