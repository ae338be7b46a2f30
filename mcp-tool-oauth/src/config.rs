//! The resource server's configuration: issuer, resource (audience), key source, algorithm
//! allow-list, clock leeway, introspection, and the bounds on everything fetched.

use std::time::Duration;

use reqwest::Url;

/// A JWS algorithm an access token may be signed with. Only asymmetric algorithms exist
/// here: `none` and the HMAC family (`HS256`, …) cannot be named, so a token that claims
/// them is always refused (an HMAC "signed" with the issuer's *public* key is the classic
/// forgery).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// Ed25519.
    EdDSA,
}

impl SigningAlgorithm {
    /// Every algorithm, the default allow-list.
    pub const ALL: [SigningAlgorithm; 9] = [
        Self::RS256,
        Self::RS384,
        Self::RS512,
        Self::PS256,
        Self::PS384,
        Self::PS512,
        Self::ES256,
        Self::ES384,
        Self::EdDSA,
    ];

    /// The name in a JOSE header (`"RS256"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::RS256 => "RS256",
            Self::RS384 => "RS384",
            Self::RS512 => "RS512",
            Self::PS256 => "PS256",
            Self::PS384 => "PS384",
            Self::PS512 => "PS512",
            Self::ES256 => "ES256",
            Self::ES384 => "ES384",
            Self::EdDSA => "EdDSA",
        }
    }

    /// The algorithm of a JOSE header's `alg`, if it is one of these (case-sensitive, as
    /// RFC 7515 says).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// Why an [`OAuthConfig`] cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthConfigError {
    /// A URL that does not parse, is not absolute `https://` (or `http://` on a loopback
    /// host), or has a fragment.
    #[error("{what}: not a usable URL ({why})")]
    BadUrl {
        /// Which setting.
        what: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The algorithm allow-list is empty.
    #[error("the algorithm allow-list is empty")]
    NoAlgorithms,
    /// A limit set to zero.
    #[error("{0} must not be zero")]
    Zero(&'static str),
    /// The HTTP client could not be built (TLS roots, …).
    #[error("the HTTP client could not be built")]
    Client,
    /// The JOSE library has no usable crypto backend (two backends enabled at once).
    #[error("no JOSE crypto backend (jsonwebtoken: exactly one of its backends must be enabled)")]
    Crypto,
}

/// RFC 7662 introspection of opaque (non-JWT) access tokens.
#[derive(Clone)]
pub(crate) struct IntrospectionConfig {
    pub(crate) endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
}

impl std::fmt::Debug for IntrospectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionConfig")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// How an [`OAuthResourceServer`](crate::OAuthResourceServer) verifies access tokens.
///
/// ```
/// # use mcp_tool_oauth::OAuthConfig;
/// # use std::time::Duration;
/// let config = OAuthConfig::new("https://auth.example.com", "https://mcp.example.com/mcp")
///     .scopes_supported(["notes:read", "notes:write"])
///     .leeway(Duration::from_secs(30));
/// ```
///
/// Defaults: audience = the resource; keys from the issuer's metadata (RFC 8414
/// `/.well-known/oauth-authorization-server`, then OpenID Connect discovery); every
/// asymmetric algorithm of [`SigningAlgorithm`]; 60 s of clock leeway on `exp`/`nbf`; 5 s
/// per HTTP exchange with the authorization server; documents (metadata, JWKS,
/// introspection answers) of at most 256 KiB; the JWKS fetched again at most once every
/// 30 s (for a token naming an unknown `kid`) and at least every 10 minutes; tokens of at
/// most 16 KiB; introspection answers cached for at most 60 s, 10 000 of them, refusals for
/// 10 s (another 10 000 at most); at most 16 introspection calls at once (a token that waits
/// for one longer than the HTTP timeout is answered 503).
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    pub(crate) issuer: String,
    pub(crate) resource: String,
    pub(crate) audience: Option<String>,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) algorithms: Vec<SigningAlgorithm>,
    pub(crate) leeway: Duration,
    pub(crate) introspection: Option<IntrospectionConfig>,
    pub(crate) http_timeout: Duration,
    pub(crate) max_document_bytes: usize,
    pub(crate) jwks_min_refresh: Duration,
    pub(crate) jwks_max_age: Duration,
    pub(crate) max_token_bytes: usize,
    pub(crate) introspection_cache_ttl: Duration,
    pub(crate) introspection_cache_entries: usize,
    pub(crate) introspection_refusal_ttl: Duration,
    pub(crate) max_concurrent_introspections: usize,
}

