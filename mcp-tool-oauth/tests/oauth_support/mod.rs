//! A small authorization server on loopback for tests/oauth_hostile.rs (RFC 8414 metadata,
//! a JWKS that can be slow, huge or down, RFC 7662 introspection with scripted answers),
//! signing keys made in the test (ring), and the MCP server behind an OAuthResourceServer.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_tool_oauth::{OAuthConfig, OAuthResourceServer};
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::transport::params::{METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER};
use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};

/// The resource (audience) the tests' server is.
pub const RESOURCE: &str = "http://localhost/mcp";
/// Its RFC 9728 metadata URL.
pub const METADATA: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";
/// The introspection client.
const CLIENT: (&str, &str) = ("resource-server", "rs-secret");

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// base64url without padding.
pub fn b64(s: &str) -> String {
    URL_SAFE_NO_PAD.encode(s)
}

/// The 401 challenge the tests' server sends, with `error` if given.
pub fn challenge(error: Option<&str>) -> String {
    let mut c =
        format!("Bearer resource_metadata=\"{METADATA}\", scope=\"notes:read notes:write\"");
    if let Some(e) = error {
        c.push_str(&format!(", error=\"{e}\""));
    }
    c
}

/// Neither the body nor the challenge repeats anything of a token.
pub fn assert_no_leak(r: &Reply) {
    let seen = format!("{} {}", r.text, r.challenge.as_deref().unwrap_or(""));
    for secret in [
        "alice",
        "s3cr3t-claim",
        "client-1",
        "kid-alpha",
        "unknown-",
        "evil",
        "never",
        "HS256",
        "none",
        "expired",
        "audience",
        "issuer",
        "signature",
        "kid",
    ] {
        assert!(!seen.contains(secret), "{secret:?} leaked: {seen}");
    }
}

/// How the JWKS endpoint behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwksMode {
    /// Answers the key set.
    Normal,
    /// Answers after 5 s.
    Slow,
    /// Answers 1 MiB.
    Huge,
    /// Answers 500.
    Down,
}

struct IdpState {
    issuer: String,
    jwks: Mutex<Value>,
    mode: Mutex<JwksMode>,
    fetches: AtomicUsize,
    answers: Mutex<HashMap<String, Value>>,
    introspections: AtomicUsize,
    introspection_down: AtomicBool,
    /// How long an introspection answer takes (ms).
    introspection_delay_ms: std::sync::atomic::AtomicU64,
    /// Introspection calls in progress, and the most at once.
    introspecting: AtomicUsize,
    introspecting_peak: AtomicUsize,
}

/// The authorization server.
pub struct Idp {
    pub issuer: String,
    state: Arc<IdpState>,
}

impl Idp {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(IdpState {
            issuer: issuer.clone(),
            jwks: Mutex::new(json!({"keys": []})),
            mode: Mutex::new(JwksMode::Normal),
            fetches: AtomicUsize::new(0),
            answers: Mutex::new(HashMap::new()),
            introspections: AtomicUsize::new(0),
            introspection_down: AtomicBool::new(false),
            introspection_delay_ms: std::sync::atomic::AtomicU64::new(0),
            introspecting: AtomicUsize::new(0),
            introspecting_peak: AtomicUsize::new(0),
        });
        let app = Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/jwks", get(jwks))
            .route("/introspect", post(introspect))
            .with_state(state.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { issuer, state }
    }

    /// Publishes these keys (and only these).
    pub fn set_keys(&self, keys: &[&Signer]) {
        *self.state.jwks.lock().unwrap() =
            json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()});
    }

    pub fn set_mode(&self, mode: JwksMode) {
        *self.state.mode.lock().unwrap() = mode;
    }

    pub fn jwks_fetches(&self) -> usize {
        self.state.fetches.load(Ordering::SeqCst)
    }

    /// What introspection answers for `token`.
    pub fn answer(&self, token: &str, answer: Value) {
        self.state
            .answers
            .lock()
            .unwrap()
            .insert(token.to_owned(), answer);
    }

    pub fn introspections(&self) -> usize {
        self.state.introspections.load(Ordering::SeqCst)
    }

    /// Introspection answers take `delay`.
    pub fn set_introspection_delay(&self, delay: Duration) {
        self.state
            .introspection_delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }

    /// The most introspection calls that were in progress at once.
    pub fn introspecting_peak(&self) -> usize {
        self.state.introspecting_peak.load(Ordering::SeqCst)
    }

    pub fn set_introspection_down(&self, down: bool) {
        self.state.introspection_down.store(down, Ordering::SeqCst);
    }
}

