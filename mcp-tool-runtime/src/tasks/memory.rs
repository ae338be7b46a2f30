//! The embedded task store: a map in memory (one process; tests, single-replica servers).

use std::collections::HashMap;
use std::sync::Mutex;

use super::store::{StoreError, StoredTask, TaskStore};
use crate::error::BoxFuture;
use crate::sync::lock;

/// Tasks in a mutex-guarded map. Shared by clones of an `Arc`, it also serves several
/// `Server`s of one process (replicas in tests).
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, StoredTask>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many tasks are stored (expired ones included until collected).
    pub fn len(&self) -> usize {
        lock(&self.tasks).len()
    }

    /// Whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<(), StoreError>> {
        let r = {
            let mut map = lock(&self.tasks);
            if map.contains_key(&task.id) {
                Err(StoreError::Exists)
            } else {
                map.insert(task.id.clone(), task.clone());
                Ok(())
            }
        };
        Box::pin(std::future::ready(r))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredTask>, StoreError>> {
        let r = lock(&self.tasks).get(id).cloned();
        Box::pin(std::future::ready(Ok(r)))
    }

    fn swap<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<bool, StoreError>> {
        let r = {
            let mut map = lock(&self.tasks);
            match map.get_mut(&task.id) {
                Some(cur) if cur.version.checked_add(1) == Some(task.version) => {
                    *cur = task.clone();
                    true
                }
                _ => false,
            }
        };
        Box::pin(std::future::ready(Ok(r)))
    }

    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        let r = {
            let mut map = lock(&self.tasks);
            let before = map.len();
            map.retain(|_, t| t.expires_at_ms.is_none_or(|e| e >= now_ms));
            (before - map.len()) as u64
        };
        Box::pin(std::future::ready(Ok(r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, version: u64, exp: Option<u64>) -> StoredTask {
        StoredTask {
            id: id.into(),
            version,
            expires_at_ms: exp,
            body: format!("{{\"v\":{version}}}"),
        }
    }

    #[tokio::test]
    async fn compare_and_swap_and_expiry() {
        let s = MemoryTaskStore::new();
        s.create(&task("a", 1, Some(100))).await.unwrap();
        assert_eq!(s.create(&task("a", 1, None)).await, Err(StoreError::Exists));
        assert!(s.swap(&task("a", 2, Some(100))).await.unwrap());
        // A writer that read version 1 loses.
        assert!(!s.swap(&task("a", 2, Some(100))).await.unwrap());
        assert!(!s.swap(&task("missing", 2, None)).await.unwrap());
        assert_eq!(s.get("a").await.unwrap().unwrap().version, 2);
        s.create(&task("b", 1, None)).await.unwrap();
        assert_eq!(s.remove_expired(101).await.unwrap(), 1);
        assert!(s.get("a").await.unwrap().is_none());
        assert!(s.get("b").await.unwrap().is_some());
    }
}
