//! Authenticators: turn an HTTP request (its head: method, URI, headers and the extensions
//! outer layers put there) into the [`Principal`] that sealed request states, tasks and
//! legacy sessions are bound to, or refuse it with a challenge.
//!
//! A state sealed for one principal never opens for another, so the principal must come
//! from something the caller cannot choose freely: a verified token (the crate
//! `mcp-tool-oauth`'s `OAuthResourceServer`), a principal an outer tower/axum layer already
//! established ([`ExtensionAuth`]), a gateway-injected header you trust. Implement
//! [`Authenticator`] for your own scheme. [`AnonymousAuth`] and [`BearerDemoAuth`] are for
//! local use and demonstrations: they verify nothing.

use std::collections::HashSet;

use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use serde_json::Value;

use crate::error::BoxFuture;
use crate::principal::Principal;

/// The HTTP status of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthStatus {
    /// `401 Unauthorized`: no credentials, or credentials that do not verify.
    Unauthorized,
    /// `403 Forbidden`: verified, but not allowed (e.g. `insufficient_scope`).
    Forbidden,
    /// `503 Service Unavailable`: the credentials could not be checked right now (the
    /// issuer's keys or its introspection endpoint cannot be reached); the client should
    /// keep its token and retry. No challenge is sent.
    Unavailable,
}

impl AuthStatus {
    /// The status code (401 or 403).
    pub fn code(self) -> u16 {
        match self {
            AuthStatus::Unauthorized => 401,
            AuthStatus::Forbidden => 403,
            AuthStatus::Unavailable => 503,
        }
    }

    fn label(self) -> &'static str {
        match self {
            AuthStatus::Unauthorized => "unauthorized",
            AuthStatus::Forbidden => "forbidden",
            AuthStatus::Unavailable => "unavailable",
        }
    }
}

/// Why a request was refused. The HTTP transport answers [`status`](Self::status) with
/// [`challenge`](Self::challenge) in the `WWW-Authenticate` header and `message` in a
/// JSON-RPC error body. Say nothing in either that helps an attacker (which check failed
/// stays in the server's debug log).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", .status.label())]
pub struct AuthError {
    /// 401 or 403.
    pub status: AuthStatus,
    /// The `WWW-Authenticate` header value, e.g. `Bearer realm="mcp"` (none is sent when
    /// empty).
    pub challenge: String,
    /// A short, client-safe reason (also sent in the response body).
    pub message: String,
}

impl AuthError {
    /// A 401 with the given challenge and message.
    pub fn new(challenge: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status: AuthStatus::Unauthorized,
            challenge: challenge.into(),
            message: message.into(),
        }
    }

    /// A 403 with the given challenge and message.
    pub fn forbidden(challenge: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status: AuthStatus::Forbidden,
            ..Self::new(challenge, message)
        }
    }

    /// A 401 `Bearer` challenge (RFC 6750) with `realm` and an optional `error` code such
    /// as `invalid_token`.
    pub fn bearer(realm: &str, error: Option<&str>, message: impl Into<String>) -> Self {
        let mut challenge = format!("Bearer realm=\"{}\"", quoted(realm));
        if let Some(e) = error {
            challenge.push_str(&format!(", error=\"{}\"", quoted(e)));
        }
        Self::new(challenge, message)
    }

    /// The 403 `insufficient_scope` refusal (RFC 6750 §3.1) naming every scope the
    /// operation needs, with the challenge's other parameters (`realm`, `resource_metadata`)
    /// given as `extra` (already formatted, e.g. `resource_metadata="https://…"`).
    pub fn insufficient_scope(scopes: &[&str], extra: Option<&str>) -> Self {
        let mut challenge = "Bearer error=\"insufficient_scope\"".to_owned();
        challenge.push_str(&format!(", scope=\"{}\"", quoted(&scopes.join(" "))));
        if let Some(extra) = extra {
            challenge.push_str(", ");
            challenge.push_str(extra);
        }
        Self::forbidden(challenge, "insufficient scope")
    }
}

/// A value for a quoted-string of a challenge: quotes, backslashes and control characters
/// removed (they cannot be escaped reliably across clients, and no legitimate value has them).
pub fn quoted(value: &str) -> String {
    value
        .chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect()
}

/// Turns a request's head into a [`Principal`], or refuses the request.
///
/// Asynchronous, so that it can fetch a JWKS or ask an introspection endpoint, and given
/// the whole request head ([`Parts`]: method, URI, headers, extensions), so that it can take
/// a principal an outer layer put into the extensions ([`ExtensionAuth`]). A synchronous
/// closure `Fn(&Parts) -> Result<Principal, AuthError>` is an authenticator too.
pub trait Authenticator: Send + Sync {
    /// Authenticates one HTTP request.
    ///
    /// # Errors
    /// [`AuthError`] when the request is not authenticated; the transport answers its
    /// status (401, or 403) with its challenge.
    ///
    /// # Panics
    /// Should not; a panic is caught by the HTTP transport, which answers `500` with a
    /// JSON-RPC -32603 body and keeps the connection (and the server) up.
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>>;

