//! The repository prompt and resource template (`examples/src/tools/review.rs`): read through
//! the sandbox, completed, and a prompt that asks before it answers — in process and over
//! loopback HTTP.

use std::sync::Arc;

use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_runtime::Server;
use mcp_tool_runtime::client::{
    Driver, DriverError, HttpTransport, InProcessTransport, ScriptedHost,
};
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
