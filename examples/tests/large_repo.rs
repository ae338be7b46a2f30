//! The bounds keep the sealed state under its size cap even for files that are large and
//! expensive to JSON-escape (every request of a round travels in the state).

use std::sync::Arc;

use mcp_tool_client::{Driver, InProcessTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use serde_json::json;

#[tokio::test]
async fn worst_case_files_still_complete() {
    let root = tempfile::tempdir().unwrap();
    let nasty = "\"\\".repeat(50_000);
    for name in ["README.md", "a.py", "notes.md", "b.py"] {
        std::fs::write(root.path().join(name), &nasty).unwrap();
    }
    let repo = Repo::open(root.path()).unwrap();
    let server = Arc::new(
        mcp_tool_examples::example_server(None, repo, Notes::temporary().unwrap()).unwrap(),
    );
    let mut d = Driver::new(InProcessTransport::new(server), FakeModel::new());
    let out = d
        .call_tool(
            "summarize_repo",
            json!({"audience": "developer", "critique": true}),
        )
        .await
        .unwrap();
    assert_eq!(out.rounds, 4);
    assert_eq!(
        out.structured().unwrap()["files"],
        json!(["README.md", "a.py", "notes.md"])
    );
    let biggest_state = out
        .transcript
        .iter()
        .filter_map(|e| e.message.pointer("/result/requestState"))
        .filter_map(|s| s.as_str())
        .map(str::len)
        .max()
        .unwrap();
    assert!(biggest_state < 64 * 1024, "{biggest_state}");
}
