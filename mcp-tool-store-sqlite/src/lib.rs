//! A durable [`Store`](mcp_tool_runtime::store::Store) in one SQLite file: tasks
//! ([`TaskStore`]) and the ledger of single-use rounds ([`Ledger`]), the embedded default
//! for a server on one machine. Tasks and claims survive a restart of the process, and
//! several processes of the machine (replicas behind one load balancer, a rolling restart)
//! may open the same file at once: they share the tasks, and a single-use state claimed by
//! one of them is claimed for all.
//!
//! **Tasks.** One row per task (`id`, `version`, `expires_at_ms`, `body`) in the table
//! `mcp_tasks`: `create` is an `INSERT … ON CONFLICT DO NOTHING`, `swap` an `UPDATE … WHERE
//! version = expected` (one statement, so atomic across processes: a writer that lost the
//! race changes nothing), `remove_expired` a `DELETE` on an index. The body is the runtime's
//! JSON record; the store does not read it.
//!
//! **Ledger.** One row per claimed single-use id (`id`, `principal`, `expires_ms`,
//! `outcome`, a BLOB that stays NULL while the round runs) in the table `mcp_once`. A claim
//! is one `BEGIN IMMEDIATE` transaction (SQLite's write lock, held by one connection of one
//! process at a time) of two statements:
//!
//! ```sql
//! INSERT INTO mcp_once (id, principal, expires_ms, outcome) VALUES (?1, ?2, ?3, NULL)
//!   ON CONFLICT (id) DO UPDATE SET principal = excluded.principal,
//!     expires_ms = excluded.expires_ms, outcome = NULL
//!   WHERE mcp_once.expires_ms <= ?4   -- now: only an expired entry is taken over
//!   RETURNING 1;
//! -- no row returned: the id is held, read what holds it
//! SELECT principal, outcome FROM mcp_once WHERE id = ?1;
//! ```
//!
//! so of concurrent claims of one id, in any processes, exactly one gets
//! [`Claim::Claimed`]; the others see [`Claim::Running`] or, once it is stored, the outcome
//! ([`Claim::Done`]; another principal never gets it). `complete` fills only a held row
//! (`outcome IS NULL`), `release` deletes only a row without outcome, `remove_expired`
//! deletes the rows whose expiry has passed.
//!
//! **Several processes.** The file is in WAL mode (readers never block the writer, nor the
//! writer the readers) with `synchronous = NORMAL` (a committed task or claim survives a
//! crash of the process; a power loss may lose the last transactions, never corrupt the
//! file) and a busy timeout ([`SqliteStore::DEFAULT_BUSY_TIMEOUT`]): a writer that finds
//! the file locked by another process waits instead of failing. WAL needs a local file
//! system (not NFS), as SQLite says.
//!
//! **Blocking.** SQLite's calls block; each operation runs on tokio's blocking pool
//! (`spawn_blocking`), never on an async worker, so a slow disk or a lock held by another
//! process does not stall the server.
//!
//! **Schema versions.** The table `mcp_schema (component, version)` records the version of
//! the store's schema (component `tasks`, a name kept from before the ledger: version 1 is
//! the tasks table, version 2 adds `mcp_once`). Opening a file applies the missing
//! migrations in one `BEGIN IMMEDIATE` transaction (two processes opening a fresh file at
//! once do not both migrate), and refuses a file whose schema is newer than this build
//! knows ([`OpenError::NewerSchema`]): an old binary never writes a schema it does not
//! understand.
//!
//! **Change feed.** [`SqliteStore::feed`] gives the [`SqliteFeed`] of the file: the
//! runtime's changes (list changes, resource updates, task statuses) are rows of the table
//! `mcp_changes` that each listening process polls (every 100 ms by default,
//! [`FeedOptions`]), so that the processes sharing the file hear each other
//! (`server.changes().connect(Arc::new(store.feed().await?))`). Rows older than a minute
//! are pruned; at most once.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_tool_store_sqlite::SqliteStore;
//! let store = SqliteStore::open("/var/lib/mcp/store.sqlite3").await?;
//! // tasks and the single-use ledger, both in the file
//! let server = mcp_tool_runtime::Server::builder(mcp_tool_runtime::protocol::Implementation::new("s", "1"))
//!     .store(Arc::new(store))
//!     .build()?;
//! # let _ = server; Ok(()) }
//! ```

