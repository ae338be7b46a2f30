//! A `subscriptions/listen` POST answered as a long-lived `text/event-stream`: the
//! acknowledgement, then the subscription's notifications, keep-alive comments while it is
//! quiet, until the client closes the stream (the subscription is dropped), the
//! subscription lags (the stream ends without a result), or the server shuts down or the
//! stream reaches its maximum lifetime (the `subscriptions/listen` result, then the end).

use std::net::IpAddr;

use axum::http::StatusCode;
use axum::response::Response;
use axum::response::sse::{Event, KeepAlive};
use serde_json::Value;

use crate::principal::Principal;
use crate::protocol::INVALID_REQUEST;
use crate::server::{Listened, Subscription};

use super::endpoint::Endpoint;
use super::respond::*;
use super::sse::{queued, sse_event, sse_response};
use super::streams::{Opener, refusal};

/// Events a listen stream holds for a client that does not read, beyond what the
/// connection buffers; then the subscription waits, falls behind the hub and is ended.
const STREAM_BUFFER: usize = 16;

/// Opens the subscription of `message` for `principal` (from the peer address `peer`) and
/// answers its stream (or the JSON error that refused it). `permit` is the request's
/// concurrency permit: it is given back once the subscription is open, so that listeners
/// never starve calls. The stream takes a slot of the stream budget
/// ([`HttpConfig::max_streams`](super::HttpConfig::max_streams) and the caps beside it),
/// held until its body is dropped, so that streams never take the connections kept for
/// requests; it ends gracefully at
/// [`HttpConfig::max_stream_lifetime`](super::HttpConfig::max_stream_lifetime).
pub(super) async fn listen_answer(
    endpoint: &Endpoint,
    message: Value,
    principal: Principal,
    peer: Option<IpAddr>,
    permit: tokio::sync::OwnedSemaphorePermit,
    accepts_sse: bool,
) -> Response {
    let id = message.get("id").cloned();
    if !accepts_sse {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            id.as_ref(),
            INVALID_REQUEST,
            "subscriptions/listen answers a text/event-stream: the Accept header must allow it",
        );
    }
    let config = &endpoint.config;
    let opener = Opener::of(&principal, config.authenticator.admits_anyone(), peer);
    let slot = match endpoint.streams.take(opener) {
        Ok(slot) => slot,
        Err(why) => return refusal(why, config, id.as_ref()),
    };
    let opened = endpoint.server.listen(&message, &principal).await;
    drop(permit);
    let subscription = match opened {
        Ok(s) => s,
        Err(refused) => {
            return modern_answer(
                Some(refused.into()),
                id.as_ref(),
                &*endpoint.config.authenticator,
            );
        }
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Event>(STREAM_BUFFER);
    let ends = tokio::time::Instant::now() + config.max_stream_lifetime;
    tokio::spawn(drive(subscription, tx, ends));
    let keep_alive = KeepAlive::new().interval(config.listen_keep_alive);
    sse_response(queued(rx, slot), Some(keep_alive))
}

/// Moves the subscription's messages into the stream until one side ends, or until
/// `ends` (the stream's maximum lifetime): then the `subscriptions/listen` result, as at
/// shutdown, and the end of the stream.
async fn drive(
    mut subscription: Subscription,
    tx: tokio::sync::mpsc::Sender<Event>,
    ends: tokio::time::Instant,
) {
    let lifetime = tokio::time::sleep_until(ends);
    tokio::pin!(lifetime);
    loop {
        // The keep-alive comments are the body's (axum's `KeepAlive`): the next message is
        // awaited whole (never dropped half-way: a task notification reads the store
        // before it is ready).
        let listened = tokio::select! {
            // The client closed the stream: the subscription is dropped with this task.
            () = tx.closed() => return,
            listened = subscription.next() => Some(listened),
            // The stream's lifetime is over: a notification being read is let go (the
            // client lists again when it listens again).
            () = &mut lifetime => None,
        };
        let Some(listened) = listened else {
            tracing::debug!("a listen stream reached its maximum lifetime: ending it");
            send(&tx, sse_event(&subscription.close())).await;
            return;
        };
        match listened {
            Listened::Notification(n) => {
                if !send(&tx, sse_event(&n)).await {
                    return;
                }
            }
            Listened::Closed(result) => {
                send(&tx, sse_event(&result)).await;
                return;
            }
            Listened::Lagged => return,
        }
    }
}

/// Queues `event` for the stream; `false` once the client is gone.
async fn send(tx: &tokio::sync::mpsc::Sender<Event>, event: Event) -> bool {
    tokio::select! {
        () = tx.closed() => false,
        sent = tx.send(event) => sent.is_ok(),
    }
}
