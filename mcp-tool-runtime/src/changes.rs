//! What changed on the server, told to whoever listens: the process-wide hub of changes
//! ([`Changes`]) and the fleet-wide channel that carries them between replicas
//! ([`ChangeFeed`]).
//!
//! A change is raised once, where it happens: the run-time registry when a tool, prompt or
//! resource is added or removed, `cx.resource_updated(uri)` (or the server handle) when a
//! resource's content changed, the task engine when a task's status changed. The hub hands
//! it at once to this process's listeners (`subscriptions/listen` streams, legacy sessions)
//! and, when a feed is set, publishes it to the other replicas; a change that comes back
//! from the feed with this hub's own origin is dropped, so every listener sees each change
//! once.
//!
//! Delivery is at most once per listener per change, and nothing is kept: a listener that
//! connects later, or falls behind (see [`Changes::subscribe`]), re-lists.
//!
//! ```
//! use mcp_tool_runtime::store::{Change, Changes};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let hub = Changes::new();
//! let mut rx = hub.subscribe();
//! hub.publish(Change::ResourceUpdated { uri: "notes://n/1".into() });
//! assert_eq!(*rx.recv().await.unwrap(), Change::ResourceUpdated { uri: "notes://n/1".into() });
//! # });
//! ```

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::error::BoxFuture;
use crate::sync::lock;

/// How many changes the hub holds for its slowest listener before that listener lags
/// (and is closed, see [`Changes::subscribe`]).
pub const HUB_CAPACITY: usize = 1024;

/// Longest encoded change a feed must carry (PostgreSQL's `NOTIFY` takes 8000 bytes). A
/// change whose encoding is longer is delivered in this process only, with a warning.
pub const MAX_ENCODED_CHANGE: usize = 7900;

/// One change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "k")]
pub enum Change {
    /// The list of tools changed (`notifications/tools/list_changed`).
    #[serde(rename = "tools")]
    ToolsListChanged,
    /// The list of prompts changed (`notifications/prompts/list_changed`).
    #[serde(rename = "prompts")]
    PromptsListChanged,
    /// The list of resources or templates changed
    /// (`notifications/resources/list_changed`).
    #[serde(rename = "resources")]
    ResourcesListChanged,
    /// The content of one resource changed (`notifications/resources/updated`).
    #[serde(rename = "updated")]
    ResourceUpdated {
        /// The resource's URI.
        #[serde(rename = "u")]
        uri: String,
    },
    /// A task's status changed (`notifications/tasks` of the Tasks extension). The
    /// listener's side reads the task itself from the task store, so a feed carries only
    /// this.
    #[serde(rename = "task")]
    TaskStatus {
        /// The task's id.
        #[serde(rename = "t")]
        task_id: String,
        /// [`Principal::key`](crate::Principal::key) of the task's owner: only its
        /// listeners hear of it.
        #[serde(rename = "p")]
        owner: String,
        /// The new status (`working`, `input_required`, `completed`, `failed`,
        /// `cancelled`).
        #[serde(rename = "s")]
        status: String,
    },
}

/// A change as a feed carries it: the change and the hub it was raised on.
#[derive(Serialize, Deserialize)]
struct Envelope<'a> {
    /// Format version.
    v: u8,
    /// The origin hub.
    o: &'a str,
    #[serde(flatten)]
    change: Change,
}

/// A feed failure (a shared store that cannot be reached, say). The change still reached
/// this process's listeners.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("change feed: {0}")]
pub struct FeedError(pub String);

