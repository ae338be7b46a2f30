//! The client side of `subscriptions/listen`: [`Listening`] (the messages of one open
//! subscription, as a transport receives them) and the incremental reader of an SSE
//! stream that the HTTP transport feeds it with.

use serde_json::Value;
use tokio::sync::mpsc;

use super::transport::TransportError;

/// How many received messages a [`Listening`] holds for a caller that does not take them;
/// then the transport stops reading (and the server, in time, ends the subscription).
const LISTEN_BUFFER: usize = 64;

/// One open subscription: the server's messages on it, in order — the
/// `notifications/subscriptions/acknowledged` first (or the error response that refused
/// the listen), then the notifications, and, when the server ends it gracefully, the
/// `subscriptions/listen` result. Dropping it closes the subscription (the HTTP stream is
/// closed; in process the subscription is dropped).
#[derive(Debug)]
pub struct Listening {
    /// A message taken ahead (by [`Driver::listen`](super::Driver::listen)), given first.
    peeked: Option<Result<Value, TransportError>>,
    rx: mpsc::Receiver<Result<Value, TransportError>>,
    task: tokio::task::AbortHandle,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listening {
    /// A listening fed by the task that `feed` starts with the sending half (the task is
    /// aborted when the `Listening` is dropped).
    pub(crate) fn spawn<F>(feed: impl FnOnce(Feed) -> F) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(LISTEN_BUFFER);
        let task = tokio::spawn(feed(Feed(tx))).abort_handle();
        Self {
            peeked: None,
            rx,
            task,
        }
    }

    /// The next message, `None` once the stream ended (after the graceful result, or when
    /// the server closed it without one: then the client should list again and listen
    /// again).
    pub async fn next(&mut self) -> Option<Result<Value, TransportError>> {
        match self.peeked.take() {
            Some(first) => Some(first),
            None => self.rx.recv().await,
        }
    }

    /// Gives `item` back: the next [`next`](Self::next) returns it.
    pub(crate) fn put_back(&mut self, item: Result<Value, TransportError>) {
        self.peeked = Some(item);
    }
}

/// The sending half of a [`Listening`].
pub(crate) struct Feed(mpsc::Sender<Result<Value, TransportError>>);

impl Feed {
    /// Passes one message on; `false` once the `Listening` is gone.
    pub(crate) async fn send(&self, item: Result<Value, TransportError>) -> bool {
        self.0.send(item).await.is_ok()
    }
}

/// Reads an SSE stream incrementally: bytes in, the JSON messages of complete events out
/// (comments, other fields and data that is not JSON are skipped).
#[cfg(feature = "http-client")]
#[derive(Debug, Default)]
pub(crate) struct SseReader {
    pending: Vec<u8>,
    data: String,
}

#[cfg(feature = "http-client")]
impl SseReader {
    /// Takes `chunk`; the messages of the events it completes.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<Value> {
        self.pending.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..end]);
            let line = line.strip_suffix('\r').unwrap_or(&line);
            if line.is_empty() {
                if !self.data.is_empty() {
                    if let Ok(v) = serde_json::from_str::<Value>(&self.data) {
                        out.push(v);
                    }
                    self.data.clear();
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            }
        }
        out
    }

    /// The end of the stream: the message of an event the stream ended inside (its last
    /// line or its blank line missing), if any.
    pub(crate) fn finish(&mut self) -> Option<Value> {
        let mut out = if self.pending.is_empty() {
            Vec::new()
        } else {
            self.push(b"\n")
        };
        if !self.data.is_empty() {
            out.extend(serde_json::from_str::<Value>(&self.data).ok());
            self.data.clear();
        }
        out.pop()
    }
}

#[cfg(all(test, feature = "http-client"))]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let stream =
            ":\n\nevent: message\ndata: {\"a\":\"é\"}\n\ndata: {\"b\":\r\ndata: 2}\r\n\r\n";
        for split in 0..stream.len() {
            let (x, y) = stream.as_bytes().split_at(split);
            let mut r = SseReader::default();
            let mut got = r.push(x);
            got.extend(r.push(y));
            assert_eq!(
                got,
                vec![serde_json::json!({"a": "é"}), serde_json::json!({"b": 2})]
            );
        }
    }

    #[test]
    fn a_stream_that_ends_inside_an_event_gives_it_at_the_finish() {
        for tail in [
            "data: {\"c\":3}",
            "data: {\"c\":3}\n",
            "data: {\"c\":3}\r\n",
        ] {
            let mut r = SseReader::default();
            let mut got = r.push(format!("data: {{\"a\":1}}\n\n{tail}").as_bytes());
            got.extend(r.finish());
            assert_eq!(
                got,
                vec![serde_json::json!({"a": 1}), serde_json::json!({"c": 3})]
            );
            assert_eq!(r.finish(), None, "nothing is given twice");
        }
    }
}
