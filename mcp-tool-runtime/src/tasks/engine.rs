//! The task engine: typed access to the store (records in, records out, compare-and-swap
//! with retries, the size bound), the tasks running in this process (so that
//! `tasks/cancel` aborts them), the replica's lease identity and the collection of expired
//! tasks. The rounds themselves are run by the server (`server::tasks`), which owns the
//! MRTR engine they reuse.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tracing::Instrument as _;

use super::store::{StoreError, StoredTask, TaskStore};
use super::{Lease, TaskConfig, TaskRecord, millis, new_task_id, now_ms};
use crate::sync::lock;

/// Why a typed store operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EngineError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored body is not a task record (corrupt, or written by something else).
    #[error("stored task is not readable: {0}")]
    Corrupt(String),
    /// The record would exceed the configured bound.
    #[error("task record of {len} bytes exceeds the limit of {max}")]
    TooLarge {
        /// Its size.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// Writers kept racing; gave up.
    #[error("task record kept changing under concurrent writers")]
    Contended,
}

/// What an update closure decided.
pub(crate) enum Change {
    /// Leave the record as it is.
    Keep,
    /// Write the modified record.
    Write,
}

/// The tasks side of a server.
pub(crate) struct Engine {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) config: TaskConfig,
    /// This server instance's lease owner id.
    pub(crate) replica: String,
    running: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    last_sweep_ms: AtomicU64,
    /// The allowance ledger: expiry times (Unix ms; `u64::MAX` without a TTL) of the tasks
    /// this replica created, by principal (anonymous: `""`).
    created: Mutex<Allowance>,
    /// Where each status change is raised (`notifications/tasks` listeners).
    changes: Option<crate::changes::Changes>,
}

/// What [`Engine::reserve`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The principal has `max_tasks_per_principal` unexpired tasks (from this replica, or
    /// in a store that counts).
    Principal,
    /// This replica (or a store that counts) has `max_stored_tasks` unexpired tasks.
    Replica,
}

/// Unexpired tasks created here, by principal, and their total.
#[derive(Debug, Default)]
struct Allowance {
    by_principal: HashMap<String, Vec<u64>>,
    total: usize,
}

impl Allowance {
    /// Forgets the tasks expired at `now_ms`.
    fn prune(&mut self, now_ms: u64) {
        let mut total = 0;
        self.by_principal.retain(|_, times| {
            times.retain(|&t| t > now_ms);
            total += times.len();
            !times.is_empty()
        });
        self.total = total;
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.config)
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

const MAX_SWAP_TRIES: usize = 32;

impl Engine {
    pub(crate) fn new(store: Arc<dyn TaskStore>, config: TaskConfig) -> Self {
        Engine {
            store,
            config,
            replica: new_task_id(),
            running: Mutex::new(HashMap::new()),
            last_sweep_ms: AtomicU64::new(0),
            created: Mutex::new(Allowance::default()),
            changes: None,
        }
    }

    /// Raises [`Change::TaskStatus`](crate::changes::Change::TaskStatus) on `changes` for
    /// every task created and every status change written.
    pub(crate) fn with_changes(mut self, changes: crate::changes::Changes) -> Self {
        self.changes = Some(changes);
        self
    }

    /// Tells the listeners of the task's owner that its status is now `rec.status`.
    fn raise(&self, rec: &TaskRecord) {
        if let Some(changes) = &self.changes {
            changes.publish(crate::changes::Change::TaskStatus {
                task_id: rec.id.clone(),
                owner: rec.principal.clone().unwrap_or_default(),
                status: rec.status.as_str().to_owned(),
            });
        }
    }

    /// Counts a new task of `principal` (expiring at `expires_at_ms`) against the
    /// allowances, or says which one it would exceed. Expired entries are forgotten first,
    /// so the ledger holds at most `max_stored_tasks` entries.
    pub(crate) fn reserve(
        &self,
        principal: Option<&str>,
        expires_at_ms: Option<u64>,
        now_ms: u64,
    ) -> Result<(), Refused> {
        let mut ledger = lock(&self.created);
        ledger.prune(now_ms);
        if ledger.total >= self.config.max_stored_tasks {
            return Err(Refused::Replica);
        }
        let key = principal.unwrap_or("");
        let mine = ledger.by_principal.get(key).map_or(0, Vec::len);
        if mine >= self.config.max_tasks_per_principal {
            return Err(Refused::Principal);
        }
        ledger
            .by_principal
            .entry(key.to_owned())
            .or_default()
            .push(expires_at_ms.unwrap_or(u64::MAX));
        ledger.total += 1;
        Ok(())
    }

    /// Gives back an allowance taken by [`reserve`](Self::reserve) for a task that was not
    /// stored after all.
    pub(crate) fn release(&self, principal: Option<&str>, expires_at_ms: Option<u64>) {
        let mut ledger = lock(&self.created);
        let t = expires_at_ms.unwrap_or(u64::MAX);
        if let Some(times) = ledger.by_principal.get_mut(principal.unwrap_or(""))
            && let Some(i) = times.iter().position(|&x| x == t)
        {
            times.swap_remove(i);
            ledger.total = ledger.total.saturating_sub(1);
        }
    }

    fn encode(&self, rec: &TaskRecord, version: u64) -> Result<StoredTask, EngineError> {
        let body = serde_json::to_string(rec).map_err(|e| EngineError::Corrupt(e.to_string()))?;
        if body.len() > self.config.max_record_bytes {
            return Err(EngineError::TooLarge {
                len: body.len(),
                max: self.config.max_record_bytes,
            });
        }
        Ok(StoredTask {
            id: rec.id.clone(),
            version,
            expires_at_ms: rec.expires_at_ms(),
            body,
        })
    }

