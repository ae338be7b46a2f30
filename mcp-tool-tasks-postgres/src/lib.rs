//! A shared [`TaskStore`] on PostgreSQL for fleets of `mcp-tool-runtime` servers: every
//! replica connects to the same database (and holds the same keyring), so a task started on
//! one replica is polled, answered, cancelled or taken over on any other.
//!
//! One row per task (`id`, `version`, `expires_at_ms`, `body`): `create` is an `INSERT … ON
//! CONFLICT DO NOTHING`, `swap` an `UPDATE … WHERE version = expected` (a writer that lost
//! the race changes nothing and retries on the fresh row), `remove_expired` a `DELETE` on
//! an index. The body is the runtime's JSON record; the store does not read it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_tool_tasks_postgres::PostgresTaskStore;
//! let store = PostgresTaskStore::connect("host=127.0.0.1 port=5432 user=mcp dbname=mcp", "mcp_tasks").await?;
//! let server = mcp_tool_runtime::Server::builder(mcp_tool_runtime::protocol::Implementation::new("s", "1"))
//!     .task_store(Arc::new(store))
//!     .build()?;
//! # let _ = server; Ok(()) }
//! ```

use mcp_tool_runtime::BoxFuture;
use mcp_tool_runtime::tasks::{StoreError, StoredTask, TaskStore};
use tokio_postgres::{Client, NoTls};

/// Tasks in a PostgreSQL table.
pub struct PostgresTaskStore {
    client: Client,
    table: String,
    connection: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PostgresTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTaskStore")
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl Drop for PostgresTaskStore {
    fn drop(&mut self) {
        self.connection.abort();
    }
}

/// Why the store could not be opened.
#[derive(Debug)]
pub enum ConnectError {
    /// The table name is not `[a-z_][a-z0-9_]{0,62}`.
    InvalidTable(String),
    /// Connecting or creating the table failed.
    Postgres(tokio_postgres::Error),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::InvalidTable(t) => write!(
                f,
                "invalid table name `{t}`: use 1 to 63 of a-z, 0-9 and _, not starting with a digit"
            ),
            ConnectError::Postgres(e) => write!(f, "postgres: {e}"),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectError::Postgres(e) => Some(e),
            ConnectError::InvalidTable(_) => None,
        }
    }
}

impl From<tokio_postgres::Error> for ConnectError {
    fn from(e: tokio_postgres::Error) -> Self {
        ConnectError::Postgres(e)
    }
}

fn valid_table(t: &str) -> bool {
    let mut chars = t.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && t.len() <= 63
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn backend(e: tokio_postgres::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl PostgresTaskStore {
    /// Connects with a libpq-style configuration string (no TLS: use it on a private network
    /// or a local socket) and creates `table` if needed.
    pub async fn connect(config: &str, table: &str) -> Result<Self, ConnectError> {
        if !valid_table(table) {
            return Err(ConnectError::InvalidTable(table.to_owned()));
        }
        let (client, connection) = tokio_postgres::connect(config, NoTls).await?;
        let connection = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::error!(error = %e, "task store connection ended");
            }
        });
        client
            .batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS {table} (
                    id TEXT PRIMARY KEY,
                    version BIGINT NOT NULL,
                    expires_at_ms BIGINT,
                    body TEXT NOT NULL
                );
                CREATE INDEX IF NOT EXISTS {table}_expires ON {table} (expires_at_ms)
                    WHERE expires_at_ms IS NOT NULL;"
            ))
            .await?;
        Ok(PostgresTaskStore {
            client,
            table: table.to_owned(),
            connection,
        })
    }

    /// The table.
    pub fn table(&self) -> &str {
        &self.table
    }
}

impl TaskStore for PostgresTaskStore {
    fn create<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let sql = format!(
                "INSERT INTO {} (id, version, expires_at_ms, body) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (id) DO NOTHING",
                self.table
            );
            let n = self
                .client
                .execute(
                    &sql,
                    &[
                        &task.id,
                        &to_i64(task.version),
                        &task.expires_at_ms.map(to_i64),
                        &task.body,
                    ],
                )
                .await
                .map_err(backend)?;
            if n == 0 {
                Err(StoreError::Exists)
            } else {
                Ok(())
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredTask>, StoreError>> {
        Box::pin(async move {
            let sql = format!(
                "SELECT version, expires_at_ms, body FROM {} WHERE id = $1",
                self.table
            );
            let row = self.client.query_opt(&sql, &[&id]).await.map_err(backend)?;
            // `try_get`: a table altered by hand is an error, never a panic.
            row.map(|r| {
                Ok(StoredTask {
                    id: id.to_owned(),
                    version: to_u64(r.try_get::<_, i64>(0).map_err(backend)?),
                    expires_at_ms: r.try_get::<_, Option<i64>>(1).map_err(backend)?.map(to_u64),
                    body: r.try_get(2).map_err(backend)?,
                })
            })
            .transpose()
        })
    }

    fn swap<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let Some(expected) = task.version.checked_sub(1) else {
                return Ok(false);
            };
            let sql = format!(
                "UPDATE {} SET version = $2, expires_at_ms = $3, body = $4
                 WHERE id = $1 AND version = $5",
                self.table
            );
            let n = self
                .client
                .execute(
                    &sql,
                    &[
                        &task.id,
                        &to_i64(task.version),
                        &task.expires_at_ms.map(to_i64),
                        &task.body,
                        &to_i64(expected),
                    ],
                )
                .await
                .map_err(backend)?;
            Ok(n == 1)
        })
    }

    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            let sql = format!("DELETE FROM {} WHERE expires_at_ms < $1", self.table);
            self.client
                .execute(&sql, &[&to_i64(now_ms)])
                .await
                .map_err(backend)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::valid_table;

    #[test]
    fn table_names_are_checked() {
        assert!(valid_table("mcp_tasks"));
        assert!(valid_table("_t2"));
        assert!(!valid_table("2t"));
        assert!(!valid_table("tasks; DROP TABLE x"));
        assert!(!valid_table(""));
        assert!(!valid_table(&"a".repeat(64)));
    }
}
