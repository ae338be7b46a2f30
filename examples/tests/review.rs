//! The repository prompt and resource template (`examples/src/tools/review.rs`): read through
//! the sandbox, completed, and a prompt that asks before it answers — in process and over
//! loopback HTTP.

mod support;

use std::sync::Arc;

use mcp_tool_client::{Driver, DriverError, HttpTransport, InProcessTransport, ScriptedHost};
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_runtime::Server;
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult};
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use serde_json::{Value, json};

fn server() -> (Arc<Server>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let notes = Notes::open(dir.path().join("notes.db")).unwrap();
    let s = mcp_tool_examples::example_server(None, Repo::embedded_demo().unwrap(), notes).unwrap();
    (Arc::new(s), dir)
}

fn host() -> ScriptedHost {
    ScriptedHost::new(ClientCapabilities::none().with_elicitation())
}

fn pick(path: &str) -> ElicitResult {
    ElicitResult::accept(json!({ "path": path }).as_object().cloned().unwrap())
}

#[tokio::test]
async fn the_template_is_listed_and_reads_through_the_sandbox() {
    let (s, _dir) = server();
    let mut d = Driver::new(InProcessTransport::new(s), host());
    let t = d
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        t["resourceTemplates"][0]["uriTemplate"],
        "repo://files/{+path}"
    );
    let out = d.read_resource("repo://files/docs/intro.md").await.unwrap();
    let c = &out.result["contents"][0];
    assert_eq!(c["uri"], "repo://files/docs/intro.md");
    assert_eq!(c["mimeType"], "text/plain");
    assert!(
        c["text"]
            .as_str()
            .unwrap()
            .contains(&mcp_tool_examples::repo::DEMO_FILES[1].1[..20]),
        "{c}"
    );
    assert_eq!(out.rounds, 1);
    // outside the root, into skipped directories, missing: -32602
    for uri in [
        "repo://files/../etc/passwd",
        "repo://files//etc/passwd",
        "repo://files/.git/config",
        "repo://files/nope.md",
    ] {
        match d.read_resource(uri).await {
            Err(DriverError::Rpc { error, .. }) => assert_eq!(error.code, -32602, "{uri}"),
            other => panic!("{uri}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn file_paths_complete() {
    let (s, _dir) = server();
    let mut d = Driver::new(InProcessTransport::new(s), host());
    let r = d
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "repo://files/{+path}"},
                   "argument": {"name": "path", "value": "te"}}),
        )
        .await
        .unwrap();
    assert_eq!(r["completion"]["values"], json!(["tests/test_forecast.py"]));
    // `contains` matches come after `starts_with` ones
    let r = d
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "repo://files/{+path}"},
                   "argument": {"name": "path", "value": "forecast"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        r["completion"]["values"],
        json!(["forecast.py", "tests/test_forecast.py"])
    );
    let caps = d.discover().await.unwrap();
    assert!(caps["capabilities"]["completions"].is_object());
    assert!(caps["capabilities"]["prompts"].is_object());
    assert!(caps["capabilities"]["resources"].is_object());
}

