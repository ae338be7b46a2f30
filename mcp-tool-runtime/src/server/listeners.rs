//! The caps on open `subscriptions/listen` subscriptions (per process, per principal),
//! their count, and the signal that closes them all gracefully (shutdown).

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

use crate::protocol::ErrorObject;
use crate::protocol::errors;
use crate::sync::lock;
use crate::throttle::release;

/// Default cap on the subscriptions open in one process ([`ListenLimits::max_open`]).
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;

/// Default cap on the subscriptions one principal may hold open
/// ([`ListenLimits::max_per_principal`]). Anonymous callers are one principal.
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_PRINCIPAL: usize = 32;

/// The caps on open subscriptions (see [`ServerBuilder::listen_limits`](super::ServerBuilder::listen_limits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenLimits {
    /// Subscriptions open in this process at once (default [`DEFAULT_MAX_SUBSCRIPTIONS`]).
    pub max_open: usize,
    /// Subscriptions one principal may hold open at once (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS_PER_PRINCIPAL`]; all anonymous callers count as one).
    pub max_per_principal: usize,
}

impl Default for ListenLimits {
    fn default() -> Self {
        Self {
            max_open: DEFAULT_MAX_SUBSCRIPTIONS,
            max_per_principal: DEFAULT_MAX_SUBSCRIPTIONS_PER_PRINCIPAL,
        }
    }
}

/// The open subscriptions of a server: counts against the caps, and the graceful close.
pub(crate) struct Listeners {
    limits: ListenLimits,
    open: Mutex<Open>,
    closing: watch::Sender<bool>,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_principal: HashMap<String, usize>,
}

impl Listeners {
    pub(crate) fn new(limits: ListenLimits) -> Self {
        Self {
            limits,
            open: Mutex::new(Open::default()),
            closing: watch::channel(false).0,
        }
    }

    /// Counts one more subscription of `key`, or the busy error that refuses it.
    pub(crate) fn take(&self, key: &str) -> Result<(), ErrorObject> {
        let mut open = lock(&self.open);
        if open.total >= self.limits.max_open {
            throttled_warn!(
                max = self.limits.max_open,
                "too many open subscriptions: refusing subscriptions/listen"
            );
            return Err(errors::busy(
                "Server busy: too many open subscriptions, retry later",
                1,
            ));
        }
        let mine = open.by_principal.get(key).copied().unwrap_or(0);
        if mine >= self.limits.max_per_principal {
            throttled_warn!(
                max = self.limits.max_per_principal,
                "a principal holds its most open subscriptions: refusing subscriptions/listen"
            );
            return Err(errors::busy(
                "Subscription limit: this caller holds its most open subscriptions; close one first",
                1,
            ));
        }
        open.total += 1;
        *open.by_principal.entry(key.to_owned()).or_default() += 1;
        Ok(())
    }

    pub(crate) fn give_back(&self, key: &str) {
        let mut open = lock(&self.open);
        open.total = open.total.saturating_sub(1);
        release(&mut open.by_principal, key);
    }
}

impl Listeners {
    /// How many subscriptions are open.
    pub(crate) fn total(&self) -> usize {
        lock(&self.open).total
    }

    /// Ends every subscription gracefully and refuses new ones.
    pub(crate) fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Whether [`close`](Self::close) was called.
    pub(crate) fn closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// A receiver that sees [`close`](Self::close).
    pub(crate) fn watch_closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }
}