/// What a feed calls with each message it receives (the bytes given to
/// [`ChangeFeed::publish`] by some replica, this one included). Must not block.
pub type Deliver = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// The channel that carries changes between the replicas of a fleet (PostgreSQL
/// `LISTEN/NOTIFY`, Redis pub/sub, a polled SQLite table, …). Messages are opaque bytes of
/// at most [`MAX_ENCODED_CHANGE`]; order per publisher is kept; delivery is at most once.
pub trait ChangeFeed: Send + Sync + 'static {
    /// Sends `message` to every replica listening on this feed.
    fn publish<'a>(&'a self, message: &'a [u8]) -> BoxFuture<'a, Result<(), FeedError>>;
    /// Starts listening: from when the returned future resolves `Ok`, every published
    /// message is handed to `deliver`, until the feed is dropped. A feed that loses its
    /// connection reconnects by itself (messages published meanwhile are lost).
    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Result<(), FeedError>>;
}

/// How a feed's listening task reports its first attempt: `Ok` once it listens, or why it
/// could not (it then ends).
pub type ListenerReady = tokio::sync::oneshot::Sender<Result<(), String>>;

/// The listening tasks of a feed whose listener is a task (PostgreSQL `LISTEN`, Redis
/// `SUBSCRIBE`): started by [`ListenerTasks::start`], aborted when this is dropped (with
/// the feed that owns it).
#[derive(Debug, Default)]
pub struct ListenerTasks(Mutex<Vec<tokio::task::AbortHandle>>);

impl ListenerTasks {
    /// No tasks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Spawns the listening task `listen(ready)` makes and waits for its first report on
    /// `ready`: the shared body of such a feed's [`ChangeFeed::listen`]. `what` names the
    /// listener in errors (`postgres LISTEN mcp_tasks_changes`).
    pub async fn start<F>(
        &self,
        what: &str,
        listen: impl FnOnce(ListenerReady) -> F,
    ) -> Result<(), FeedError>
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let (ready, first) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(listen(ready));
        lock(&self.0).push(task.abort_handle());
        match first.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                task.abort();
                Err(FeedError(format!("{what}: {e}")))
            }
            Err(_) => Err(FeedError(format!("{what}: the listener ended"))),
        }
    }
}

impl Drop for ListenerTasks {
    fn drop(&mut self) {
        for t in lock(&self.0).drain(..) {
            t.abort();
        }
    }
}

/// An in-process [`ChangeFeed`]: hubs that share one (clones of it) behave like replicas
/// on a shared store. For tests and for several servers in one process.
#[derive(Clone, Default)]
pub struct MemoryFeed {
    listeners: Arc<Mutex<Vec<Deliver>>>,
}

impl std::fmt::Debug for MemoryFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryFeed").finish_non_exhaustive()
    }
}

