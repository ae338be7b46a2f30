//! An OAuth 2.1 resource server ([`OAuthResourceServer`]) for the Streamable HTTP transport
//! of [`mcp_tool_runtime`]: the [`Authenticator`] of the MCP authorization spec. Bearer
//! access tokens from the `Authorization` header, JWTs verified against the issuer's JWKS
//! (or opaque tokens asked about by RFC 7662 introspection), bound to this server as their
//! audience (RFC 8707); RFC 9728 protected resource metadata served next to the endpoint;
//! 401 challenges that point to it. The [`Principal`] of a verified token is the one the
//! runtime binds sealed request states, tasks and legacy sessions to: its issuer and subject,
//! its client and scopes.
//!
//! ```no_run
//! use mcp_tool_oauth::{OAuthConfig, OAuthResourceServer};
//! use mcp_tool_runtime::transport::http::HttpConfig;
//! let auth = OAuthResourceServer::new(
//!     OAuthConfig::new("https://auth.example.com", "https://mcp.example.com/mcp")
//!         .scopes_supported(["notes:read"]),
//! )?;
//! let config = HttpConfig::default().authenticator(auth);
//! # Ok::<(), mcp_tool_oauth::OAuthConfigError>(())
//! ```
//!
//! **Keys.** The issuer's JWKS is found by RFC 8414 discovery (or given with
//! [`OAuthConfig::jwks_uri`]), fetched on the first token (or by
//! [`OAuthResourceServer::prefetch`]) and again on an unknown `kid`, at most once per
//! refresh interval ([`OAuthConfig::jwks_refresh`]); keys already fetched keep verifying
//! while the issuer is unreachable. Every exchange with the authorization server has a
//! time limit and a size cap and follows no redirect.
//!
//! **Checks.** JOSE is [`jsonwebtoken`] (>= 10.3, RustCrypto backend): well kept, widely
//! used, pure Rust; it verifies the signature only. Everything around it is checked here and
//! refused with a generic message: the token's size and shape, the header's `alg` against an
//! allow-list that cannot name `none` or an HMAC, the key's type, curve and declared `alg`
//! against the token's, and the claims (`iss`, `aud`, `exp`, `nbf`, `sub`) with their JSON
//! types. Which check failed goes to the debug log only (target `mcp_tool_oauth`).

#![warn(missing_docs)]

mod claims;
mod config;
mod discovery;
mod fetch;
mod introspection;
mod jwks;
mod jwt;
mod metadata;

pub use config::{OAuthConfig, OAuthConfigError, SigningAlgorithm};

use std::sync::Arc;

use http::request::Parts;
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::transport::auth::{AuthError, Authenticator, bearer_token};
use serde_json::Value;

use claims::{Expected, Failure};
use fetch::Fetcher;
use introspection::Introspector;
use jwks::Keys;
use metadata::Metadata;

/// The client-visible message of every refused token.
const INVALID: &str = "invalid token";

/// Verifies OAuth 2.1 bearer access tokens for one resource (see the [crate docs](crate)).
///
/// A request without a token gets 401 `WWW-Authenticate: Bearer resource_metadata="…"`
/// (and `scope="…"` when [`OAuthConfig::scopes_supported`] is set); a token that fails
/// any check gets the same with `error="invalid_token"`; a token in the query string or a
/// malformed `Authorization` header gets it with `error="invalid_request"`. A token that
/// cannot be checked because the issuer's keys (or the introspection endpoint) cannot be
/// had gets 503, so that the client keeps its token and retries. A missing scope is 403
/// `insufficient_scope` with `resource_metadata`.
///
/// Cheap to clone (one `Arc`): clones share the key cache and the introspection cache.
#[derive(Clone)]
pub struct OAuthResourceServer(Arc<Inner>);

struct Inner {
    config: OAuthConfig,
    fetcher: Fetcher,
    keys: Keys,
    introspector: Option<Introspector>,
    metadata: Metadata,
}

impl std::fmt::Debug for OAuthResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthResourceServer")
            .field("config", &self.0.config)
            .finish_non_exhaustive()
    }
}

