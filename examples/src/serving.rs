//! What the `serve` binary (and the end-to-end tests) use to stand up the example server:
//! the state sealer from `MCP_TOOL_STATE_KEY` (and older keys from
//! `MCP_TOOL_STATE_KEY_PREVIOUS`), the demo authenticator, the OAuth resource server of
//! `--oauth-*`, and the listen-address check.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::time::Duration;

use axum::http::request::Parts;
use mcp_tool_oauth::{OAuthConfig, OAuthResourceServer};
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::transport::auth::{AuthError, Authenticator, BearerDemoAuth};

/// The environment variable holding the active state key: hex (at least 32 bytes), or
/// `kid:hex` to name its key id (default [`STATE_KID`]). It seals every new state.
pub const STATE_KEY_ENV: &str = "MCP_TOOL_STATE_KEY";
/// The environment variable holding older keys that still open states but never seal:
/// comma-separated `kid:hex` entries (key ids distinct from the active one). Put the
/// previous active key here when rotating, for at least one state TTL.
pub const PREVIOUS_KEYS_ENV: &str = "MCP_TOOL_STATE_KEY_PREVIOUS";
/// The key id of an active key given without one.
pub const STATE_KID: &str = "k1";

/// Where the sealer's key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// `MCP_TOOL_STATE_KEY`: every replica with the same value understands the others' states.
    Environment,
    /// A random key for this process only.
    Random,
}

/// Splits `kid:hex` (or a bare `hex`, then `default_kid`) without ever echoing the key.
fn kid_and_hex<'a>(
    entry: &'a str,
    default_kid: Option<&'a str>,
) -> Result<(&'a str, &'a str), String> {
    match entry.split_once(':') {
        Some((kid, hex)) => Ok((kid.trim(), hex.trim())),
        None => default_kid
            .map(|kid| (kid, entry.trim()))
            .ok_or_else(|| "each entry must be kid:hex".to_owned()),
    }
}

/// A sealer with the key given as hex (at least 32 bytes; `kid:hex` names the key id) and
/// the default TTL `ttl`.
///
/// # Errors
/// A message when the hex is malformed or the key too short (never the key itself).
pub fn sealer_from_hex(hex: &str, ttl: Duration) -> Result<Sealer, String> {
    keyring_from(hex, None).map(|ring| Sealer::new(ring, SealConfig::default().with_ttl(ttl)))
}

/// The keyring from the values of [`STATE_KEY_ENV`] and (optionally) [`PREVIOUS_KEYS_ENV`].
///
/// # Errors
/// A message naming the variable and the entry's position (never a key) when a key is not
/// valid hex, is shorter than 32 bytes, has an invalid or repeated key id.
pub fn keyring_from(active: &str, previous: Option<&str>) -> Result<Keyring, String> {
    let (kid, hex) =
        kid_and_hex(active.trim(), Some(STATE_KID)).map_err(|e| format!("{STATE_KEY_ENV}: {e}"))?;
    let mut ring = Keyring::from_hex(kid, hex).map_err(|e| {
        format!("{STATE_KEY_ENV}: {e} (expected hex of at least 32 bytes, optionally kid:hex)")
    })?;
    for (i, entry) in previous
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .enumerate()
    {
        let at = |e: String| format!("{PREVIOUS_KEYS_ENV} entry {}: {e}", i + 1);
        let (kid, hex) = kid_and_hex(entry, None).map_err(at)?;
        ring = ring
            .add_previous_hex(kid, hex)
            .map_err(|e| at(format!("{e} (expected kid:hex, hex of at least 32 bytes)")))?;
    }
    Ok(ring)
}

/// A variable's value: `None` when unset or empty; an error when it is not UTF-8 (a key
/// that cannot be read must stop the server, not fall back to a random one).
fn env_value(name: &str, value: Option<&OsStr>) -> Result<Option<String>, String> {
    match value {
        None => Ok(None),
        Some(v) => match v.to_str() {
            Some(s) if s.trim().is_empty() => Ok(None),
            Some(s) => Ok(Some(s.to_owned())),
            None => Err(format!("{name} is not valid UTF-8 (expected hex)")),
        },
    }
}

