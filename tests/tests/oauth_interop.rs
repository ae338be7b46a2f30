//! `serve` as an OAuth 2.1 resource server behind a real, certified OpenID provider (the npm
//! package `oidc-provider`, `tests/node/oidc_provider.mjs`), driven by the official MCP Python
//! SDK 2.3 client's own OAuth flow (`tests/python/oauth_client.py`).
//!
//! Nothing is mocked on the authorization side: the provider discovers, registers clients,
//! runs the authorization code flow with PKCE and resource indicators and signs ES256 JWT
//! access tokens for our resource; our server finds its JWKS through RFC 8414 discovery.
//!
//! - the SDK starts from our 401, reads the RFC 9728 metadata, registers, authorizes with the
//!   metadata's scopes, calls `get_weather` through its two rounds, then steps up to
//!   `notes:write` after the 403 of `add_note`;
//! - a state sealed for one subject, replayed with another subject's valid token, is refused;
//!   so is a legacy session opened by one subject and used with another's token;
//! - the provider rotates its signing key (restarted with a new first key) and our server,
//!   not restarted, accepts the new tokens.

mod python_peer;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use python_peer::{HttpServer, SdkSpec, example_serve_bin, python_dir};
use serde_json::{Value, json};

/// The provider's version, installed from npm into the peers cache.
const OIDC_PROVIDER: &str = "9.13.3";
/// The Python SDK whose OAuth client runs the flow.
const SDK_VERSION: &str = "2.3.0";
const STATE_KEY: &str = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";

fn node_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("node")
}

/// `oidc-provider` installed under the peers cache (once; reused across runs).
fn provider_install() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = python_peer::cache_dir()
            .join("node")
            .join(format!("oidc-provider-{OIDC_PROVIDER}"));
        let installed = dir
            .join("node_modules/oidc-provider/package.json")
            .is_file();
        if !installed {
            std::fs::create_dir_all(&dir).expect("peers dir");
            let status = Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--prefix",
                ])
                .arg(&dir)
                .arg(format!("oidc-provider@{OIDC_PROVIDER}"))
                .stdout(Stdio::null())
                .status()
                .expect("npm (Node.js) is needed for the OAuth interop test");
            assert!(status.success(), "npm install oidc-provider failed");
        }
        dir
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

fn new_key(kid: &str) -> Value {
    let out = Command::new("node")
        .arg(node_dir().join("oidc_provider.mjs"))
        .args(["keygen", kid])
        .output()
        .expect("node");
    assert!(out.status.success(), "keygen failed");
    serde_json::from_slice(&out.stdout).expect("a JWK")
}

/// The provider, our server, and what it takes to restart the provider.
struct Stack {
    provider: Option<HttpServer>,
    provider_port: u16,
    keys_file: tempfile_path::TempPath,
    server: HttpServer,
    resource: String,
    issuer: String,
}

impl Stack {
    /// The provider signing with a new key `k1`, and `serve` trusting it, with
    /// `notes:read` as the scopes a client asks for first.
    fn start() -> Stack {
        let provider_port = free_port();
        let server_port = free_port();
        let issuer = format!("http://127.0.0.1:{provider_port}");
        let resource = format!("http://127.0.0.1:{server_port}/mcp");
        let keys_file = tempfile_path::TempPath::new("oidc-keys");
        std::fs::write(&keys_file.0, json!({"keys": [new_key("k1")]}).to_string()).unwrap();
        let provider = Some(start_provider(provider_port, &resource, &keys_file.0));
        let mut cmd = Command::new(example_serve_bin());
        cmd.args(["--http", &format!("127.0.0.1:{server_port}")])
            .args(["--oauth-issuer", &issuer, "--oauth-resource", &resource])
            .args(["--oauth-scopes", "notes:read"])
            .env("RUST_LOG", "warn,mcp_tool_oauth=debug")
            .env("MCP_TOOL_STATE_KEY", STATE_KEY);
        let server = HttpServer::start(cmd);
        Stack {
            provider,
            provider_port,
            keys_file,
            server,
            resource,
            issuer,
        }
    }

    /// Restarts the provider with a new signing key first and the old one still published.
    fn rotate_key(&mut self, kid: &str) {
        let mut keys: Value =
            serde_json::from_str(&std::fs::read_to_string(&self.keys_file.0).unwrap()).unwrap();
        let list = keys["keys"].as_array_mut().unwrap();
        list.insert(0, new_key(kid));
        std::fs::write(&self.keys_file.0, keys.to_string()).unwrap();
        drop(self.provider.take());
        self.provider = Some(start_provider(
            self.provider_port,
            &self.resource,
            &self.keys_file.0,
        ));
    }

