//! Admission of a request before any JSON is parsed: `Origin`, authentication, and reading
//! the body within its size and time bounds.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::header::{ORIGIN, WWW_AUTHENTICATE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

use crate::principal::Principal;
use crate::protocol::{INVALID_REQUEST, errors};
use crate::server::guard::catch_panic;
use crate::transport::auth::{AuthError, AuthStatus};

use super::config::*;
use super::respond::*;

pub(super) enum BodyError {
    TooLarge,
    Read,
    /// The body budget ([`HttpConfig::max_body_bytes_in_flight`]) is spent.
    Busy,
}

/// The bytes a body holds of the body budget, given back when dropped.
pub(super) struct Reserved(Option<OwnedSemaphorePermit>);

impl Reserved {
    /// Takes `n` more bytes of `budget`, or says it is spent.
    fn take(&mut self, budget: &Arc<Semaphore>, n: usize) -> Result<(), BodyError> {
        if n == 0 {
            return Ok(());
        }
        let n = u32::try_from(n).map_err(|_| BodyError::Busy)?;
        let more = budget
            .clone()
            .try_acquire_many_owned(n)
            .map_err(|_| BodyError::Busy)?;
        match &mut self.0 {
            Some(held) => held.merge(more),
            None => self.0 = Some(more),
        }
        Ok(())
    }
}

/// Reads the body, at most `limit` bytes, each byte counted against `budget` as it
/// arrives (and held in the returned [`Reserved`] until it is dropped). A body that
/// arrives in one frame (the usual case) is kept as that frame's buffer, not copied; one
/// in several frames is gathered into one buffer, grown at most to `Content-Length`
/// (`expected`) and `limit`.
pub(super) async fn read_body(
    mut body: Body,
    limit: usize,
    expected: usize,
    budget: &Arc<Semaphore>,
) -> Result<(Bytes, Reserved), BodyError> {
    let mut reserved = Reserved(None);
    let mut first: Option<Bytes> = None;
    let mut gathered: Option<Vec<u8>> = None;
    let mut len = 0usize;
    // the gathering buffer's capacity, counted
    let mut capacity = 0usize;
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
        // Bytes are counted before they are kept: a frame as it arrives; a gathering
        // buffer's capacity before it is allocated, at most twice what has arrived (so a
        // `Content-Length` alone reserves nothing).
        let grown = |wanted: usize, from: usize| {
            wanted
                .max(from.saturating_mul(2))
                .min(limit)
                .min(expected.max(wanted))
        };
        match (&mut gathered, first.take()) {
            (Some(buf), _) => {
                let wanted = buf.len().saturating_add(data.len());
                if wanted > capacity {
                    let more = grown(wanted, capacity);
                    reserved.take(budget, more - capacity)?;
                    buf.reserve_exact(more - buf.len());
                    capacity = more;
                }
                buf.extend_from_slice(&data);
            }
            (None, None) => {
                reserved.take(budget, data.len())?;
                first = Some(data);
            }
            (None, Some(head)) => {
                let more = grown(len, head.len());
                reserved.take(budget, more)?;
                let mut buf = Vec::with_capacity(more);
                buf.extend_from_slice(&head);
                buf.extend_from_slice(&data);
                capacity = more;
                gathered = Some(buf);
            }
        }
    }
    let bytes = match (gathered, first) {
        (Some(buf), _) => Bytes::from(buf),
        (None, Some(head)) => head,
        (None, None) => Bytes::new(),
    };
    Ok((bytes, reserved))
}

/// The checks every request passes first: `Origin` (403) and the authenticator (its
/// 401/403, or 500 when it panics). The principal it names.
pub(super) async fn admit(config: &HttpConfig, parts: &Parts) -> Result<Principal, Box<Response>> {
    let headers = &parts.headers;
    // Origin (DNS rebinding).
    if let Some(origin) = headers.get(ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| config.origins.allows(o));
        if !ok {
            throttled_warn!(
                origin = %errors::for_log(&String::from_utf8_lossy(origin.as_bytes())),
                "refused request from a foreign Origin"
            );
            return Err(Box::new(invalid_request(
                StatusCode::FORBIDDEN,
                "Forbidden: Origin not allowed",
            )));
        }
    }

    // Authentication. A panic in a user-supplied authenticator must not take the
    // connection down: it fails closed with 500/-32603 (not 401, which would send the
    // client after new credentials for what is a server bug). After a panic nothing of the
    // authenticator's is used by this request, and its own state (say, a poisoned lock) is
    // its business on the next call.
    // The call is made inside the guarded future: an authenticator (a plain closure, say)
    // that panics before it returns its future is caught too.
    let auth = catch_panic(async { config.authenticator.authenticate(parts).await }).await;
    match auth {
        Ok(Ok(p)) => Ok(p),
        Err(_) => {
            // The payload may quote a credential: it stays with the panic hook.
            tracing::error!("the authenticator panicked; answering 500");
            Err(Box::new(internal_error()))
        }
        Ok(Err(e)) => Err(Box::new(refusal(&e))),
    }
}

/// The response for an authentication refusal: its status, its challenge in
/// `WWW-Authenticate`, its message in a JSON-RPC error body.
pub(super) fn refusal(e: &AuthError) -> Response {
    let status = match e.status {
        AuthStatus::Unauthorized => StatusCode::UNAUTHORIZED,
        AuthStatus::Forbidden => StatusCode::FORBIDDEN,
        AuthStatus::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    };
    let mut resp = rpc_error(status, None, INVALID_REQUEST, &e.to_string());
    if e.challenge.is_empty() && e.status == AuthStatus::Unavailable {
        // retry soon: the token may well be fine
        resp.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            HeaderValue::from_static("5"),
        );
    } else if let Ok(v) = HeaderValue::from_str(&e.challenge) {
        resp.headers_mut().insert(WWW_AUTHENTICATE, v);
    } else {
        resp.headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    resp
}
