//! Panic containment: a bug in a tool (or anywhere while handling one request) must not
//! take down the server, the connection or other requests in flight.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Polls `F`, turning a panic during any poll into `Err(message)`.
pub(crate) struct CatchPanic<F> {
    inner: Pin<Box<F>>,
}

impl<F: Future> CatchPanic<F> {
    pub(crate) fn new(inner: F) -> Self {
        CatchPanic {
            inner: Box::pin(inner),
        }
    }

    /// [`new`](Self::new) with the future made in its box: the box is taken first and
    /// `make`'s future written into it, not made elsewhere and copied in whole (a future
    /// is copied at its full size, however little of it is filled before its first poll).
    pub(crate) fn made(make: impl FnOnce() -> F) -> Self {
        let place = Box::new_uninit();
        CatchPanic {
            inner: Box::into_pin(Box::write(place, make())),
        }
    }
}

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner.as_mut();
        // The future is never polled again after a panic (it is dropped with `self`), so
        // no broken invariant inside it can be observed.
        match catch_unwind(AssertUnwindSafe(move || inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
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