impl OAuthConfig {
    /// Tokens issued by `issuer` (the `iss` they must carry, and where the keys are
    /// discovered) for `resource`, this server's canonical URI (RFC 8707; the `resource`
    /// of its RFC 9728 metadata, e.g. `https://mcp.example.com/mcp`).
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            resource: resource.into(),
            audience: None,
            jwks_uri: None,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            algorithms: SigningAlgorithm::ALL.to_vec(),
            leeway: Duration::from_secs(60),
            introspection: None,
            http_timeout: Duration::from_secs(5),
            max_document_bytes: 256 * 1024,
            jwks_min_refresh: Duration::from_secs(30),
            jwks_max_age: Duration::from_secs(600),
            max_token_bytes: 16 * 1024,
            introspection_cache_ttl: Duration::from_secs(60),
            introspection_cache_entries: 10_000,
            introspection_refusal_ttl: Duration::from_secs(10),
            max_concurrent_introspections: 16,
        }
    }

    /// The `aud` a token must carry (one of, when an array), if it differs from the
    /// resource. URLs compare with the scheme and host case-insensitive (RFC 8707 canonical
    /// form); anything else compares exactly.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// The issuer's JWKS, instead of discovering it from the issuer's metadata.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// The `authorization_servers` of the RFC 9728 metadata (default: the issuer).
    pub fn authorization_servers<I, S>(mut self, servers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.authorization_servers = servers.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes listed in the metadata (`scopes_supported`) and in the 401 challenge's
    /// `scope` (what a client asks for first).
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The algorithms a token may be signed with (replaces the default: all of
    /// [`SigningAlgorithm`]). An empty list is refused by
    /// [`OAuthResourceServer::new`](crate::OAuthResourceServer::new).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlgorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// The clock skew tolerated on `exp` and `nbf` (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// RFC 7662 introspection for opaque access tokens (a token that is not a compact JWS):
    /// `endpoint` is asked with HTTP Basic authentication as `client_id`/`client_secret`.
    /// An answer counts only when it says `"active": true` **and** carries this issuer's
    /// `iss`, this resource's `aud`, a future `exp` and a `sub`. JWTs are still verified
    /// against the JWKS.
    pub fn introspection(
        mut self,
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.introspection = Some(IntrospectionConfig {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        });
        self
    }

    /// How long one exchange with the authorization server (metadata, JWKS, introspection)
    /// may take, connection included (default 5 s).
    pub fn http_timeout(mut self, timeout: Duration) -> Self {
        self.http_timeout = timeout;
        self
    }

    /// The largest document accepted from the authorization server (default 256 KiB); a
    /// larger one is abandoned as it arrives.
    pub fn max_document_bytes(mut self, bytes: usize) -> Self {
        self.max_document_bytes = bytes;
        self
    }

    /// The JWKS is fetched at most once per `min_interval` (default 30 s; a token with an
    /// unknown `kid` cannot make the server hammer the issuer), and again once it is
    /// `max_age` old (default 10 minutes; so that removed keys stop verifying).
    pub fn jwks_refresh(mut self, min_interval: Duration, max_age: Duration) -> Self {
        self.jwks_min_refresh = min_interval;
        self.jwks_max_age = max_age;
        self
    }

    /// The longest token accepted (default 16 KiB); a longer one is refused unread.
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = bytes;
        self
    }

    /// Introspection answers are kept at most `ttl` (default 60 s, never past the token's
    /// `exp`), at most `entries` of them (default 10 000; the oldest go first).
    pub fn introspection_cache(mut self, ttl: Duration, entries: usize) -> Self {
        self.introspection_cache_ttl = ttl;
        self.introspection_cache_entries = entries;
        self
    }

    /// Introspection refusals (an inactive token, an answer that does not check out) are
    /// kept `ttl` (default 10 s; zero: not kept), keyed by the token's SHA-256, at most as
    /// many as accepted answers: the same unknown token sent again is refused without a call
    /// to the authorization server. Keep it short: a token refused by mistake (an
    /// authorization server that has not yet stored it) stays refused that long.
    pub fn introspection_refusals(mut self, ttl: Duration) -> Self {
        self.introspection_refusal_ttl = ttl;
        self
    }

    /// At most `n` introspection calls at once (default 16, at least 1): a flood of opaque
    /// tokens waits its turn, each at most the HTTP timeout, then is answered 503, and the
    /// authorization server never sees more than `n` calls from this process at once.
    pub fn max_concurrent_introspections(mut self, n: usize) -> Self {
        self.max_concurrent_introspections = n.max(1);
        self
    }

    /// The audience tokens must carry.
    pub(crate) fn expected_audience(&self) -> &str {
        self.audience.as_deref().unwrap_or(&self.resource)
    }

    /// Checks every setting; the parsed resource URL.
    pub(crate) fn validate(&self) -> Result<Url, OAuthConfigError> {
        let resource = url("resource", &self.resource, true)?;
        url("issuer", &self.issuer, false)?;
        if let Some(jwks) = &self.jwks_uri {
            url("jwks_uri", jwks, false)?;
        }
        if let Some(i) = &self.introspection {
            url("introspection endpoint", &i.endpoint, false)?;
        }
        if self.algorithms.is_empty() {
            return Err(OAuthConfigError::NoAlgorithms);
        }
        for (what, zero) in [
            ("http_timeout", self.http_timeout.is_zero()),
            ("max_document_bytes", self.max_document_bytes == 0),
            ("max_token_bytes", self.max_token_bytes == 0),
        ] {
            if zero {
                return Err(OAuthConfigError::Zero(what));
            }
        }
        Ok(resource)
    }
}

