//! The crate's one way of taking a mutex: a lock poisoned by a panic elsewhere is taken as
//! it is, since no state behind the crate's mutexes can be left half-updated by a panic
//! (each update is one insert, remove or assignment, or a count kept in step with them).

use std::sync::{Mutex, MutexGuard, PoisonError};

/// `m` locked, also after a panic elsewhere while it was held.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