impl OAuthResourceServer {
    /// A resource server for `config`. Nothing is fetched yet: the issuer's metadata and
    /// keys are fetched on the first token (or by [`prefetch`](Self::prefetch)).
    ///
    /// # Errors
    /// [`OAuthConfigError`] for a URL that is not absolute `https://` (`http://` is
    /// accepted on loopback hosts only), an empty algorithm list, a zero limit.
    pub fn new(config: OAuthConfig) -> Result<Self, OAuthConfigError> {
        let resource = config.validate()?;
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            return Err(OAuthConfigError::Crypto);
        }
        let fetcher = Fetcher::new(config.http_timeout, config.max_document_bytes)
            .ok_or(OAuthConfigError::Client)?;
        let jwks_uri = match &config.jwks_uri {
            Some(u) => Some(config::url("jwks_uri", u, false)?),
            None => None,
        };
        let keys = Keys::new(
            config.issuer.clone(),
            jwks_uri,
            config.algorithms.clone(),
            config.jwks_min_refresh,
            config.jwks_max_age,
        );
        let introspector = match &config.introspection {
            Some(i) => Some(Introspector::new(
                config::url("introspection endpoint", &i.endpoint, false)?,
                i.client_id.clone(),
                i.client_secret.clone(),
                introspection::Bounds {
                    ttl: config.introspection_cache_ttl,
                    capacity: config.introspection_cache_entries,
                    refusal_ttl: config.introspection_refusal_ttl,
                    max_concurrent: config.max_concurrent_introspections,
                    wait: config.http_timeout,
                },
            )),
            None => None,
        };
        let servers = if config.authorization_servers.is_empty() {
            vec![config.issuer.clone()]
        } else {
            config.authorization_servers.clone()
        };
        let metadata = Metadata::new(
            &config.resource,
            &resource,
            &servers,
            &config.scopes_supported,
        );
        Ok(Self(Arc::new(Inner {
            config,
            fetcher,
            keys,
            introspector,
            metadata,
        })))
    }

    /// Discovers the issuer's JWKS and fetches it now (at startup, say, to log a
    /// misconfiguration early); otherwise that happens on the first token. A failure here
    /// does not count against the refetch interval: the first token tries again.
    ///
    /// # Errors
    /// A short description of what failed (the details are in the log).
    pub async fn prefetch(&self) -> Result<(), String> {
        self.0
            .keys
            .prefetch(&self.0.fetcher)
            .await
            .map_err(str::to_owned)
    }

    /// The URL of this resource's RFC 9728 metadata, as the challenges name it.
    pub fn resource_metadata_url(&self) -> &str {
        &self.0.metadata.url
    }

    /// The RFC 9728 metadata document.
    pub fn metadata(&self) -> &Value {
        &self.0.metadata.document
    }
}

impl Inner {
    /// The principal of `token`.
    async fn verify(&self, token: &str) -> Result<Principal, Failure> {
        if token.len() > self.config.max_token_bytes {
            return Err(Failure::Invalid("token too large"));
        }
        let expected = Expected {
            issuer: &self.config.issuer,
            audience: self.config.expected_audience(),
            leeway: self.config.leeway,
        };
        if let Some(introspector) = &self.introspector
            && !jwt::looks_like_jws(token)
        {
            return introspector
                .introspect(&self.fetcher, token, &expected)
                .await;
        }
        let jws = jwt::header(token, &self.config.algorithms)?;
        let key = self
            .keys
            .key(&self.fetcher, jws.kid.as_deref(), jws.alg)
            .await?;
        let claims = jwt::verify(&jws, &key.key)?;
        claims::check(&claims, &expected)?;
        Ok(claims::principal(claims))
    }

    async fn authenticate_parts(&self, request: &Parts) -> Result<Principal, AuthError> {
        let token = match bearer_token(request, "mcp") {
            Ok(Some(token)) => token,
            Ok(None) => return Err(self.metadata.unauthorized(None, "authentication required")),
            Err(e) => {
                tracing::debug!(reason = %e.message, "OAuth: malformed request");
                return Err(self
                    .metadata
                    .unauthorized(Some("invalid_request"), "invalid request"));
            }
        };
        match self.verify(token).await {
            Ok(principal) => Ok(principal),
            Err(Failure::Invalid(why)) => {
                tracing::debug!(reason = why, "OAuth: token refused");
                Err(self.metadata.unauthorized(Some("invalid_token"), INVALID))
            }
            Err(Failure::Unavailable(why)) => {
                tracing::debug!(reason = why, "OAuth: token could not be checked");
                Err(Metadata::unavailable())
            }
        }
    }
}

impl Authenticator for OAuthResourceServer {
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.0.authenticate_parts(request))
    }

    fn insufficient_scope(&self, scopes: &[&str]) -> AuthError {
        self.0.metadata.insufficient_scope(scopes)
    }

    fn well_known(&self) -> Vec<(String, Value)> {
        self.0.metadata.documents()
    }
}
