//! Time limits that cost nothing when the work is done at once: [`within`] polls the work
//! once before it starts a timer, so a request whose body has arrived whole, or whose
//! dispatch finishes in its first poll (most do), never touches the runtime's timer.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

/// The work did not finish within its limit (it was dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TimedOut;

/// `work`'s output, or [`TimedOut`] once `limit` has passed while it was pending. The limit
/// runs from the end of the first poll: a poll is never interrupted anyway, so a limit
/// only ever ends a wait, as `tokio::time::timeout`'s does.
pub(super) async fn within<F: Future>(limit: Duration, work: F) -> Result<F::Output, TimedOut> {
    let mut work = pin!(work);
    let first = poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(out) => Ok(out),
        Poll::Pending => tokio::time::timeout(limit, work)
            .await
            .map_err(|_| TimedOut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_done_at_once_needs_no_time() {
        // a zero limit still lets work finished in its first poll through
        assert_eq!(within(Duration::ZERO, async { 7 }).await, Ok(7));
    }

    #[tokio::test]
    async fn work_that_waits_ends_at_its_limit_or_finishes_before() {
        let slow = async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            1
        };
        let started = std::time::Instant::now();
        assert_eq!(within(Duration::from_millis(50), slow).await, Err(TimedOut));
        assert!(started.elapsed() < Duration::from_secs(10));
        let quick = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            2
        };
        assert_eq!(within(Duration::from_secs(30), quick).await, Ok(2));
    }
}
