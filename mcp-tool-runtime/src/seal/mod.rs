//! Sealing of `requestState`: the opaque value a stateless server hands the client
//! in an `input_required` result and gets back, byte for byte, on the retry —
//! possibly at another replica.
//!
//! A [`Sealer`] turns a [`StateBody`] into a token `mts3.<kid>.<base64url>` and
//! back. The token is protected by HMAC-SHA256 (integrity; the default) or by an
//! AEAD (AES-256-GCM or ChaCha20-Poly1305 under a key of its own derived from a random
//! salt, so that a fleet sharing one key never reuses a nonce: integrity and
//! confidentiality), under the active key of a [`Keyring`]. The tag covers a
//! domain-separation label, the format version, the protection mode, the key id, the
//! deployment context ([`SealConfig::context`]), the [`Binding`] (principal, method,
//! tool name, argument digest: associated data, never stored in the token) and the
//! body (issue time, expiry, round, layout fingerprint, payload). [`Sealer::open`]
//! checks all of it except the layout, which the server compares itself.
//!
//! Time: a state is valid while the opener's clock reads less than its expiry; it is
//! refused when it claims to be issued more than [`SealConfig::clock_skew`] in the
//! opener's future, or to live longer than [`SealConfig::max_ttl`]. Replicas must keep
//! their clocks within `clock_skew` of each other (NTP does far better); a skew of `s`
//! makes a state live `ttl ± s` on another replica.
//!
//! Every [`SealError`] must reach the client as JSON-RPC -32602 with
//! [`SealError::CLIENT_MESSAGE`]; the precise reason is for the server's log only.
//!
//! ```
//! use mcp_tool_runtime::Principal;
//! use mcp_tool_runtime::seal::{Binding, Keyring, SealConfig, Sealer, StateBody};
//! use serde_json::json;
//!
//! let ring = Keyring::new("k1", vec![7u8; 32]).unwrap();
//! let sealer = Sealer::new(ring, SealConfig::default());
//! let alice = Principal::named("alice");
//! let args = json!({"city": "Paris"});
//! let binding = Binding::new(&alice, "tools/call", "get_weather", &args);
//! let body = StateBody { round: 1, layout: "v1".into(), payload: json!({"step": 2}) };
//! let token = sealer.seal(&binding, &body, None).unwrap();
//! assert!(token.starts_with("mts3.k1."));
//! assert_eq!(sealer.open(&binding, &token).unwrap(), body);
//! ```

mod clock;
mod digest;
mod envelope;
mod error;
mod keyring;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

pub use clock::{Clock, ManualClock, SystemClock};
pub use digest::{args_digest, canonical_json};
pub use envelope::{DOMAIN_LABEL, PREFIX};
pub use error::SealError;
pub use keyring::{Keyring, MAX_KID_LEN, MIN_KEY_LEN, valid_kid};

use crate::principal::Principal;

/// How a state is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Protection {
    /// HMAC-SHA256: integrity only; the payload is readable (base64) by the client.
    #[default]
    Hmac,
    /// AES-256-GCM under a per-token key (derived from a random 128-bit salt) with a
    /// random 96-bit nonce: integrity and confidentiality, safe for a fleet sharing a key.
    Aes256Gcm,
    /// ChaCha20-Poly1305 under a per-token key (derived from a random 128-bit salt) with
    /// a random 96-bit nonce: integrity and confidentiality, safe for a fleet sharing a key.
    ChaCha20Poly1305,
}

impl Protection {
    /// A stable name, bound into every tag (so a token sealed under one mode never
    /// opens under another) and used to derive the mode's subkey.
    pub fn name(self) -> &'static str {
        match self {
            Protection::Hmac => "hmac-sha256",
            Protection::Aes256Gcm => "aes-256-gcm",
            Protection::ChaCha20Poly1305 => "chacha20-poly1305",
        }
    }

    /// Whether the payload is encrypted.
    pub fn is_aead(self) -> bool {
        !matches!(self, Protection::Hmac)
    }
}