/// The sealer from the given values of [`STATE_KEY_ENV`] and [`PREVIOUS_KEYS_ENV`] (as
/// [`sealer_from_env`] reads them), or a random per-process key when the first is unset or
/// empty (then a warning is logged: replicas will not understand each other's states).
///
/// # Errors
/// When a variable is set but unusable (not UTF-8, not hex, too short, bad key ids), or
/// previous keys are given without an active key: better to refuse to start than to
/// silently use a random key on one replica.
pub fn sealer_from_values(
    active: Option<&OsStr>,
    previous: Option<&OsStr>,
    ttl: Duration,
) -> Result<(Sealer, KeySource), String> {
    let active = env_value(STATE_KEY_ENV, active)?;
    let previous = env_value(PREVIOUS_KEYS_ENV, previous)?;
    let config = SealConfig::default().with_ttl(ttl);
    match active {
        Some(active) => {
            let ring = keyring_from(&active, previous.as_deref())?;
            Ok((Sealer::new(ring, config), KeySource::Environment))
        }
        None if previous.is_some() => Err(format!(
            "{PREVIOUS_KEYS_ENV} is set but {STATE_KEY_ENV} is not: set the active key too"
        )),
        None => {
            tracing::warn!(
                "{STATE_KEY_ENV} is not set: using a random state key for this process; \
                 replicas will not understand each other's requestState and a restart \
                 invalidates pending calls (set it to the same hex key, at least 32 bytes, \
                 on every replica)"
            );
            let keyring = Keyring::random(STATE_KID).map_err(|e| e.to_string())?;
            Ok((Sealer::new(keyring, config), KeySource::Random))
        }
    }
}

/// The sealer from `MCP_TOOL_STATE_KEY` and `MCP_TOOL_STATE_KEY_PREVIOUS`; see
/// [`sealer_from_values`].
///
/// # Errors
/// When a variable is set but unusable.
pub fn sealer_from_env(ttl: Duration) -> Result<(Sealer, KeySource), String> {
    sealer_from_values(
        std::env::var_os(STATE_KEY_ENV).as_deref(),
        std::env::var_os(PREVIOUS_KEYS_ENV).as_deref(),
        ttl,
    )
}

/// The flag that lets `serve` use [`DemoAuth`] on a non-loopback address.
pub const INSECURE_PUBLIC_FLAG: &str = "--insecure-demo-auth-on-public-address";

/// Whether `serve` may listen at `addr` with [`DemoAuth`] (which admits anyone): always on
/// a loopback address; elsewhere only with [`INSECURE_PUBLIC_FLAG`].
///
/// # Errors
/// A message explaining the refusal and the way out.
pub fn check_listen_address(addr: &SocketAddr, insecure_flag: bool) -> Result<(), String> {
    if addr.ip().is_loopback() || insecure_flag {
        return Ok(());
    }
    Err(format!(
        "refusing to serve {addr}: the demo authenticator admits anyone (no token is \
         verified), so a non-loopback address would expose every tool to the network. Bind \
         127.0.0.1, verify real tokens with --oauth-issuer URL --oauth-resource URL, or pass \
         {INSECURE_PUBLIC_FLAG} if you really mean it"
    ))
}

/// What `serve --oauth-*` says: tokens from `issuer` for `resource`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthArgs {
    /// `--oauth-issuer`: the authorization server (the `iss` of its tokens; its keys are
    /// discovered from its metadata unless `jwks_uri` is given).
    pub issuer: String,
    /// `--oauth-resource`: this server's canonical URI (the audience, and the `resource`
    /// of its RFC 9728 metadata), e.g. `https://mcp.example.com/mcp`.
    pub resource: String,
    /// `--oauth-jwks-uri`: the issuer's JWKS, instead of discovering it.
    pub jwks_uri: Option<String>,
    /// `--oauth-audience`: the `aud` tokens carry, where it differs from the resource.
    pub audience: Option<String>,
    /// `--oauth-scopes`: space-separated scopes for the metadata's `scopes_supported` and
    /// the 401 challenge.
    pub scopes: Option<String>,
}

