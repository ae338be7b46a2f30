//! Time limits that cost nothing when the work is done at once: [`within`] polls the work
//! once before it starts a timer, so a request whose body has arrived whole, or whose
//! dispatch finishes in its first poll (most do), never touches the runtime's timer.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::task::Unconstrained;
use tokio::time::Sleep;

/// The work did not finish within its limit (it was dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TimedOut;

/// `work`'s output, or [`TimedOut`] once `limit` has passed while it was pending. The limit
/// runs from the end of the first poll: a poll is never interrupted anyway, so a limit
/// only ever ends a wait, as `tokio::time::timeout`'s does.
pub(super) fn within<F: Future>(limit: Duration, work: F) -> Within<F> {
    Within {
        work,
        limit,
        timer: None,
    }
}

pin_project_lite::pin_project! {
    /// The future of [`within`]: the work held in place (a future handed to an `async fn`
    /// would be held twice, as its argument and as its pinned local), and a timer made
    /// only once the work has had to wait. The timer is polled outside tokio's cooperative
    /// budget: work that spends the whole budget on every poll must not starve it (as
    /// `tokio::time::timeout` also ensures).
    pub(super) struct Within<F> {
        #[pin]
        work: F,
        limit: Duration,
        timer: Option<Pin<Box<Unconstrained<Sleep>>>>,
    }
}

impl<F: Future> Future for Within<F> {
    type Output = Result<F::Output, TimedOut>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(out) = this.work.poll(cx) {
            return Poll::Ready(Ok(out));
        }
        let limit = *this.limit;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::task::unconstrained(tokio::time::sleep(limit))));
        timer.as_mut().poll(cx).map(|()| Err(TimedOut))
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

    /// Work that spends the task's whole cooperative budget on every poll (and so is
    /// always pending) still ends at its limit: the timer is not starved of budget.
    #[tokio::test]
    async fn work_that_spends_its_budget_still_ends_at_its_limit() {
        let busy = async {
            loop {
                tokio::task::consume_budget().await;
            }
        };
        let limited = within(Duration::from_millis(50), busy);
        let ended = tokio::time::timeout(Duration::from_secs(10), limited).await;
        assert_eq!(ended, Ok(Err(TimedOut)), "the limit never ended the work");
    }
}
