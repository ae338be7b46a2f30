//! Answers streamed as Server-Sent Events: notifications related to the request as they
//! happen, then the response (bounded buffer; closing the stream cancels the request).

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

use crate::notify::NotificationSink;
use crate::principal::Principal;
use crate::protocol::INTERNAL_ERROR;
use crate::protocol::{JsonRpcResponse, Reply};
use crate::server::Server;
use crate::transport::auth::Authenticator;

use super::respond::*;

/// What the task running a streamed request reports.
pub(super) enum StreamEvent {
    Notification(Value),
    Done(Option<JsonRpcResponse>),
    /// The request ran out of time: the stream ends without a response.
    TimedOut,
}

/// Who handles a streamed request: the stateless server as `principal`, or a legacy
/// session.
pub(super) enum Handler {
    /// A 2026-07-28 request: its principal, and the authenticator whose challenge a scope
    /// refusal carries.
    Stateless(Principal, Arc<dyn Authenticator>),
    /// A request of a legacy session, with the credentials it came with.
    Session(Arc<crate::legacy::Session>, Principal),
}

/// What a streamed request runs with.
pub(super) struct Streamed {
    pub(super) server: Arc<Server>,
    pub(super) handler: Handler,
    pub(super) timeout: Duration,
    pub(super) buffer: usize,
    /// What the request holds until the stream ends: its concurrency permit, or — for a
    /// legacy call that may wait on a person — its place in the session's waiting budget.
    pub(super) permit: Box<dyn Send>,
}

/// The sending half of an SSE stream: notifications are offered without waiting (and
/// dropped when `buffer` of them are unread), the response is always delivered.
pub(super) fn sse_channel(
    buffer: usize,
) -> (
    NotificationSink,
    tokio::sync::mpsc::Sender<StreamEvent>,
    tokio::sync::mpsc::Receiver<StreamEvent>,
) {
    // One slot more than the notifications may use, kept for the response.
    let (tx, rx) = tokio::sync::mpsc::channel::<StreamEvent>(buffer.max(1) + 1);
    let notes = tx.clone();
    let sink = NotificationSink::from_fn(move |n| {
        // Leave the last slot to the response.
        if notes.capacity() <= 1 {
            tracing::debug!("SSE buffer full: dropping a notification");
            return;
        }
        if notes.try_send(StreamEvent::Notification(n)).is_err() {
            tracing::debug!("SSE buffer full or closed: dropping a notification");
        }
    });
    (sink, tx, rx)
}

/// Answers a request that asked for progress and accepts SSE. The request runs on its
/// own task; when it produces a notification before its response, the answer is a
/// `text/event-stream`: each notification as an event as soon as it is produced, then
/// the response, then the end of the stream. A request that is answered before any
/// notification gets the plain JSON answer (and its HTTP status). Closing the stream
/// early cancels the request, and so does the request timeout.
pub(super) async fn streaming_answer(run: Streamed, message: Value, id: Option<Value>) -> Response {
    let (sink, tx, mut rx) = sse_channel(run.buffer);
    let timeout = run.timeout;
    let auth = match &run.handler {
        Handler::Stateless(_, auth) => Some(auth.clone()),
        Handler::Session(..) => None,
    };
    tokio::spawn(async move {
        let Streamed {
            server,
            handler,
            permit,
            ..
        } = run;
        let handling = match handler {
            Handler::Stateless(principal, _) => server.handle_with(message, &principal, sink),
            Handler::Session(session, principal) => {
                server.handle_in_session_as(session, message, sink, &principal)
            }
        };
        let work = async {
            tokio::select! {
                response = handling => {
                    // Waits for room only if the client stopped reading; bounded by the timeout.
                    let _ = tx.send(StreamEvent::Done(response)).await;
                }
                () = tx.closed() => tracing::debug!("SSE response closed by the client; request cancelled"),
            }
        };
        if tokio::time::timeout(timeout, work).await.is_err() {
            throttled_warn!(
                timeout_ms = timeout.as_millis() as u64,
                "a streamed request ran out of time and was cancelled"
            );
            let _ = tx.try_send(StreamEvent::TimedOut);
        }
        drop(permit);
    });
    match rx.recv().await {
        Some(StreamEvent::Done(response)) => match &auth {
            Some(auth) => modern_answer(response.map(Reply::from), id.as_ref(), &**auth),
            None => legacy_json_answer(response, id.as_ref()),
        },
        Some(StreamEvent::TimedOut) => timed_out(id.as_ref(), timeout),
        Some(StreamEvent::Notification(first)) => {
            let body = SseBody {
                first: Some(first),
                rx: Some(rx),
            };
            let mut resp = Response::new(Body::new(body));
            let h = resp.headers_mut();
            h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            h.insert("x-accel-buffering", HeaderValue::from_static("no"));
            resp
        }
        None => rpc_error(
            StatusCode::OK,
            id.as_ref(),
            INTERNAL_ERROR,
            "Internal error",
        ),
    }
}

/// The body of an SSE answer: `event: message` events carrying compact JSON-RPC
/// messages; it ends after the response (or when the request runs out of time).
pub(super) struct SseBody {
    first: Option<Value>,
    rx: Option<tokio::sync::mpsc::Receiver<StreamEvent>>,
}

pub(super) fn sse_event(message: &impl serde::Serialize) -> Bytes {
    let json = serde_json::to_string(message).unwrap_or_else(|_| "{}".to_owned());
    Bytes::from(format!("event: message\ndata: {json}\n\n"))
}

impl HttpBody for SseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        use std::task::Poll;
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(http_body::Frame::data(sse_event(&first)))));
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(StreamEvent::Notification(n))) => {
                Poll::Ready(Some(Ok(http_body::Frame::data(sse_event(&n)))))
            }
            Poll::Ready(Some(StreamEvent::Done(response))) => {
                self.rx = None;
                Poll::Ready(response.map(|r| Ok(http_body::Frame::data(sse_event(&r)))))
            }
            Poll::Ready(Some(StreamEvent::TimedOut)) | Poll::Ready(None) => {
                self.rx = None;
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.rx.is_none()
    }
}
