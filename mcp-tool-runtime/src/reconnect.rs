//! The fail-fast reconnect gate of a store whose backend can become unreachable, and the
//! backoff it follows (re-exported by [`crate::store`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use backon::{BackoffBuilder as _, ExponentialBackoff, ExponentialBuilder};

use crate::sync::lock;

/// The pauses between attempts to reach a backend: `backon`'s exponential backoff from
/// `initial`, doubling up to `max`, without end (a feed's reconnect loop sleeps them; a
/// [`ReconnectGate`] follows them).
pub fn backoff(initial: Duration, max: Duration) -> impl Iterator<Item = Duration> + Send + Sync {
    schedule(initial, max)
}

fn schedule(initial: Duration, max: Duration) -> ExponentialBackoff {
    ExponentialBuilder::new()
        .with_factor(2.0)
        .with_min_delay(initial)
        .with_max_delay(max)
        .without_max_times()
        .build()
}

/// The fail-fast gate of a store's operations: after a failure to reach the backend, every
/// operation fails at once ([`is_open`](Self::is_open) is `false`) until the next attempt
/// is due, so that an outage costs no request a connection timeout. The waits follow
/// [`backoff`] from `initial` to `max`, and start again from `initial` once the backend
/// answers. The PostgreSQL and Redis stores use one each.
///
/// ```
/// use std::time::Duration;
/// use mcp_tool_runtime::store::ReconnectGate;
///
/// let gate = ReconnectGate::new(Duration::from_secs(1), Duration::from_secs(8));
/// assert!(gate.is_open());
/// assert_eq!(gate.unreachable(), Duration::from_secs(1)); // the dial failed
/// assert!(!gate.is_open()); // operations fail at once for a second
/// assert_eq!(gate.unreachable(), Duration::from_secs(2));
/// assert!(gate.reached()); // back: log "reconnected"
/// assert!(gate.is_open());
/// assert!(!gate.reached());
/// ```
#[derive(Debug)]
pub struct ReconnectGate {
    initial: Duration,
    max: Duration,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    /// No attempt before this instant (none while the backend answers).
    retry_at: Option<Instant>,
    /// The pauses since the first failure (none while the backend answers).
    backoff: Option<ExponentialBackoff>,
}

impl ReconnectGate {
    /// An open gate whose waits go from `initial`, doubling, to `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        ReconnectGate {
            initial,
            max,
            state: Mutex::default(),
        }
    }

    /// Whether an attempt may be made: `false` while the wait after a failure lasts.
    pub fn is_open(&self) -> bool {
        lock(&self.state)
            .retry_at
            .is_none_or(|at| Instant::now() >= at)
    }

    /// Records that the backend answered: the gate is open and the next failure waits
    /// `initial` again. `true` when the backend had been unreachable (it reconnected).
    pub fn reached(&self) -> bool {
        let mut state = lock(&self.state);
        let was_closed = state.retry_at.is_some();
        *state = GateState::default();
        was_closed
    }

    /// Records a failure to reach the backend: the gate stays shut for the returned wait.
    pub fn unreachable(&self) -> Duration {
        let mut state = lock(&self.state);
        let wait = (state.backoff)
            .get_or_insert_with(|| schedule(self.initial, self.max))
            .next()
            .unwrap_or(self.max);
        state.retry_at = Some(Instant::now() + wait);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_the_cap_and_start_again_once_reached() {
        let s = Duration::from_secs;
        let gate = ReconnectGate::new(s(1), s(5));
        assert!(gate.is_open());
        assert!(!gate.reached(), "it never failed");
        let waits: Vec<_> = (0..5).map(|_| gate.unreachable()).collect();
        assert_eq!(waits, [s(1), s(2), s(4), s(5), s(5)]);
        assert!(!gate.is_open());
        assert!(gate.reached());
        assert!(gate.is_open());
        assert_eq!(gate.unreachable(), s(1));
    }

    #[test]
    fn the_gate_opens_when_the_wait_is_over() {
        let gate = ReconnectGate::new(Duration::ZERO, Duration::ZERO);
        assert_eq!(gate.unreachable(), Duration::ZERO);
        assert!(gate.is_open());
        let gate = ReconnectGate::new(Duration::from_millis(20), Duration::from_millis(20));
        gate.unreachable();
        assert!(!gate.is_open());
        std::thread::sleep(Duration::from_millis(30));
        assert!(gate.is_open());
    }

    #[test]
    fn the_backoff_doubles_without_end() {
        let s = Duration::from_secs;
        let waits: Vec<_> = backoff(s(1), s(4)).take(6).collect();
        assert_eq!(waits, [s(1), s(2), s(4), s(4), s(4), s(4)]);
    }
}