/// Settings of a [`Sealer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealConfig {
    /// How long a state stays valid unless the seal call overrides it (whole
    /// seconds, rounded up). Default: 10 minutes.
    pub ttl: Duration,
    /// The longest lifetime a state may have: a longer TTL asked at seal time is cut to
    /// it, and a token claiming a longer one is refused on open. Default: 1 hour.
    pub max_ttl: Duration,
    /// How far apart the clocks of the replicas may be: a token issued more than this in
    /// the opener's future is refused. Default: 60 seconds.
    pub clock_skew: Duration,
    /// Longest token, in bytes, that is sealed or opened. Default: 65536.
    pub max_len: usize,
    /// Signing or encryption. Default: [`Protection::Hmac`].
    pub protection: Protection,
    /// The deployment this sealer works for, bound into every tag, so that two services
    /// sharing a key (and a tool name) do not accept each other's states. `None` (the
    /// default) lets [`ServerBuilder::build`](crate::server::ServerBuilder::build) set it
    /// to the server's name; a sealer used alone binds the empty context.
    pub context: Option<String>,
    /// Compress the payload (LZ4) before sealing when that makes it shorter. Applies only to
    /// [`Protection::Hmac`], whose states the client can read anyway: under AEAD the length
    /// of a compressed state would leak how much of the client's own answers matches the
    /// confidential data next to them (a compression oracle), so AEAD states are never
    /// compressed whatever this says. Opening accepts compressed and plain payloads alike.
    /// Default: `true`.
    pub compress: bool,
}

impl SealConfig {
    /// Default lifetime of a state: 10 minutes.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
    /// Default cap on a state's lifetime: 1 hour.
    pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(3600);
    /// Default tolerated clock skew between replicas: 60 seconds.
    pub const DEFAULT_CLOCK_SKEW: Duration = Duration::from_secs(60);
    /// Default cap on a token's length: 64 KiB.
    pub const DEFAULT_MAX_LEN: usize = 64 * 1024;

    /// This config with another default TTL.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// This config with another maximum TTL.
    pub fn with_max_ttl(mut self, max_ttl: Duration) -> Self {
        self.max_ttl = max_ttl;
        self
    }

    /// This config with another tolerated clock skew.
    pub fn with_clock_skew(mut self, skew: Duration) -> Self {
        self.clock_skew = skew;
        self
    }

    /// This config with another length cap.
    pub fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }

    /// This config with compression of HMAC-protected payloads on or off (see
    /// [`SealConfig::compress`]).
    pub fn with_compress(mut self, compress: bool) -> Self {
        self.compress = compress;
        self
    }

    /// This config with another protection mode.
    pub fn with_protection(mut self, protection: Protection) -> Self {
        self.protection = protection;
        self
    }

    /// This config bound to the deployment `context` (see [`SealConfig::context`]).
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }
}

impl Default for SealConfig {
    fn default() -> Self {
        SealConfig {
            ttl: Self::DEFAULT_TTL,
            max_ttl: Self::DEFAULT_MAX_TTL,
            clock_skew: Self::DEFAULT_CLOCK_SKEW,
            max_len: Self::DEFAULT_MAX_LEN,
            protection: Protection::Hmac,
            context: None,
            compress: true,
        }
    }
}

/// Whole seconds of `d`, rounded up.
fn secs_ceil(d: Duration) -> u64 {
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
}

/// What a state is bound to: checked on open, never stored in the token.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// The authenticated caller.
    pub principal: &'a Principal,
    /// The JSON-RPC method (`tools/call`, `prompts/get`, `resources/read`).
    pub method: &'a str,
    /// The tool name (or prompt name, or resource URI) the request targets.
    pub tool: &'a str,
    /// [`args_digest`] of the request's arguments.
    pub args_digest: [u8; 32],
}