#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::store::{Claim, Ledger, LedgerError};
use mcp_tool_runtime::tasks::{Counted, StoreError, StoredTask, TaskAllowance, TaskStore};
use rusqlite::{Connection, OptionalExtension, params};

mod feed;
pub use feed::{FeedOptions, SqliteFeed};

/// The component name of the store's schema in `mcp_schema` (named before the ledger
/// joined the tasks; kept so that files of version 1 are recognised).
const COMPONENT: &str = "tasks";

/// The migrations of the store's schema, in order: entry `i` takes the schema from version
/// `i` to `i + 1`. Append only; never edit a released entry.
const MIGRATIONS: &[&str] = &[
    // 1: tasks
    "CREATE TABLE mcp_tasks (
        id TEXT PRIMARY KEY NOT NULL,
        version INTEGER NOT NULL,
        expires_at_ms INTEGER,
        body TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX mcp_tasks_expires ON mcp_tasks (expires_at_ms)
        WHERE expires_at_ms IS NOT NULL;",
    // 2: the ledger of single-use rounds (a rowid table: outcomes may be large)
    "CREATE TABLE mcp_once (
        id TEXT PRIMARY KEY NOT NULL,
        principal TEXT NOT NULL,
        expires_ms INTEGER NOT NULL,
        outcome BLOB
    );
    CREATE INDEX mcp_once_expires ON mcp_once (expires_ms);",
    // 3: the owner of each task, counted by `create_counted` (tasks stored before have
    // none: they count in the total only)
    "ALTER TABLE mcp_tasks ADD COLUMN owner TEXT;
    CREATE INDEX mcp_tasks_owner ON mcp_tasks (owner, expires_at_ms) WHERE owner IS NOT NULL;",
];

/// How many times a claim starts over when the row it lost to changed under it. Within
/// one immediate transaction that cannot happen; the bound keeps a misbehaving database
/// from looping.
const CLAIM_ATTEMPTS: usize = 3;

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// SQLite failed: the file cannot be created or opened, is not a database, or a
    /// migration failed.
    #[error("sqlite store {path}: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// SQLite kept another journal mode than WAL (an in-memory database, or a file system
    /// without the shared memory WAL needs).
    #[error("sqlite store {path}: journal mode {mode}, WAL is needed")]
    NotWal {
        /// The file.
        path: PathBuf,
        /// The journal mode in force.
        mode: String,
    },
    /// The file's schema is newer than this build knows (a newer binary migrated it).
    #[error(
        "sqlite store {path}: schema version {found} is newer than this build's {known}: run a newer build, or another file"
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// The blocking thread that opens the file failed (panicked or was cancelled).
    #[error("sqlite store: opening failed: {0}")]
    Join(String),
}

/// Tasks and single-use claims in a SQLite file: a [`TaskStore`] and a [`Ledger`], so a
/// [`Store`](mcp_tool_runtime::store::Store) for
/// [`ServerBuilder::store`](mcp_tool_runtime::ServerBuilder::store). Cheap to share behind
/// an `Arc`; one connection per value, used by one blocking thread at a time.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn ledger_error(e: StoreError) -> LedgerError {
    LedgerError(match e {
        StoreError::Backend(m) => format!("sqlite: {m}"),
        other => other.to_string(),
    })
}

