//! Request-scoped notifications: where `notifications/progress` and `notifications/message`
//! (log) of one request go.
//!
//! The server stays transport independent: [`Server::handle_text`](crate::server::Server::handle_text)
//! takes a [`NotificationSink`] that the transport provides for that one request, and
//! [`Server::handle`](crate::server::Server::handle) passes [`NotificationSink::none`].
//! When a `tools/call` carries `_meta.progressToken`, the server gives the tool's
//! [`ToolContext`](crate::ToolContext) a [`ProgressReporter`] bound to the token and the sink;
//! `cx.progress(..)` then emits one notification per call. Sending never waits: the sink
//! is unbounded (Streamable HTTP writes the notifications as SSE events before the final
//! response, stdio writes them as lines before the response line).
//!
//! Logging works the same way: a [`Logger`] exists only when the client asked for log
//! messages — the request's `_meta["io.modelcontextprotocol/logLevel"]` (2026-07-28), or the
//! session's `logging/setLevel` (2025-11-25) — and `cx.log(..)` sends the messages at or
//! above that level.
//!
//! ```
//! use mcp_tool_runtime::server::{NotificationSink, ProgressReporter};
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

use crate::protocol::{LOG_METHOD, LogLevel};
use crate::sync::lock;
use tokio::sync::mpsc;

pub use crate::protocol::{META_PROGRESS_TOKEN, PROGRESS_METHOD};

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
    crate::protocol::is_progress_token(token).then(|| token.clone())
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
        let mut last = lock(&self.last);
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

/// Sends the log messages of one request at or above the level the client asked for.
///
/// ```
/// use mcp_tool_runtime::server::{Logger, NotificationSink};
/// use mcp_tool_runtime::protocol::LogLevel;
/// use serde_json::json;
///
/// let (sink, mut rx) = NotificationSink::channel();
/// let log = Logger::new(LogLevel::Info, sink);
/// assert!(!log.log(LogLevel::Debug, None, json!("too detailed")));
/// assert!(log.log(LogLevel::Warning, Some("db"), json!({"retry": 2})));
/// let n = rx.try_recv().unwrap();
/// assert_eq!(n["method"], "notifications/message");
/// assert_eq!(n["params"], json!({"level": "warning", "logger": "db", "data": {"retry": 2}}));
/// assert!(rx.try_recv().is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Logger {
    minimum: LogLevel,
    sink: NotificationSink,
}

impl Logger {
    /// A logger sending messages at `minimum` or above to `sink`.
    pub fn new(minimum: LogLevel, sink: NotificationSink) -> Self {
        Self { minimum, sink }
    }

    /// The least severe level sent.
    pub fn minimum(&self) -> LogLevel {
        self.minimum
    }

    /// Sends `notifications/message` when `level` is at or above the minimum and the sink
    /// is connected; returns whether it was sent.
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        if level < self.minimum || !self.sink.is_connected() {
            return false;
        }
        let mut params = Map::new();
        params.insert("level".into(), json!(level));
        if let Some(name) = logger {
            params.insert("logger".into(), json!(name));
        }
        params.insert("data".into(), data);
        self.sink
            .send(json!({ "jsonrpc": "2.0", "method": LOG_METHOD, "params": params }));
        true
    }
}

/// What one request may send the client besides its response: progress (when it carried a
/// progress token) and log messages (when the client asked for a level). Both need a
/// connected sink.
#[derive(Debug, Clone, Default)]
pub(crate) struct Notifiers {
    /// Progress, bound to the request's token.
    pub progress: Option<ProgressReporter>,
    /// Log messages.
    pub log: Option<Logger>,
}

impl Notifiers {
    /// The notifiers of a request with `params`, whose client asked for `log_level`, on a
    /// transport whose sink for this request is `sink`.
    pub fn new(
        params: Option<&Map<String, Value>>,
        log_level: Option<LogLevel>,
        sink: &NotificationSink,
    ) -> Self {
        Self::with_token(|| progress_token(params), log_level, sink)
    }

    /// [`Notifiers::new`] with the request's progress token (read only when `sink` is
    /// connected).
    pub(crate) fn with_token(
        token: impl FnOnce() -> Option<Value>,
        log_level: Option<LogLevel>,
        sink: &NotificationSink,
    ) -> Self {
        if !sink.is_connected() {
            return Self::default();
        }
        Self {
            progress: token().map(|t| ProgressReporter::new(t, sink.clone())),
            log: log_level.map(|l| Logger::new(l, sink.clone())),
        }
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