#[tokio::test]
async fn the_prompt_asks_which_file_then_embeds_it() {
    let (s, _dir) = server();
    let mut d = Driver::new(
        InProcessTransport::new(s),
        host().answer("file", pick("server.py")),
    );
    let out = d
        .get_prompt("review_file", json!({"focus": "error handling"}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 2);
    let asked = d.host().asked();
    let question = serde_json::to_value(&asked[0].1).unwrap();
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains("server.py"),
        "{question}"
    );
    let msgs = out.result["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["content"]["type"], "resource");
    assert_eq!(
        msgs[0]["content"]["resource"]["uri"],
        "repo://files/server.py"
    );
    assert!(
        msgs[1]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Focus on error handling")
    );
}

#[tokio::test]
async fn a_file_the_repository_does_not_offer_is_refused() {
    let (s, _dir) = server();
    for bad in ["../secret", ".git/config", "missing.py"] {
        let mut d = Driver::new(
            InProcessTransport::new(s.clone()),
            host().answer("file", pick(bad)),
        );
        match d.get_prompt("review_file", json!({"focus": "x"})).await {
            Err(DriverError::Rpc { error, .. }) => assert_eq!(error.code, -32602, "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    // a decline: the prompt cannot be produced
    let mut d = Driver::new(
        InProcessTransport::new(s.clone()),
        host().answer("file", ElicitResult::decline()),
    );
    match d.get_prompt("review_file", json!({"focus": "x"})).await {
        Err(DriverError::Rpc { error, .. }) => assert_eq!(error.code, -32603),
        other => panic!("{other:?}"),
    }
    // a missing argument: -32602 before anything is asked
    let mut d = Driver::new(InProcessTransport::new(s), host());
    match d.get_prompt("review_file", json!({})).await {
        Err(DriverError::Rpc { error, .. }) => assert_eq!(error.code, -32602),
        other => panic!("{other:?}"),
    }
    assert!(d.host().asked().is_empty());
}

#[tokio::test]
async fn over_http_the_prompt_and_the_template_work_the_same() {
    let (s, _dir) = server();
    let handle = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        (*s).clone(),
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let mut d = Driver::new(
        HttpTransport::new(handle.url()),
        host().answer("file", pick("README.md")),
    );
    let out = d
        .get_prompt("review_file", json!({"focus": "clarity"}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 2);
    assert_eq!(
        out.result["messages"][0]["content"]["resource"]["uri"],
        "repo://files/README.md"
    );
    let out = d
        .read_resource("repo://files/pyproject.toml")
        .await
        .unwrap();
    assert!(out.result["contents"][0]["text"].is_string());
    // the HTTP layer checked Mcp-Name against the URI and the prompt name
    let sent: Vec<&Value> = out
        .transcript
        .iter()
        .filter(|e| e.message.get("method").is_some())
        .map(|e| &e.message)
        .collect();
    assert_eq!(sent[0]["method"], "resources/read");
    handle.shutdown().await.unwrap();
}

// ---- issue 18, item 11: the template reads only what the listing offers ----

const SECRET: &str = "SECRET-VALUE-THAT-MUST-NOT-TRAVEL";

/// Real-world secret file names (at least 40): never listed, completed or read.
const SECRET_PATHS: &[&str] = &[
    ".env",
    ".env.production",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".aws/credentials",
    ".ssh/id_rsa",
    "id_rsa",
    "id_rsa.pub",
    "id_ed25519",
    "deploy/server.pem",
    "deploy/tls.key",
    "certs/client.p12",
    "certs/client.pfx",
    "android/release.jks",
    "android/release.keystore",
    "credentials",
    "config/credentials.json",
    "kubeconfig",
    "clusters/prod.kubeconfig",
    "infra/prod.tfvars",
    "infra/terraform.tfstate",
    "secret.json",
    "config/secrets.yaml",
    "htpasswd",
    "config/.htpasswd",
    "putty/server.ppk",
    "apple/AuthKey_ABC123.p8",
    "api_token.txt",
    "gcp/service-account.json",
    "backup.gpg",
    "keys/signing.asc",
    "etc/shadow",
    "vpn/office.ovpn",
    "wp-config.php",
    "config/master.key",
    "token.json",
    "client_secret_1234.json",
    "passwords.txt",
    "vault.kdbx",
    "firebase-adminsdk-ab12c.json",
];

/// Ordinary project files: all offered.
const ORDINARY_PATHS: &[&str] = &[
    "Cargo.toml",
    "Dockerfile",
    "LICENSE",
    "Makefile",
    "README.md",
    "cmd/server/main.go",
    "docs/guide.rst",
    "package.json",
    "pyproject.toml",
    "requirements.txt",
    "scripts/build.sh",
    "src/App.tsx",
    "src/keys.rs",
    "src/lib.rs",
    "src/tokenizer.rs",
    "web/index.html",
];

fn write(root: &std::path::Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A server over a repository of secrets and ordinary files.
fn secret_server() -> (Arc<Server>, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    for s in SECRET_PATHS {
        write(root.path(), s, SECRET);
    }
    for s in ORDINARY_PATHS {
        write(root.path(), s, &format!("contents of {s}"));
    }
    let s = mcp_tool_examples::example_server(
        None,
        Repo::open(root.path()).unwrap(),
        Notes::temporary().unwrap(),
    )
    .unwrap();
    (Arc::new(s), root)
}

async fn complete(d: &mut Driver<InProcessTransport, ScriptedHost>, typed: &str) -> Vec<String> {
    let r = d
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "repo://files/{+path}"},
                   "argument": {"name": "path", "value": typed}}),
        )
        .await
        .unwrap();
    serde_json::from_value(r["completion"]["values"].clone()).unwrap()
}

/// The error of reading `uri`, with the URI the client sent (echoed by the runtime) replaced.
async fn read_error(d: &mut Driver<InProcessTransport, ScriptedHost>, uri: &str) -> Value {
    match d.read_resource(uri).await {
        Err(DriverError::Rpc { error, .. }) => {
            let mut e = serde_json::to_value(&error).unwrap();
            e["message"] = Value::String(error.message.replace(uri, "URI"));
            e
        }
        other => panic!("{uri}: {other:?}"),
    }
}

#[tokio::test]
async fn secret_names_are_neither_listed_completed_nor_read() {
    assert!(SECRET_PATHS.len() >= 40);
    let (s, _root) = secret_server();

    // listing: the list summarize_repo shows the model, and the one review_file asks about
    let mut d = Driver::new(
        InProcessTransport::new(s.clone()),
        mcp_tool_examples::fake_model::FakeModel::new(),
    );
    let out = d
        .call_tool("summarize_repo", json!({"audience": "developer"}))
        .await
        .unwrap();
    let listing = serde_json::to_value(&out.transcript[1].message).unwrap();
    let text = listing.to_string();
    let listed: Vec<&str> = text
        .split("\\n")
        .filter_map(|l| l.strip_prefix("- "))
        .collect();
    assert_eq!(listed, ORDINARY_PATHS, "{text}");

    // completion: everything the listing offers, nothing else, whatever is typed
    let mut d = Driver::new(InProcessTransport::new(s.clone()), host());
    assert_eq!(complete(&mut d, "").await, ORDINARY_PATHS);
    for secret in SECRET_PATHS {
        let name = secret.rsplit('/').next().unwrap();
        for typed in [*secret, name] {
            let values = complete(&mut d, typed).await;
            assert!(
                values.iter().all(|v| ORDINARY_PATHS.contains(&v.as_str())),
                "{typed}: {values:?}"
            );
        }
    }

    // reading: every secret refused with the same error as a missing file; ordinary files read
    let missing = read_error(&mut d, "repo://files/no/such/file.md").await;
    assert_eq!(missing["code"], -32602);
    for secret in SECRET_PATHS {
        let uri = format!("repo://files/{secret}");
        assert_eq!(read_error(&mut d, &uri).await, missing, "{secret}");
    }
    for ok in ORDINARY_PATHS {
        let out = d
            .read_resource(&format!("repo://files/{ok}"))
            .await
            .unwrap();
        assert_eq!(
            out.result["contents"][0]["text"],
            format!("contents of {ok}")
        );
    }
    // the prompt: a secret named in the answer is refused like a missing file
    let mut refusals = Vec::new();
    for answer in ["no/such/file.md", ".env", "kubeconfig", "deploy/tls.key"] {
        let mut d = Driver::new(
            InProcessTransport::new(s.clone()),
            host().answer("file", pick(answer)),
        );
        match d.get_prompt("review_file", json!({"focus": "x"})).await {
            Err(DriverError::Rpc { error, .. }) => refusals.push(error),
            other => panic!("{answer}: {other:?}"),
        }
        let all = support::wire(d.transcript());
        assert!(!all.contains(SECRET), "{answer}");
    }
    assert_eq!(refusals[0].code, -32602);
    assert!(refusals.iter().all(|e| *e == refusals[0]), "{refusals:?}");
    let all = support::wire(d.transcript());
    assert!(!all.contains(SECRET));
}

#[tokio::test]
async fn a_file_deeper_than_the_listing_is_unreadable() {
    let root = tempfile::tempdir().unwrap();
    // The listing descends 8 levels (Limits::max_depth): a file in the 7th directory is
    // offered, one in the 10th is not, though it passes every other check.
    let shallow = "a/b/c/d/e/f/g/shallow.md";
    let deep = "a/b/c/d/e/f/g/h/i/j/deep.md";
    write(root.path(), shallow, "shallow");
    write(root.path(), deep, SECRET);
    let repo = Repo::open(root.path()).unwrap();
    assert_eq!(repo.limits().max_depth, 8);
    assert_eq!(repo.list_files().unwrap(), [shallow]);
    let s = Arc::new(
        mcp_tool_examples::example_server(None, repo, Notes::temporary().unwrap()).unwrap(),
    );
    let mut d = Driver::new(InProcessTransport::new(s), host());
    let out = d
        .read_resource(&format!("repo://files/{shallow}"))
        .await
        .unwrap();
    assert_eq!(out.result["contents"][0]["text"], "shallow");
    let refused = read_error(&mut d, &format!("repo://files/{deep}")).await;
    assert_eq!(refused["code"], -32602);
    assert_eq!(
        refused,
        read_error(&mut d, "repo://files/a/b/missing.md").await
    );
    assert_eq!(
        complete(&mut d, "a/b/c/d/e/f/g/h").await,
        Vec::<String>::new()
    );
}

#[cfg(unix)]
#[tokio::test]
async fn the_refusal_does_not_say_whether_a_path_exists() {
    let (s, root) = secret_server();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("outside.md"), SECRET).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("outside.md"),
        root.path().join("link.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("linked")).unwrap();
    write(root.path(), ".git/config.md", SECRET);
    write(root.path(), "target/debug/out.md", SECRET);
    write(root.path(), "data/dump.sqlite3", SECRET);
    std::fs::create_dir(root.path().join("folder.md")).unwrap();
    let mut d = Driver::new(InProcessTransport::new(s), host());
    let missing = read_error(&mut d, "repo://files/missing.md").await;
    assert_eq!(missing["code"], -32602);
    assert!(
        !missing.to_string().contains("missing.md"),
        "the path is not echoed: {missing}"
    );
    for uri in [
        // existing, but refused for one reason or another
        "repo://files/.env",
        "repo://files/link.md",
        "repo://files/linked/outside.md",
        "repo://files/.git/config.md",
        "repo://files/target/debug/out.md",
        "repo://files/data/dump.sqlite3",
        "repo://files/folder.md",
        "repo://files/src/../README.md",
        "repo://files/./README.md",
        // missing or impossible
        "repo://files/src/missing.rs",
        "repo://files/../etc/passwd",
        "repo://files//etc/passwd",
        "repo://files/a\\b.md",
    ] {
        assert_eq!(read_error(&mut d, uri).await, missing, "{uri}");
    }
    let all = support::wire(d.transcript());
    assert!(!all.contains(SECRET));
}