/// Milliseconds since the Unix epoch (0 before it, `i64::MAX` far after it).
fn epoch_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl SqliteStore {
    /// How long a write waits for a lock held by another connection (another process)
    /// before it fails with "database is locked".
    pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

    /// The newest schema version of this build.
    pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

    /// Opens (creating if missing) the database file at `path` with
    /// [`DEFAULT_BUSY_TIMEOUT`](Self::DEFAULT_BUSY_TIMEOUT), switches it to WAL and applies
    /// the missing migrations.
    ///
    /// # Errors
    /// [`OpenError::Sqlite`] (the file cannot be opened or migrated), [`OpenError::NotWal`],
    /// [`OpenError::NewerSchema`], [`OpenError::Join`].
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        Self::open_with(path, Self::DEFAULT_BUSY_TIMEOUT).await
    }

    /// [`open`](Self::open) with another busy timeout.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub async fn open_with(
        path: impl AsRef<Path>,
        busy_timeout: Duration,
    ) -> Result<Self, OpenError> {
        let path = path.as_ref().to_path_buf();
        let p = path.clone();
        tokio::task::spawn_blocking(move || Self::open_blocking(p, busy_timeout))
            .await
            .map_err(|e| OpenError::Join(e.to_string()))?
    }

    fn open_blocking(path: PathBuf, busy_timeout: Duration) -> Result<Self, OpenError> {
        let sqlite = |source| OpenError::Sqlite {
            path: path.clone(),
            source,
        };
        let mut conn = Connection::open(&path).map_err(sqlite)?;
        conn.busy_timeout(busy_timeout).map_err(sqlite)?;
        // `journal_mode` answers the mode in force: a file system without shared memory
        // support may keep another one.
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(sqlite)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(OpenError::NotWal { path, mode });
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL;")
            .map_err(sqlite)?;
        let found = migrate(&mut conn, COMPONENT, MIGRATIONS).map_err(sqlite)?;
        if found > Self::SCHEMA_VERSION {
            return Err(OpenError::NewerSchema {
                path,
                found,
                known: Self::SCHEMA_VERSION,
            });
        }
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version recorded in the file (version 1: tasks; 2: tasks and the ledger).
    ///
    /// # Errors
    /// [`StoreError::Backend`] when SQLite fails.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        self.run(|c| {
            c.query_row(
                "SELECT version FROM mcp_schema WHERE component = ?1",
                [COMPONENT],
                |r| r.get(0),
            )
        })
        .await
    }

    /// Runs `f` with the connection on the blocking pool.
    async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || f(&mut lock(&conn)).map_err(backend))
            .await
            .map_err(|e| StoreError::Backend(format!("blocking task failed: {e}")))?
    }
}

fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic inside a statement leaves no half-applied write (SQLite rolls the statement
    // back), so a poisoned connection is still usable.
    conn.lock().unwrap_or_else(|p| p.into_inner())
}

/// Brings `component`'s tables in the file to the newest of its `migrations` (append-only
/// SQL batches; version N is the first N applied) in one immediate transaction, recorded in
/// the shared `mcp_schema` table; returns the version found (a newer one is left
/// untouched). The store's tables are component `tasks`, the change feed's `changes`.
pub(crate) fn migrate(
    conn: &mut Connection,
    component: &str,
    migrations: &[&str],
) -> rusqlite::Result<i64> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS mcp_schema (
            component TEXT PRIMARY KEY NOT NULL,
            version INTEGER NOT NULL
        );",
    )?;
    let found: i64 = tx
        .query_row(
            "SELECT version FROM mcp_schema WHERE component = ?1",
            [component],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0);
    let known = migrations.len() as i64;
    if found >= known {
        return Ok(found);
    }
    for step in &migrations[usize::try_from(found).unwrap_or(0)..] {
        tx.execute_batch(step)?;
    }
    tx.execute(
        "INSERT INTO mcp_schema (component, version) VALUES (?1, ?2)
         ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        params![component, known],
    )?;
    tx.commit()?;
    Ok(found)
}

