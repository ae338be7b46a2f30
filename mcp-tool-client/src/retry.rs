//! [`RetryTransport`]: sends a message again when the replica that took it went away.
//!
//! Behind a load balancer, a round of a multi round-trip call may land on a replica that is
//! being restarted or was just killed. The balancer retries what it knows was never
//! delivered (the connection was refused), but a request that was in flight when the
//! replica died comes back as a connection reset or a `502`/`503`/`504` from the balancer.
//! Since every round is stateless (its `requestState` and answers travel with it), the
//! client can send the same message again and any replica can take it.
//!
//! Only failures that say "no replica answered" are retried: transport errors
//! ([`TransportError::Io`]), the statuses `429` and the gateway statuses `502`, `503` and
//! `504` with a non-JSON-RPC body ([`TransportError::Status`]), and a JSON-RPC `-32000` error
//! carried by an HTTP `503` (the server's own "too many requests in progress" or "request
//! timed out" answers, which the HTTP transport hands back as a response). A JSON-RPC answer
//! of any other kind is final.
//!
//! The pause before a retry ([`RetryPolicy::pause`]) is `backon`'s doubling backoff with jitter
//! (a random point in its upper half, so that clients refused together do not come back
//! together), or the server's `Retry-After` (delta-seconds) when that is longer, capped at
//! [`RetryPolicy::max_retry_after`].
//!
//! Retrying is safe for the rounds themselves (a round is a pure function of its message,
//! apart from the tool's own side effects); a tool with side effects that must happen once
//! needs an idempotency key of its own, as with any retried HTTP request.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use serde_json::Value;

use crate::BoxFuture;
use crate::transport::{ClientTransport, Exchange, TransportError};

/// How often and how patiently [`RetryTransport`] sends a message again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = never retry).
    pub max_retries: u32,
    /// Pause before the first retry; doubled before each next one.
    pub backoff: Duration,
    /// Longest pause between two attempts, before jitter and `Retry-After`.
    pub max_backoff: Duration,
    /// Longest `Retry-After` honoured: a server asking for more is retried after this long.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 5 retries, 20 ms doubling up to 500 ms (about 1.3 s in all, 0.6 s to 1.3 s with
    /// jitter), or the server's `Retry-After` up to 30 s.
    fn default() -> Self {
        Self {
            max_retries: 5,
            backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// `backon`'s exponential schedule for this policy, without a limit on its length: half
    /// of `backoff`, doubled each time up to half of `max_backoff`. Its jitter (when on) adds
    /// a random part of as much again, so that a pause lies between half of
    /// [`delay`](Self::delay) and all of it ("equal jitter").
    fn schedule(&self, jitter: bool) -> ExponentialBackoff {
        let builder = ExponentialBuilder::new()
            .with_factor(2.0)
            .with_min_delay(self.backoff / 2)
            .with_max_delay(self.max_backoff / 2)
            .without_max_times();
        if jitter {
            builder.with_jitter()
        } else {
            builder
        }
        .build()
    }

    /// The backoff before retry number `n` (0-based), without jitter: `backoff` doubled `n`
    /// times, at most `max_backoff` (to the nanosecond: `backon` doubles in `f32` seconds).
    pub fn delay(&self, n: u32) -> Duration {
        let half = self.schedule(false).nth(n as usize);
        half.map_or(self.max_backoff, |d| d.saturating_mul(2))
    }

    /// The pause before retry number `n` when the server said `retry_after`: the jittered
    /// backoff (between half of [`delay`](Self::delay) and all of it), or `retry_after` capped
    /// at `max_retry_after` when that is longer.
    pub fn pause(&self, n: u32, retry_after: Option<Duration>) -> Duration {
        let half = self.schedule(true).nth(n as usize);
        let backoff = half.map_or(self.max_backoff, |d| d.min(self.max_backoff));
        match retry_after {
            Some(after) => backoff.max(after.min(self.max_retry_after)),
            None => backoff,
        }
    }
}

/// A `Retry-After` header value in delta-seconds (`"1"`, `" 120 "`); `None` for an HTTP date
/// or anything else (the backoff applies then).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // More digits than a u64 holds: as long as can be, the policy caps it anyway.
    Some(Duration::from_secs(v.parse().unwrap_or(u64::MAX)))
}