impl<'a> Binding<'a> {
    /// A binding whose digest is computed from `args`.
    pub fn new(
        principal: &'a Principal,
        method: &'a str,
        tool: &'a str,
        args: &serde_json::Value,
    ) -> Self {
        Binding {
            principal,
            method,
            tool,
            args_digest: args_digest(args),
        }
    }
}

/// The contents of a state.
#[derive(Debug, Clone, PartialEq)]
pub struct StateBody {
    /// How many `input_required` results this call has produced so far.
    pub round: u32,
    /// Fingerprint of the tool's state layout (compared by the server, not by `open`).
    pub layout: String,
    /// What the server keeps between rounds.
    pub payload: serde_json::Value,
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
        use rand::RngCore;
        let mut key = vec![0u8; MIN_KEY_LEN];
        rand::rngs::OsRng.fill_bytes(&mut key);
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

    /// This sealer on another clock (for tests: [`ManualClock`]).
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
    /// Fails with [`SealError::Oversize`] when the token would exceed the cap.
    pub fn seal(
        &self,
        binding: &Binding<'_>,
        body: &StateBody,
        ttl: Option<Duration>,
    ) -> Result<String, SealError> {
        let payload = serde_json::to_vec(&body.payload).map_err(|_| SealError::Encrypt)?;
        self.seal_json(binding, body.round, &body.layout, &payload, ttl)
    }

    /// [`seal`](Self::seal) of a payload already serialized as JSON text (`payload` must be
    /// one JSON value: [`open`](Self::open) parses it).
    pub(crate) fn seal_json(
        &self,
        binding: &Binding<'_>,
        round: u32,
        layout: &str,
        payload: &[u8],
        ttl: Option<Duration>,
    ) -> Result<String, SealError> {
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
            times, round, layout, payload, compress,
        )?);
        let sealed_len = envelope::sealed_len(protection, plain.len());
        let exact = PREFIX.len() + key.kid.len() + 1 + base64_unpadded_len(sealed_len);
        if exact > self.config.max_len {
            return Err(SealError::Oversize {
                len: exact,
                max: self.config.max_len,
            });
        }

        let sealed = match protection {
            Protection::Hmac => envelope::hmac_seal(key.hmac(), self.context(), binding, &plain),
            _ => {
                let ad = envelope::associated_data(protection, &key.kid, self.context(), binding);
                envelope::protect(protection, key.mode_key(protection), &ad, &plain)?
            }
        };
        let mut token = String::with_capacity(exact);
        token.push_str(PREFIX);
        token.push_str(&key.kid);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(&sealed, &mut token);
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
        let (round, layout, payload) = self.open_parsed(binding, token)?;
        Ok(StateBody {
            round,
            layout,
            payload,
        })
    }

    /// [`open`](Self::open), the payload parsed straight from the opened bytes into a `T`
    /// (no `Value` detour, no copy of an HMAC body): `(round, layout, payload)`.
    pub(crate) fn open_parsed<T: serde::de::DeserializeOwned>(
        &self,
        binding: &Binding<'_>,
        token: &str,
    ) -> Result<(u32, String, T), SealError> {
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
        let key = self.keyring.lookup(kid)?;
        let protection = self.config.protection;
        let sealed = URL_SAFE_NO_PAD
            .decode(data)
            .map_err(|_| SealError::Malformed("invalid base64url"))?;
        // An HMAC body is read in place (the client can read it anyway); a decrypted AEAD
        // body is zeroized when dropped.
        let decrypted;
        let plain: &[u8] = match protection {
            Protection::Hmac => envelope::hmac_open(key.hmac(), self.context(), binding, &sealed)?,
            _ => {
                let ad = envelope::associated_data(protection, kid, self.context(), binding);
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
        } = envelope::decode_body_json(plain)?;
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
        Ok((round, layout, payload))
    }
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
