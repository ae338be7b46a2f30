//! The service each connection of [`serve`](super::serve) and [`spawn`](super::spawn) runs.
//!
//! A `POST` to the endpoint's path goes straight to its handler: the handler's future is
//! held in the connection's own slot for the request in flight (hyper keeps one per
//! connection and reuses it), so a request costs no boxed future and no routing. Every
//! other request (a legacy session's `GET` and `DELETE`, another method, another path, the
//! authenticator's documents) goes through the [`Router`], exactly as [`router`](super::router)
//! serves it.
//!
//! It earns its place: serving every request through the router instead (axum's way, a
//! hyper `service_fn` handing the request and its `ConnectInfo` to `Router::call`) costs
//! `get_weather`'s round 1 +8.0 % and round 2 +6.1 % of instructions per request (means of
//! two A/B runs each, 7.4–8.5 % and 5.7–6.5 %; `ROWS="r1 r2" scripts/callgrind_weather.sh`
//! on a build of each; docs/BENCHMARKS.md, "Hand-written pieces").

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{Method, Request};
use axum::response::Response;
use axum::routing::future::RouteFuture;
use tower_service::Service as _;

use super::endpoint::Endpoint;

/// One connection's service: `post` for the endpoint's `POST`, `router` for the rest.
#[derive(Clone)]
pub(super) struct Connection<H> {
    endpoint: Arc<Endpoint>,
    router: Router,
    post: H,
    /// The peer's address, given to each request as [`ConnectInfo`] (the stream budget
    /// counts streams per peer address).
    peer: Option<SocketAddr>,
}

impl<H> Connection<H> {
    /// The service of a connection to `endpoint`, whose routes are `router`.
    pub(super) fn new(endpoint: Arc<Endpoint>, router: Router, post: H) -> Self {
        Connection {
            endpoint,
            router,
            post,
            peer: None,
        }
    }
}

impl<H: Clone> Connection<H> {
    /// The service of one connection, from `peer`.
    pub(super) fn for_peer(&self, peer: SocketAddr) -> Self {
        Connection {
            peer: Some(peer),
            ..self.clone()
        }
    }
}

impl<H, F, B> hyper::service::Service<Request<B>> for Connection<H>
where
    H: Fn(State<Arc<Endpoint>>, Request<Body>) -> F,
    F: Future<Output = Response>,
    B: http_body::Body<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer<F>;

    fn call(&self, request: Request<B>) -> Answer<F> {
        let mut request = request.map(Body::new);
        if let Some(peer) = self.peer {
            request.extensions_mut().insert(ConnectInfo(peer));
        }
        if request.method() == Method::POST && request.uri().path() == self.endpoint.config.path {
            Answer::Post {
                answer: (self.post)(State(Arc::clone(&self.endpoint)), request),
            }
        } else {
            // `Router` is always ready: `call` needs no `poll_ready` first.
            Answer::Routed {
                answer: self.router.clone().call(request),
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of one request: the endpoint handler's or the router's.
    #[project = AnswerProjection]
    pub(super) enum Answer<F> {
        /// The endpoint's `POST`, answered by its handler.
        Post { #[pin] answer: F },
        /// Anything else, answered by the router.
        Routed { #[pin] answer: RouteFuture<Infallible> },
    }
}

impl<F: Future<Output = Response>> Future for Answer<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AnswerProjection::Post { answer } => answer.poll(cx).map(Ok),
            AnswerProjection::Routed { answer } => answer.poll(cx),
        }
    }
}
