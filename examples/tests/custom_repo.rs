//! `summarize_repo` over a repository given at run time (what `serve --repo PATH` does), with
//! a symbolic link leading outside it: the model may name it, the sandbox never reads it.

#![cfg(unix)]

mod support;

use std::sync::Arc;

use mcp_tool_client::{Driver, InProcessTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use serde_json::json;

const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-REPOSITORY";

#[tokio::test]
async fn links_leading_outside_are_refused_and_never_read() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("README.md"),
        "# custom\nA custom repository.\n",
    )
    .unwrap();
    std::fs::create_dir(root.path().join("src")).unwrap();
    std::fs::write(root.path().join("src/lib.rs"), "//! The library.\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        root.path().join("notes.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("vendor")).unwrap();
    let repo = Repo::open(root.path()).unwrap();
    let server = Arc::new(
        mcp_tool_examples::example_server(None, repo, Notes::temporary().unwrap()).unwrap(),
    );

    // The listing offered to the model leaves the links out.
    let mut d = Driver::new(InProcessTransport::new(server.clone()), FakeModel::new());
    let out = d
        .call_tool("summarize_repo", json!({"audience": "developer"}))
        .await
        .unwrap();
    assert_eq!(
        out.structured().unwrap()["files"],
        json!(["README.md", "src/lib.rs"])
    );
    let listing = serde_json::to_string(&out.transcript[1].message).unwrap();
    assert!(!listing.contains("notes.md") && !listing.contains("vendor"));

    // A model that names them anyway gets -32602, and the secret never travels.
    for pick in [
        r#"["notes.md"]"#,
        r#"["vendor/secret.txt"]"#,
        r#"["README.md", "notes.md"]"#,
    ] {
        let (code, all) = support::summarize_picking(&server, pick).await;
        assert_eq!(code, Some(-32602), "{pick}");
        assert!(!all.contains(SECRET), "{pick}");
    }
}
