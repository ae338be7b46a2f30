//! RFC 7662 introspection of opaque access tokens, with a cache bounded in size and time
//! (keyed by the token's SHA-256, so that no token is kept) of the accepted answers and,
//! for a shorter time, of the refused ones; at most a set number of introspection calls
//! at once. An answer counts only when it says `"active": true` and its claims pass the
//! same checks as a JWT's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use reqwest::Url;
use sha2::{Digest, Sha256};

use mcp_tool_runtime::Principal;

use crate::claims::{self, Expected, Failure};
use crate::fetch::Fetcher;

/// An introspection endpoint and its caches.
pub(crate) struct Introspector {
    endpoint: Url,
    client_id: String,
    client_secret: String,
    ttl: Duration,
    capacity: usize,
    cache: Mutex<Cache<Principal>>,
    /// How long a refusal is kept (zero: not kept).
    refusal_ttl: Duration,
    refusals: Mutex<Cache<&'static str>>,
    /// Introspection calls in progress at once.
    calls: tokio::sync::Semaphore,
    /// How long a token waits for a call to start before it is answered 503.
    wait: Duration,
}

/// Answers kept by the token's digest until an instant, the oldest first out when full.
struct Cache<T> {
    entries: HashMap<[u8; 32], (T, Instant)>,
    order: VecDeque<[u8; 32]>,
}

impl<T: Clone> Cache<T> {
    fn new() -> Self {
        Self {
            entries: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    fn get(&self, digest: &[u8; 32]) -> Option<T> {
        match self.entries.get(digest) {
            Some((v, until)) if Instant::now() < *until => Some(v.clone()),
            _ => None,
        }
    }

    /// Keeps `value` for `keep`, in a cache of at most `capacity` entries.
    fn put(&mut self, digest: [u8; 32], value: T, keep: Duration, capacity: usize) {
        let now = Instant::now();
        // Drop the expired at the front, then the oldest while full.
        while let Some(front) = self.order.front().copied() {
            let expired = self
                .entries
                .get(&front)
                .is_none_or(|(_, until)| *until <= now);
            if !expired && self.entries.len() < capacity {
                break;
            }
            self.order.pop_front();
            self.entries.remove(&front);
        }
        if self.entries.insert(digest, (value, now + keep)).is_none() {
            self.order.push_back(digest);
        }
    }
}

/// The bounds of an [`Introspector`].
pub(crate) struct Bounds {
    /// How long an accepted answer is kept (never past the token's `exp`).
    pub ttl: Duration,
    /// How many accepted answers, and how many refusals, are kept.
    pub capacity: usize,
    /// How long a refusal is kept.
    pub refusal_ttl: Duration,
    /// How many introspection calls run at once.
    pub max_concurrent: usize,
    /// How long a token waits for a call to start.
    pub wait: Duration,
}

impl Introspector {
    pub(crate) fn new(endpoint: Url, client_id: String, client_secret: String, b: Bounds) -> Self {
        Self {
            endpoint,
            client_id,
            client_secret,
            ttl: b.ttl,
            capacity: b.capacity,
            cache: Mutex::new(Cache::new()),
            refusal_ttl: b.refusal_ttl,
            refusals: Mutex::new(Cache::new()),
            calls: tokio::sync::Semaphore::new(b.max_concurrent.max(1)),
            wait: b.wait,
        }
    }

    /// The principal of an opaque `token`.
    ///
    /// # Errors
    /// [`Failure::Invalid`] for an inactive token or an answer that does not check out;
    /// [`Failure::Unavailable`] when the endpoint cannot be asked.
    pub(crate) async fn introspect(
        &self,
        fetcher: &Fetcher,
        token: &str,
        expected: &Expected<'_>,
    ) -> Result<Principal, Failure> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(principal) = self.cached(&digest) {
            return Ok(principal);
        }
        if let Some(reason) = self.refused(&digest) {
            return Err(Failure::Invalid(reason));
        }
        // At most so many calls at once: the others wait their turn, then are answered 503.
        let Ok(Ok(_call)) = tokio::time::timeout(self.wait, self.calls.acquire()).await else {
            tracing::warn!(endpoint = %self.endpoint, "OAuth: too many token introspections at once");
            return Err(Failure::Unavailable("introspection busy"));
        };
        // the token may have been answered while it waited
        if let Some(principal) = self.cached(&digest) {
            return Ok(principal);
        }
        if let Some(reason) = self.refused(&digest) {
            return Err(Failure::Invalid(reason));
        }
        match self.ask(fetcher, token, expected, digest).await {
            Err(Failure::Invalid(reason)) => {
                if !self.refusal_ttl.is_zero() && self.capacity > 0 {
                    self.refusals
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .put(digest, reason, self.refusal_ttl, self.capacity);
                }
                Err(Failure::Invalid(reason))
            }
            other => other,
        }
    }

    /// One introspection call for `token` and the checks of its answer.
    async fn ask(
        &self,
        fetcher: &Fetcher,
        token: &str,
        expected: &Expected<'_>,
        digest: [u8; 32],
    ) -> Result<Principal, Failure> {
        let answer = fetcher
            .post_form(
                &self.endpoint,
                &[("token", token), ("token_type_hint", "access_token")],
                &form_encode(&self.client_id),
                &form_encode(&self.client_secret),
            )
            .await
            .map_err(|e| {
                tracing::warn!(endpoint = %self.endpoint, error = %e, "OAuth: token introspection failed");
                Failure::Unavailable("introspection failed")
            })?;
        // `active` must be the JSON value true: not "true", not 1, not absent.
        if answer.get("active") != Some(&serde_json::Value::Bool(true)) {
            return Err(Failure::Invalid("introspection: not active"));
        }
        let remaining = claims::check(&answer, expected)?;
        let principal = claims::principal(answer);
        let keep = self
            .ttl
            .min(Duration::from_secs_f64(remaining.clamp(0.0, 1e9)));
        if !keep.is_zero() && self.capacity > 0 {
            self.remember(digest, principal.clone(), keep);
        }
        Ok(principal)
    }

    fn cached(&self, digest: &[u8; 32]) -> Option<Principal> {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(digest)
    }

    /// Why the token was refused, while the refusal is kept.
    fn refused(&self, digest: &[u8; 32]) -> Option<&'static str> {
        self.refusals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(digest)
    }