impl TaskStore for SqliteStore {
    fn create<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<(), StoreError>> {
        let task = task.clone();
        Box::pin(async move {
            let n = self
                .run(move |c| {
                    c.prepare_cached(
                        "INSERT INTO mcp_tasks (id, version, expires_at_ms, body)
                         VALUES (?1, ?2, ?3, ?4) ON CONFLICT (id) DO NOTHING",
                    )?
                    .execute(params![
                        task.id,
                        to_i64(task.version),
                        task.expires_at_ms.map(to_i64),
                        task.body
                    ])
                })
                .await?;
            if n == 0 {
                Err(StoreError::Exists)
            } else {
                Ok(())
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredTask>, StoreError>> {
        let id = id.to_owned();
        Box::pin(async move {
            self.run(move |c| {
                c.prepare_cached(
                    "SELECT version, expires_at_ms, body FROM mcp_tasks WHERE id = ?1",
                )?
                .query_row([&id], |r| {
                    Ok(StoredTask {
                        id: id.clone(),
                        version: to_u64(r.get(0)?),
                        expires_at_ms: r.get::<_, Option<i64>>(1)?.map(to_u64),
                        body: r.get(2)?,
                    })
                })
                .optional()
            })
            .await
        })
    }

    fn swap<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<bool, StoreError>> {
        let task = task.clone();
        Box::pin(async move {
            let Some(expected) = task.version.checked_sub(1) else {
                return Ok(false);
            };
            let n = self
                .run(move |c| {
                    c.prepare_cached(
                        "UPDATE mcp_tasks SET version = ?2, expires_at_ms = ?3, body = ?4
                         WHERE id = ?1 AND version = ?5",
                    )?
                    .execute(params![
                        task.id,
                        to_i64(task.version),
                        task.expires_at_ms.map(to_i64),
                        task.body,
                        to_i64(expected)
                    ])
                })
                .await?;
            Ok(n == 1)
        })
    }

    /// Counts and stores in one immediate transaction: every process on the file waits for
    /// it, so the allowances hold across all of them.
    fn create_counted<'a>(
        &'a self,
        task: &'a StoredTask,
        owner: &'a str,
        allowance: TaskAllowance,
    ) -> BoxFuture<'a, Result<Counted, StoreError>> {
        let task = task.clone();
        let owner = owner.to_owned();
        Box::pin(async move {
            let counted = self
                .run(move |c| {
                    let tx =
                        c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    let now = to_i64(allowance.now_ms);
                    let (total, mine): (i64, i64) = tx
                        .prepare_cached(
                            "SELECT count(*), count(*) FILTER (WHERE owner = ?2) FROM mcp_tasks
                             WHERE expires_at_ms IS NULL OR expires_at_ms >= ?1",
                        )?
                        .query_row(params![now, owner], |r| Ok((r.get(0)?, r.get(1)?)))?;
                    let at_most = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
                    if total >= at_most(allowance.total) {
                        return Ok(Counted::StoreFull);
                    }
                    if mine >= at_most(allowance.per_owner) {
                        return Ok(Counted::OwnerFull);
                    }
                    let n = tx
                        .prepare_cached(
                            "INSERT INTO mcp_tasks (id, version, expires_at_ms, body, owner)
                             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO NOTHING",
                        )?
                        .execute(params![
                            task.id,
                            to_i64(task.version),
                            task.expires_at_ms.map(to_i64),
                            task.body,
                            owner
                        ])?;
                    tx.commit()?;
                    // `NotCounted` never comes from here: it stands for "taken" below
                    Ok(if n == 0 {
                        Counted::NotCounted
                    } else {
                        Counted::Stored
                    })
                })
                .await?;
            match counted {
                Counted::NotCounted => Err(StoreError::Exists),
                other => Ok(other),
            }
        })
    }

    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            let n = self
                .run(move |c| {
                    c.prepare_cached("DELETE FROM mcp_tasks WHERE expires_at_ms < ?1")?
                        .execute([to_i64(now_ms)])
                })
                .await?;
            Ok(u64::try_from(n).unwrap_or(u64::MAX))
        })
    }
}

/// `claim`'s first statement: takes a free or expired id; a row comes back iff it did.
const CLAIM_SQL: &str = "INSERT INTO mcp_once (id, principal, expires_ms, outcome)
    VALUES (?1, ?2, ?3, NULL)
    ON CONFLICT (id) DO UPDATE SET principal = excluded.principal,
        expires_ms = excluded.expires_ms, outcome = NULL
    WHERE mcp_once.expires_ms <= ?4
    RETURNING 1";

/// What a claim that lost finds in the row that holds the id; `None` when the row no
/// longer holds it (expired), and the claim must start over.
fn held_by(found: (String, i64, Option<Vec<u8>>), principal: &str, now_ms: i64) -> Option<Claim> {
    let (holder, expires_ms, outcome) = found;
    if expires_ms <= now_ms {
        None
    } else if holder != principal {
        // another principal's id (cannot happen with sealed ids): never its outcome
        Some(Claim::Running)
    } else {
        Some(outcome.map_or(Claim::Running, Claim::Done))
    }
}

/// One claim, in one immediate transaction: the upsert, and when it lost, the row it lost
/// to. `None`: the row changed under the claim (not possible inside the transaction; the
/// caller starts over a bounded number of times).
fn claim_once(
    c: &mut Connection,
    id: &str,
    principal: &str,
    expires_ms: i64,
    now_ms: i64,
) -> rusqlite::Result<Option<Claim>> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let won = tx
        .prepare_cached(CLAIM_SQL)?
        .query_row(params![id, principal, expires_ms, now_ms], |_| Ok(()))
        .optional()?
        .is_some();
    let claim = if won {
        Some(Claim::Claimed)
    } else {
        tx.prepare_cached("SELECT principal, expires_ms, outcome FROM mcp_once WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?
            .and_then(|found| held_by(found, principal, now_ms))
    };
    tx.commit()?;
    Ok(claim)
}