async fn metadata(State(s): State<Arc<IdpState>>) -> Response {
    axum::Json(json!({
        "issuer": s.issuer,
        "jwks_uri": format!("{}/jwks", s.issuer),
        "introspection_endpoint": format!("{}/introspect", s.issuer),
    }))
    .into_response()
}

async fn jwks(State(s): State<Arc<IdpState>>) -> Response {
    s.fetches.fetch_add(1, Ordering::SeqCst);
    let mode = *s.mode.lock().unwrap();
    let keys = s.jwks.lock().unwrap().clone();
    match mode {
        JwksMode::Normal => axum::Json(keys).into_response(),
        JwksMode::Slow => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            axum::Json(keys).into_response()
        }
        JwksMode::Huge => {
            let pad = "x".repeat(1 << 20);
            axum::Json(json!({"keys": keys["keys"], "pad": pad})).into_response()
        }
        JwksMode::Down => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn introspect(
    State(s): State<Arc<IdpState>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    s.introspections.fetch_add(1, Ordering::SeqCst);
    let now = s.introspecting.fetch_add(1, Ordering::SeqCst) + 1;
    s.introspecting_peak.fetch_max(now, Ordering::SeqCst);
    let delay = s.introspection_delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    s.introspecting.fetch_sub(1, Ordering::SeqCst);
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", CLIENT.0, CLIENT.1))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&expected) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    if s.introspection_down.load(Ordering::SeqCst) {
        return StatusCode::BAD_GATEWAY.into_response();
    }
    let token = form.get("token").cloned().unwrap_or_default();
    let answer = s.answers.lock().unwrap().get(&token).cloned();
    axum::Json(answer.unwrap_or_else(|| json!({"active": false}))).into_response()
}

enum Kind {
    Ec,
    Ed,
    Rsa,
}

/// A 2048-bit RSA key for the tests only (made with `openssl genrsa 2048`; RSA key generation
/// in a debug build would take seconds): PKCS#1 DER in base64, and its modulus in base64url.
const RSA_PKCS1_DER: &str = include_str!("rs256_pkcs1.der.b64");
const RSA_MODULUS: &str = include_str!("rs256_modulus.b64u");

/// A signing key of the test's making.
pub struct Signer {
    pub kid: String,
    /// The public key (SEC1 uncompressed, or the 32 Ed25519 bytes).
    pub public: Vec<u8>,
    alg: Algorithm,
    key: EncodingKey,
    kind: Kind,
}

impl Signer {
    /// A fresh P-256 key.
    pub fn es256(kid: &str) -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        Self {
            kid: kid.to_owned(),
            public: pair.public_key().as_ref().to_vec(),
            alg: Algorithm::ES256,
            key: EncodingKey::from_ec_der(pkcs8.as_ref()),
            kind: Kind::Ec,
        }
    }

    /// A fresh Ed25519 key.
    pub fn ed25519(kid: &str) -> Self {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        Self {
            kid: kid.to_owned(),
            public: pair.public_key().as_ref().to_vec(),
            alg: Algorithm::EdDSA,
            key: EncodingKey::from_ed_der(pkcs8.as_ref()),
            kind: Kind::Ed,
        }
    }

    /// The fixed RSA key, signing with `alg` (RS256, PS256, …); its JWK declares RS256.
    pub fn rsa(kid: &str, alg: Algorithm) -> Self {
        let der = STANDARD.decode(RSA_PKCS1_DER.trim()).unwrap();
        Self {
            kid: kid.to_owned(),
            public: Vec::new(),
            alg,
            key: EncodingKey::from_rsa_der(&der),
            kind: Kind::Rsa,
        }
    }

    /// The public JWK.
    pub fn jwk(&self) -> Value {
        let enc = |b: &[u8]| URL_SAFE_NO_PAD.encode(b);
        match self.kind {
            Kind::Ec => {
                json!({"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": self.kid,
                               "x": enc(&self.public[1..33]), "y": enc(&self.public[33..65])})
            }
            Kind::Ed => {
                json!({"kty": "OKP", "crv": "Ed25519", "kid": self.kid, "x": enc(&self.public)})
            }
            Kind::Rsa => json!({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid,
                                "n": RSA_MODULUS.trim(), "e": "AQAB"}),
        }
    }

    /// A JWT access token with `claims`.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }

    /// The base64url signature of `message`.
    pub fn sign_raw(&self, message: &str) -> String {
        jsonwebtoken::crypto::sign(message.as_bytes(), &self.key, self.alg).unwrap()
    }
}