    /// A token for `subject` with `scope`, from the provider's code flow.
    fn token(&self, subject: &str, scope: &str) -> String {
        let out = python(
            &["token"],
            &json!({"issuer": self.issuer, "resource": self.resource,
                    "subject": subject, "scope": scope}),
        );
        assert_eq!(out["ok"], true, "token for {subject}: {out}");
        out["access_token"].as_str().unwrap().to_owned()
    }

    fn log(&self) -> String {
        format!(
            "--- serve ---\n{}\n--- provider ---\n{}",
            self.server.log(),
            self.provider
                .as_ref()
                .map(HttpServer::log)
                .unwrap_or_default()
        )
    }
}

fn start_provider(port: u16, resource: &str, keys: &Path) -> HttpServer {
    let mut cmd = Command::new("node");
    cmd.arg(node_dir().join("oidc_provider.mjs"))
        .arg(provider_install())
        .arg(port.to_string())
        .arg(resource)
        .arg(keys);
    HttpServer::start(cmd)
}

/// Runs `oauth_client.py` with the SDK's interpreter: one JSON request in, one out.
fn python(args: &[&str], request: &Value) -> Value {
    use std::io::Write;
    let sdk = python_peer::sdk(&SdkSpec::pinned(SDK_VERSION)).unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(&sdk.python)
        .arg(python_dir().join("oauth_client.py"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("python output");
    let parsed: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    if let Some(mut v) = parsed {
        if v["ok"] != true {
            // the traceback, for the assertion message
            v["stderr"] = Value::String(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        return v;
    }
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "oauth_client.py wrote no JSON\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// One JSON-RPC POST with `token`: (HTTP status, headers, body).
async fn post(
    url: &str,
    token: &str,
    version: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let client = reqwest::Client::new();
    let mut req = client
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version)
        .timeout(Duration::from_secs(30));
    if let Some(method) = body["method"].as_str() {
        req = req.header("mcp-method", method);
        if let Some(name) = body["params"]["name"].as_str() {
            req = req.header("mcp-name", name);
        }
    }
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    let resp = req.json(&body).send().await.expect("POST");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap_or_default();
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, value)
}

fn weather_call(id: i64, extra: Value) -> Value {
    let mut params = json!({
        "name": "get_weather",
        "arguments": {"location": "Paris"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}},
    });
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

const MODERN: &str = "2026-07-28";

#[test]
fn the_python_sdk_runs_its_oauth_flow_and_steps_up_for_a_write_scope() {
    let stack = Stack::start();
    let answers = json!({"github_login": {"action": "accept", "content": {"name": "octocat"}}});
    let out = python(
        &[],
        &json!({
            "url": stack.server.url(),
            "subject": "alice",
            "calls": [
                {"name": "get_weather", "arguments": {"location": "Paris"}, "answers": answers},
                {"name": "list_notes", "arguments": {}},
                {"name": "add_note", "arguments": {"title": "oauth", "body": "stepped up"}},
                {"name": "list_notes", "arguments": {}},
            ],
        }),
    );
    let log = stack.log();
    assert_eq!(out["ok"], true, "{out}\n{log}");
    let results = out["results"].as_array().expect("results");
    // get_weather went through its two rounds: the forecast names the elicited login.
    let weather = results[0].to_string();
    assert!(
        weather.contains("octocat") && results[0]["isError"] != true,
        "{weather}\n{log}"
    );
    assert!(results[1]["isError"] != true, "list_notes: {}", results[1]);
    assert!(
        results[2]["isError"] != true,
        "add_note: {}\n{log}",
        results[2]
    );
    assert!(
        results[3].to_string().contains("stepped up"),
        "the note is there: {}",
        results[3]
    );
    // Two authorizations: the first with the metadata's scopes (from our 401), the second
    // after the 403 insufficient_scope, with the union of the old and the challenged scopes.
    let auths = out["authorizations"].as_array().expect("authorizations");
    assert_eq!(auths.len(), 2, "{out}");
    // (the SDK adds `offline_access` on its own when the provider offers it)
    let first: Vec<&str> = auths[0]["scope"].as_str().unwrap().split(' ').collect();
    assert!(
        first.contains(&"notes:read") && !first.contains(&"notes:write"),
        "{out}"
    );
    let second: Vec<&str> = auths[1]["scope"].as_str().unwrap().split(' ').collect();
    assert!(
        second.contains(&"notes:read") && second.contains(&"notes:write"),
        "{out}"
    );
    for a in auths {
        assert_eq!(a["resource"], stack.resource, "RFC 8707 resource: {out}");
    }
    // What the SDK discovered from our RFC 9728 metadata.
    assert_eq!(out["prm"]["resource"], stack.resource, "{out}");
    let servers = out["prm"]["authorization_servers"].to_string();
    assert!(servers.contains(&stack.issuer), "{out}");
    assert_eq!(
        out["prm"]["scopes_supported"],
        json!(["notes:read"]),
        "{out}"
    );
    // the token the SDK holds at the end carries both
    let granted = out["granted"].as_str().unwrap_or_default();
    assert!(granted.contains("notes:write"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn states_and_sessions_never_cross_subjects_and_a_key_rotation_needs_no_restart() {
    let mut stack = Stack::start();
    let url = stack.server.url().to_owned();
    let alice = stack.token("alice", "notes:read");
    let bob = stack.token("bob", "notes:read");

    // Round 1 as alice: a state sealed for her.
    let (status, _, first) = post(&url, &alice, MODERN, None, weather_call(1, json!({}))).await;
    assert_eq!(status, 200, "{first}\n{}", stack.log());
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let key = first["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let retry = json!({
        "requestState": state,
        "inputResponses": {key: {"action": "accept", "content": {"name": "octocat"}}},
    });
    // Bob, with his own valid token, cannot open it.
    let (status, _, stolen) = post(&url, &bob, MODERN, None, weather_call(2, retry.clone())).await;
    assert_eq!(status, 400, "{stolen}");
    assert_eq!(stolen["error"]["code"], -32602, "refused: {stolen}");
    assert!(!stolen.to_string().contains("octocat"), "{stolen}");
    // Alice can.
    let (_, _, done) = post(&url, &alice, MODERN, None, weather_call(3, retry)).await;
    assert!(done["result"].to_string().contains("octocat"), "{done}");

    // A legacy session opened by alice, used with bob's token: unknown to him.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "interop", "version": "0"}}});
    let (status, headers, _) = post(&url, &alice, "2025-11-25", None, init).await;
    assert_eq!(status, 200);
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, body) = post(&url, &bob, "2025-11-25", Some(&session), list.clone()).await;
    assert_eq!(status, 404, "another subject's session: {body}");
    let (status, _, body) = post(&url, &alice, "2025-11-25", Some(&session), list).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["result"]["tools"].is_array(), "{body}");

    // Something that is no token of the provider's: 401 invalid_token, pointing at the
    // metadata (the hostile-token catalogue, SECURITY.md, has the other cases).
    let (status, headers, _) =
        post(&url, "not-a-jwt", MODERN, None, weather_call(4, json!({}))).await;
    assert_eq!(status, 401);
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    assert!(challenge.contains("invalid_token"), "{challenge}");

    // The provider rotates its key: tokens now carry kid k2, which serve has never seen.
    stack.rotate_key("k2");
    let carol = stack.token("carol", "notes:read");
    let header = carol.split('.').next().unwrap();
    let header =
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, header).unwrap();
    assert!(String::from_utf8_lossy(&header).contains("\"k2\""));
    // serve fetches the JWKS again on the unknown kid, at most once per 30 s (its refetch
    // interval, against floods of made-up kids; SECURITY.md): so within 30 s of its last
    // fetch, at the latest, carol's token verifies, and no restart happens in between.
    let rotated = std::time::Instant::now();
    let mut id = 5;
    let body = loop {
        let (status, _, body) = post(&url, &carol, MODERN, None, weather_call(id, json!({}))).await;
        if status == 200 {
            break body;
        }
        assert_eq!(status, 401, "{body}");
        assert!(
            rotated.elapsed() < Duration::from_secs(45),
            "the new key was not picked up: {body}\n{}",
            stack.log()
        );
        id += 1;
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    // and alice's token, signed with the old key (still published), still verifies
    let (status, _, body) = post(&url, &alice, MODERN, None, weather_call(99, json!({}))).await;
    assert_eq!(status, 200, "{body}");
}

/// A temporary file path removed on drop (no extra crate for one file).
mod tempfile_path {
    use std::path::PathBuf;

    pub struct TempPath(pub PathBuf);

    impl TempPath {
        pub fn new(stem: &str) -> TempPath {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            TempPath(
                std::env::temp_dir().join(format!("{stem}-{}-{nanos}.json", std::process::id())),
            )
        }
    }

    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}