impl MemoryFeed {
    /// A feed with no listeners yet.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ChangeFeed for MemoryFeed {
    fn publish<'a>(&'a self, message: &'a [u8]) -> BoxFuture<'a, Result<(), FeedError>> {
        let listeners = lock(&self.listeners).clone();
        for deliver in listeners {
            deliver(message);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Result<(), FeedError>> {
        lock(&self.listeners).push(deliver);
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The hub of one process. Cheap to clone (shared inside).
#[derive(Clone)]
pub struct Changes {
    inner: Arc<Hub>,
}

struct Hub {
    tx: broadcast::Sender<Arc<Change>>,
    /// This hub's origin id (random), to drop its own changes coming back from the feed.
    origin: String,
    /// The queue to the feed's publisher task, once connected: one task publishes the
    /// encoded changes one after the other, so the feed gets them in the order raised.
    feed: Mutex<Option<tokio::sync::mpsc::Sender<Vec<u8>>>>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes")
            .field("origin", &self.inner.origin)
            .field("listeners", &self.inner.tx.receiver_count())
            .finish_non_exhaustive()
    }
}

impl Default for Changes {
    fn default() -> Self {
        Self::new()
    }
}

impl Changes {
    /// A hub for this process alone.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(HUB_CAPACITY);
        Self {
            inner: Arc::new(Hub {
                tx,
                origin: origin_id(),
                feed: Mutex::new(None),
            }),
        }
    }

    /// Connects the hub to a fleet's feed: from when this resolves, changes raised here are
    /// published to the feed (by a task of their own, in order), and changes other replicas
    /// publish reach this hub's listeners. Fails when the feed cannot start listening (the
    /// hub stays local). Call it inside a Tokio runtime.
    pub async fn connect(&self, feed: Arc<dyn ChangeFeed>) -> Result<(), FeedError> {
        let weak = Arc::downgrade(&self.inner);
        let deliver: Deliver = Arc::new(move |bytes: &[u8]| {
            if let Some(hub) = weak.upgrade() {
                hub.receive(bytes);
            }
        });
        feed.listen(deliver).await?;
        // The publisher: owns the feed, ends (dropping it) when the hub goes.
        let (queue, mut pending) = tokio::sync::mpsc::channel::<Vec<u8>>(HUB_CAPACITY);
        tokio::spawn(async move {
            while let Some(bytes) = pending.recv().await {
                if let Err(e) = feed.publish(&bytes).await {
                    throttled_warn!(error = %e, "a change did not reach the other replicas");
                }
            }
        });
        *lock(&self.inner.feed) = Some(queue);
        Ok(())
    }

    /// Raises `change`: this process's listeners get it now; the feed, if any, carries it
    /// to the other replicas (in the background, one change after the other in the order
    /// raised: raising never waits; when the feed is [`HUB_CAPACITY`] changes behind, the
    /// change reaches this process only, with a warning).
    pub fn publish(&self, change: Change) {
        let feed = lock(&self.inner.feed).clone();
        if let Some(feed) = feed {
            let envelope = Envelope {
                v: 1,
                o: &self.inner.origin,
                change: change.clone(),
            };
            match serde_json::to_vec(&envelope) {
                Ok(bytes) if bytes.len() <= MAX_ENCODED_CHANGE => {
                    if feed.try_send(bytes).is_err() {
                        throttled_warn!(
                            "the feed is {HUB_CAPACITY} changes behind: a change reached this replica's listeners only"
                        );
                    }
                }
                Ok(bytes) => {
                    throttled_warn!(
                        bytes = bytes.len(),
                        "a change too long for the feed reached this replica's listeners only"
                    );
                }
                Err(e) => tracing::warn!(error = %e, "a change could not be encoded"),
            }
        }
        // No listener is not an error.
        let _ = self.inner.tx.send(Arc::new(change));
    }

    /// A new listener: every change raised from now on, here or (with a feed) on another
    /// replica, in order. A listener that falls [`HUB_CAPACITY`] changes behind gets
    /// [`broadcast::error::RecvError::Lagged`]: it has lost changes, and the policy of this
    /// crate's listeners is to end that subscription so its client re-lists.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.inner.tx.subscribe()
    }

    /// How many listeners this hub has now.
    pub fn listeners(&self) -> usize {
        self.inner.tx.receiver_count()
    }
}

/// The server's hub as the state map carries it to every tool, prompt and resource
/// context (`cx.resource_updated`); a crate-private type, so no application value takes
/// its place.
#[derive(Clone, Debug)]
pub(crate) struct ServerChanges(pub(crate) Changes);

/// A random origin id for a hub (the process id and the time without an OS generator:
/// it must only differ between the replicas of one fleet).
fn origin_id() -> String {
    crate::ledger::new_id().unwrap_or_else(|_| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{nanos}", std::process::id())
    })
}

