//! The change feed on SQLite ([`SqliteFeed`]): a table of recent changes in the store's
//! file, written by `publish` and polled by each listening process, carrying the runtime's
//! changes between the processes of one machine.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::store::{ChangeFeed, Deliver, FeedError, MAX_ENCODED_CHANGE};
use rusqlite::{Connection, params};

use crate::{OpenError, SqliteStore, epoch_ms, lock};

/// The feed's component in `mcp_schema` (its own, so that the tasks schema's version and
/// the binaries that know it are unaffected).
const COMPONENT: &str = "changes";

/// The feed's migrations (see the store's `MIGRATIONS`). Append only.
const MIGRATIONS: &[&str] = &[
    // 1: recent changes; AUTOINCREMENT so that an id is never reused after pruning
    "CREATE TABLE mcp_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at_ms INTEGER NOT NULL,
        body BLOB NOT NULL
    );
    CREATE INDEX mcp_changes_at ON mcp_changes (at_ms);",
];

/// How a [`SqliteFeed`] polls and prunes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedOptions {
    /// How often a listener reads the rows added since its last read. A change reaches the
    /// other processes after half of this on average, a whole interval at worst (plus the
    /// read). Default 100 ms.
    pub interval: Duration,
    /// Rows older than this are deleted (by every listener, every tenth of it). A listener
    /// that fell further behind loses them. Default 60 s.
    pub retention: Duration,
    /// The most rows one poll reads (the next poll reads on). Default 1000.
    pub batch: usize,
}

impl Default for FeedOptions {
    fn default() -> Self {
        FeedOptions {
            interval: Duration::from_millis(100),
            retention: Duration::from_secs(60),
            batch: 1000,
        }
    }
}

/// The change feed of a [`SqliteStore`]'s file (see [`SqliteStore::feed`]): the processes
/// of one machine that open the same file hear each other.
///
/// - **Publish:** one `INSERT` of the message (a BLOB: any bytes) and the time into the
///   table `mcp_changes`, on a connection of the feed's own, on tokio's blocking pool.
/// - **Listen:** a thread with a connection of its own reads the rows whose id is above
///   the last it read, every [`FeedOptions::interval`], in id order (SQLite has one writer
///   at a time, so ids are committed in order), and hands each to the hub; it starts after
///   the newest row present when `listen` was called. Every tenth of
///   [`FeedOptions::retention`] it deletes the rows older than the retention.
///
/// The cost of an idle listener is one indexed `SELECT` per interval (see
/// docs/OPERATIONS.md for the measured CPU). Delivery is at most once: a listener that
/// stopped (its process) misses what was published meanwhile. Dropping the feed stops its
/// listeners (within one interval).
pub struct SqliteFeed {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
    options: FeedOptions,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for SqliteFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteFeed")
            .field("path", &self.path)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Drop for SqliteFeed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl SqliteStore {
    /// The change feed of this store's file, with the default [`FeedOptions`] (a poll
    /// every 100 ms).
    ///
    /// # Errors
    /// As [`feed_with`](Self::feed_with).
    pub async fn feed(&self) -> Result<SqliteFeed, OpenError> {
        self.feed_with(FeedOptions::default()).await
    }

    /// The change feed of this store's file with `options`: opens a connection of its own
    /// and creates the table `mcp_changes` if missing (recorded as the component `changes`
    /// in `mcp_schema`).
    ///
    /// # Errors
    /// [`OpenError::Sqlite`] when the file cannot be opened or the table created,
    /// [`OpenError::NewerSchema`] when a newer build made the table, [`OpenError::Join`].
    pub async fn feed_with(&self, options: FeedOptions) -> Result<SqliteFeed, OpenError> {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let conn = open(&path)?;
            Ok(SqliteFeed {
                conn: Arc::new(Mutex::new(conn)),
                path,
                options,
                stop: Arc::new(AtomicBool::new(false)),
            })
        })
        .await
        .map_err(|e| OpenError::Join(e.to_string()))?
    }
}