/// An HS256 token "signed" with `secret` (say, the issuer's public key) naming `kid`.
pub fn hmac_token(kid: &str, claims: &Value, secret: &[u8]) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret).unwrap()).unwrap()
}

/// Says who the caller is.
#[mcp_tool(read_only)]
async fn whoami(cx: &mut ToolContext) -> Result<String, ToolError> {
    let p = cx.principal();
    Ok(format!(
        "iss={} sub={} client={} scopes={}",
        p.issuer().unwrap_or("-"),
        p.id(),
        p.client_id().unwrap_or("-"),
        p.scopes().collect::<Vec<_>>().join(",")
    ))
}

/// An HTTP answer.
pub struct Reply {
    pub status: u16,
    pub challenge: Option<String>,
    pub text: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
    /// The JSON-RPC error message.
    pub fn message(&self) -> String {
        self.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// The authorization server, one published key, and the MCP server behind the resource server.
pub struct Setup {
    pub idp: Idp,
    pub key: Signer,
    pub auth: OAuthResourceServer,
    handle: HttpHandle,
}

impl Setup {
    /// With the configuration `f` makes of the defaults (issuer, resource, scopes).
    pub async fn new(f: impl FnOnce(OAuthConfig) -> OAuthConfig) -> Self {
        Self::build(f, false).await
    }

    /// With introspection of opaque tokens at the authorization server.
    pub async fn introspecting() -> Self {
        Self::build(|c| c, true).await
    }

    /// With introspection, and the configuration `f` makes of it.
    pub async fn introspecting_with(f: impl FnOnce(OAuthConfig) -> OAuthConfig) -> Self {
        Self::build(f, true).await
    }

    async fn build(f: impl FnOnce(OAuthConfig) -> OAuthConfig, introspect: bool) -> Self {
        let idp = Idp::start().await;
        let key = Signer::es256("kid-alpha");
        idp.set_keys(&[&key]);
        let mut config = OAuthConfig::new(idp.issuer.clone(), RESOURCE)
            .scopes_supported(["notes:read", "notes:write"]);
        if introspect {
            config = config.introspection(format!("{}/introspect", idp.issuer), CLIENT.0, CLIENT.1);
        }
        let auth = OAuthResourceServer::new(f(config)).unwrap();
        let server = Server::builder(Implementation::new("oauth-test", "1.0"))
            .tool(whoami::tool())
            .build()
            .unwrap();
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = http::spawn(
            addr,
            server,
            HttpConfig::default().authenticator(auth.clone()),
        )
        .await
        .unwrap();
        Self {
            idp,
            key,
            auth,
            handle,
        }
    }

    pub fn base(&self) -> String {
        self.handle.url().trim_end_matches("/mcp").to_owned()
    }

    /// Claims of a valid token.
    pub fn claims(&self) -> Value {
        json!({"iss": self.idp.issuer, "aud": RESOURCE, "sub": "alice", "exp": now() + 300, "iat": now(),
               "scope": "notes:read notes:write", "client_id": "client-1", "secret": "s3cr3t-claim"})
    }

    /// Claims of an introspection answer with `active`.
    pub fn claims_with_active(&self, active: Value) -> Value {
        let mut c = self.claims();
        c["active"] = active;
        c
    }

    /// A token signed with the published key.
    pub fn token(&self, claims: &Value) -> String {
        self.key.sign(claims)
    }

    /// `tools/call whoami` with `Authorization: Bearer <token>`.
    pub async fn call(&self, token: &str) -> Reply {
        self.call_with(&[("authorization", &format!("Bearer {token}"))])
            .await
    }

    /// `tools/call whoami` with these extra headers.
    pub async fn call_with(&self, extra: &[(&str, &str)]) -> Reply {
        self.post(&self.handle.url(), extra).await
    }

    /// `tools/call whoami` to `url`.
    pub async fn post(&self, url: &str, extra: &[(&str, &str)]) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "whoami", "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}});
        let mut req = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(PROTOCOL_VERSION_HEADER, "2026-07-28")
            .header(METHOD_HEADER, "tools/call")
            .header(NAME_HEADER, "whoami");
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        let resp = req.body(body.to_string()).send().await.unwrap();
        let status = resp.status().as_u16();
        let challenge = resp
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned());
        Reply {
            status,
            challenge,
            text: resp.text().await.unwrap(),
        }
    }
}
