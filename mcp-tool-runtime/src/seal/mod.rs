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

mod binding;
mod clock;
mod config;
mod digest;
mod envelope;
mod error;
mod keyring;
mod sealer;

pub use binding::{Binding, StateBody};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{Protection, SealConfig};
pub(crate) use digest::digest_text;
pub use digest::{args_digest, canonical_json, raw_args_digest};
pub use envelope::{DOMAIN_LABEL, PREFIX};
pub use error::SealError;
pub use keyring::{Keyring, MAX_KID_LEN, MIN_KEY_LEN, valid_kid};
pub use sealer::Sealer;
pub(crate) use sealer::peek_trace;
