//! The `serve` binary as real processes: two replicas over HTTP sharing `MCP_TOOL_STATE_KEY`
//! take turns on one call; a replica with another key refuses the state; `--repo`,
//! `--state-ttl` and `--db` (two processes sharing one notes file) are honoured; with
//! `--oauth-*` it is an OAuth resource server (metadata, challenges, a public address).

mod support;

use std::process::Stdio;
use std::time::Duration;

use mcp_tool_client::{
    BoxFuture, ClientTransport, Driver, HttpTransport, ScriptedHost, TransportError,
};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::notes::Notes;
use mcp_tool_runtime::protocol::ClientCapabilities;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const SERVE: &str = env!("CARGO_BIN_EXE_serve");
const KEY_A: &str = "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0";
const KEY_B: &str = "0f0e0d0c0b0a09080706050403020100ffeeddccbbaa99887766554433221100";

struct Replica {
    url: String,
    _serve: support::Serve,
    // Where the notes file is, unless the test gave `--db`: the replica is killed, so a
    // temporary file of its own would be left behind.
    _db: Option<tempfile::TempDir>,
}

async fn replica(key: Option<&str>, extra: &[&str]) -> Replica {
    replica_env(key, None, extra).await
}

async fn replica_env(key: Option<&str>, previous: Option<&str>, extra: &[&str]) -> Replica {
    let mut cmd = Command::new(SERVE);
    match previous {
        Some(p) => cmd.env("MCP_TOOL_STATE_KEY_PREVIOUS", p),
        None => cmd.env_remove("MCP_TOOL_STATE_KEY_PREVIOUS"),
    };
    cmd.args(["--http", "127.0.0.1:0"]).args(extra);
    let db = (!extra.contains(&"--db")).then(|| tempfile::tempdir().unwrap());
    if let Some(dir) = &db {
        cmd.arg("--db").arg(dir.path().join("notes.sqlite3"));
    }
    match key {
        Some(k) => cmd.env("MCP_TOOL_STATE_KEY", k),
        None => cmd.env_remove("MCP_TOOL_STATE_KEY"),
    };
    let serve = support::serve(cmd).await;
    Replica {
        url: serve.url.clone(),
        _serve: serve,
        _db: db,
    }
}

/// Sends request i to replica i % n.
struct RoundRobin {
    replicas: Vec<HttpTransport>,
    next: std::sync::atomic::AtomicUsize,
}

impl ClientTransport for RoundRobin {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.replicas[i % self.replicas.len()].send(message)
    }
}

fn round_robin(urls: &[&str]) -> RoundRobin {
    RoundRobin {
        replicas: urls.iter().map(|u| HttpTransport::new(*u)).collect(),
        next: 0.into(),
    }
}

