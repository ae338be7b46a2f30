//! The client side of `subscriptions/listen`: [`Listening`] (the messages of one open
//! subscription, as a transport receives them) and the reader of an SSE stream that the
//! HTTP transport feeds it with (`eventsource-stream`'s parser: the events' JSON messages,
//! and the stream's `id:` and `retry:`, which [`Listening::last_event_id`] and
//! [`Listening::retry`] give).

use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::transport::TransportError;

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
    /// A message taken ahead (by [`Driver::listen`](crate::Driver::listen)), given first.
    peeked: Option<Result<Value, TransportError>>,
    rx: mpsc::Receiver<Received>,
    task: tokio::task::AbortHandle,
    /// The stream's last event id, as of the messages taken.
    last_event_id: Option<String>,
    /// The stream's reconnection time, as of the messages taken.
    retry: Option<Duration>,
}

/// What the feeding task passes on: a message, or what an SSE event said about
/// reconnecting (its `id:` and `retry:`), in the order of the stream.
#[derive(Debug)]
enum Received {
    Message(Result<Value, TransportError>),
    /// Sent by the SSE reader only (the HTTP client).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Resume {
        id: Option<String>,
        retry: Option<Duration>,
    },
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
            last_event_id: None,
            retry: None,
        }
    }

    /// The next message, `None` once the stream ended (after the graceful result, or when
    /// the server closed it without one: then the client should list again and listen
    /// again).
    pub async fn next(&mut self) -> Option<Result<Value, TransportError>> {
        if let Some(first) = self.peeked.take() {
            return Some(first);
        }
        loop {
            match self.rx.recv().await? {
                Received::Message(m) => return Some(m),
                Received::Resume { id, retry } => {
                    // an empty `id:` resets it
                    if let Some(id) = id {
                        self.last_event_id = (!id.is_empty()).then_some(id);
                    }
                    self.retry = retry.or(self.retry);
                }
            }
        }
    }

    /// The id of the stream's last event (SSE `id:`, kept across events as the SSE
    /// specification says), as of the messages [`next`](Self::next) gave so far; `None`
    /// when the server sent none (this runtime's servers send none). A client that listens
    /// again may send it as `Last-Event-ID` (e.g.
    /// [`HttpTransport::header`](crate::HttpTransport::header)) to a server that resumes
    /// streams.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection time the server asked for (SSE `retry:`), as of the messages
    /// [`next`](Self::next) gave so far: how long to wait before listening again once the
    /// stream ended. `None` when the server did not say.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Gives `item` back: the next [`next`](Self::next) returns it.
    pub(crate) fn put_back(&mut self, item: Result<Value, TransportError>) {
        self.peeked = Some(item);
    }
}

/// The sending half of a [`Listening`].
pub(crate) struct Feed(mpsc::Sender<Received>);

impl Feed {
    /// Passes one message on; `false` once the `Listening` is gone.
    pub(crate) async fn send(&self, item: Result<Value, TransportError>) -> bool {
        self.0.send(Received::Message(item)).await.is_ok()
    }

    /// Passes on what an event said about reconnecting; `false` once the `Listening` is
    /// gone.
    #[cfg(feature = "http")]
    async fn resume(&self, id: Option<String>, retry: Option<Duration>) -> bool {
        self.0.send(Received::Resume { id, retry }).await.is_ok()
    }
}

/// The bytes of an SSE stream, as they arrive, with a last blank line added at their end:
/// an event the stream ended inside (its last line or its blank line missing) is given too.
#[cfg(feature = "http")]
fn terminated<S, E>(bytes: S) -> impl futures_util::Stream<Item = Result<bytes::Bytes, E>>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>>,
{
    use futures_util::StreamExt as _;
    bytes.chain(futures_util::stream::once(async {
        Ok(bytes::Bytes::from_static(b"\n\n"))
    }))
}

/// Feeds a [`Listening`] from the bytes of an SSE stream: the JSON message of each event
/// (events whose data is not JSON are skipped), and each event's `id:` and `retry:`. A read
/// error, or bytes that are not an event stream (not UTF-8), end it with an error.
#[cfg(feature = "http")]
pub(crate) async fn pump<S, E>(bytes: S, feed: Feed)
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>>,
    E: std::fmt::Display,
{
    use eventsource_stream::{EventStreamError, Eventsource as _};
    use futures_util::StreamExt as _;
    let events = terminated(bytes).eventsource();
    futures_util::pin_mut!(events);
    let mut last_id = String::new();
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                let e = match e {
                    EventStreamError::Transport(e) => TransportError::Io(e.to_string()),
                    other => TransportError::InvalidResponse(format!("SSE stream: {other}")),
                };
                feed.send(Err(e)).await;
                return;
            }
        };
        let id = (event.id != last_id).then(|| event.id.clone());
        if (id.is_some() || event.retry.is_some()) && !feed.resume(id, event.retry).await {
            return;
        }
        last_id = event.id;
        if let Ok(v) = serde_json::from_str::<Value>(&event.data)
            && !feed.send(Ok(v)).await
        {
            return;
        }
    }
}

