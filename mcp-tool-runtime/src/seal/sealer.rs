//! The [`Sealer`]: seals and opens `requestState` tokens with a [`Keyring`] and a
//! [`SealConfig`], on a [`Clock`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::binding::{Binding, StateBody};
use super::clock::{Clock, SystemClock};
use super::config::{Protection, SealConfig};
use super::envelope::{self, PREFIX};
use super::error::SealError;
use super::keyring::{Keyring, MIN_KEY_LEN, valid_kid};

/// Whole seconds of `d`, rounded up.
fn secs_ceil(d: Duration) -> u64 {
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
}

/// Seals and opens `requestState` tokens.
///
/// Cheap to share behind an `Arc`; holds no per-call state, so any replica with the
/// same keyring and config opens any other replica's tokens.
pub struct Sealer {
    keyring: Keyring,
    config: SealConfig,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("keyring", &self.keyring)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Sealer {
    /// A sealer using `keyring` and `config`, on the system clock.
    pub fn new(keyring: Keyring, config: SealConfig) -> Self {
        Sealer {
            keyring,
            config,
            clock: Arc::new(SystemClock),
        }
    }

    /// A sealer with a random 32-byte key under kid `"ephemeral"` and the default
    /// config. Logs a warning: states sealed by one process do not open in another,
    /// so replicas behind a load balancer will not understand each other's states,
    /// and a restart invalidates every state in flight.
    ///
    /// # Panics
    /// If the operating system's random number generator is unavailable.
    pub fn random() -> Self {
        let mut key = vec![0u8; MIN_KEY_LEN];
        getrandom::getrandom(&mut key).expect("the operating system's random number generator");
        tracing::warn!(
            "requestState sealed with a random per-process key (kid \"ephemeral\"): \
             replicas will not understand each other's states and a restart invalidates \
             them; configure a shared Keyring for production"
        );
        match Keyring::new("ephemeral", key) {
            Ok(ring) => Sealer::new(ring, SealConfig::default()),
            // The id is valid and the key 32 bytes long.
            Err(e) => unreachable!("ephemeral keyring: {e}"),
        }
    }

    /// This sealer on another clock (for tests: [`ManualClock`](super::ManualClock)).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// This sealer bound to the deployment `context` (see [`SealConfig::context`]).
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.config.context = Some(context.into());
        self
    }

    /// The deployment context bound into every tag (empty when none is set).
    pub fn context(&self) -> &str {
        self.config.context.as_deref().unwrap_or("")
    }

    /// The configuration.
    pub fn config(&self) -> &SealConfig {
        &self.config
    }

    /// The keyring.
    pub fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// The current time, in Unix seconds, according to this sealer's clock.
    pub fn now_unix(&self) -> u64 {
        self.clock.now_unix()
    }

    /// Seal `body` for `binding` under the active key. It stays valid for `ttl`
    /// (default: the config's; at most [`SealConfig::max_ttl`]) from now:
    /// [`open`](Self::open) accepts it while the clock reads strictly less than the expiry.
    ///
    /// Fails with [`SealError::Oversize`] when the token would exceed the cap, and with
    /// [`SealError::PayloadTooLarge`] when the payload's JSON text (uncompressed) exceeds
    /// [`SealConfig::max_payload_bytes`].
    pub fn seal(
        &self,
        binding: &Binding<'_>,
        body: &StateBody,
        ttl: Option<Duration>,
    ) -> Result<String, SealError> {
        let payload = serde_json::to_vec(&body.payload).map_err(|_| SealError::Encrypt)?;
        self.seal_json(binding, body.round, &body.layout, &payload, ttl, None)
    }

