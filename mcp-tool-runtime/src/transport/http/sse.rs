//! Answers streamed as Server-Sent Events: notifications related to the request as they
//! happen, then the response (bounded buffer; closing the stream cancels the request).
//! Every event stream of the server (these, `subscriptions/listen` streams, legacy
//! standalone streams) is axum's [`Sse`] over the events a task queues, with its
//! [`KeepAlive`] comments where the stream may stay quiet ([`sse_response`]). The bounds
//! stay ours and around it: the queue's capacity (what a client that does not read can make
//! the server hold), the stream's slot of the stream budget (held by the stream, so
//! released when the body is dropped), and the maximum lifetime (the task that queues ends
//! the stream).

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse as _, Response};
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
            let mut first = Some(first);
            let mut rx = Some(rx);
            // the first notification, the others, then the response and the end
            sse_response(
                move |cx| {
                    if let Some(first) = first.take() {
                        return Poll::Ready(Some(sse_event(&first)));
                    }
                    let Some(events) = rx.as_mut() else {
                        return Poll::Ready(None);
                    };
                    match ready!(events.poll_recv(cx)) {
                        Some(StreamEvent::Notification(n)) => Poll::Ready(Some(sse_event(&n))),
                        Some(StreamEvent::Done(response)) => {
                            rx = None;
                            Poll::Ready(response.map(|r| sse_event(&r)))
                        }
                        Some(StreamEvent::TimedOut) | None => {
                            rx = None;
                            Poll::Ready(None)
                        }
                    }
                },
                None,
            )
        }
        None => rpc_error(
            StatusCode::OK,
            id.as_ref(),
            INTERNAL_ERROR,
            "Internal error",
        ),
    }
}

/// One message as an SSE event: `event: message`, and the message's compact JSON as its
/// `data`.
pub(super) fn sse_event(message: &impl serde::Serialize) -> Event {
    let event = || Event::default().event("message");
    event()
        .json_data(message)
        .unwrap_or_else(|_| event().data("{}"))
}

/// A `text/event-stream` answer (axum's [`Sse`]) of the events `next` gives, until it gives
/// `None`; with `keep_alive`, a comment after each quiet interval. What `next` holds (a
/// channel's receiver, the stream's slot of the stream budget) is dropped with the body,
/// when the stream ends or the client goes.
pub(super) fn sse_response(
    mut next: impl FnMut(&mut Context<'_>) -> Poll<Option<Event>> + Send + 'static,
    keep_alive: Option<KeepAlive>,
) -> Response {
    let events =
        futures_util::stream::poll_fn(move |cx| next(cx).map(|e| e.map(Ok::<_, Infallible>)));
    let mut resp = match keep_alive {
        Some(keep_alive) => Sse::new(events).keep_alive(keep_alive).into_response(),
        None => Sse::new(events).into_response(),
    };
    resp.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}

/// The events a task queues on `events`, until it drops its sender; `hold` (the stream's
/// slot of the stream budget) lives as long as the stream.
pub(super) fn queued(
    mut events: tokio::sync::mpsc::Receiver<Event>,
    hold: impl Send + 'static,
) -> impl FnMut(&mut Context<'_>) -> Poll<Option<Event>> + Send + 'static {
    move |cx| {
        let _hold = &hold;
        events.poll_recv(cx)
    }
}