#[tokio::test]
async fn replicas_sharing_the_key_take_turns() {
    let a = replica(Some(KEY_A), &[]).await;
    let b = replica(Some(KEY_A), &[]).await;
    let mut d = Driver::new(round_robin(&[&a.url, &b.url]), FakeModel::new());
    let out = d
        .call_tool("sum_of_squares", json!({"n": 1000, "chunk": 100}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 10);
    assert_eq!(
        out.structured().unwrap(),
        &json!({"n": 1000, "total": 333_833_500u64, "checkpoints": 9})
    );
    let out = d.call_tool("link_accounts", json!({})).await.unwrap();
    assert_eq!(
        out.structured().unwrap()["microsoft"],
        "octo.microsoft@example.com"
    );
    let out = d
        .call_tool(
            "summarize_repo",
            json!({"audience": "ops", "critique": true}),
        )
        .await
        .unwrap();
    assert_eq!(out.rounds, 4);
}

#[tokio::test]
async fn a_replica_with_another_key_refuses_the_state() {
    let a = replica(Some(KEY_A), &[]).await;
    let b = replica(Some(KEY_B), &[]).await;
    let mut d = Driver::new(round_robin(&[&a.url, &b.url]), FakeModel::new());
    let err = d
        .call_tool("sum_of_squares", json!({"n": 100, "chunk": 50}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602));
    // Nor does one with a random key (no MCP_TOOL_STATE_KEY).
    let c = replica(None, &[]).await;
    let mut d = Driver::new(round_robin(&[&a.url, &c.url]), FakeModel::new());
    let err = d
        .call_tool("get_weather", json!({"location": "Paris"}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602));
}

#[tokio::test]
async fn an_invalid_key_refuses_to_start() {
    let out = Command::new(SERVE)
        .args(["--http", "127.0.0.1:0"])
        .env("MCP_TOOL_STATE_KEY", "abcd")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MCP_TOOL_STATE_KEY"), "{err}");
    assert!(!err.contains("abcd"), "the key is never echoed: {err}");
}

#[tokio::test]
async fn repo_flag_and_state_ttl() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# other project\n").unwrap();
    std::fs::write(dir.path().join("main.rs"), "fn main() {}\n").unwrap();
    let r = replica(
        Some(KEY_A),
        &["--repo", dir.path().to_str().unwrap(), "--state-ttl", "1"],
    )
    .await;
    let mut d = Driver::new(HttpTransport::new(r.url.clone()), FakeModel::new());
    let out = d
        .call_tool("summarize_repo", json!({"audience": "dev"}))
        .await
        .unwrap();
    assert_eq!(
        out.structured().unwrap()["files"],
        json!(["README.md", "main.rs"])
    );
    assert!(out.text().contains("other project"), "{}", out.text());

    // A 1-second TTL: a state two seconds old is refused.
    let raw = HttpTransport::new(r.url.clone());
    let call = |id: u64, extra: Value| {
        let mut params = json!({"name": "get_weather", "arguments": {"location": "Oslo"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}});
        if let Value::Object(m) = extra {
            for (k, v) in m {
                params[k] = v;
            }
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let first = raw.send(call(1, json!({}))).await.unwrap().unwrap();
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let answer = json!({"inputResponses": {"github_login": {"action": "accept", "content": {"name": "x"}}},
                        "requestState": state});
    let late = raw.send(call(2, answer)).await.unwrap().unwrap();
    assert_eq!(late["error"]["code"], -32602, "{late}");
}

#[tokio::test]
async fn a_missing_repo_refuses_to_start() {
    let out = Command::new(SERVE)
        .args(["--repo", "/definitely/not/here"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
}

/// Two `serve` processes given the same `--db` file (and state key) share the notes: notes
/// added through A are listed by B, and one `delete_notes` call takes turns between them.
#[tokio::test]
async fn two_processes_share_the_notes_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite3");
    let db_arg = ["--db", db.to_str().unwrap()];
    let a = replica(Some(KEY_A), &db_arg).await;
    let b = replica(Some(KEY_A), &db_arg).await;
    let mut d = Driver::new(HttpTransport::new(a.url.clone()), FakeModel::new());
    for (title, body) in [("one", "alpha x"), ("two", "beta"), ("three", "gamma x")] {
        let out = d
            .call_tool("add_note", json!({"title": title, "body": body}))
            .await
            .unwrap();
        assert!(!out.is_error(), "{}", out.text());
    }
    let mut d = Driver::new(HttpTransport::new(b.url.clone()), FakeModel::new());
    let out = d.call_tool("list_notes", json!({})).await.unwrap();
    assert_eq!(out.structured().unwrap()["total"], 3);

    let yes = |ok: bool| {
        mcp_tool_runtime::protocol::ElicitResult::accept(
            json!({"confirm": ok}).as_object().cloned().unwrap(),
        )
    };
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .answer("delete_1/answer", yes(true))
        .answer("delete_3/answer", yes(false));
    let mut d = Driver::new(round_robin(&[&a.url, &b.url]), host);
    let out = d
        .call_tool("delete_notes", json!({"filter": "x"}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 3);
    assert_eq!(
        out.structured().unwrap()["deleted"],
        json!([{"id": 1, "title": "one"}])
    );
    assert_eq!(
        out.structured().unwrap()["kept"],
        json!([{"id": 3, "title": "three"}])
    );
    // the file itself, read by this (third) process
    let notes = Notes::open(&db).unwrap();
    let (left, _) = notes.list(&anonymous_owner(), None, 10).await.unwrap();
    let ids: Vec<i64> = left.iter().map(|n| n.id).collect();
    assert_eq!(ids, [2, 3]);
}

/// Without `--db`, the notes live in a fresh temporary directory, logged at startup and
/// removed when the server stops on SIGTERM.
#[cfg(unix)]
#[tokio::test]
async fn without_db_the_notes_file_is_fresh_logged_and_removed() {
    let mut child = Command::new(SERVE)
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .env("MCP_TOOL_STATE_KEY", KEY_A)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut before = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("listening on ") {
                return;
            }
            before.push(line);
        }
        panic!("serve exited before listening: {before:?}");
    })
    .await
    .expect("serve listens");
    let line = before
        .iter()
        .find(|l| l.contains("the notes tools keep their notes here"))
        .unwrap_or_else(|| panic!("{before:?}"));
    // the path, with or without colours around `db=`
    let token = line
        .split(|c: char| c.is_whitespace() || c == '\u{1b}')
        .find(|t| t.contains(mcp_tool_examples::notes::TEMP_FILE_NAME))
        .unwrap();
    let path = std::path::Path::new(&token[token.find('/').unwrap()..]);
    assert!(path.is_file(), "{line}");
    let notes = Notes::open(path).unwrap();
    assert_eq!(
        notes.list(&anonymous_owner(), None, 10).await.unwrap().1,
        0,
        "a fresh file"
    );
    drop(notes);
    let pid = child.id().unwrap().to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("serve stops on SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(!path.parent().unwrap().exists(), "{}", path.display());
}

#[tokio::test]
async fn a_db_that_cannot_be_opened_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(SERVE)
        .args(["--db", dir.path().to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--db"), "{err}");
}

/// Rotation: a replica whose active key is `k2` and whose previous key is the old `k1`
/// opens the states `k1` sealed; one without the previous key refuses them.
#[tokio::test]
async fn a_previous_key_still_opens_states_during_rotation() {
    let old = replica(Some(KEY_A), &[]).await;
    let rotated = replica_env(
        Some(&format!("k2:{KEY_B}")),
        Some(&format!("k1:{KEY_A}")),
        &[],
    )
    .await;
    let mut d = Driver::new(round_robin(&[&old.url, &rotated.url]), FakeModel::new());
    let out = d
        .call_tool("sum_of_squares", json!({"n": 100, "chunk": 50}))
        .await
        .unwrap();
    assert_eq!(out.structured().unwrap()["total"], 338_350);
    let only_new = replica(Some(&format!("k2:{KEY_B}")), &[]).await;
    let mut d = Driver::new(round_robin(&[&old.url, &only_new.url]), FakeModel::new());
    let err = d
        .call_tool("sum_of_squares", json!({"n": 100, "chunk": 50}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602));
}

async fn refuses_to_start(args: &[&str], env: &[(&str, std::ffi::OsString)]) -> String {
    let mut cmd = Command::new(SERVE);
    cmd.args(args)
        .env_remove("MCP_TOOL_STATE_KEY")
        .env_remove("MCP_TOOL_STATE_KEY_PREVIOUS")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("serve exits")
        .unwrap();
    assert!(!out.status.success(), "serve {args:?} must refuse to start");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[cfg(unix)]
#[tokio::test]
async fn a_non_utf8_key_refuses_to_start() {
    use std::os::unix::ffi::OsStringExt;
    let mut bytes = KEY_A.as_bytes().to_vec();
    bytes[3] = 0xff;
    let err = refuses_to_start(
        &["--http", "127.0.0.1:0"],
        &[("MCP_TOOL_STATE_KEY", std::ffi::OsString::from_vec(bytes))],
    )
    .await;
    assert!(err.contains("not valid UTF-8"), "{err}");
}

#[tokio::test]
async fn bad_previous_keys_refuse_to_start_without_echoing_them() {
    for previous in [
        "nokid".to_owned(),
        format!("k1:{KEY_B}"),      // the active key's id again
        "k0:abcd".to_owned(),       // too short
        format!("bad kid:{KEY_B}"), // invalid kid
    ] {
        let err = refuses_to_start(
            &["--http", "127.0.0.1:0"],
            &[
                ("MCP_TOOL_STATE_KEY", KEY_A.into()),
                ("MCP_TOOL_STATE_KEY_PREVIOUS", previous.clone().into()),
            ],
        )
        .await;
        assert!(
            err.contains("MCP_TOOL_STATE_KEY_PREVIOUS"),
            "{previous}: {err}"
        );
        assert!(!err.contains(KEY_B) && !err.contains("abcd"), "{err}");
    }
    // Previous keys without an active key.
    let err = refuses_to_start(
        &["--http", "127.0.0.1:0"],
        &[("MCP_TOOL_STATE_KEY_PREVIOUS", format!("k0:{KEY_B}").into())],
    )
    .await;
    assert!(err.contains("MCP_TOOL_STATE_KEY is not"), "{err}");
}

/// `serve --http 0.0.0.0:…` with the demo authenticator is refused before binding unless
/// the loudly named flag is given.
#[tokio::test]
async fn a_public_address_with_the_demo_authenticator_refuses_to_start() {
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:0"] {
        let err = refuses_to_start(&["--http", addr], &[]).await;
        assert!(
            err.contains("--insecure-demo-auth-on-public-address"),
            "{addr}: {err}"
        );
    }
}

#[tokio::test]
async fn a_state_ttl_beyond_the_maximum_refuses_to_start() {
    for ttl in ["0", "3601", "86400"] {
        let err = refuses_to_start(&["--state-ttl", ttl], &[]).await;
        assert!(err.contains("--state-ttl"), "{ttl}: {err}");
    }
}

/// The owner of the notes an anonymous client adds (every client in this file but where a
/// test names a principal).
fn anonymous_owner() -> mcp_tool_examples::notes::Owner {
    mcp_tool_examples::notes::Owner::of(&mcp_tool_runtime::Principal::anonymous())
}

/// `serve --oauth-issuer … --oauth-resource …` is a resource server: it may bind a public
/// address without the demo flag, serves its RFC 9728 metadata, and refuses requests without
/// a valid token (a token it cannot check, with the issuer unreachable, is a 503).
#[tokio::test]
async fn with_oauth_flags_serve_is_a_resource_server_on_a_public_address() {
    let mut cmd = Command::new(SERVE);
    cmd.args([
        "--http",
        "0.0.0.0:0",
        "--oauth-issuer",
        "http://127.0.0.1:9",
    ])
    .args(["--oauth-resource", "https://mcp.example.com/mcp"])
    .args(["--oauth-scopes", "notes:read notes:write"])
    .env_remove("MCP_TOOL_STATE_KEY")
    .env_remove("MCP_TOOL_STATE_KEY_PREVIOUS");
    let serve = support::serve(cmd).await;
    let url = serve.url.replace("0.0.0.0", "127.0.0.1");
    let base = url.trim_end_matches("/mcp");
    let metadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let doc: Value = reqwest::get(format!("{base}{path}"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(doc["resource"], "https://mcp.example.com/mcp");
        assert_eq!(doc["authorization_servers"], json!(["http://127.0.0.1:9"]));
        assert_eq!(
            doc["scopes_supported"],
            json!(["notes:read", "notes:write"])
        );
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
    let post = |token: Option<&str>| {
        let mut req = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-method", "server/discover")
            .header("mcp-protocol-version", "2026-07-28");
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        req.body(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#)
            .send()
    };
    let r = post(None).await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["www-authenticate"],
        format!("Bearer resource_metadata=\"{metadata}\", scope=\"notes:read notes:write\"")
            .as_str()
    );
    let r = post(Some("opaque")).await.unwrap();
    assert_eq!(r.status(), 401);
    assert!(
        r.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .ends_with("error=\"invalid_token\"")
    );
    // A JWT-shaped token needs the issuer's keys, which cannot be had: 503, not 401.
    let r = post(Some("eyJhbGciOiJFUzI1NiJ9.e30.c2ln")).await.unwrap();
    assert_eq!(r.status(), 503);
}

#[tokio::test]
async fn unusable_oauth_flags_refuse_to_start() {
    for args in [
        &[
            "--http",
            "127.0.0.1:0",
            "--oauth-issuer",
            "https://auth.example.com",
        ][..],
        &[
            "--http",
            "127.0.0.1:0",
            "--oauth-issuer",
            "http://auth.example.com",
            "--oauth-resource",
            "https://mcp.example.com/mcp",
        ],
        &[
            "--http",
            "127.0.0.1:0",
            "--oauth-issuer",
            "https://auth.example.com",
            "--oauth-resource",
            "mcp.example.com",
        ],
        &[
            "--oauth-issuer",
            "https://auth.example.com",
            "--oauth-resource",
            "https://mcp.example.com/mcp",
        ],
    ] {
        let err = refuses_to_start(args, &[]).await;
        assert!(err.contains("oauth"), "{args:?}: {err}");
    }
}