/// Whether a failed exchange means that no replica handled the message (worth retrying).
pub fn is_retryable(e: &TransportError) -> bool {
    match e {
        TransportError::Io(_) => true,
        TransportError::Status { status, .. } => matches!(status, 429 | 502..=504),
        TransportError::InvalidResponse(_) | TransportError::Config(_) => false,
    }
}

/// The `Retry-After` a failed or busy exchange came with.
fn retry_after(outcome: &Result<Exchange, TransportError>) -> Option<Duration> {
    match outcome {
        Ok(x) => x.retry_after,
        Err(TransportError::Status { retry_after, .. }) => *retry_after,
        Err(_) => None,
    }
}

/// Whether a JSON-RPC response is the server's own "come back later" (`-32000`, sent with
/// HTTP 503 when its request limit is reached or a request timed out).
fn is_busy(exchange: &Exchange) -> bool {
    exchange
        .response
        .as_ref()
        .and_then(|r| r.get("error"))
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
        == Some(-32000)
}

/// A [`ClientTransport`] that sends a message again (the same message, the same id) when the
/// attempt failed in a way that means no replica answered it; see the [module
/// docs](self). [`RetryTransport::retries`] counts the retries made so far.
#[derive(Debug, Clone)]
pub struct RetryTransport<T> {
    inner: T,
    policy: RetryPolicy,
    retries: Arc<AtomicU64>,
}

impl<T: ClientTransport> RetryTransport<T> {
    /// Wraps `inner` with `policy`.
    pub fn new(inner: T, policy: RetryPolicy) -> Self {
        Self {
            inner,
            policy,
            retries: Arc::default(),
        }
    }

    /// Counts retries in `counter` (shared with other transports, e.g. a load generator's).
    pub fn with_counter(mut self, counter: Arc<AtomicU64>) -> Self {
        self.retries = counter;
        self
    }

    /// Retries made so far (shared by clones and by transports given the same counter).
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<T: ClientTransport> ClientTransport for RetryTransport<T> {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        Box::pin(async move { Ok(self.exchange(message).await?.response) })
    }

