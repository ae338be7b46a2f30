//! RFC 7662 introspection of opaque access tokens, with a cache bounded in size and time
//! (keyed by the token's SHA-256, so that no token is kept). An answer counts only when it
//! says `"active": true` and its claims pass the same checks as a JWT's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use reqwest::Url;
use sha2::{Digest, Sha256};

use crate::principal::Principal;

use super::claims::{self, Expected, Failure};
use super::fetch::Fetcher;

/// An introspection endpoint and its cache.
pub(crate) struct Introspector {
    endpoint: Url,
    client_id: String,
    client_secret: String,
    ttl: Duration,
    capacity: usize,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<[u8; 32], (Principal, Instant)>,
    order: VecDeque<[u8; 32]>,
}

impl Introspector {
    pub(crate) fn new(
        endpoint: Url,
        client_id: String,
        client_secret: String,
        ttl: Duration,
        capacity: usize,
    ) -> Self {
        Self {
            endpoint,
            client_id,
            client_secret,
            ttl,
            capacity,
            cache: Mutex::new(Cache::default()),
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
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        match cache.entries.get(digest) {
            Some((p, until)) if Instant::now() < *until => Some(p.clone()),
            _ => None,
        }
    }

    fn remember(&self, digest: [u8; 32], principal: Principal, keep: Duration) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        // Drop the expired at the front, then the oldest while full.
        while let Some(front) = cache.order.front().copied() {
            let expired = cache
                .entries
                .get(&front)
                .is_none_or(|(_, until)| *until <= now);
            if !expired && cache.entries.len() < self.capacity {
                break;
            }
            cache.order.pop_front();
            cache.entries.remove(&front);
        }
        if cache
            .entries
            .insert(digest, (principal, now + keep))
            .is_none()
        {
            cache.order.push_back(digest);
        }
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
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'*') {
            out.push(b as char);
        } else if b == b' ' {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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
            Duration::from_secs(60),
            3,
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
    }
}
