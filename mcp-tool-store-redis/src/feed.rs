//! The change feed on Redis ([`RedisFeed`]): `PUBLISH`/`SUBSCRIBE` on a channel named after
//! the store's key prefix, carrying the runtime's changes between the replicas of a fleet.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::store::{ChangeFeed, Deliver, FeedError, ListenerTasks, MAX_ENCODED_CHANGE};
use redis::Value;
use tokio::sync::oneshot;

use crate::{Options, RedisStore};

/// How often the subscribed connection is checked with a `PING` (a connection whose peer
/// vanished without a reset shows no error by itself).
const HEALTH_CHECK: Duration = Duration::from_secs(10);

/// The change feed of a [`RedisStore`] (see [`RedisStore::feed`]): replicas on one Redis
/// with the same key prefix hear each other; another prefix is another channel.
///
/// - **Publish:** `PUBLISH <prefix>changes message` on the store's connection, through its
///   fail-fast gate and timeouts. Messages are bytes to Redis.
/// - **Listen:** a pub/sub connection of its own, dialled from the store's URL (`redis://`,
///   `rediss://` with the same certificate checks, `redis+unix://`), `SUBSCRIBE`d to the
///   channel; each message's payload goes to the hub. Every 10 s it sends a `PING`; when
///   that fails or the connection ends (Redis restarted, a network cut), it dials again
///   with the store's backoff ([`Options::backoff_initial`] doubling to
///   [`Options::backoff_max`]). Messages published while it was away are lost: Redis
///   pub/sub keeps nothing, delivery is at most once, and listeners re-list after a gap.
///
/// Dropping the feed stops its listener.
pub struct RedisFeed {
    store: Arc<RedisStore>,
    channel: Vec<u8>,
    listener: ListenerTasks,
}

impl std::fmt::Debug for RedisFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFeed")
            .field("channel", &String::from_utf8_lossy(&self.channel))
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// The change feed of this store's deployment: channel `<prefix>changes`, published on
    /// this store's connection, heard on a pub/sub connection of its own (see
    /// [`RedisFeed`]).
    pub fn feed(self: &Arc<Self>) -> RedisFeed {
        RedisFeed {
            store: self.clone(),
            channel: format!("{}changes", self.options.prefix).into_bytes(),
            listener: ListenerTasks::new(),
        }
    }
}

impl RedisFeed {
    /// The pub/sub channel (`<prefix>changes`).
    pub fn channel(&self) -> &[u8] {
        &self.channel
    }
}

impl ChangeFeed for RedisFeed {
    fn publish<'a>(&'a self, message: &'a [u8]) -> BoxFuture<'a, Result<(), FeedError>> {
        Box::pin(async move {
            if message.len() > MAX_ENCODED_CHANGE {
                return Err(FeedError(format!(
                    "redis: a message of {} bytes (the feed carries {MAX_ENCODED_CHANGE})",
                    message.len()
                )));
            }
            self.store
                .exec(|mut con| async move {
                    redis::cmd("PUBLISH")
                        .arg(&self.channel)
                        .arg(message)
                        .query_async::<Value>(&mut con)
                        .await
                })
                .await
                .map(|_| ())
                .map_err(|e| FeedError(format!("redis: {e}")))
        })
    }

    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Result<(), FeedError>> {
        Box::pin(async move {
            let what = format!("redis SUBSCRIBE {}", String::from_utf8_lossy(&self.channel));
            self.listener
                .start(&what, |ready| {
                    keep_listening(
                        self.store.client.clone(),
                        self.store.options.clone(),
                        self.channel.clone(),
                        deliver,
                        ready,
                    )
                })
                .await
        })
    }
}

/// The listener: one subscription after another, until aborted. The first one's outcome
/// goes to `ready` (a failure there ends the listener: the caller reports it); later
/// failures are logged and followed by a new attempt after the backoff.
async fn keep_listening(
    client: redis::Client,
    options: Options,
    channel: Vec<u8>,
    deliver: Deliver,
    ready: oneshot::Sender<Result<(), String>>,
) {
    let mut ready = Some(ready);
    let mut backoff = crate::backoff_schedule(&options);
    let mut failures = 0u32;
    let name = String::from_utf8_lossy(&channel).into_owned();
    loop {
        let (listening, mut started) = oneshot::channel();
        let session = session(&client, &options, &channel, &deliver, listening);
        tokio::pin!(session);
        let e = tokio::select! {
            biased;
            e = &mut session => e,
            ok = &mut started => {
                if ok.is_ok() {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Ok(()));
                    } else {
                        tracing::info!(channel = name, "change feed listening again");
                    }
                    backoff = crate::backoff_schedule(&options);
                    failures = 0;
                }
                session.await
            }
        };
        if let Some(r) = ready.take() {
            let _ = r.send(Err(e));
            return;
        }
        let pause = backoff.next().unwrap_or(options.backoff_max);
        // the first failure after a session, then every tenth attempt: a long outage does
        // not flood the log
        if failures.is_multiple_of(10) {
            tracing::warn!(channel = name, error = %e, failures, retry_in_ms = pause.as_millis() as u64,
                "change feed cannot listen (changes meanwhile are lost)");
        }
        failures += 1;
        tokio::time::sleep(pause).await;
    }
}

/// One subscription: dials, `SUBSCRIBE`s, tells `started`, then hands on messages until
/// the connection fails; returns why.
async fn session(
    client: &redis::Client,
    options: &Options,
    channel: &[u8],
    deliver: &Deliver,
    started: oneshot::Sender<()>,
) -> String {
    let limit = options.connect_timeout + options.response_timeout;
    let mut pubsub = match tokio::time::timeout(limit, client.get_async_pubsub()).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => return e.to_string(),
        Err(_) => return format!("no pub/sub connection within {limit:?}"),
    };
    match tokio::time::timeout(options.response_timeout, pubsub.subscribe(channel)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return e.to_string(),
        Err(_) => {
            return format!(
                "no answer to SUBSCRIBE within {:?}",
                options.response_timeout
            );
        }
    }
    let _ = started.send(());
    let (mut sink, mut stream) = pubsub.split();
    let pump = async {
        while let Some(msg) = stream.next().await {
            // a longer message is none of ours (publish refuses them): not even decoded
            let payload = msg.get_payload_bytes();
            if msg.get_channel_name().as_bytes() == channel && payload.len() <= MAX_ENCODED_CHANGE {
                deliver(payload);
            }
        }
        "the connection closed".to_owned()
    };
    let health = async {
        loop {
            tokio::time::sleep(HEALTH_CHECK).await;
            match tokio::time::timeout(options.response_timeout, sink.ping::<Value>()).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return e.to_string(),
                Err(_) => {
                    return format!("no answer to PING within {:?}", options.response_timeout);
                }
            }
        }
    };
    tokio::select! {
        e = pump => e,
        e = health => e,
    }
}