    /// [`seal`](Self::seal) of a payload already serialized as JSON text (`payload` must be
    /// one JSON value: [`open`](Self::open) parses it), with the call's trace context
    /// `trace` (a `crate::telemetry::CallTrace` encoded) as the token's trace segment.
    pub(crate) fn seal_json(
        &self,
        binding: &Binding<'_>,
        round: u32,
        layout: &str,
        payload: &[u8],
        ttl: Option<Duration>,
        trace: Option<&str>,
    ) -> Result<String, SealError> {
        let trace = trace.filter(|t| envelope::valid_trace(t));
        let ttl = ttl.unwrap_or(self.config.ttl).min(self.config.max_ttl);
        let issued_at = self.clock.now_unix();
        let times = envelope::Times {
            issued_at,
            expires_at: issued_at.saturating_add(secs_ceil(ttl)),
        };
        let key = self.keyring.active();
        let protection = self.config.protection;

        // Never under AEAD: see `SealConfig::compress` (compression oracles).
        let compress = self.config.compress && protection == Protection::Hmac;
        let plain = zeroize::Zeroizing::new(envelope::encode_body_json(
            times,
            round,
            layout,
            payload,
            compress,
            self.config.max_payload_bytes,
        )?);
        let sealed_len = envelope::sealed_len(protection, plain.len());
        let exact = PREFIX.len()
            + key.kid.len()
            + 1
            + base64_unpadded_len(sealed_len)
            + trace.map_or(0, |t| 1 + t.len());
        if exact > self.config.max_len {
            return Err(SealError::Oversize {
                len: exact,
                max: self.config.max_len,
            });
        }

        let sealed = match protection {
            Protection::Hmac => {
                envelope::hmac_seal(key.hmac(), self.context(), binding, trace, &plain)
            }
            _ => {
                let ad =
                    envelope::associated_data(protection, &key.kid, self.context(), binding, trace);
                envelope::protect(protection, key.mode_key(protection), &ad, &plain)?
            }
        };
        let mut token = String::with_capacity(exact);
        token.push_str(PREFIX);
        token.push_str(&key.kid);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(&sealed, &mut token);
        if let Some(trace) = trace {
            token.push('.');
            token.push_str(trace);
        }
        Ok(token)
    }

    /// Open a token sealed by [`seal`](Self::seal) for the same `binding` (in the same
    /// deployment context).
    ///
    /// Checks, in this order: length cap, version prefix, shape, key id (unknown or
    /// retired), tag (which covers the binding, context, kid, mode and body), body shape,
    /// issue time (not more than the clock skew ahead), lifetime (not over the maximum
    /// TTL), expiry. Never panics, whatever `token` is.
    pub fn open(&self, binding: &Binding<'_>, token: &str) -> Result<StateBody, SealError> {
        let (round, layout, payload, _) = self.open_parsed(binding, token)?;
        Ok(StateBody {
            round,
            layout,
            payload,
        })
    }

    /// [`open`](Self::open), the payload parsed straight from the opened bytes into a `T`
    /// (no `Value` detour, no copy of an HMAC body): `(round, layout, payload, trace)`, the
    /// last the token's trace segment (authenticated with the rest).
    pub(crate) fn open_parsed<'t, T: serde::de::DeserializeOwned>(
        &self,
        binding: &Binding<'_>,
        token: &'t str,
    ) -> Result<(u32, String, T, Option<&'t str>), SealError> {
        if token.len() > self.config.max_len {
            return Err(SealError::Oversize {
                len: token.len(),
                max: self.config.max_len,
            });
        }
        let Some(rest) = token.strip_prefix(PREFIX) else {
            return Err(if looks_like_other_version(token) {
                SealError::Version
            } else {
                SealError::Malformed("missing mts3. prefix")
            });
        };
        let (kid, data) = rest
            .split_once('.')
            .ok_or(SealError::Malformed("missing key id separator"))?;
        if !valid_kid(kid) {
            return Err(SealError::Malformed("invalid key id"));
        }
        let (data, trace) = match data.split_once('.') {
            None => (data, None),
            Some((data, trace)) if envelope::valid_trace(trace) => (data, Some(trace)),
            Some(_) => return Err(SealError::Malformed("invalid trace segment")),
        };
        let key = self.keyring.lookup(kid)?;
        let protection = self.config.protection;
        let sealed = URL_SAFE_NO_PAD
            .decode(data)
            .map_err(|_| SealError::Malformed("invalid base64url"))?;
        // An HMAC body is read in place (the client can read it anyway); a decrypted AEAD
        // body is zeroized when dropped.
        let decrypted;
        let plain: &[u8] = match protection {
            Protection::Hmac => {
                envelope::hmac_open(key.hmac(), self.context(), binding, trace, &sealed)?
            }
            _ => {
                let ad = envelope::associated_data(protection, kid, self.context(), binding, trace);
                decrypted = zeroize::Zeroizing::new(envelope::unprotect(
                    protection,
                    key.mode_key(protection),
                    &ad,
                    &sealed,
                )?);
                &decrypted[..]
            }
        };
        let envelope::RawBody {
            times,
            round,
            layout,
            json,
        } = envelope::decode_body_json(plain, self.config.max_payload_bytes)?;
        let now = self.clock.now_unix();
        if times.issued_at > now.saturating_add(secs_ceil(self.config.clock_skew)) {
            return Err(SealError::NotYetValid {
                issued_at: times.issued_at,
                now,
            });
        }
        let lifetime = times.expires_at.saturating_sub(times.issued_at);
        if lifetime > secs_ceil(self.config.max_ttl) {
            return Err(SealError::TtlTooLong {
                ttl: lifetime,
                max: secs_ceil(self.config.max_ttl),
            });
        }
        if now >= times.expires_at {
            return Err(SealError::Expired {
                expired_at: times.expires_at,
                now,
            });
        }
        let payload = serde_json::from_slice(&json)
            .map_err(|_| SealError::Malformed("payload does not parse"))?;
        Ok((round, layout, payload, trace))
    }
}