impl Ledger for SqliteStore {
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        let (id, principal) = (id.to_owned(), principal.to_owned());
        let expires_ms = epoch_ms(expires);
        Box::pin(async move {
            let claim = self
                .run(move |c| {
                    for _ in 0..CLAIM_ATTEMPTS {
                        let now_ms = epoch_ms(SystemTime::now());
                        if let Some(claim) = claim_once(c, &id, &principal, expires_ms, now_ms)? {
                            return Ok(Some(claim));
                        }
                    }
                    Ok(None)
                })
                .await
                .map_err(ledger_error)?;
            claim.ok_or_else(|| {
                LedgerError(format!(
                    "sqlite: the claim of a single-use id changed under {CLAIM_ATTEMPTS} attempts"
                ))
            })
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        let id = id.to_owned();
        Box::pin(async move {
            self.run(move |c| {
                c.prepare_cached(
                    "UPDATE mcp_once SET outcome = ?2 WHERE id = ?1 AND outcome IS NULL",
                )?
                .execute(params![id, outcome])
            })
            .await
            .map_err(ledger_error)?;
            Ok(())
        })
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), LedgerError>> {
        let id = id.to_owned();
        Box::pin(async move {
            self.run(move |c| {
                c.prepare_cached("DELETE FROM mcp_once WHERE id = ?1 AND outcome IS NULL")?
                    .execute([id])
            })
            .await
            .map_err(ledger_error)?;
            Ok(())
        })
    }

    fn remove_expired(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, LedgerError>> {
        let now_ms = epoch_ms(now);
        Box::pin(async move {
            let n = self
                .run(move |c| {
                    c.prepare_cached("DELETE FROM mcp_once WHERE expires_ms < ?1")?
                        .execute([now_ms])
                })
                .await
                .map_err(ledger_error)?;
            Ok(u64::try_from(n).unwrap_or(u64::MAX))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn migrations_are_recorded_and_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.sqlite3");
        let s = SqliteStore::open(&file).await.unwrap();
        assert_eq!(SqliteStore::SCHEMA_VERSION, 3);
        assert_eq!(s.schema_version().await.unwrap(), 3);
        // reopening applies nothing twice
        let again = SqliteStore::open(&file).await.unwrap();
        assert_eq!(again.schema_version().await.unwrap(), 3);
        let mode: String = lock(&again.conn)
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        lock(&s.conn)
            .execute(
                "UPDATE mcp_schema SET version = 99 WHERE component = 'tasks'",
                [],
            )
            .unwrap();
        match SqliteStore::open(&file).await {
            Err(
                e @ OpenError::NewerSchema {
                    found: 99,
                    known: 3,
                    ..
                },
            ) => assert!(e.to_string().contains("newer than this build's 3"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    /// A file written by the tasks-only build (schema version 1) gains the ledger table
    /// when opened, and keeps its tasks.
    #[tokio::test]
    async fn a_version_1_file_is_migrated_to_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v1.sqlite3");
        {
            let c = Connection::open(&file).unwrap();
            c.execute_batch(
                "CREATE TABLE mcp_schema (component TEXT PRIMARY KEY NOT NULL, version INTEGER NOT NULL);
                 INSERT INTO mcp_schema VALUES ('tasks', 1);",
            )
            .unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute("INSERT INTO mcp_tasks VALUES ('old', 1, NULL, '{}')", [])
                .unwrap();
        }
        let s = SqliteStore::open(&file).await.unwrap();
        assert_eq!(s.schema_version().await.unwrap(), 3);
        assert_eq!(s.get("old").await.unwrap().unwrap().body, "{}");
        let later = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(s.claim("x", "p", later).await, Ok(Claim::Claimed));
        s.complete("x", vec![0, 255]).await.unwrap();
        assert_eq!(
            s.claim("x", "p", later).await,
            Ok(Claim::Done(vec![0, 255]))
        );
    }

    #[tokio::test]
    async fn a_file_that_is_not_a_database_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("junk");
        std::fs::write(&file, vec![7u8; 4096]).unwrap();
        assert!(matches!(
            SqliteStore::open(&file).await,
            Err(OpenError::Sqlite { .. })
        ));
    }
}
