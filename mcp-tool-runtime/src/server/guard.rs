//! Panic containment: a bug in a tool (or anywhere while handling one request) must not
//! take down the server, the connection or other requests in flight.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;

/// `work`, with a panic during any of its polls turned into `Err(message)`. The work is
/// boxed: the guard is around every request, whose future it keeps small. The work is
/// never polled again after a panic (it is dropped), so no broken invariant inside it can
/// be observed.
pub(crate) fn catch_panic<F: Future>(work: F) -> impl Future<Output = Result<F::Output, String>> {
    AssertUnwindSafe(Box::pin(work))
        .catch_unwind()
        .map(|caught| caught.map_err(|payload| panic_message(payload.as_ref())))
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
