//! The state behind the route: the server, the configuration and the request permits (the
//! `x-mcp-header` parameters of each tool are the server's, read per request: tools may be
//! added at run time).

use std::sync::Arc;

use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

use crate::server::Server;

use super::config::*;
use super::respond::*;

pub(super) struct Endpoint {
    pub(super) server: Arc<Server>,
    pub(super) config: HttpConfig,
    /// One permit per request in progress ([`HttpConfig::max_concurrent_requests`]).
    pub(super) permits: Arc<tokio::sync::Semaphore>,
    /// One permit per body byte received and not yet parsed
    /// ([`HttpConfig::max_body_bytes_in_flight`]).
    pub(super) body_bytes: Arc<tokio::sync::Semaphore>,
    /// The long-lived streams open ([`HttpConfig::max_streams`] and the caps beside it).
    pub(super) streams: Arc<super::streams::StreamBudget>,
}

impl Endpoint {
    /// A permit for one request in progress, or the `503` that refuses it.
    pub(super) fn permit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, Box<Response>> {
        self.permits.clone().try_acquire_owned().map_err(|_| {
            crate::telemetry::metrics::concurrency_refused("requests");
            throttled_warn!(
                max = self.config.max_concurrent_requests,
                "too many requests in progress: answering 503"
            );
            Box::new(busy(
                "Server busy: too many requests in progress, retry later",
            ))
        })
    }
}

/// The semaphore of the body budget: `bytes` permits, within what a semaphore can hold.
pub(super) fn body_budget(bytes: usize) -> Arc<tokio::sync::Semaphore> {
    Arc::new(tokio::sync::Semaphore::new(
        bytes.clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
    ))
}

/// `503` with `Retry-After: 1` and [`LIMIT_EXCEEDED`], saying `message`.
pub(super) fn busy(message: &str) -> Response {
    let mut resp = rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        LIMIT_EXCEEDED,
        message,
    );
    resp.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}
