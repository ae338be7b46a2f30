//! The issuer's signing keys: the JWKS, discovered or configured, fetched on demand and
//! cached; fetched again when it is old or a token names a `kid` it lacks, at most once per
//! configured interval, one fetch at a time. A failed fetch keeps the keys already known.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use reqwest::Url;
use serde::Deserialize as _;
use serde_json::{Map, Value};

use crate::claims::Failure;
use crate::config::SigningAlgorithm;
use crate::discovery;
use crate::fetch::Fetcher;

/// At most this many keys are kept from one JWKS.
const MAX_KEYS: usize = 64;
/// RSA moduli shorter than this (in bytes: 2048 bits) are not used.
const MIN_RSA_MODULUS: usize = 256;

/// One verification key with the algorithms it may verify.
pub(crate) struct Key {
    pub(crate) key: DecodingKey,
    algorithms: Vec<SigningAlgorithm>,
}

impl Key {
    /// Whether this key may verify a signature made with `alg`.
    pub(crate) fn allows(&self, alg: SigningAlgorithm) -> bool {
        self.algorithms.contains(&alg)
    }
}

/// A fetched JWKS.
struct KeySet {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid` (used only by tokens without one).
    unnamed: Vec<Arc<Key>>,
    fetched: Instant,
}

impl KeySet {
    fn find(&self, kid: Option<&str>, alg: SigningAlgorithm) -> Option<Arc<Key>> {
        match kid {
            Some(kid) => self.by_kid.get(kid).filter(|k| k.allows(alg)).cloned(),
            // A token without a kid: only when exactly one key could verify it.
            None => {
                let mut fitting = self
                    .by_kid
                    .values()
                    .chain(&self.unnamed)
                    .filter(|k| k.allows(alg));
                match (fitting.next(), fitting.next()) {
                    (Some(k), None) => Some(k.clone()),
                    _ => None,
                }
            }
        }
    }
}

#[derive(Default)]
struct State {
    set: Option<Arc<KeySet>>,
    jwks_uri: Option<Url>,
    last_attempt: Option<Instant>,
}

/// The key cache.
pub(crate) struct Keys {
    issuer: String,
    configured_uri: Option<Url>,
    allowed: Vec<SigningAlgorithm>,
    min_refresh: Duration,
    max_age: Duration,
    state: RwLock<State>,
    /// One fetch at a time; the others wait and then look again.
    fetching: tokio::sync::Mutex<()>,
}

impl Keys {
    pub(crate) fn new(
        issuer: String,
        configured_uri: Option<Url>,
        allowed: Vec<SigningAlgorithm>,
        min_refresh: Duration,
        max_age: Duration,
    ) -> Self {
        Self {
            issuer,
            configured_uri,
            allowed,
            min_refresh,
            max_age,
            state: RwLock::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    fn current(&self) -> Option<Arc<KeySet>> {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .set
            .clone()
    }

    /// The key for a token's `kid` and `alg`.
    ///
    /// # Errors
    /// [`Failure::Invalid`] when the JWKS has no such key (after a refetch, if one was
    /// allowed); [`Failure::Unavailable`] when no JWKS could be had.
    pub(crate) async fn key(
        &self,
        fetcher: &Fetcher,
        kid: Option<&str>,
        alg: SigningAlgorithm,
    ) -> Result<Arc<Key>, Failure> {
        let fresh = |set: &KeySet| set.fetched.elapsed() < self.max_age;
        if let Some(set) = self.current()
            && fresh(&set)
            && let Some(key) = set.find(kid, alg)
        {
            return Ok(key);
        }
        let _one = self.fetching.lock().await;
        // Someone else may have fetched while this one waited.
        let before = self.current();
        if let Some(set) = &before
            && fresh(set)
            && let Some(key) = set.find(kid, alg)
        {
            return Ok(key);
        }
        let may_fetch = {
            let state = self.state.read().unwrap_or_else(PoisonError::into_inner);
            state
                .last_attempt
                .is_none_or(|t| t.elapsed() >= self.min_refresh)
        };
        if may_fetch && let Err(why) = self.refresh(fetcher).await {
            // Keep serving the keys already known (stale ones included).
            return match before.as_deref().and_then(|s| s.find(kid, alg)) {
                Some(key) => Ok(key),
                None => Err(Failure::Unavailable(why)),
            };
        }
        match self.current() {
            Some(set) => set
                .find(kid, alg)
                .ok_or(Failure::Invalid("no key with this kid and algorithm")),
            None => Err(Failure::Unavailable("no JWKS yet")),
        }
    }

    /// Discovers the JWKS URI if needed and fetches the JWKS, outside the rate limit: a
    /// failure leaves the next token free to try again at once.
    pub(crate) async fn prefetch(&self, fetcher: &Fetcher) -> Result<(), &'static str> {
        let _one = self.fetching.lock().await;
        let result = self.refresh(fetcher).await;
        if result.is_err() {
            self.state
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .last_attempt = None;
        }
        result
    }

    /// Discovers the JWKS URI if needed, and fetches the JWKS.
    async fn refresh(&self, fetcher: &Fetcher) -> Result<(), &'static str> {
        let known_uri = {
            let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
            state.last_attempt = Some(Instant::now());
            state
                .jwks_uri
                .clone()
                .or_else(|| self.configured_uri.clone())
        };
        let uri = match known_uri {
            Some(uri) => uri,
            None => match discovery::jwks_uri(fetcher, &self.issuer).await {
                Ok(uri) => {
                    self.state
                        .write()
                        .unwrap_or_else(PoisonError::into_inner)
                        .jwks_uri = Some(uri.clone());
                    uri
                }
                Err(e) => {
                    tracing::warn!(issuer = %self.issuer, error = %e, "OAuth: authorization server metadata discovery failed");
                    return Err("discovery failed");
                }
            },
        };
        let doc = match fetcher.get(&uri).await {
            Ok(doc) => doc,
            Err(e) => {
                tracing::warn!(jwks_uri = %uri, error = %e, "OAuth: fetching the JWKS failed");
                return Err("JWKS fetch failed");
            }
        };
        let set = parse_jwks(&doc, &self.allowed);
        tracing::debug!(jwks_uri = %uri, keys = set.by_kid.len() + set.unnamed.len(), "OAuth: JWKS fetched");
        self.state
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .set = Some(Arc::new(set));
        Ok(())
    }
}

/// The usable signing keys of a JWKS document: keys of another use, of an unknown type,
/// symmetric (`oct`), malformed, or RSA shorter than 2048 bits are left out, one by one.
/// Each entry is read as a [`Jwk`] (the entries of a [`JwkSet`](jsonwebtoken::jwk::JwkSet)),
/// one at a time: a `JwkSet` is read whole, and one malformed entry would cost the others.
fn parse_jwks(doc: &Map<String, Value>, allowed: &[SigningAlgorithm]) -> KeySet {
    let mut set = KeySet {
        by_kid: HashMap::new(),
        unnamed: Vec::new(),
        fetched: Instant::now(),
    };
    let keys = doc.get("keys").and_then(|k| k.as_array());
    for entry in keys.into_iter().flatten().take(MAX_KEYS) {
        let jwk = Jwk::deserialize(entry).ok();
        let Some((jwk, key)) = jwk.and_then(|j| parse_key(&j, allowed).map(|k| (j, k))) else {
            tracing::debug!("OAuth: a JWKS entry was left out (not a usable signing key)");
            continue;
        };
        match jwk.common.key_id {
            Some(kid) => {
                set.by_kid.insert(kid, Arc::new(key));
            }
            None => set.unnamed.push(Arc::new(key)),
        }
    }
    set
}

fn parse_key(jwk: &Jwk, allowed: &[SigningAlgorithm]) -> Option<Key> {
    use SigningAlgorithm::*;
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return None;
    }
    let family: &[SigningAlgorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(rsa) => {
            let modulus = URL_SAFE_NO_PAD.decode(&rsa.n).ok()?;
            let significant = modulus.iter().skip_while(|b| **b == 0).count();
            if significant < MIN_RSA_MODULUS {
                return None;
            }
            &[RS256, RS384, RS512, PS256, PS384, PS512]
        }
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => &[ES256],
            EllipticCurve::P384 => &[ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => &[EdDSA],
        // symmetric keys (`oct`), other curves, unknown types
        _ => return None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    let declared = match jwk.common.key_algorithm {
        Some(alg) => Some(SigningAlgorithm::from_name(&alg.to_string())?),
        None => None,
    };
    let algorithms: Vec<_> = family
        .iter()
        .copied()
        .filter(|a| allowed.contains(a) && declared.is_none_or(|d| d == *a))
        .collect();
    (!algorithms.is_empty()).then_some(Key { key, algorithms })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The base point of P-256, a valid public key.
    const P256_X: &str = "axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY";
    const P256_Y: &str = "T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU";

    #[test]
    fn unusable_entries_are_left_out_one_by_one() {
        let ec =
            |kid: &str| json!({"kty": "EC", "crv": "P-256", "kid": kid, "x": P256_X, "y": P256_Y});
        let mut encryption = ec("enc");
        encryption["use"] = json!("enc");
        let mut declared_hs = ec("declared-hs");
        declared_hs["alg"] = json!("HS256");
        let mut numeric_kid = ec("x");
        numeric_kid["kid"] = json!(7);
        let short_rsa = json!({"kty": "RSA", "kid": "short", "n": URL_SAFE_NO_PAD.encode([0xffu8; 128]), "e": "AQAB"});
        let doc = json!({"keys": [
            ec("good"),
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "EC", "crv": "P-521", "kid": "p521", "x": P256_X, "y": P256_Y},
            {"kty": "XYZ", "kid": "unknown"},
            encryption,
            declared_hs,
            numeric_kid,
            short_rsa,
            "not an object",
            {"kty": "OKP", "crv": "Ed25519", "x": URL_SAFE_NO_PAD.encode([9u8; 32])},
        ]});
        let set = parse_jwks(doc.as_object().unwrap(), &SigningAlgorithm::ALL);
        let mut kids: Vec<_> = set.by_kid.keys().cloned().collect();
        kids.sort();
        assert_eq!(kids, ["good"]);
        assert_eq!(set.unnamed.len(), 1);
        assert!(set.find(Some("good"), SigningAlgorithm::ES256).is_some());
        assert!(set.find(Some("good"), SigningAlgorithm::RS256).is_none());
        assert!(set.find(None, SigningAlgorithm::EdDSA).is_some());
        // only the algorithms allowed by the configuration
        let set = parse_jwks(doc.as_object().unwrap(), &[SigningAlgorithm::RS256]);
        assert!(set.by_kid.is_empty() && set.unnamed.is_empty());
    }
}
