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

/// The allowances a new task is counted against by a shared store
/// ([`TaskStore::create_counted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskAllowance {
    /// Unexpired tasks one owner may have in the store
    /// ([`TaskConfig::max_tasks_per_principal`](super::TaskConfig::max_tasks_per_principal)).
    pub per_owner: usize,
    /// Unexpired tasks the store may hold for all owners together
    /// ([`TaskConfig::max_stored_tasks`](super::TaskConfig::max_stored_tasks)).
    pub total: usize,
    /// Now, in Unix milliseconds: tasks whose `expires_at_ms` is before it do not count.
    pub now_ms: u64,
}

/// What [`TaskStore::create_counted`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// The task is stored, and counted against its owner and the total.
    Stored,
    /// Nothing stored: the owner has `per_owner` unexpired tasks already.
    OwnerFull,
    /// Nothing stored: the store holds `total` unexpired tasks already.
    StoreFull,
    /// Nothing stored: this store does not count (the server counts per replica and calls
    /// [`TaskStore::create`]).
    NotCounted,
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

    /// Stores a new task of `owner` (`""`: the anonymous callers together) as
    /// [`create`](Self::create) does, only if the owner's unexpired tasks in the store stay
    /// under `allowance.per_owner` and all unexpired tasks under `allowance.total`, counted
    /// and stored in one atomic step: the allowances then hold for every replica that
    /// shares the store. The default stores nothing and answers [`Counted::NotCounted`]:
    /// the server then counts the tasks each replica creates itself.
    fn create_counted<'a>(
        &'a self,
        task: &'a StoredTask,
        owner: &'a str,
        allowance: TaskAllowance,
    ) -> BoxFuture<'a, Result<Counted, StoreError>> {
        let _ = (task, owner, allowance);
        Box::pin(async { Ok(Counted::NotCounted) })
    }
}