impl Hub {
    /// A message from the feed: decoded, checked, and handed to the listeners unless this
    /// hub raised it. Bytes that are not a change are dropped with a warning (a feed is
    /// shared; another program may write to it).
    fn receive(&self, bytes: &[u8]) {
        match serde_json::from_slice::<Envelope<'_>>(bytes) {
            Ok(e) if e.v == 1 => {
                if e.o != self.origin {
                    let _ = self.tx.send(Arc::new(e.change));
                }
            }
            Ok(e) => throttled_warn!(version = e.v, "a change of an unknown format version"),
            Err(e) => throttled_warn!(
                error = %crate::protocol::errors::redact(&e.to_string()),
                "a feed message that is not a change"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn two_hubs_on_one_feed_each_hear_the_other_once() {
        let feed = Arc::new(MemoryFeed::new());
        let (a, b) = (Changes::new(), Changes::new());
        a.connect(feed.clone()).await.unwrap();
        b.connect(feed.clone()).await.unwrap();
        let (mut ra, mut rb) = (a.subscribe(), b.subscribe());
        a.publish(Change::ToolsListChanged);
        b.publish(Change::ResourceUpdated {
            uri: "x://1".into(),
        });
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let got_a: Vec<_> = std::iter::from_fn(|| ra.try_recv().ok()).collect();
        let got_b: Vec<_> = std::iter::from_fn(|| rb.try_recv().ok()).collect();
        let both = [
            Arc::new(Change::ToolsListChanged),
            Arc::new(Change::ResourceUpdated {
                uri: "x://1".into(),
            }),
        ];
        assert_eq!(got_a, both);
        assert_eq!(got_b.len(), 2, "{got_b:?}");
        assert!(got_b.contains(&both[0]) && got_b.contains(&both[1]));
    }

    /// A feed whose publish takes longer for earlier messages: were publishes concurrent,
    /// later changes would overtake earlier ones.
    struct Slow {
        seen: Arc<Mutex<Vec<Vec<u8>>>>,
        delays: std::sync::atomic::AtomicU64,
    }

    impl ChangeFeed for Slow {
        fn publish<'a>(&'a self, message: &'a [u8]) -> BoxFuture<'a, Result<(), FeedError>> {
            let wait = self
                .delays
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                self.seen.lock().unwrap().push(message.to_vec());
                Ok(())
            })
        }

        fn listen(&self, _deliver: Deliver) -> BoxFuture<'_, Result<(), FeedError>> {
            Box::pin(std::future::ready(Ok(())))
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_feed_gets_changes_in_the_order_raised() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let hub = Changes::new();
        hub.connect(Arc::new(Slow {
            seen: seen.clone(),
            delays: std::sync::atomic::AtomicU64::new(10),
        }))
        .await
        .unwrap();
        for i in 0..10 {
            hub.publish(Change::ResourceUpdated {
                uri: format!("x://{i}"),
            });
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while seen.lock().unwrap().len() < 10 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let uris: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .map(
                |b| match serde_json::from_slice::<Envelope<'_>>(b).unwrap().change {
                    Change::ResourceUpdated { uri } => uri,
                    other => panic!("{other:?}"),
                },
            )
            .collect();
        let want: Vec<String> = (0..10).map(|i| format!("x://{i}")).collect();
        assert_eq!(uris, want);
    }

    #[test]
    fn foreign_bytes_and_unknown_versions_are_dropped() {
        let hub = Changes::new();
        let mut rx = hub.subscribe();
        hub.inner.receive(b"not json");
        hub.inner.receive(br#"{"v":2,"o":"x","k":"tools"}"#);
        hub.inner.receive(br#"{"v":1,"o":"x","k":"nope"}"#);
        hub.inner
            .receive(br#"{"v":1,"o":"x","k":"task","t":"t1","p":"anon","s":"working"}"#);
        assert_eq!(
            *rx.try_recv().unwrap(),
            Change::TaskStatus {
                task_id: "t1".into(),
                owner: "anon".into(),
                status: "working".into()
            }
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn the_encoding_is_compact_and_stable() {
        let e = Envelope {
            v: 1,
            o: "abc",
            change: Change::ResourceUpdated {
                uri: "notes://n/1".into(),
            },
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"v":1,"o":"abc","k":"updated","u":"notes://n/1"}"#
        );
    }

    #[test]
    fn a_slow_listener_lags_instead_of_holding_more() {
        let hub = Changes::new();
        let mut rx = hub.subscribe();
        for _ in 0..HUB_CAPACITY + 10 {
            hub.publish(Change::ToolsListChanged);
        }
        assert!(matches!(
            rx.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(10))
        ));
    }
}