/// The OAuth 2.1 resource server for `args` (nothing is fetched yet).
///
/// # Errors
/// A message naming the setting that is not usable (a URL that is not `https://`, or
/// `http://` off loopback, …).
pub fn oauth_authenticator(args: &OAuthArgs) -> Result<OAuthResourceServer, String> {
    let mut config = OAuthConfig::new(&args.issuer, &args.resource);
    if let Some(uri) = &args.jwks_uri {
        config = config.jwks_uri(uri);
    }
    if let Some(audience) = &args.audience {
        config = config.audience(audience);
    }
    if let Some(scopes) = &args.scopes {
        config = config.scopes_supported(scopes.split_whitespace());
    }
    OAuthResourceServer::new(config).map_err(|e| format!("--oauth-*: {e}"))
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
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        if request.headers.get("authorization").is_none() {
            return Box::pin(std::future::ready(Ok(Principal::anonymous())));
        }
        self.bearer.authenticate(request)
    }

    fn admits_anyone(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0";
    const B: &str = "0f0e0d0c0b0a09080706050403020100ffeeddccbbaa99887766554433221100";

    #[test]
    fn active_and_previous_keys_with_kids() {
        let ring = keyring_from(A, None).unwrap();
        assert_eq!(ring.active_kid(), "k1");
        let ring = keyring_from(&format!("k9:{A}"), Some(&format!(" k1:{B} , k2:{A},"))).unwrap();
        assert_eq!(ring.kids().collect::<Vec<_>>(), ["k9", "k1", "k2"]);
    }

    #[test]
    fn unusable_values_are_refused_without_echoing_keys() {
        for (active, previous) in [
            ("zz", None),
            (A, Some("nokid")),
            (A, Some("k1:00")),
            (A, Some(&*format!("k1:{B}"))),
        ] {
            let err = keyring_from(active, previous).unwrap_err();
            assert!(!err.contains(A) && !err.contains(B), "{err}");
        }
        let bad = {
            #[cfg(unix)]
            {
                use std::os::unix::ffi::OsStrExt;
                OsStr::from_bytes(b"\xff\xfe").to_owned()
            }
            #[cfg(not(unix))]
            {
                std::ffi::OsString::from("zz")
            }
        };
        let err = sealer_from_values(Some(&bad), None, Duration::from_secs(1)).unwrap_err();
        assert!(err.contains(STATE_KEY_ENV), "{err}");
        let (_, source) =
            sealer_from_values(Some(OsStr::new(" ")), None, Duration::from_secs(1)).unwrap();
        assert_eq!(source, KeySource::Random);
        assert!(
            sealer_from_values(
                None,
                Some(OsStr::new(&format!("k2:{B}"))),
                Duration::from_secs(1)
            )
            .is_err()
        );
    }

    #[test]
    fn the_demo_authenticator_stays_on_loopback_without_the_flag() {
        for ok in ["127.0.0.1:8080", "[::1]:80", "127.9.9.9:1"] {
            assert!(
                check_listen_address(&ok.parse().unwrap(), false).is_ok(),
                "{ok}"
            );
        }
        for public in ["0.0.0.0:8080", "[::]:8080", "10.0.0.1:80", "192.0.2.1:1"] {
            let addr = public.parse().unwrap();
            let err = check_listen_address(&addr, false).unwrap_err();
            assert!(err.contains(INSECURE_PUBLIC_FLAG), "{err}");
            assert!(check_listen_address(&addr, true).is_ok());
        }
        assert!(DemoAuth::new().admits_anyone());
    }

    #[test]
    fn oauth_flags_make_a_resource_server_that_admits_no_one_unverified() {
        let args = OAuthArgs {
            issuer: "https://auth.example.com".into(),
            resource: "https://mcp.example.com/mcp".into(),
            scopes: Some("notes:read  notes:write".into()),
            ..OAuthArgs::default()
        };
        let auth = oauth_authenticator(&args).unwrap();
        assert!(!auth.admits_anyone());
        assert_eq!(
            auth.resource_metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            auth.metadata()["scopes_supported"],
            serde_json::json!(["notes:read", "notes:write"])
        );
        for bad in [
            OAuthArgs {
                issuer: "http://auth.example.com".into(),
                ..args.clone()
            },
            OAuthArgs {
                resource: "mcp.example.com".into(),
                ..args.clone()
            },
            OAuthArgs {
                jwks_uri: Some("ftp://x".into()),
                ..args.clone()
            },
        ] {
            let err = oauth_authenticator(&bad).unwrap_err();
            assert!(err.starts_with("--oauth-*:"), "{err}");
        }
    }
}
