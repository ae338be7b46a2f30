//! [`Throttle`] and `throttled_warn!`: at most one `warn` a second from one call site, so
//! that a flood of refused requests, connections or tasks cannot flood the log; and
//! [`release`], a caller's count against a cap given back.

/// At most one warning per second for one kind of refusal, so that a flood of refused
/// requests or connections cannot flood the log (the rest are logged at `debug`).
pub(crate) struct Throttle(std::sync::atomic::AtomicU64);

impl Throttle {
    pub(crate) const fn new() -> Self {
        Throttle(std::sync::atomic::AtomicU64::new(0))
    }

    /// Whether this event may be logged at `warn`.
    pub(crate) fn ready(&self) -> bool {
        use std::sync::atomic::Ordering;
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let now = START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs()
            + 1;
        let last = self.0.load(Ordering::Relaxed);
        now > last
            && self
                .0
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Takes one from `map[key]`, forgetting the key at zero (the maps of counts per principal,
/// address or session hold only the callers that hold something).
pub(crate) fn release<K, Q>(map: &mut std::collections::HashMap<K, usize>, key: &Q)
where
    K: std::borrow::Borrow<Q> + std::hash::Hash + Eq,
    Q: std::hash::Hash + Eq + ?Sized,
{
    if let Some(n) = map.get_mut(key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(key);
        }
    }
}

/// `tracing::warn!` at most once a second from each call site (a [`Throttle`] of its own),
/// `tracing::debug!` otherwise.
macro_rules! throttled_warn {
    ($($arg:tt)+) => {{
        static THROTTLE: $crate::throttle::Throttle =
            $crate::throttle::Throttle::new();
        if THROTTLE.ready() {
            tracing::warn!($($arg)+);
        } else {
            tracing::debug!($($arg)+);
        }
    }};
}
