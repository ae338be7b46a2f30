//! `serve --store URL`: which [`Store`] keeps what the example server keeps between
//! requests: its tasks and the ledger of its single-use rounds (`donate`).
//!
//! | URL | store |
//! | --- | --- |
//! | `sqlite:PATH` | [`SqliteStore`]: one file in WAL mode, shared by the processes of one machine; tasks and single-use claims survive a restart |
//! | `postgres://…` or `postgresql://…` (or a libpq `key=value` string after `postgres:`) | [`PostgresStore`]: shared by a fleet, tables `mcp_tasks` and `mcp_tasks_once`, TLS as `--store-sslmode` says |
//! | `redis://…`, `rediss://…` (TLS) or `redis+unix://…` | [`RedisStore`]: shared by a fleet, keys under `mcp:`; run Redis with `appendonly yes`, `appendfsync always` |
//! | `memory` | [`MemoryStore`]: this process only; lost on restart |
//!
//! Without `--store`, `serve` uses `sqlite:` with a file next to the notes database
//! ([`default_sqlite_path`]).
//!
//! Each shared store also carries the server's changes between replicas ([`open_with_feed`]:
//! the store's [`ChangeFeed`], which `serve` connects to its hub): PostgreSQL
//! `LISTEN/NOTIFY` on `mcp_tasks_changes`, Redis pub/sub on `mcp:changes`, SQLite a table
//! of recent changes in the file, polled every 100 ms. `memory` has no feed: changes stay
//! in the process.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_tool_runtime::store::ChangeFeed;
use mcp_tool_runtime::store::{MemoryStore, Store};
use mcp_tool_store_postgres::PostgresStore;
/// How a PostgreSQL store's connection is protected (re-exported for `serve`).
pub use mcp_tool_store_postgres::Tls;
use mcp_tool_store_redis::RedisStore;
use mcp_tool_store_sqlite::SqliteStore;

/// A parsed `--store` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// `memory`.
    Memory,
    /// `sqlite:PATH`.
    Sqlite(PathBuf),
    /// A PostgreSQL URL or libpq configuration string.
    Postgres(String),
    /// A Redis URL: `redis://`, `rediss://` (TLS) or `redis+unix://`.
    Redis(String),
}

impl std::str::FromStr for StoreUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "memory" {
            Ok(StoreUrl::Memory)
        } else if let Some(path) = s.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err("sqlite: needs a file, e.g. sqlite:/var/lib/mcp/tasks.sqlite3".into());
            }
            Ok(StoreUrl::Sqlite(path.into()))
        } else if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Ok(StoreUrl::Postgres(s.to_owned()))
        } else if let Some(conf) = s.strip_prefix("postgres:") {
            Ok(StoreUrl::Postgres(conf.to_owned()))
        } else if ["redis://", "rediss://", "redis+unix://"]
            .iter()
            .any(|p| s.starts_with(p))
        {
            Ok(StoreUrl::Redis(s.to_owned()))
        } else {
            Err(format!(
                "unknown store `{s}`: use sqlite:PATH, postgres://…, redis://… or memory"
            ))
        }
    }
}

/// The default store file (tasks and single-use claims), next to the notes database
/// `notes`: `notes.sqlite3` gives `notes.tasks.sqlite3` in the same directory (the name
/// predates the ledger; kept so that existing files are found).
pub fn default_sqlite_path(notes: &Path) -> PathBuf {
    let stem = notes
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "notes".into());
    notes.with_file_name(format!("{stem}.tasks.sqlite3"))
}

/// Opens the store `url` names, for tasks and single-use claims alike
/// ([`ServerBuilder::store`](mcp_tool_runtime::ServerBuilder::store)); `tls` protects a
/// PostgreSQL connection.
///
/// # Errors
/// The store cannot be opened (the text says why).
pub async fn open(url: &StoreUrl, tls: Tls) -> Result<Arc<dyn Store>, String> {
    Ok(open_with_feed(url, tls).await?.store)
}

/// An opened store and the feed that carries changes between the replicas sharing it.
pub struct Opened {
    /// Tasks and single-use claims.
    pub store: Arc<dyn Store>,
    /// The store's change feed; `None` for `memory` (nothing to share). Not listening yet:
    /// give it to [`Changes::connect`](mcp_tool_runtime::store::Changes::connect). A
    /// process that cannot hold a listener (a Lambda function) may still publish on it.
    pub feed: Option<Arc<dyn ChangeFeed>>,
}

/// [`open`], and the store's change feed (for SQLite this opens the feed's table in the
/// file).
///
/// # Errors
/// The store or its feed cannot be opened (the text says why).
pub async fn open_with_feed(url: &StoreUrl, tls: Tls) -> Result<Opened, String> {
    Ok(match url {
        StoreUrl::Memory => Opened {
            store: MemoryStore::new(),
            feed: None,
        },
        StoreUrl::Sqlite(path) => {
            let store = SqliteStore::open(path).await.map_err(|e| e.to_string())?;
            let feed = store
                .feed()
                .await
                .map_err(|e| format!("change feed: {e}"))?;
            Opened {
                store: Arc::new(store),
                feed: Some(Arc::new(feed)),
            }
        }
        StoreUrl::Postgres(conf) => {
            let store = Arc::new(
                PostgresStore::connect(conf, "mcp_tasks", tls)
                    .await
                    .map_err(|e| e.to_string())?,
            );
            Opened {
                feed: Some(Arc::new(store.feed())),
                store,
            }
        }
        StoreUrl::Redis(url) => {
            let store = Arc::new(RedisStore::connect(url).await.map_err(|e| e.to_string())?);
            Opened {
                feed: Some(Arc::new(store.feed())),
                store,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls_parse() {
        assert_eq!("memory".parse(), Ok(StoreUrl::Memory));
        assert_eq!(
            "sqlite:/tmp/t.db".parse(),
            Ok(StoreUrl::Sqlite("/tmp/t.db".into()))
        );
        assert_eq!(
            "sqlite://rel/t.db".parse(),
            Ok(StoreUrl::Sqlite("rel/t.db".into()))
        );
        assert_eq!(
            "postgres://u@h/db".parse(),
            Ok(StoreUrl::Postgres("postgres://u@h/db".into()))
        );
        assert_eq!(
            "postgres:host=h user=u".parse(),
            Ok(StoreUrl::Postgres("host=h user=u".into()))
        );
        assert!("sqlite:".parse::<StoreUrl>().is_err());
        assert_eq!(
            "redis://h:6379/0".parse(),
            Ok(StoreUrl::Redis("redis://h:6379/0".into()))
        );
        assert_eq!(
            "rediss://:pw@h/".parse(),
            Ok(StoreUrl::Redis("rediss://:pw@h/".into()))
        );
        assert!("redis:h".parse::<StoreUrl>().is_err());
        assert_eq!(
            default_sqlite_path(Path::new("/d/notes.sqlite3")),
            PathBuf::from("/d/notes.tasks.sqlite3")
        );
    }
}
