//! The ledger of single-use rounds (`#[mcp_tool(once)]`): a claim per state id, taken
//! atomically before a round's code runs, and the round's stored response once it ends.
//!
//! [`Ledger`] is a small async trait so that durable, shared backends implement it: one
//! ledger for every replica of a fleet (`SqliteStore` of `mcp-tool-store-sqlite` for the
//! processes of one machine, `PostgresStore` of `mcp-tool-store-postgres` for a fleet; each
//! is a whole [`Store`](crate::store::Store), tasks included). This crate ships
//! [`MemoryLedger`], one per process (the default of every server). With the memory ledger,
//! replicas of one service do **not** share claims: a state replayed to another replica
//! runs again there. Give every replica the same shared store
//! ([`ServerBuilder::store`](crate::server::ServerBuilder::store), or a ledger alone with
//! [`ServerBuilder::ledger`](crate::server::ServerBuilder::ledger)) for a fleet.
//!
//! Entries expire with the state they belong to (the claim carries the state's expiry), so
//! a ledger holds at most *rate of single-use rounds × state TTL* entries; expired entries
//! are swept on the way (every [`MemoryLedger::SWEEP_EVERY`] claims) and by
//! [`MemoryLedger::sweep`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::error::BoxFuture;
use crate::sync::lock;

/// What [`Ledger::claim`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The id was free: the caller now holds it and must [`complete`](Ledger::complete) or
    /// [`release`](Ledger::release) it.
    Claimed,
    /// The round already ran: its stored response, byte for byte.
    Done(Vec<u8>),
    /// Another presentation holds the claim and has not finished.
    Running,
}

/// A ledger failure (a durable backend's connection, say). The round is refused busy
/// (-32000 with `retryAfter`; nothing ran, so a retry is safe) and runs nowhere: a ledger
/// that cannot answer never lets code run twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ledger: {0}")]
pub struct LedgerError(pub String);

/// The store of single-use claims and outcomes. Ids are unique random strings sealed in a
/// state; `principal` is [`Principal::key`](crate::Principal::key) of the caller the state
/// is bound to (the seal already refuses other principals; a shared store may index by it).
///
/// Contract: `claim` is atomic (of concurrent claims of one id, exactly one gets
/// [`Claim::Claimed`]); an entry lives until `expires` (then the id may be claimed again,
/// but the state it belongs to no longer opens); `complete` stores the outcome of a held
/// claim and `release` frees it (a later claim runs the round again).
pub trait Ledger: Send + Sync + 'static {
    /// Claims `id` for `principal` until `expires`.
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<Claim, LedgerError>>;
    /// Stores the outcome of the claimed `id`: later claims get [`Claim::Done`] with it.
    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), LedgerError>>;
    /// Frees the claimed `id` without an outcome: a later claim runs the round again.
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), LedgerError>>;
    /// Deletes the entries whose expiry is before `now`; how many went. The server calls
    /// it at most once per [`SWEEP_INTERVAL`] (a backend whose entries expire by
    /// themselves, as Redis keys do, answers `Ok(0)`).
    fn remove_expired(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, LedgerError>>;
}

/// How often a server asks its ledger to [`remove_expired`](Ledger::remove_expired) entries.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(60);

#[derive(Debug)]
struct Entry {
    principal: String,
    expires: SystemTime,
    outcome: Option<Vec<u8>>,
}

/// The in-memory [`Ledger`] of one process (a mutex around a map, swept as it goes).
#[derive(Debug, Default)]
pub struct MemoryLedger {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    claims: u64,
}

impl MemoryLedger {
    /// A sweep of expired entries runs on every this many claims.
    pub const SWEEP_EVERY: u64 = 256;

    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries held now (claimed, running or done), expired ones not yet swept included.
    pub fn len(&self) -> usize {
        lock(&self.inner).entries.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the entries expired at `now`; returns how many.
    pub fn sweep(&self, now: SystemTime) -> usize {
        let mut inner = lock(&self.inner);
        let before = inner.entries.len();
        inner.entries.retain(|_, e| e.expires > now);
        before - inner.entries.len()
    }
}

impl Ledger for MemoryLedger {
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        let now = SystemTime::now();
        let mut inner = lock(&self.inner);
        inner.claims = inner.claims.wrapping_add(1);
        if inner.claims.is_multiple_of(Self::SWEEP_EVERY) {
            inner.entries.retain(|_, e| e.expires > now);
        }
        let found = match inner.entries.get(id) {
            Some(e) if e.expires > now && e.principal == principal => Some(match &e.outcome {
                Some(bytes) => Claim::Done(bytes.clone()),
                None => Claim::Running,
            }),
            // Another principal's id (cannot happen with sealed ids): never its outcome.
            Some(e) if e.expires > now => Some(Claim::Running),
            _ => None,
        };
        let claim = found.unwrap_or_else(|| {
            inner.entries.insert(
                id.to_owned(),
                Entry {
                    principal: principal.to_owned(),
                    expires,
                    outcome: None,
                },
            );
            Claim::Claimed
        });
        Box::pin(std::future::ready(Ok(claim)))
    }

    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        if let Some(e) = lock(&self.inner).entries.get_mut(id) {
            e.outcome = Some(outcome);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), LedgerError>> {
        let mut inner = lock(&self.inner);
        if inner.entries.get(id).is_some_and(|e| e.outcome.is_none()) {
            inner.entries.remove(id);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn remove_expired(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, LedgerError>> {
        let n = self.sweep(now) as u64;
        Box::pin(std::future::ready(Ok(n)))
    }
}

/// Settings of single-use rounds (see [`ServerBuilder::once_wait`](crate::server::ServerBuilder::once_wait) and
/// [`ServerBuilder::max_once_outcome_bytes`](crate::server::ServerBuilder::max_once_outcome_bytes)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OnceConfig {
    /// How long a replay waits for a running first presentation.
    pub(crate) wait: Duration,
    /// The largest outcome kept, in bytes.
    pub(crate) max_outcome_bytes: usize,
}

impl Default for OnceConfig {
    fn default() -> Self {
        OnceConfig {
            wait: Duration::from_secs(2),
            max_outcome_bytes: 1 << 20,
        }
    }
}

/// A new id (single-use ids, task and session ids): 128 random bits from the operating
/// system, base64url without padding (visible ASCII).
pub(crate) fn new_id() -> Result<String, LedgerError> {
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| LedgerError(format!("no random bytes for an id: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn claim_complete_release_expire() {
        let l = MemoryLedger::new();
        let later = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(l.claim("a", "p", later).await, Ok(Claim::Claimed));
        assert_eq!(l.claim("a", "p", later).await, Ok(Claim::Running));
        l.complete("a", b"out".to_vec()).await.expect("complete");
        assert_eq!(
            l.claim("a", "p", later).await,
            Ok(Claim::Done(b"out".to_vec()))
        );
        assert_eq!(l.claim("a", "q", later).await, Ok(Claim::Running));
        // a done entry is never released
        l.release("a").await.expect("release");
        assert_eq!(
            l.claim("a", "p", later).await,
            Ok(Claim::Done(b"out".to_vec()))
        );
        assert_eq!(l.claim("b", "p", later).await, Ok(Claim::Claimed));
        l.release("b").await.expect("release");
        assert_eq!(l.claim("b", "p", later).await, Ok(Claim::Claimed));
        assert_eq!(l.len(), 2);
        assert_eq!(l.sweep(later + Duration::from_secs(1)), 2);
        assert!(l.is_empty());
    }
}