/// Parses an absolute `https://` URL (`http://` only on a loopback host: tests and local
/// identity providers), without a fragment (nor a query, for a `resource`).
pub(crate) fn url(
    what: &'static str,
    value: &str,
    resource: bool,
) -> Result<Url, OAuthConfigError> {
    let bad = |why| OAuthConfigError::BadUrl { what, why };
    let parsed = Url::parse(value).map_err(|_| bad("not an absolute URL"))?;
    if parsed.fragment().is_some() {
        return Err(bad("has a fragment"));
    }
    if resource && parsed.query().is_some() {
        return Err(bad("has a query"));
    }
    match parsed.scheme() {
        "https" => {}
        "http" if is_loopback(&parsed) => {}
        "http" => return Err(bad("http:// only on a loopback host; use https://")),
        _ => return Err(bad("not http(s)")),
    }
    if parsed.host().is_none() {
        return Err(bad("no host"));
    }
    Ok(parsed)
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether the audience value `aud` names `expected`: the same string, or the same URL
/// once both are in canonical form (scheme and host lower-case, default port dropped, an
/// empty path as `/`).
pub(crate) fn same_audience(aud: &str, expected: &str) -> bool {
    if aud == expected {
        return true;
    }
    match (Url::parse(aud), Url::parse(expected)) {
        (Ok(a), Ok(b)) => a.as_str() == b.as_str() && a.fragment().is_none(),
        _ => false,
    }
}
