//! Time source for expiry, injectable so tests can move time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of the current time in whole Unix seconds.
///
/// [`Sealer`](super::Sealer) stamps expiries and checks them against its clock;
/// use [`ManualClock`] in tests to move time.
pub trait Clock: Send + Sync + 'static {
    /// Seconds since the Unix epoch.
    fn now_unix(&self) -> u64;
}

/// The system's wall clock. A clock before 1970 reads as 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to: for tests.
///
/// Share it as `Arc<ManualClock>` between the test and
/// [`Sealer::with_clock`](super::Sealer::with_clock).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock reading `unix_secs`.
    pub fn new(unix_secs: u64) -> Self {
        ManualClock(AtomicU64::new(unix_secs))
    }

    /// Set the time to `unix_secs`.
    pub fn set(&self, unix_secs: u64) {
        self.0.store(unix_secs, Ordering::SeqCst);
    }

    /// Move the time forward by `by` (whole seconds; saturating).
    pub fn advance(&self, by: Duration) {
        let secs = by.as_secs();
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(secs))
            });
    }
}

impl Clock for ManualClock {
    fn now_unix(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}