/// A connection to `path` for the feed, its table migrated.
fn open(path: &Path) -> Result<Connection, OpenError> {
    let sqlite = |source| OpenError::Sqlite {
        path: path.to_owned(),
        source,
    };
    let mut conn = Connection::open(path).map_err(sqlite)?;
    conn.busy_timeout(SqliteStore::DEFAULT_BUSY_TIMEOUT)
        .map_err(sqlite)?;
    let found = crate::migrate(&mut conn, COMPONENT, MIGRATIONS).map_err(sqlite)?;
    let known = MIGRATIONS.len() as i64;
    if found > known {
        return Err(OpenError::NewerSchema {
            path: path.to_owned(),
            found,
            known,
        });
    }
    Ok(conn)
}

impl SqliteFeed {
    /// The options the feed polls with.
    pub fn options(&self) -> &FeedOptions {
        &self.options
    }
}

impl ChangeFeed for SqliteFeed {
    fn publish<'a>(&'a self, message: &'a [u8]) -> BoxFuture<'a, Result<(), FeedError>> {
        Box::pin(async move {
            if message.len() > MAX_ENCODED_CHANGE {
                return Err(FeedError(format!(
                    "sqlite: a message of {} bytes (the feed carries {MAX_ENCODED_CHANGE})",
                    message.len()
                )));
            }
            let (conn, body) = (self.conn.clone(), message.to_vec());
            tokio::task::spawn_blocking(move || {
                lock(&conn).execute(
                    "INSERT INTO mcp_changes (at_ms, body) VALUES (?1, ?2)",
                    params![epoch_ms(SystemTime::now()), body],
                )
            })
            .await
            .map_err(|e| FeedError(format!("sqlite: blocking task failed: {e}")))?
            .map(|_| ())
            .map_err(|e| FeedError(format!("sqlite: {e}")))
        })
    }

    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Result<(), FeedError>> {
        let (path, options, stop) = (self.path.clone(), self.options.clone(), self.stop.clone());
        Box::pin(async move {
            let started = tokio::task::spawn_blocking(move || {
                let conn = open(&path).map_err(|e| e.to_string())?;
                let last: i64 = conn
                    .query_row("SELECT coalesce(max(id), 0) FROM mcp_changes", [], |r| {
                        r.get(0)
                    })
                    .map_err(|e| e.to_string())?;
                std::thread::Builder::new()
                    .name("mcp-sqlite-feed".into())
                    .spawn(move || poll(conn, last, &options, &stop, &deliver))
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>(())
            })
            .await
            .map_err(|e| FeedError(format!("sqlite: blocking task failed: {e}")))?;
            started.map_err(|e| FeedError(format!("sqlite feed: {e}")))
        })
    }
}

/// The poller's loop: until `stop`, every interval the rows after `last`, then now and then
/// the pruning. Errors are logged (at most one warning per 10 s) and the loop goes on.
fn poll(
    conn: Connection,
    mut last: i64,
    options: &FeedOptions,
    stop: &AtomicBool,
    deliver: &Deliver,
) {
    let prune_every = (options.retention / 10).max(options.interval);
    let mut pruned = Instant::now();
    let mut warned: Option<Instant> = None;
    let batch = i64::try_from(options.batch.max(1)).unwrap_or(i64::MAX);
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(options.interval);
        let read = (|| -> rusqlite::Result<()> {
            let mut stmt = conn.prepare_cached(
                "SELECT id, body FROM mcp_changes WHERE id > ?1 ORDER BY id LIMIT ?2",
            )?;
            let mut rows = stmt.query(params![last, batch])?;
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                // a row written by hand with another type is skipped, never a panic
                // (and a row longer than any change is none of ours: not even decoded)
                if let Ok(body) = row.get_ref(1).and_then(|v| Ok(v.as_bytes()?))
                    && body.len() <= MAX_ENCODED_CHANGE
                {
                    deliver(body);
                }
                last = id;
            }
            if pruned.elapsed() >= prune_every {
                pruned = Instant::now();
                let cutoff = epoch_ms(
                    SystemTime::now()
                        .checked_sub(options.retention)
                        .unwrap_or(std::time::UNIX_EPOCH),
                );
                conn.prepare_cached("DELETE FROM mcp_changes WHERE at_ms < ?1")?
                    .execute([cutoff])?;
            }
            Ok(())
        })();
        if let Err(e) = read
            && warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(10))
        {
            warned = Some(Instant::now());
            tracing::warn!(error = %e, "sqlite change feed: a poll failed (retrying)");
        }
    }
}
