//! The change feed on PostgreSQL ([`PostgresFeed`]): `LISTEN/NOTIFY` on a channel named
//! after the store's table, carrying the runtime's changes between the replicas of a fleet.

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::store::{ChangeFeed, Deliver, FeedError, ListenerTasks, MAX_ENCODED_CHANGE};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tokio_postgres::tls::TlsStream;
use tokio_postgres::{AsyncMessage, Client, Connection, NoTls};

use crate::{Dialer, PostgresStore};

/// How often the listening connection is checked with a `SELECT 1` (a connection whose
/// peer vanished without a reset shows no error by itself).
const HEALTH_CHECK: Duration = Duration::from_secs(10);

/// The change feed of a [`PostgresStore`] (see [`PostgresStore::feed`]): replicas connected
/// to one database with the same table name hear each other; another table name is another
/// channel.
///
/// - **Publish:** `SELECT pg_notify(channel, message)` on one of the store's pooled
///   connections (bounded like every store operation). The message must be UTF-8 text (a
///   `NOTIFY` payload is text) of at most [`MAX_ENCODED_CHANGE`] bytes.
/// - **Listen:** a connection of its own (not from the pool: a listening connection is
///   held for good), dialled like the store's (same configuration, same TLS), that runs
///   `LISTEN channel` and hands each notification's payload to the hub. Every 10 s it runs `SELECT 1`; when that fails or the connection ends (the
///   database restarted, a network cut), it dials again with the store's backoff
///   ([`PoolOptions::backoff_initial`](crate::PoolOptions::backoff_initial) doubling to
///   [`PoolOptions::backoff_max`](crate::PoolOptions::backoff_max)). Notifications sent
///   while it was away are lost: delivery is at most once, and listeners re-list after a
///   gap (PostgreSQL keeps no history of `NOTIFY`).
///
/// Dropping the feed stops its listener.
pub struct PostgresFeed {
    store: Arc<PostgresStore>,
    channel: String,
    listener: ListenerTasks,
}

impl std::fmt::Debug for PostgresFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresFeed")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// The change feed of this store's deployment: channel `<table>_changes`, published on
    /// this store's pool, heard on a connection of its own (see [`PostgresFeed`]).
    pub fn feed(self: &Arc<Self>) -> PostgresFeed {
        PostgresFeed {
            store: self.clone(),
            channel: format!("{}_changes", self.table),
            listener: ListenerTasks::new(),
        }
    }
}

impl PostgresFeed {
    /// The `LISTEN/NOTIFY` channel (`<table>_changes`).
    pub fn channel(&self) -> &str {
        &self.channel
    }
}