/// The trace segment of `token` when it has one of the right shape, read without opening
/// the token (for the server span's parent, before the state is opened: an altered segment
/// makes the open fail).
pub(crate) fn peek_trace(token: &str) -> Option<&str> {
    let rest = token.strip_prefix(PREFIX)?;
    let (_kid, rest) = rest.split_once('.')?;
    let (_data, trace) = rest.split_once('.')?;
    envelope::valid_trace(trace).then_some(trace)
}

/// Length of unpadded base64 for `n` bytes.
fn base64_unpadded_len(n: usize) -> usize {
    (n / 3) * 4
        + match n % 3 {
            0 => 0,
            1 => 2,
            _ => 3,
        }
}

/// `mts<digits>.` with a version other than 1.
fn looks_like_other_version(token: &str) -> bool {
    let Some(rest) = token.strip_prefix("mts") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest.as_bytes().get(digits) == Some(&b'.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::principal::Principal;

    const TRACE: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX";

    fn sealers() -> Vec<Sealer> {
        let mut out = Vec::new();
        for protection in [
            Protection::Hmac,
            #[cfg(feature = "aead")]
            Protection::Aes256Gcm,
        ] {
            let ring = Keyring::new("k1", vec![7u8; 32]).unwrap();
            let config = SealConfig {
                protection,
                ..SealConfig::default()
            };
            out.push(Sealer::new(ring, config));
        }
        out
    }

    /// The trace segment comes back from the open it went into, and is bound: altered,
    /// removed, added to a token sealed without one, or of the wrong shape, the token does
    /// not open.
    #[test]
    fn the_trace_segment_is_carried_and_bound_by_the_tag() {
        let alice = Principal::named("alice");
        let b = Binding::new(&alice, "tools/call", "t", &serde_json::json!({"x": 1}));
        for sealer in sealers() {
            let payload = br#"{"s":1}"#;
            let traced = sealer
                .seal_json(&b, 1, "L", payload, None, Some(TRACE))
                .unwrap();
            let plain = sealer.seal_json(&b, 1, "L", payload, None, None).unwrap();
            assert!(traced.ends_with(&format!(".{TRACE}")), "{traced}");
            assert_eq!(peek_trace(&traced), Some(TRACE));
            assert_eq!(peek_trace(&plain), None);
            let (round, _, _, trace) = sealer
                .open_parsed::<serde_json::Value>(&b, &traced)
                .unwrap();
            assert_eq!((round, trace), (1, Some(TRACE)));
            let (_, _, _, trace) = sealer.open_parsed::<serde_json::Value>(&b, &plain).unwrap();
            assert_eq!(trace, None);
            // the public open reads both
            assert_eq!(sealer.open(&b, &traced).unwrap().round, 1);

            let other = format!(
                "{}B{}",
                &traced[..traced.len() - 32],
                &traced[traced.len() - 31..]
            );
            let removed = &traced[..traced.len() - 33];
            let added = format!("{plain}.{TRACE}");
            for bad in [other.as_str(), removed, added.as_str()] {
                assert_eq!(
                    sealer.open(&b, bad).unwrap_err(),
                    SealError::BadSignature,
                    "{bad}"
                );
            }
            for bad in [
                format!("{plain}.{}", &TRACE[1..]),
                format!("{plain}.{TRACE}A"),
                format!("{plain}.{}!", &TRACE[1..]),
                format!("{plain}."),
                format!("{traced}.{TRACE}"),
            ] {
                assert!(
                    matches!(sealer.open(&b, &bad), Err(SealError::Malformed(_))),
                    "{bad}"
                );
            }
            // a segment of the wrong shape is never sealed
            let dropped = sealer
                .seal_json(&b, 1, "L", payload, None, Some("short"))
                .unwrap();
            assert_eq!(peek_trace(&dropped), None);
        }
    }
}
