//! The endpoint as an axum [`Router`]: `POST` (and `DELETE` and `GET` of a legacy session) on one
//! path, and the authenticator's documents (e.g. RFC 9728 metadata) on theirs.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::routing::{get, post};

use crate::server::Server;

use super::config::*;
use super::endpoint::*;
use super::post::*;
use super::respond::*;

/// The Streamable HTTP endpoint as an axum [`Router`] (route [`HttpConfig::path`]),
/// ready to be served or merged into an application.
pub fn router(server: impl Into<Arc<Server>>, config: HttpConfig) -> Router {
    routes(endpoint(server.into(), config))
}

/// The state behind the endpoint's routes: the server, the configuration and the budgets.
pub(super) fn endpoint(server: Arc<Server>, config: HttpConfig) -> Arc<Endpoint> {
    let permits = Arc::new(tokio::sync::Semaphore::new(
        config.max_concurrent_requests.max(1),
    ));
    let body_bytes = body_budget(config.max_body_bytes_in_flight);
    let streams = super::streams::StreamBudget::of(&config);
    Arc::new(Endpoint {
        server,
        config,
        permits,
        body_bytes,
        streams,
    })
}

/// The routes of `endpoint`: its path, and the authenticator's documents on theirs.
pub(super) fn routes(endpoint: Arc<Endpoint>) -> Router {
    let path = endpoint.config.path.clone();
    let documents = endpoint.config.authenticator.well_known();
    let mut router = Router::new().route(
        &path,
        post(handle_post)
            .delete(super::legacy_sessions::delete)
            .get(super::legacy_sessions::get_stream)
            .fallback(method_not_allowed),
    );
    // Public by design (RFC 9728 §3: a client reads it before it has a token), so they
    // are served without admission; a path that collides with the endpoint's is skipped.
    let mut served = std::collections::HashSet::from([path.clone()]);
    for (doc_path, body) in documents {
        let plain = doc_path.starts_with('/') && !doc_path.contains(['{', '}', '*']);
        if !plain || !served.insert(doc_path.clone()) {
            tracing::warn!(path = %doc_path, "authenticator document not served: a bad or repeated path");
            continue;
        }
        let body = Arc::new(body);
        router = router.route(
            &doc_path,
            get(move || {
                let body = Arc::clone(&body);
                async move { Json((*body).clone()) }
            }),
        );
    }
    router.with_state(endpoint)
}