    /// A lease of this replica, from `now_ms` for the configured length.
    pub(crate) fn lease_from(&self, now_ms: u64) -> Lease {
        let len = millis(self.config.lease);
        Lease {
            owner: self.replica.clone(),
            until_ms: now_ms.saturating_add(len),
        }
    }

    /// Whether this replica holds the record's lease.
    pub(crate) fn holds(&self, rec: &TaskRecord) -> bool {
        rec.lease.as_ref().is_some_and(|l| l.owner == self.replica)
    }

    /// Stores a new record (durably: `tasks/get` finds it once this returns).
    pub(crate) async fn create(&self, rec: &TaskRecord) -> Result<(), EngineError> {
        let stored = self.encode(rec, 1)?;
        self.store
            .create(&stored)
            .instrument(store_span("create"))
            .await?;
        crate::telemetry::metrics::task(rec.status.as_str());
        self.raise(rec);
        Ok(())
    }

    /// Stores a new task counted against its principal's and the store's allowances in the
    /// store itself ([`TaskStore::create_counted`]); `Ok(None)` when the store does not count
    /// (nothing stored: the caller counts here and calls [`create`](Self::create)).
    pub(crate) async fn create_counted(
        &self,
        rec: &TaskRecord,
        now_ms: u64,
    ) -> Result<Option<Result<(), Refused>>, EngineError> {
        let stored = self.encode(rec, 1)?;
        let allowance = super::TaskAllowance {
            per_owner: self.config.max_tasks_per_principal,
            total: self.config.max_stored_tasks,
            now_ms,
        };
        let owner = rec.principal.as_deref().unwrap_or("");
        let counted = self
            .store
            .create_counted(&stored, owner, allowance)
            .instrument(store_span("create"))
            .await?;
        Ok(match counted {
            super::Counted::NotCounted => None,
            super::Counted::OwnerFull => Some(Err(Refused::Principal)),
            super::Counted::StoreFull => Some(Err(Refused::Replica)),
            super::Counted::Stored => {
                crate::telemetry::metrics::task(rec.status.as_str());
                self.raise(rec);
                Some(Ok(()))
            }
        })
    }

    /// The record and its version; `None` when unknown or expired.
    pub(crate) async fn load(&self, id: &str) -> Result<Option<(TaskRecord, u64)>, EngineError> {
        let Some(stored) = self.store.get(id).instrument(store_span("get")).await? else {
            return Ok(None);
        };
        if stored.expires_at_ms.is_some_and(|e| e < now_ms()) {
            return Ok(None);
        }
        let rec: TaskRecord = serde_json::from_str(&stored.body)
            .map_err(|e| EngineError::Corrupt(format!("{:?}", e.classify())))?;
        if rec.id != stored.id {
            return Err(EngineError::Corrupt("id mismatch".into()));
        }
        Ok(Some((rec, stored.version)))
    }

    /// Reads, lets `f` change the record, writes it back if `f` says so (compare-and-swap;
    /// on a lost race `f` runs again on the fresh record). The record as it is afterwards,
    /// `None` when the task is gone.
    pub(crate) async fn update(
        &self,
        id: &str,
        mut f: impl FnMut(&mut TaskRecord) -> Change,
    ) -> Result<Option<TaskRecord>, EngineError> {
        for _ in 0..MAX_SWAP_TRIES {
            let Some((mut rec, version)) = self.load(id).await? else {
                return Ok(None);
            };
            let before = rec.status;
            match f(&mut rec) {
                Change::Keep => return Ok(Some(rec)),
                Change::Write => {
                    let stored = self.encode(&rec, version.saturating_add(1))?;
                    if self
                        .store
                        .swap(&stored)
                        .instrument(store_span("swap"))
                        .await?
                    {
                        if rec.status != before {
                            crate::telemetry::metrics::task(rec.status.as_str());
                            self.raise(&rec);
                        }
                        return Ok(Some(rec));
                    }
                }
            }
            tokio::task::yield_now().await;
        }
        Err(EngineError::Contended)
    }

    /// Remembers the local run of a task (for `tasks/cancel`).
    pub(crate) fn track(&self, id: &str, handle: tokio::task::AbortHandle) {
        let mut map = lock(&self.running);
        if !handle.is_finished() {
            map.insert(id.to_owned(), handle);
        }
    }

    /// Forgets the local run of a task.
    pub(crate) fn untrack(&self, id: &str) {
        let mut map = lock(&self.running);
        map.remove(id);
    }

    /// Aborts the local run of a task, if any; whether there was one.
    pub(crate) fn abort(&self, id: &str) -> bool {
        let handle = {
            let mut map = lock(&self.running);
            map.remove(id)
        };
        match handle {
            Some(h) => {
                h.abort();
                true
            }
            None => false,
        }
    }

    /// How many tasks run in this process.
    pub(crate) fn running(&self) -> usize {
        let map = lock(&self.running);
        map.values().filter(|h| !h.is_finished()).count()
    }

    /// Collects expired tasks in the background, at most once per sweep interval.
    pub(crate) fn maybe_sweep(self: &Arc<Self>) {
        let now = now_ms();
        let every = millis(self.config.sweep_interval);
        let last = self.last_sweep_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < every
            || self
                .last_sweep_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let engine = self.clone();
        tokio::spawn(async move {
            match engine.store.remove_expired(now).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(collected = n, "collected expired tasks"),
                Err(e) => tracing::warn!(error = %e, "could not collect expired tasks"),
            }
        });
    }
}

/// The child span of one task store operation (`mcp_tool.store`).
fn store_span(operation: &'static str) -> tracing::Span {
    tracing::info_span!(
        target: "mcp_tool_runtime::tasks",
        "mcp_tool.store",
        mcp_tool.store.operation = operation,
    )
}