    fn remember(&self, digest: [u8; 32], principal: Principal, keep: Duration) {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .put(digest, principal, keep, self.capacity);
    }

    /// How many answers are cached (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }
}

/// `application/x-www-form-urlencoded` encoding of a client id or secret before HTTP Basic
/// authentication (RFC 6749 §2.3.1).
fn form_encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_bounded() {
        let i = Introspector::new(
            Url::parse("http://127.0.0.1:1/introspect").unwrap(),
            "c".into(),
            "s".into(),
            Bounds {
                ttl: Duration::from_secs(60),
                capacity: 3,
                refusal_ttl: Duration::from_secs(10),
                max_concurrent: 1,
                wait: Duration::from_secs(1),
            },
        );
        for n in 0u8..10 {
            i.remember([n; 32], Principal::named("p"), Duration::from_secs(60));
            assert!(i.len() <= 3);
        }
        assert!(i.cached(&[9; 32]).is_some() && i.cached(&[0; 32]).is_none());
        i.remember([42; 32], Principal::named("p"), Duration::from_nanos(1));
        std::thread::sleep(Duration::from_millis(2));
        assert!(i.cached(&[42; 32]).is_none(), "kept past its time");
        assert_eq!(form_encode("a b:c%é"), "a+b%3Ac%25%C3%A9");
        // refusals likewise
        for n in 0u8..10 {
            i.refusals
                .lock()
                .unwrap()
                .put([n; 32], "no", Duration::from_secs(60), 3);
            assert!(i.refusals.lock().unwrap().entries.len() <= 3);
        }
        assert!(i.refused(&[9; 32]).is_some() && i.refused(&[0; 32]).is_none());
    }
}
