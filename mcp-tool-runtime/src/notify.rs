//! Request-scoped notifications: where `notifications/progress` of one request go.
//!
//! The server stays transport independent: [`Server::handle_with`](crate::server::Server::handle_with)
//! takes a [`NotificationSink`] that the transport provides for that one request, and
//! [`Server::handle`](crate::server::Server::handle) passes [`NotificationSink::none`].
//! When a `tools/call` carries `_meta.progressToken`, the server gives the tool's
//! [`ToolContext`](crate::ToolContext) a [`ProgressReporter`] bound to the token and the sink;
//! `cx.progress(..)` then emits one notification per call. Sending never waits: the sink
//! is unbounded (Streamable HTTP writes the notifications as SSE events before the final
//! response, stdio writes them as lines before the response line).
//!
//! ```
//! use mcp_tool_runtime::notify::{NotificationSink, ProgressReporter};
//! use serde_json::json;
//!
//! let (sink, mut rx) = NotificationSink::channel();
//! let reporter = ProgressReporter::new(json!("tok-1"), sink);
//! assert!(reporter.report(0.0, Some(100.0), Some("starting")));
//! assert!(!reporter.report(0.0, Some(100.0), None)); // progress must increase
//! let n = rx.try_recv().unwrap();
//! assert_eq!(n["method"], "notifications/progress");
//! assert_eq!(n["params"], json!({"progressToken": "tok-1", "progress": 0.0, "total": 100.0, "message": "starting"}));
//! assert!(rx.try_recv().is_err());
//! ```

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// The method of progress notifications.
pub const PROGRESS_METHOD: &str = "notifications/progress";
/// The `_meta` key of a request's progress token.
pub const META_PROGRESS_TOKEN: &str = "progressToken";

type SendFn = dyn Fn(Value) + Send + Sync;

/// Where the notifications of one request go (JSON-RPC notification objects). Cheap to
/// clone; sending never blocks. A sink made with [`NotificationSink::none`] drops
/// everything.
#[derive(Clone, Default)]
pub struct NotificationSink {
    send: Option<Arc<SendFn>>,
}

impl std::fmt::Debug for NotificationSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationSink")
            .field("connected", &self.is_connected())
            .finish()
    }
}

impl NotificationSink {
    /// A sink that drops every notification (the transport cannot carry them).
    pub fn none() -> Self {
        Self { send: None }
    }

    /// A sink that calls `f` with each notification. `f` must not block.
    pub fn from_fn(f: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Self {
            send: Some(Arc::new(f)),
        }
    }

    /// A sink feeding an unbounded channel; the receiver gets the notifications in order.
    /// Notifications sent after the receiver is dropped are discarded.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<Value>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = Self::from_fn(move |v| {
            let _ = tx.send(v);
        });
        (sink, rx)
    }

    /// Whether notifications go anywhere.
    pub fn is_connected(&self) -> bool {
        self.send.is_some()
    }

    /// Sends a JSON-RPC notification object.
    pub fn send(&self, notification: Value) {
        if let Some(f) = &self.send {
            f(notification);
        }
    }
}

/// The `_meta.progressToken` of a request's params: a string or an integer, as the
/// schema's `ProgressToken` allows; anything else counts as absent.
pub fn progress_token(params: Option<&Map<String, Value>>) -> Option<Value> {
    let token = params?
        .get("_meta")?
        .as_object()?
        .get(META_PROGRESS_TOKEN)?;
    match token {
        Value::String(_) => Some(token.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(token.clone()),
        _ => None,
    }
}

/// A `notifications/progress` message.
pub fn progress_notification(
    token: &Value,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Value {
    let mut params = Map::new();
    params.insert(META_PROGRESS_TOKEN.into(), token.clone());
    params.insert("progress".into(), json!(progress));
    if let Some(t) = total {
        params.insert("total".into(), json!(t));
    }
    if let Some(m) = message {
        params.insert("message".into(), json!(m));
    }
    json!({ "jsonrpc": "2.0", "method": PROGRESS_METHOD, "params": params })
}

/// Reports the progress of one request: its progress token and the sink of its transport.
/// Progress must increase with each notification; a value that does not (or is not a
/// finite number) is dropped.
#[derive(Debug, Clone)]
pub struct ProgressReporter {
    token: Value,
    sink: NotificationSink,
    last: Arc<Mutex<Option<f64>>>,
}

impl ProgressReporter {
    /// A reporter for the request whose `_meta.progressToken` is `token`.
    pub fn new(token: Value, sink: NotificationSink) -> Self {
        Self {
            token,
            sink,
            last: Arc::default(),
        }
    }

    /// The progress token.
    pub fn token(&self) -> &Value {
        &self.token
    }

    /// Sends `notifications/progress`. Returns whether it was sent: `false` when
    /// `progress` is not finite or not greater than the last value sent, or when the sink
    /// is not connected. A non-finite `total` is left out.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        if !self.sink.is_connected() || !progress.is_finite() {
            return false;
        }
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|l| progress <= l) {
            tracing::debug!(
                progress,
                last = ?*last,
                "dropping a progress value that does not increase"
            );
            return false;
        }
        *last = Some(progress);
        let total = total.filter(|t| t.is_finite());
        self.sink
            .send(progress_notification(&self.token, progress, total, message));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let p = |v: Value| v.as_object().cloned();
        assert_eq!(
            progress_token(p(json!({"_meta": {"progressToken": "a"}})).as_ref()),
            Some(json!("a"))
        );
        assert_eq!(
            progress_token(p(json!({"_meta": {"progressToken": 7}})).as_ref()),
            Some(json!(7))
        );
        for bad in [
            json!({"_meta": {"progressToken": 1.5}}),
            json!({"_meta": {"progressToken": null}}),
            json!({"_meta": {"progressToken": {}}}),
            json!({"_meta": {}}),
            json!({}),
        ] {
            assert_eq!(progress_token(p(bad).as_ref()), None);
        }
        assert_eq!(progress_token(None), None);
    }

    #[test]
    fn reporter_drops_non_increasing_and_non_finite() {
        let (sink, mut rx) = NotificationSink::channel();
        let r = ProgressReporter::new(json!(1), sink);
        assert!(!r.report(f64::NAN, None, None));
        assert!(r.report(1.0, Some(f64::INFINITY), None));
        assert!(!r.report(0.5, None, None));
        assert!(r.report(2.0, None, Some("two")));
        let a = rx.try_recv().unwrap();
        assert_eq!(a["params"], json!({"progressToken": 1, "progress": 1.0}));
        let b = rx.try_recv().unwrap();
        assert_eq!(b["params"]["message"], "two");
        assert!(rx.try_recv().is_err());
        assert!(!ProgressReporter::new(json!(1), NotificationSink::none()).report(1.0, None, None));
    }
}
