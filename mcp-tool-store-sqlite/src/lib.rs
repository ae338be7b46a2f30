//! A durable [`TaskStore`] in one SQLite file: the embedded default for a server on one
//! machine. Tasks survive a restart of the process, and several processes of the machine
//! (replicas behind one load balancer, a rolling restart) may open the same file at once.
//!
//! One row per task (`id`, `version`, `expires_at_ms`, `body`) in the table `mcp_tasks`:
//! `create` is an `INSERT … ON CONFLICT DO NOTHING`, `swap` an `UPDATE … WHERE version =
//! expected` (one statement, so atomic across processes: a writer that lost the race
//! changes nothing), `remove_expired` a `DELETE` on an index. The body is the runtime's JSON
//! record; the store does not read it.
//!
//! **Several processes.** The file is in WAL mode (readers never block the writer, nor the
//! writer the readers) with `synchronous = NORMAL` (a committed task survives a crash of
//! the process; a power loss may lose the last transactions, never corrupt the file) and a
//! busy timeout ([`SqliteTaskStore::DEFAULT_BUSY_TIMEOUT`]): a writer that finds the file
//! locked by another process waits instead of failing. WAL needs a local file system (not
//! NFS), as SQLite says.
//!
//! **Blocking.** SQLite's calls block; each operation runs on tokio's blocking pool
//! (`spawn_blocking`), never on an async worker, so a slow disk or a lock held by another
//! process does not stall the server.
//!
//! **Schema versions.** The table `mcp_schema (component, version)` records the version of
//! each component's schema (`tasks` here). Opening a file applies the missing migrations in
//! one `BEGIN IMMEDIATE` transaction (two processes opening a fresh file at once do not
//! both migrate), and refuses a file whose schema is newer than this build knows
//! ([`OpenError::NewerSchema`]): an old binary never writes a schema it does not understand.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_tool_store_sqlite::SqliteTaskStore;
//! let store = SqliteTaskStore::open("/var/lib/mcp/tasks.sqlite3").await?;
//! let server = mcp_tool_runtime::Server::builder(mcp_tool_runtime::protocol::Implementation::new("s", "1"))
//!     .task_store(Arc::new(store))
//!     .build()?;
//! # let _ = server; Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_tool_runtime::BoxFuture;
use mcp_tool_runtime::tasks::{StoreError, StoredTask, TaskStore};
use rusqlite::{Connection, OptionalExtension, params};

/// The component name of the tasks schema in `mcp_schema`.
const COMPONENT: &str = "tasks";

/// The migrations of the tasks schema, in order: entry `i` takes the schema from version
/// `i` to `i + 1`. Append only; never edit a released entry.
const MIGRATIONS: &[&str] = &["CREATE TABLE mcp_tasks (
        id TEXT PRIMARY KEY NOT NULL,
        version INTEGER NOT NULL,
        expires_at_ms INTEGER,
        body TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX mcp_tasks_expires ON mcp_tasks (expires_at_ms)
        WHERE expires_at_ms IS NOT NULL;"];

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// SQLite failed: the file cannot be created or opened, is not a database, or a
    /// migration failed.
    #[error("sqlite task store {path}: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// SQLite kept another journal mode than WAL (an in-memory database, or a file system
    /// without the shared memory WAL needs).
    #[error("sqlite task store {path}: journal mode {mode}, WAL is needed")]
    NotWal {
        /// The file.
        path: PathBuf,
        /// The journal mode in force.
        mode: String,
    },
    /// The file's tasks schema is newer than this build knows (a newer binary migrated it).
    #[error("sqlite task store {path}: schema version {found} is newer than this build's {known}")]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// The blocking thread that opens the file failed (panicked or was cancelled).
    #[error("sqlite task store: opening failed: {0}")]
    Join(String),
}

/// Tasks in a SQLite file. Cheap to share behind an `Arc`; one connection per value,
/// used by one blocking thread at a time.
#[derive(Clone)]
pub struct SqliteTaskStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTaskStore")
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

impl SqliteTaskStore {
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
        let found = migrate(&mut conn).map_err(sqlite)?;
        if found > Self::SCHEMA_VERSION {
            return Err(OpenError::NewerSchema {
                path,
                found,
                known: Self::SCHEMA_VERSION,
            });
        }
        Ok(SqliteTaskStore {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version recorded in the file.
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
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || f(&lock(&conn)).map_err(backend))
            .await
            .map_err(|e| StoreError::Backend(format!("blocking task failed: {e}")))?
    }
}

fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic inside a statement leaves no half-applied write (SQLite rolls the statement
    // back), so a poisoned connection is still usable.
    conn.lock().unwrap_or_else(|p| p.into_inner())
}

/// Brings the tasks schema to [`SqliteTaskStore::SCHEMA_VERSION`] in one immediate
/// transaction; returns the version found (a newer one is left untouched).
fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
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
            [COMPONENT],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0);
    let known = SqliteTaskStore::SCHEMA_VERSION;
    if found >= known {
        return Ok(found);
    }
    for step in &MIGRATIONS[usize::try_from(found).unwrap_or(0)..] {
        tx.execute_batch(step)?;
    }
    tx.execute(
        "INSERT INTO mcp_schema (component, version) VALUES (?1, ?2)
         ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        params![COMPONENT, known],
    )?;
    tx.commit()?;
    Ok(found)
}

impl TaskStore for SqliteTaskStore {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn migrations_are_recorded_and_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.sqlite3");
        let s = SqliteTaskStore::open(&file).await.unwrap();
        assert_eq!(
            s.schema_version().await.unwrap(),
            SqliteTaskStore::SCHEMA_VERSION
        );
        // reopening applies nothing twice
        let again = SqliteTaskStore::open(&file).await.unwrap();
        assert_eq!(again.schema_version().await.unwrap(), 1);
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
        match SqliteTaskStore::open(&file).await {
            Err(OpenError::NewerSchema {
                found: 99,
                known: 1,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_file_that_is_not_a_database_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("junk");
        std::fs::write(&file, vec![7u8; 4096]).unwrap();
        assert!(matches!(
            SqliteTaskStore::open(&file).await,
            Err(OpenError::Sqlite { .. })
        ));
    }
}
