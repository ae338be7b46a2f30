//! Client transports: how the [`Driver`](crate::Driver) reaches a server.
//!
//! - [`InProcessTransport`]: calls a [`Server`] directly (tests, demos; no I/O).
//! - [`HttpTransport`]: Streamable HTTP with reqwest (feature `http`); sets
//!   `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` from the body, accepts JSON or SSE
//!   responses.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::BoxFuture;
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::protocol::Reply;
use mcp_tool_runtime::server::{Listened, NotificationSink, Server};

pub use crate::listen::Listening;

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use crate::http::HttpTransport;

/// Why a message could not be exchanged with the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// Connecting, sending or receiving failed.
    #[error("transport failed: {0}")]
    Io(String),
    /// The server answered with an HTTP status and a body that is not a JSON-RPC message.
    #[error("HTTP {status}: {body}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The response body (truncated to 2 KiB).
        body: String,
        /// The response's `Retry-After`, in seconds (`None` when absent or an HTTP date).
        retry_after: Option<Duration>,
    },
    /// The response could not be understood.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
    /// The transport cannot be set up as asked (e.g. a CA file that holds no certificate).
    #[error("invalid transport configuration: {0}")]
    Config(String),
}

/// What one exchange brought back: the notifications the server sent about the request
/// while handling it (e.g. `notifications/progress`), in order, then its response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exchange {
    /// Notifications related to the request, received before the response.
    pub notifications: Vec<Value>,
    /// The response (`None` for a notification that was sent).
    pub response: Option<Value>,
    /// The HTTP response's `Retry-After`, in seconds, where it had one (the server's "busy,
    /// come back in N s" answers); honoured by [`RetryTransport`](crate::RetryTransport).
    pub retry_after: Option<Duration>,
}

/// Sends one JSON-RPC message and returns the answer (`None` for notifications).
pub trait ClientTransport: Send + Sync {
    /// Sends `message` (a request or notification object).
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>>;

    /// Sends `message` and returns the response together with the notifications that
    /// came with it. The default keeps no notifications.
    fn exchange<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            Ok(Exchange {
                notifications: Vec::new(),
                response: self.send(message).await?,
                retry_after: None,
            })
        })
    }

    /// Sends the `subscriptions/listen` request `message` and returns its stream of
    /// messages (see [`Listening`]). The default refuses: a transport that answers one
    /// message per request cannot listen.
    fn listen<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Listening, TransportError>> {
        let _ = message;
        Box::pin(std::future::ready(Err(TransportError::Config(
            "this transport cannot listen (subscriptions/listen needs a stream)".into(),
        ))))
    }
}

impl<T: ClientTransport + ?Sized> ClientTransport for Arc<T> {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        (**self).send(message)
    }
    fn exchange<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        (**self).exchange(message)
    }
    fn listen<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Listening, TransportError>> {
        (**self).listen(message)
    }
}

impl<T: ClientTransport + ?Sized> ClientTransport for Box<T> {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        (**self).send(message)
    }
    fn exchange<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        (**self).exchange(message)
    }
    fn listen<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Listening, TransportError>> {
        (**self).listen(message)
    }
}

/// Calls a [`Server`] in the same process, as a fixed principal.
#[derive(Clone)]
pub struct InProcessTransport {
    server: Arc<Server>,
    principal: Principal,
}

impl std::fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessTransport")
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

impl InProcessTransport {
    /// Calls `server` as the anonymous principal.
    pub fn new(server: impl Into<Arc<Server>>) -> Self {
        Self {
            server: server.into(),
            principal: Principal::anonymous(),
        }
    }

    /// Calls as `principal` instead.
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = principal;
        self
    }

    /// The server called.
    pub fn server(&self) -> &Arc<Server> {
        &self.server
    }
}

impl ClientTransport for InProcessTransport {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        Box::pin(async move {
            let resp = self.server.handle(message, &self.principal).await;
            Ok(resp.map(|r| r.to_value()))
        })
    }

    /// Handles the message with a notification sink, so progress is reported.
    fn exchange<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let (sink, mut rx) = NotificationSink::channel();
            let text = message.to_string();
            let resp = self
                .server
                .handle_text(&text, &self.principal, sink)
                .await
                .map(Reply::into_response);
            let mut notifications = Vec::new();
            while let Ok(n) = rx.try_recv() {
                notifications.push(n);
            }
            Ok(Exchange {
                notifications,
                response: resp.map(|r| r.to_value()),
                retry_after: None,
            })
        })
    }

    /// Opens the subscription on the server itself: the acknowledgement, the
    /// notifications, and the result if the server closes it (dropping the [`Listening`]
    /// drops the subscription).
    fn listen<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Listening, TransportError>> {
        let server = self.server.clone();
        let principal = self.principal.clone();
        Box::pin(async move {
            Ok(Listening::spawn(|feed| async move {
                let mut subscription = match server.listen(&message, &principal).await {
                    Ok(s) => s,
                    Err(refused) => {
                        feed.send(Ok(refused.to_value())).await;
                        return;
                    }
                };
                loop {
                    match subscription.next().await {
                        Listened::Notification(n) => {
                            if !feed.send(Ok(n)).await {
                                return;
                            }
                        }
                        Listened::Closed(result) => {
                            feed.send(Ok(result.to_value())).await;
                            return;
                        }
                        Listened::Lagged => return,
                    }
                }
            }))
        })
    }
}
