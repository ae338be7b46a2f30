//! The `serve` binary over Streamable HTTP serves the bundled notes skill
//! (`examples/skills/notes`): declared in `server/discover`, listed by `skills/list` with a
//! manifest whose digests and sizes match what `resources/read` returns and what is on
//! disk, readable by directory, and refusing URIs outside it.

mod support;

use mcp_tool_client::{ClientTransport, HttpTransport};
use mcp_tool_runtime::resource::skills::digest;
use serde_json::{Value, json};
use tokio::process::Command;

const SERVE: &str = env!("CARGO_BIN_EXE_serve");

async fn rpc(t: &HttpTransport, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    t.send(msg).await.expect("sent").expect("a response")
}

#[tokio::test]
async fn serve_publishes_the_notes_skill_over_http() {
    let db = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(SERVE);
    cmd.args(["--http", "127.0.0.1:0", "--db"])
        .arg(db.path().join("notes.sqlite3"))
        .env_remove("MCP_TOOL_STATE_KEY");
    let serve = support::serve(cmd).await;
    let t = HttpTransport::new(&serve.url);

    let d = rpc(&t, "server/discover", json!({})).await;
    assert_eq!(
        d["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert!(
        d["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("skill://notes/SKILL.md")
    );

    let list = rpc(&t, "skills/list", json!({})).await;
    assert!(list["result"]["ttlMs"].is_u64(), "{list}");
    let skills = list["result"]["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    let notes = &skills[0];
    assert_eq!(notes["uri"], "skill://notes/SKILL.md");
    assert_eq!(notes["frontmatter"]["name"], "notes");
    assert_eq!(
        notes["frontmatter"]["metadata"]["server"],
        "mcp-tool-examples"
    );
    let manifest = notes["resources"].as_array().unwrap();
    let on_disk = std::path::Path::new(mcp_tool_examples::SKILLS_DIR);
    let mut uris: Vec<&str> = manifest
        .iter()
        .map(|e| e["uri"].as_str().unwrap())
        .collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "skill://notes/SKILL.md",
            "skill://notes/references/examples.md"
        ]
    );
    for entry in manifest {
        let uri = entry["uri"].as_str().unwrap();
        let file = std::fs::read(on_disk.join(uri.strip_prefix("skill://").unwrap())).unwrap();
        assert_eq!(entry["digest"], digest(&file));
        assert_eq!(entry["size"], file.len());
        let read = rpc(&t, "resources/read", json!({"uri": uri})).await;
        let text = read["result"]["contents"][0]["text"].as_str().unwrap();
        assert_eq!(text.as_bytes(), file.as_slice());
    }
    let md = rpc(
        &t,
        "resources/read",
        json!({"uri": "skill://notes/SKILL.md"}),
    )
    .await;
    let md = md["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    for tool in ["add_note", "list_notes", "edit_note", "delete_notes"] {
        assert!(md.contains(tool), "the skill teaches {tool}");
    }

    let got = rpc(&t, "skills/get", json!({"uri": "skill://notes/SKILL.md"})).await;
    assert_eq!(&got["result"]["skill"], notes);
    let dir = rpc(
        &t,
        "resources/directory/read",
        json!({"uri": "skill://notes"}),
    )
    .await;
    let children: Vec<(&str, &str)> = dir["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["uri"].as_str().unwrap(), c["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://notes/SKILL.md", "text/markdown"),
            ("skill://notes/references", "inode/directory")
        ]
    );
    for uri in [
        "skill://notes/../../Cargo.toml",
        "skill://notes/%2e%2e/Cargo.toml",
    ] {
        for m in ["resources/read", "skills/get", "resources/directory/read"] {
            let r = rpc(&t, m, json!({"uri": uri})).await;
            assert_eq!(r["error"]["code"], -32602, "{m} {uri}: {r}");
        }
    }
}