impl ChangeFeed for PostgresFeed {
    fn publish<'a>(&'a self, message: &'a [u8]) -> BoxFuture<'a, Result<(), FeedError>> {
        Box::pin(async move {
            if message.len() > MAX_ENCODED_CHANGE {
                return Err(FeedError(format!(
                    "postgres: a message of {} bytes (NOTIFY takes {MAX_ENCODED_CHANGE})",
                    message.len()
                )));
            }
            let text = std::str::from_utf8(message)
                .map_err(|_| FeedError("postgres: NOTIFY carries text, not bytes".into()))?;
            self.store
                .bounded(async {
                    self.store
                        .client()
                        .await?
                        .execute("SELECT pg_notify($1, $2)", &[&self.channel, &text])
                        .await
                        .map_err(crate::backend)
                })
                .await
                .map(|_| ())
                .map_err(|e| FeedError(format!("postgres: {e}")))
        })
    }

    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Result<(), FeedError>> {
        Box::pin(async move {
            let what = format!("postgres LISTEN {}", self.channel);
            self.listener
                .start(&what, |ready| {
                    keep_listening(
                        self.store.dialer.clone(),
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

/// The listener: one session after another, until aborted. The first session's outcome
/// goes to `ready` (a failure there ends the listener: the caller reports it); later
/// failures are logged and followed by a new attempt after the backoff.
async fn keep_listening(
    dialer: Dialer,
    options: crate::PoolOptions,
    channel: String,
    deliver: Deliver,
    ready: oneshot::Sender<Result<(), String>>,
) {
    let mut ready = Some(ready);
    let mut backoff = crate::backoff_schedule(&options);
    let mut failures = 0u32;
    loop {
        let (listening, mut started) = oneshot::channel();
        let session = session(&dialer, &options, &channel, &deliver, listening);
        tokio::pin!(session);
        let ended = tokio::select! {
            biased;
            ended = &mut session => ended,
            ok = &mut started => {
                if ok.is_ok() {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Ok(()));
                    } else {
                        tracing::info!(channel, "change feed listening again");
                    }
                    backoff = crate::backoff_schedule(&options);
                    failures = 0;
                }
                session.await
            }
        };
        let Err(e) = ended;
        if let Some(r) = ready.take() {
            let _ = r.send(Err(e));
            return;
        }
        let pause = backoff.next().unwrap_or(options.backoff_max);
        // the first failure after a session, then every tenth attempt: a long outage does
        // not flood the log
        if failures.is_multiple_of(10) {
            tracing::warn!(channel, error = %e, failures, retry_in_ms = pause.as_millis() as u64,
                "change feed cannot listen (changes meanwhile are lost)");
        }
        failures += 1;
        tokio::time::sleep(pause).await;
    }
}

/// One listening session: dials (bounded by the configuration's `connect_timeout`, which
/// [`PostgresStore::connect_with`] sets unless the string has its own), `LISTEN`s, tells
/// `started`, then runs until the connection fails (never `Ok`).
async fn session(
    dialer: &Dialer,
    options: &crate::PoolOptions,
    channel: &str,
    deliver: &Deliver,
    started: oneshot::Sender<()>,
) -> Result<std::convert::Infallible, String> {
    match &dialer.tls {
        Some(connector) => {
            let (client, connection) = dialer
                .pg
                .connect(connector.clone())
                .await
                .map_err(|e| e.to_string())?;
            drive(client, connection, channel, deliver, started, options).await
        }
        None => {
            let (client, connection) = dialer.pg.connect(NoTls).await.map_err(|e| e.to_string())?;
            drive(client, connection, channel, deliver, started, options).await
        }
    }
}

/// Drives one connection: its messages are polled here (notifications go to `deliver`),
/// while `LISTEN` and then the periodic health check run on the client.
async fn drive<S, T>(
    client: Client,
    mut connection: Connection<S, T>,
    channel: &str,
    deliver: &Deliver,
    started: oneshot::Sender<()>,
    options: &crate::PoolOptions,
) -> Result<std::convert::Infallible, String>
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: TlsStream + Unpin,
{
    let pump = std::future::poll_fn(|cx| {
        loop {
            match connection.poll_message(cx) {
                Poll::Ready(Some(Ok(AsyncMessage::Notification(n)))) => {
                    // Only our channel is listened to; the payload is text to PostgreSQL,
                    // bytes to the hub (which drops what is not a change).
                    if n.channel() == channel {
                        deliver(n.payload().as_bytes());
                    }
                }
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(Some(Err(e))) => return Poll::Ready(e.to_string()),
                Poll::Ready(None) => return Poll::Ready("the connection closed".to_owned()),
                Poll::Pending => return Poll::Pending,
            }
        }
    });
    let work = async {
        let limit = options.statement_timeout + Duration::from_secs(1);
        // `channel` is `<table>_changes`, the table a checked identifier.
        let sql = format!("LISTEN {channel}");
        let listen = client.batch_execute(&sql);
        match tokio::time::timeout(limit, listen).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return crate::backend(e).to_string(),
            Err(_) => return format!("no answer to LISTEN within {limit:?}"),
        }
        let _ = started.send(());
        loop {
            tokio::time::sleep(HEALTH_CHECK).await;
            match tokio::time::timeout(limit, client.simple_query("SELECT 1")).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return e.to_string(),
                Err(_) => return format!("no answer to the health check within {limit:?}"),
            }
        }
    };
    tokio::select! {
        e = pump => Err(e),
        e = work => Err(e),
    }
}