/// The JSON messages of a whole SSE body, in order (events whose data is not JSON are
/// skipped; an event the body ends inside is given too).
#[cfg(feature = "http")]
pub(crate) fn messages_of(body: &str) -> Vec<Value> {
    use eventsource_stream::Eventsource as _;
    use futures_util::{FutureExt as _, StreamExt as _};
    let bytes = bytes::Bytes::copy_from_slice(body.as_bytes());
    let once = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(bytes)]);
    // Every chunk is there already: the stream never waits.
    let events = terminated(once).eventsource().collect::<Vec<_>>();
    events
        .now_or_never()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.ok()?.data).ok())
        .collect()
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    /// The messages `chunks` give through a [`Listening`], with its last event id and retry.
    async fn read(chunks: Vec<&'static [u8]>) -> (Vec<Value>, Option<String>, Option<Duration>) {
        let stream = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, std::convert::Infallible>(bytes::Bytes::from_static(c))),
        );
        let mut listening = Listening::spawn(|feed| pump(stream, feed));
        let mut got = Vec::new();
        while let Some(m) = listening.next().await {
            got.push(m.unwrap());
        }
        let id = listening.last_event_id().map(str::to_owned);
        (got, id, listening.retry())
    }

    #[tokio::test]
    async fn events_split_anywhere_come_out_whole() {
        let stream: &'static str =
            ":\n\nevent: message\ndata: {\"a\":\"é\"}\n\ndata: {\"b\":\r\ndata: 2}\r\n\r\n";
        for split in 0..stream.len() {
            if !stream.is_char_boundary(split) {
                continue;
            }
            let (x, y) = stream.split_at(split);
            let (got, id, retry) = read(vec![x.as_bytes(), y.as_bytes()]).await;
            assert_eq!(
                got,
                vec![serde_json::json!({"a": "é"}), serde_json::json!({"b": 2})]
            );
            assert_eq!((id, retry), (None, None));
        }
        assert_eq!(
            messages_of(stream),
            vec![serde_json::json!({"a": "é"}), serde_json::json!({"b": 2})]
        );
    }

    #[tokio::test]
    async fn a_stream_that_ends_inside_an_event_gives_it_at_the_end() {
        for tail in [
            "data: {\"c\":3}",
            "data: {\"c\":3}\n",
            "data: {\"c\":3}\r\n",
        ] {
            let body: &'static str = format!("data: {{\"a\":1}}\n\n{tail}").leak();
            let want = vec![serde_json::json!({"a": 1}), serde_json::json!({"c": 3})];
            assert_eq!(read(vec![body.as_bytes()]).await.0, want);
            assert_eq!(messages_of(body), want);
        }
    }

    #[tokio::test]
    async fn ids_and_retry_are_kept_as_of_the_messages_taken() {
        let stream: &'static [u8] = b"id: 1\nretry: 1500\ndata: {\"n\":1}\n\n\
            data: {\"n\":2}\n\n\
            id: 7\ndata:\n\n\
            retry: nope\ndata: {\"n\":3}\n\n";
        let chunks = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(
            bytes::Bytes::from_static(stream),
        )]);
        let mut listening = Listening::spawn(|feed| pump(chunks, feed));
        assert_eq!(listening.next().await.unwrap().unwrap()["n"], 1);
        assert_eq!(listening.last_event_id(), Some("1"));
        assert_eq!(listening.retry(), Some(Duration::from_millis(1500)));
        // the id stays for the events after it (no `id:` line of their own)
        assert_eq!(listening.next().await.unwrap().unwrap()["n"], 2);
        assert_eq!(listening.last_event_id(), Some("1"));
        // an event without a message (empty data) still moves the id; an unusable retry
        // leaves the last one
        assert_eq!(listening.next().await.unwrap().unwrap()["n"], 3);
        assert_eq!(listening.last_event_id(), Some("7"));
        assert_eq!(listening.retry(), Some(Duration::from_millis(1500)));
        assert!(listening.next().await.is_none());
        // a stream without either says nothing
        let (got, id, retry) = read(vec![b"data: {}\n\n"]).await;
        assert_eq!((got.len(), id, retry), (1, None, None));
    }

    #[tokio::test]
    async fn bytes_that_are_not_utf8_end_the_stream_with_an_error() {
        let stream = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(
            bytes::Bytes::from_static(b"data: {\"a\":1}\n\ndata: \xff\xfe\n\n"),
        )]);
        let mut listening = Listening::spawn(|feed| pump(stream, feed));
        assert_eq!(listening.next().await.unwrap().unwrap()["a"], 1);
        assert!(matches!(
            listening.next().await,
            Some(Err(TransportError::InvalidResponse(_)))
        ));
        assert!(listening.next().await.is_none());
    }
}
