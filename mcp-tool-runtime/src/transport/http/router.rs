//! The endpoint as an axum [`Router`]: `POST` (and `DELETE` of a legacy session) on one path.

use std::sync::Arc;

use axum::Router;
use axum::routing::post;

use crate::server::Server;

use super::config::*;
use super::endpoint::*;
use super::post::*;
use super::respond::*;

/// The Streamable HTTP endpoint as an axum [`Router`] (route [`HttpConfig::path`]),
/// ready to be served or merged into an application.
pub fn router(server: impl Into<Arc<Server>>, config: HttpConfig) -> Router {
    let path = config.path.clone();
    let server: Arc<Server> = server.into();
    let params = tool_params(&server);
    let permits = Arc::new(tokio::sync::Semaphore::new(
        config.max_concurrent_requests.max(1),
    ));
    let body_bytes = body_budget(config.max_body_bytes_in_flight);
    let endpoint = Arc::new(Endpoint {
        server,
        config,
        permits,
        body_bytes,
        params,
    });
    Router::new()
        .route(
            &path,
            post(handle_post)
                .delete(super::legacy_sessions::delete)
                .fallback(method_not_allowed),
        )
        .with_state(endpoint)
}
