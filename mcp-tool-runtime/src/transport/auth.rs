//! Authenticators: turn an HTTP request's headers into the [`Principal`] that sealed
//! request states are bound to.
//!
//! A state sealed for one principal never opens for another, so the principal must come
//! from something the caller cannot choose freely (a verified token, a client
//! certificate, a gateway-injected header you trust). Implement [`Authenticator`] for
//! your scheme; [`AnonymousAuth`] and [`BearerDemoAuth`] are the two shipped here.

use std::collections::HashSet;

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use crate::principal::Principal;

/// Why a request was not authenticated. The HTTP transport answers `401 Unauthorized`
/// with [`AuthError::challenge`] in the `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unauthorized: {message}")]
pub struct AuthError {
    /// The `WWW-Authenticate` header value, e.g. `Bearer realm="mcp"`.
    pub challenge: String,
    /// A short, client-safe reason (also sent in the response body).
    pub message: String,
}

impl AuthError {
    /// An error with the given challenge and message.
    pub fn new(challenge: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            challenge: challenge.into(),
            message: message.into(),
        }
    }

    /// A `Bearer` challenge (RFC 6750) with `realm` and an optional `error` code
    /// such as `invalid_token`.
    pub fn bearer(realm: &str, error: Option<&str>, message: impl Into<String>) -> Self {
        let mut challenge = format!("Bearer realm=\"{}\"", realm.replace('"', ""));
        if let Some(e) = error {
            challenge.push_str(&format!(", error=\"{}\"", e.replace('"', "")));
        }
        Self::new(challenge, message)
    }
}

/// Turns request headers into a [`Principal`], or refuses the request.
pub trait Authenticator: Send + Sync {
    /// Authenticates one HTTP request.
    ///
    /// # Errors
    /// [`AuthError`] when the request is not authenticated; the transport answers 401.
    ///
    /// # Panics
    /// Should not; a panic is caught by the HTTP transport, which answers `500` with a
    /// JSON-RPC -32603 body and keeps the connection (and the server) up.
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, AuthError>;

    /// Whether this authenticator lets a request without credentials in (as the
    /// anonymous principal, or as a principal the caller names without proof). The HTTP
    /// transport logs a warning when such an authenticator serves a non-loopback address
    /// ([`http::serve`](super::http::serve), [`http::spawn`](super::http::spawn)).
    /// Default: `false`; [`AnonymousAuth`] and [`BearerDemoAuth`] say `true`.
    fn admits_anyone(&self) -> bool {
        false
    }
}

impl<F> Authenticator for F
where
    F: Fn(&HeaderMap) -> Result<Principal, AuthError> + Send + Sync,
{
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, AuthError> {
        self(headers)
    }
}

/// Every request is the anonymous principal. Suitable for local, single-user servers.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnonymousAuth;

impl Authenticator for AnonymousAuth {
    fn authenticate(&self, _headers: &HeaderMap) -> Result<Principal, AuthError> {
        Ok(Principal::anonymous())
    }

    fn admits_anyone(&self) -> bool {
        true
    }
}

/// **A demonstration only — not a real authentication scheme.**
///
/// Requires `Authorization: Bearer <token>` and uses the token itself as the principal's
/// id. Nothing is verified: whoever presents a token *is* that principal. It exists so
/// that tests and demos can show that a `requestState` sealed for one principal does not
/// open for another. Optionally restricts the accepted tokens with [`BearerDemoAuth::allow`].
/// For production, implement [`Authenticator`] with real token verification (for example
/// OAuth 2.1 access-token introspection or JWT validation) and use the verified subject.
#[derive(Debug, Clone)]
pub struct BearerDemoAuth {
    realm: String,
    allowed: Option<HashSet<String>>,
}

impl Default for BearerDemoAuth {
    fn default() -> Self {
        Self::new()
    }
}

impl BearerDemoAuth {
    /// Accepts any non-empty bearer token (realm `mcp`).
    pub fn new() -> Self {
        Self {
            realm: "mcp".into(),
            allowed: None,
        }
    }

    /// Sets the realm named in the `WWW-Authenticate` challenge.
    pub fn realm(mut self, realm: impl Into<String>) -> Self {
        self.realm = realm.into();
        self
    }

    /// Accepts only these tokens (adds to any earlier list).
    pub fn allow<I, S>(mut self, tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed
            .get_or_insert_with(HashSet::new)
            .extend(tokens.into_iter().map(Into::into));
        self
    }
}

impl Authenticator for BearerDemoAuth {
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, AuthError> {
        let Some(value) = headers.get(AUTHORIZATION) else {
            return Err(AuthError::bearer(
                &self.realm,
                None,
                "missing Authorization header",
            ));
        };
        let invalid =
            || AuthError::bearer(&self.realm, Some("invalid_token"), "invalid bearer token");
        let value = value.to_str().map_err(|_| invalid())?;
        let (scheme, token) = value.trim().split_once(' ').ok_or_else(invalid)?;
        let token = token.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
            return Err(invalid());
        }
        if let Some(allowed) = &self.allowed
            && !allowed.contains(token)
        {
            return Err(invalid());
        }
        Ok(Principal::named(token))
    }

    /// `true` unless [`allow`](Self::allow) restricted the tokens: any caller can name
    /// any principal.
    fn admits_anyone(&self) -> bool {
        self.allowed.is_none()
    }
}
