//! One store for what a server keeps between requests: tasks ([`TaskStore`]) and the
//! ledger of single-use rounds ([`Ledger`]). A backend implements both traits and is
//! handed to [`ServerBuilder::store`](crate::server::ServerBuilder::store) once; replicas
//! that share it share both tasks and claims.
//!
//! | backend | crate | scope |
//! |---|---|---|
//! | memory | this crate ([`MemoryStore`]) | one process |
//! | SQLite | `mcp-tool-store-sqlite` | the processes of one machine (one WAL file) |
//! | PostgreSQL | `mcp-tool-store-postgres` | a fleet |
//! | Redis | `mcp-tool-store-redis` | a fleet |
//!
//! Each backend passes the same suite (`tests/src/store_suite.rs` in the repository).
//!
//! Also here, for a backend's author: the ledger's contract ([`Ledger`], [`Claim`]), the
//! fleet-wide channel of changes ([`ChangeFeed`], carrying [`Change`]s between the replicas'
//! hubs, [`Changes`]), [`BoxFuture`], which their methods return, and, for a backend that
//! can become unreachable, its fail-fast [`ReconnectGate`] and the [`backoff`] it follows. The task store's
//! contract is in [`tasks`](crate::tasks).

use std::sync::Arc;
use std::time::SystemTime;

pub use crate::changes::{
    Change, ChangeFeed, Changes, Deliver, FeedError, HUB_CAPACITY, ListenerReady, ListenerTasks,
    MAX_ENCODED_CHANGE, MemoryFeed,
};
pub use crate::error::BoxFuture;
pub use crate::ledger::{Claim, Ledger, LedgerError, MemoryLedger, SWEEP_INTERVAL};
pub use crate::reconnect::{ReconnectGate, backoff};
use crate::tasks::{MemoryTaskStore, StoreError, StoredTask, TaskStore};

/// A store of tasks and single-use claims: any type that is both a [`TaskStore`] and a
/// [`Ledger`] (a blanket impl; nothing to write).
pub trait Store: TaskStore + Ledger {}

impl<T: TaskStore + Ledger> Store for T {}

/// Both in-process stores in one value: a [`MemoryTaskStore`] and a [`MemoryLedger`].
#[derive(Debug, Default)]
pub struct MemoryStore {
    tasks: MemoryTaskStore,
    ledger: MemoryLedger,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The ledger half (entries held, sweeping).
    pub fn ledger(&self) -> &MemoryLedger {
        &self.ledger
    }
}

impl TaskStore for MemoryStore {
    fn create<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<(), StoreError>> {
        self.tasks.create(task)
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredTask>, StoreError>> {
        self.tasks.get(id)
    }
    fn swap<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.tasks.swap(task)
    }
    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        TaskStore::remove_expired(&self.tasks, now_ms)
    }
}

impl Ledger for MemoryStore {
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        self.ledger.claim(id, principal, expires)
    }
    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        self.ledger.complete(id, outcome)
    }
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), LedgerError>> {
        self.ledger.release(id)
    }
    fn remove_expired(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, LedgerError>> {
        Ledger::remove_expired(&self.ledger, now)
    }
}
