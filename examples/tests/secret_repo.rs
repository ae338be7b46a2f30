//! `summarize_repo` over a repository holding secrets next to its code (issue 11): the
//! listing offered to the model leaves dotfiles and secret-looking names out, and a model
//! that names them anyway, or names a real file the listing did not offer, gets -32602
//! while the secret never travels.

mod support;

use std::sync::Arc;

use mcp_tool_client::{Driver, InProcessTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use serde_json::json;

const SECRET: &str = "AKIA-SECRET-IN-THE-REPOSITORY";

#[tokio::test]
async fn secrets_are_not_offered_and_unoffered_picks_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = root.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("README.md", "# app\nAn app.\n");
    write("src/main.rs", "fn main() {}\n");
    write(".env", SECRET);
    write("deploy/tls.key", SECRET);
    write("id_rsa", SECRET);
    write("config/credentials.json", SECRET);
    let server = Arc::new(
        mcp_tool_examples::example_server(
            None,
            Repo::open(root.path()).unwrap(),
            Notes::temporary().unwrap(),
        )
        .unwrap(),
    );

    let mut d = Driver::new(InProcessTransport::new(server.clone()), FakeModel::new());
    let out = d
        .call_tool("summarize_repo", json!({"audience": "developer"}))
        .await
        .unwrap();
    assert_eq!(
        out.structured().unwrap()["files"],
        json!(["README.md", "src/main.rs"])
    );
    let listing = serde_json::to_string(&out.transcript[1].message).unwrap();
    for hidden in [".env", "tls.key", "id_rsa", "credentials"] {
        assert!(!listing.contains(hidden), "{hidden} offered: {listing}");
    }

    for pick in [
        r#"[".env"]"#,
        r#"["deploy/tls.key"]"#,
        r#"["README.md", "id_rsa"]"#,
        r#"["config/credentials.json"]"#,
    ] {
        let (code, all) = support::summarize_picking(&server, pick).await;
        assert_eq!(code, Some(-32602), "{pick}");
        assert!(!all.contains(SECRET), "{pick}");
    }
}