    fn exchange<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let mut attempt = 0u32;
            loop {
                let outcome = self.inner.exchange(message.clone()).await;
                let retry = match &outcome {
                    Ok(x) => is_busy(x),
                    Err(e) => is_retryable(e),
                };
                if !retry || attempt >= self.policy.max_retries {
                    return outcome;
                }
                let pause = self.policy.pause(attempt, retry_after(&outcome));
                tokio::time::sleep(pause).await;
                attempt += 1;
                self.retries.fetch_add(1, Ordering::Relaxed);
            }
        })
    }

    /// Not retried: a refused listen is the caller's to retry (it re-lists first).
    fn listen<'a>(
        &'a self,
        message: Value,
    ) -> BoxFuture<'a, Result<crate::Listening, TransportError>> {
        self.inner.listen(message)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    /// Fails with the queued errors first, then echoes the message back as a result.
    struct Flaky {
        failures: Mutex<Vec<Result<Exchange, TransportError>>>,
        seen: AtomicU64,
    }

    impl Flaky {
        fn new(mut failures: Vec<Result<Exchange, TransportError>>) -> Self {
            failures.reverse();
            Self {
                failures: Mutex::new(failures),
                seen: AtomicU64::new(0),
            }
        }
    }

    impl ClientTransport for Flaky {
        fn send<'a>(
            &'a self,
            message: Value,
        ) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
            Box::pin(async move { Ok(self.exchange(message).await?.response) })
        }
        fn exchange<'a>(
            &'a self,
            message: Value,
        ) -> BoxFuture<'a, Result<Exchange, TransportError>> {
            Box::pin(async move {
                self.seen.fetch_add(1, Ordering::Relaxed);
                let next = self.failures.lock().unwrap().pop();
                next.unwrap_or_else(|| {
                    Ok(Exchange {
                        notifications: Vec::new(),
                        response: Some(
                            json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}),
                        ),
                        retry_after: None,
                    })
                })
            })
        }
    }

    fn quick(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            max_retry_after: Duration::from_millis(50),
        }
    }

    fn busy() -> Result<Exchange, TransportError> {
        Ok(Exchange {
            notifications: Vec::new(),
            response: Some(json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32000, "message": "too many requests in progress"}})),
            retry_after: None,
        })
    }

    #[tokio::test]
    async fn lost_replicas_are_retried_until_one_answers() {
        let t = RetryTransport::new(
            Flaky::new(vec![
                Err(TransportError::Io("connection reset".into())),
                Err(TransportError::Status {
                    status: 502,
                    body: "<html>Bad Gateway</html>".into(),
                    retry_after: None,
                }),
                busy(),
            ]),
            quick(5),
        );
        let out = t.send(json!({"jsonrpc": "2.0", "id": 7})).await.unwrap();
        assert_eq!(out.unwrap()["id"], 7);
        assert_eq!(t.retries(), 3);
        assert_eq!(t.inner().seen.load(Ordering::Relaxed), 4);
    }

    #[tokio::test]
    async fn final_answers_and_exhausted_retries_come_back_as_they_are() {
        let t = RetryTransport::new(
            Flaky::new(vec![Err(TransportError::Status {
                status: 400,
                body: "bad".into(),
                retry_after: Some(Duration::from_millis(1)),
            })]),
            quick(5),
        );
        let e = t.send(json!({"id": 1})).await.unwrap_err();
        assert!(matches!(e, TransportError::Status { status: 400, .. }));
        assert_eq!(t.retries(), 0);

        let t = RetryTransport::new(
            Flaky::new(vec![
                Err(TransportError::Io("refused".into())),
                Err(TransportError::Io("refused".into())),
                Err(TransportError::Io("refused".into())),
            ]),
            quick(2),
        );
        let e = t.send(json!({"id": 1})).await.unwrap_err();
        assert_eq!(e, TransportError::Io("refused".into()));
        assert_eq!(t.retries(), 2);
        assert_eq!(t.inner().seen.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(0), Duration::from_millis(20));
        assert_eq!(p.delay(1), Duration::from_millis(40));
        assert_eq!(p.delay(5), Duration::from_millis(500));
        assert_eq!(p.delay(40), Duration::from_millis(500));
    }

    #[test]
    fn jitter_varies_and_stays_in_the_upper_half() {
        let base = Duration::from_millis(400);
        let p = RetryPolicy {
            max_retries: 5,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(400),
            max_retry_after: Duration::from_secs(5),
        };
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let d = p.pause(3, None);
            assert!(d >= Duration::from_millis(200) && d <= base, "{d:?}");
            seen.insert(d);
        }
        // 200 draws from 200 million nanosecond values: equal ones would mean no jitter.
        assert!(seen.len() > 150, "{} distinct pauses of 200", seen.len());
        let none = RetryPolicy {
            backoff: Duration::ZERO,
            ..p
        };
        assert_eq!(none.pause(3, None), Duration::ZERO);
    }

    #[test]
    fn retry_after_is_honoured_within_the_cap() {
        let p = RetryPolicy {
            max_retries: 5,
            backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(5),
        };
        // Longer than the backoff: exactly what the server asked.
        assert_eq!(
            p.pause(0, Some(Duration::from_secs(1))),
            Duration::from_secs(1)
        );
        // Longer than the cap: the cap.
        assert_eq!(
            p.pause(0, Some(Duration::from_secs(3600))),
            Duration::from_secs(5)
        );
        // Shorter than the backoff: the backoff (with its jitter) still applies.
        let d = p.pause(5, Some(Duration::ZERO));
        assert!(d >= Duration::from_millis(250) && d <= Duration::from_millis(500));

        assert_eq!(parse_retry_after("1"), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(
            parse_retry_after("99999999999999999999999"),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after(""), None);
    }

    #[tokio::test]
    async fn a_busy_answer_waits_for_its_retry_after() {
        let mut busy_later = busy();
        if let Ok(x) = &mut busy_later {
            x.retry_after = Some(Duration::from_millis(40));
        }
        let t = RetryTransport::new(Flaky::new(vec![busy_later]), quick(3));
        let start = std::time::Instant::now();
        let out = t.send(json!({"jsonrpc": "2.0", "id": 9})).await.unwrap();
        assert_eq!(out.unwrap()["id"], 9);
        assert!(
            start.elapsed() >= Duration::from_millis(40),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(t.retries(), 1);

        // A 429 with a Retry-After beyond the cap waits the cap (50 ms), not an hour.
        let t = RetryTransport::new(
            Flaky::new(vec![Err(TransportError::Status {
                status: 429,
                body: "slow down".into(),
                retry_after: Some(Duration::from_secs(3600)),
            })]),
            quick(3),
        );
        let start = std::time::Instant::now();
        t.send(json!({"jsonrpc": "2.0", "id": 1})).await.unwrap();
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(50) && waited < Duration::from_secs(5),
            "{waited:?}"
        );
    }
}
