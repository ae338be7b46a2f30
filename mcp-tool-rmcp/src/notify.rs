//! Notifications a mounted tool sends while it runs (`cx.progress(..)`, `cx.log(..)`),
//! forwarded to the rmcp peer of the request: rmcp delivers them on the request's own
//! stream (the POST's SSE response over HTTP, lines before the response over stdio).

#![allow(deprecated)] // logging is in 2026-07-28; rmcp 3.11 marks it deprecated (SEP-2577)

use std::future::Future;

use mcp_tool_runtime::server::NotificationSink;
use rmcp::model::{LoggingMessageNotificationParam, ProgressNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

/// Runs `work` with a sink whose notifications go to `peer` as they come, and returns its
/// output once it and the forwarding are done (our server sends every notification of a
/// request before it returns the response).
pub(crate) async fn forwarding<F, T>(
    peer: &Peer<RoleServer>,
    work: impl FnOnce(NotificationSink) -> F,
) -> T
where
    F: Future<Output = T>,
{
    let (sink, mut rx) = NotificationSink::channel();
    let work = work(sink);
    let forward = async {
        while let Some(n) = rx.recv().await {
            forward(peer, n).await;
        }
    };
    let (out, ()) = tokio::join!(work, forward);
    out
}

/// Sends one of our notifications to `peer` (progress and log messages; others are dropped).
pub(crate) async fn forward(peer: &Peer<RoleServer>, notification: Value) {
    let method = notification
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let params = notification.get("params").cloned().unwrap_or(Value::Null);
    let sent = match method {
        "notifications/progress" => {
            match serde_json::from_value::<ProgressNotificationParam>(params) {
                Ok(p) => peer.notify_progress(p).await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            }
        }
        "notifications/message" => {
            match serde_json::from_value::<LoggingMessageNotificationParam>(params) {
                Ok(p) => peer
                    .notify_logging_message(p)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            }
        }
        other => Err(format!("not forwarded: {other}")),
    };
    if let Err(e) = sent {
        tracing::debug!(method, error = %e, "notification not delivered to the rmcp peer");
    }
}