    /// Whether this authenticator lets a request without credentials in (as the
    /// anonymous principal, or as a principal the caller names without proof). The HTTP
    /// transport logs a warning when such an authenticator serves a non-loopback address
    /// ([`http::serve`](super::http::serve), [`http::spawn`](super::http::spawn)).
    /// Default: `false`; [`AnonymousAuth`] and [`BearerDemoAuth`] say `true`.
    fn admits_anyone(&self) -> bool {
        false
    }

    /// The refusal for an authenticated caller that lacks `scopes` for an operation (a
    /// tool, prompt or resource declared with `scopes = "…"`): HTTP 403 with
    /// `error="insufficient_scope"`, so that the client can step up. Default:
    /// [`AuthError::insufficient_scope`] with no other parameter; an OAuth resource server
    /// adds its `resource_metadata`.
    fn insufficient_scope(&self, scopes: &[&str]) -> AuthError {
        AuthError::insufficient_scope(scopes, None)
    }

    /// Documents the router serves next to the endpoint, as (absolute path, JSON body):
    /// e.g. RFC 9728 protected resource metadata at
    /// `/.well-known/oauth-protected-resource`. Default: none.
    fn well_known(&self) -> Vec<(String, Value)> {
        Vec::new()
    }
}

/// An authenticator shows in `Debug` output (an [`HttpConfig`](super::http::HttpConfig)'s,
/// say) as its trait only: it may hold keys or credentials.
impl std::fmt::Debug for dyn Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("dyn Authenticator")
    }
}

impl<F> Authenticator for F
where
    F: Fn(&Parts) -> Result<Principal, AuthError> + Send + Sync,
{
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        // Called when polled, not here: a panic in the closure then happens inside the
        // future, where the transport catches it (500), not while the future is made.
        Box::pin(async move { self(request) })
    }
}

/// The bearer token of a request (RFC 6750 §2.1), if it sends one.
///
/// # Errors
/// A 401 `invalid_request` when the `Authorization` header is not one `Bearer <token>`,
/// or when a token comes in the query string (`access_token`, refused: RFC 6750 §2.3 and
/// the MCP authorization spec forbid it; the URL ends up in logs).
pub fn bearer_token<'p>(request: &'p Parts, realm: &str) -> Result<Option<&'p str>, AuthError> {
    let invalid =
        |message: &str| AuthError::bearer(realm, Some("invalid_request"), message.to_owned());
    if request.uri.query().is_some_and(|q| {
        q.split('&')
            .any(|kv| kv.split('=').next() == Some("access_token"))
    }) {
        return Err(invalid(
            "access tokens are not accepted in the query string",
        ));
    }
    let mut values = request.headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(invalid("more than one Authorization header"));
    }
    let value = value
        .to_str()
        .map_err(|_| invalid("malformed Authorization header"))?;
    let (scheme, token) = value
        .trim()
        .split_once(' ')
        .ok_or_else(|| invalid("malformed Authorization header"))?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(invalid("expected Authorization: Bearer <token>"));
    }
    Ok(Some(token))
}

/// Takes the [`Principal`] an outer tower/axum layer put into the request's extensions
/// (`request.extensions_mut().insert(principal)`), as it is. A request without one is
/// refused with 401 and the configured challenge: put this behind a layer that always
/// authenticates, or refuses, first.
#[derive(Debug, Clone)]
pub struct ExtensionAuth {
    challenge: String,
}

impl Default for ExtensionAuth {
    fn default() -> Self {
        Self::new()
    }
}

impl ExtensionAuth {
    /// Refuses a request without a principal with `WWW-Authenticate: Bearer`.
    pub fn new() -> Self {
        Self {
            challenge: "Bearer".into(),
        }
    }

    /// The `WWW-Authenticate` value for a request that arrives without a principal.
    pub fn challenge(mut self, challenge: impl Into<String>) -> Self {
        self.challenge = challenge.into();
        self
    }
}

impl Authenticator for ExtensionAuth {
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let found = request.extensions.get::<Principal>().cloned();
        let challenge = &self.challenge;
        Box::pin(async move {
            found.ok_or_else(|| AuthError::new(challenge.clone(), "authentication required"))
        })
    }
}

/// Every request is the anonymous principal. Suitable for local, single-user servers.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnonymousAuth;

impl Authenticator for AnonymousAuth {
    fn authenticate<'a>(
        &'a self,
        _request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(std::future::ready(Ok(Principal::anonymous())))
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
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(std::future::ready(self.check(request)))
    }

    /// `true` unless [`allow`](Self::allow) restricted the tokens: any caller can name
    /// any principal.
    fn admits_anyone(&self) -> bool {
        self.allowed.is_none()
    }
}

impl BearerDemoAuth {
    fn check(&self, request: &Parts) -> Result<Principal, AuthError> {
        let Some(token) = bearer_token(request, &self.realm)? else {
            return Err(AuthError::bearer(
                &self.realm,
                None,
                "missing Authorization header",
            ));
        };
        if let Some(allowed) = &self.allowed
            && !allowed.contains(token)
        {
            return Err(AuthError::bearer(
                &self.realm,
                Some("invalid_token"),
                "invalid bearer token",
            ));
        }
        Ok(Principal::named(token))
    }
}
