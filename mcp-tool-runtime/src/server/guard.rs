//! Panic containment: a bug in a tool (or anywhere while handling one request) must not
//! take down the server, the connection or other requests in flight.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;

use crate::protocol::{ErrorObject, errors};

/// `work`, with a panic during any of its polls turned into `Err(message)`. The work is
/// boxed: the guard is around every request, whose future it keeps small. The work is
/// never polled again after a panic (it is dropped), so no broken invariant inside it can
/// be observed.
pub(crate) fn catch_panic<F: Future>(work: F) -> impl Future<Output = Result<F::Output, String>> {
    AssertUnwindSafe(Box::pin(work))
        .catch_unwind()
        .map(|caught| caught.map_err(|payload| panic_message(payload.as_ref())))
}

/// The answer to a request whose handling of `method` panicked with `panic` (from
/// [`catch_panic`]): -32603, the details to the log only.
pub(crate) fn request_panicked(method: &str, panic: &str) -> ErrorObject {
    tracing::error!(
        method = %errors::for_log(method),
        panic = %errors::for_log_cut(panic, errors::MAX_LOGGED_DETAIL),
        "panic while handling a request"
    );
    errors::internal("Internal error")
}

/// The text of a panic payload (`&str` or `String`; anything else is described).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_owned()
    }
}
