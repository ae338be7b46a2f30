//! The storage contract of tasks: one opaque JSON body per task with a version, written
//! atomically (compare-and-swap), so two replicas racing on one task never lose an update.

use crate::error::BoxFuture;

/// One stored task: its id, its version (1 when created, +1 on every successful swap), when
/// it may be collected, and the JSON of its [`TaskRecord`](super::TaskRecord).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTask {
    /// The task id.
    pub id: String,
    /// The version.
    pub version: u64,
    /// Unix milliseconds after which the task may be deleted (`None`: never).
    pub expires_at_ms: Option<u64>,
    /// The record, as JSON.
    pub body: String,
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// `create` found the id taken.
    #[error("a task with this id exists")]
    Exists,
    /// The backend failed (connection, query…); the text is for the log.
    #[error("task store: {0}")]
    Backend(String),
}

/// Where tasks live. Object safe; share one value between the replicas of a fleet (a
/// database) or keep it in-process ([`MemoryTaskStore`](super::MemoryTaskStore)).
///
/// Every write is atomic per task. Implementations do not interpret the body.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task (`task.version` is 1). [`StoreError::Exists`] when the id is taken.
    /// Returns only once a `get` of the id (on any replica) would find it.
    fn create<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The task with this id, if stored.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredTask>, StoreError>>;

    /// Replaces the task iff its stored version is `task.version - 1`; `Ok(false)` when
    /// another writer got there first (or the task is gone).
    fn swap<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Deletes the tasks whose `expires_at_ms` is before `now_ms`; how many went.
    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>>;
}
