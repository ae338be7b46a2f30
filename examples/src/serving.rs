//! What the `serve` binary (and the end-to-end tests) use to stand up the example server:
//! the state sealer from `MCP_TOOL_STATE_KEY`, and the demo authenticator.

use std::time::Duration;

use axum::http::HeaderMap;
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::transport::auth::{AuthError, Authenticator, BearerDemoAuth};

/// The environment variable holding the state key (hex, at least 32 bytes).
pub const STATE_KEY_ENV: &str = "MCP_TOOL_STATE_KEY";
/// The key id written into every sealed state.
pub const STATE_KID: &str = "k1";

/// Where the sealer's key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// `MCP_TOOL_STATE_KEY`: every replica with the same value understands the others' states.
    Environment,
    /// A random key for this process only.
    Random,
}

/// A sealer with the key given as hex (at least 32 bytes) and the default TTL `ttl`.
///
/// # Errors
/// A message when the hex is malformed or the key too short (never the key itself).
pub fn sealer_from_hex(hex: &str, ttl: Duration) -> Result<Sealer, String> {
    let keyring = Keyring::from_hex(STATE_KID, hex)
        .map_err(|e| format!("{STATE_KEY_ENV}: {e} (expected hex of at least 32 bytes)"))?;
    Ok(Sealer::new(keyring, SealConfig::default().with_ttl(ttl)))
}

/// The sealer from `MCP_TOOL_STATE_KEY`, or a random per-process key when it is unset or
/// empty (then log a warning: replicas will not understand each other's states).
///
/// # Errors
/// When the variable is set but invalid: better to refuse to start than to silently use a
/// random key on one replica.
pub fn sealer_from_env(ttl: Duration) -> Result<(Sealer, KeySource), String> {
    match std::env::var(STATE_KEY_ENV) {
        Ok(hex) if !hex.trim().is_empty() => {
            Ok((sealer_from_hex(hex.trim(), ttl)?, KeySource::Environment))
        }
        _ => {
            tracing::warn!(
                "{STATE_KEY_ENV} is not set: using a random state key for this process; \
                 replicas will not understand each other's requestState and a restart \
                 invalidates pending calls (set it to the same hex key, at least 32 bytes, \
                 on every replica)"
            );
            let keyring = Keyring::random(STATE_KID).map_err(|e| e.to_string())?;
            Ok((
                Sealer::new(keyring, SealConfig::default().with_ttl(ttl)),
                KeySource::Random,
            ))
        }
    }
}

/// **A demo authenticator, not real authentication.** A request with
/// `Authorization: Bearer <token>` is the principal named `<token>` (nothing is verified:
/// whoever sends the token *is* that principal); a request without an `Authorization`
/// header is the anonymous principal; a malformed header is refused with 401.
///
/// It exists to show that a `requestState` sealed for one principal does not open for
/// another. A real deployment implements
/// [`Authenticator`] with real token
/// verification (OAuth 2.1 token introspection, JWT validation against the issuer's keys, …)
/// and returns the verified subject — pass it to `HttpConfig::authenticator` in place of
/// this one.
#[derive(Debug, Clone, Default)]
pub struct DemoAuth {
    bearer: BearerDemoAuth,
}

impl DemoAuth {
    /// The demo authenticator.
    pub fn new() -> Self {
        DemoAuth::default()
    }
}

impl Authenticator for DemoAuth {
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, AuthError> {
        if headers.get("authorization").is_none() {
            return Ok(Principal::anonymous());
        }
        self.bearer.authenticate(headers)
    }
}
