//! The example serves what git would serve: over a repository whose `.gitignore` files
//! (nested and negated patterns included), `.git/info/exclude` and global git excludes
//! ignore files with innocuous names, and which holds hidden files and directories, the
//! listing `summarize_repo` offers, the completion of `repo://files/{+path}`, a read of it
//! and a model's pick name none of them; a read of one is refused exactly as a missing file
//! is, while an ordinary file is still listed and read. In process (`Repo::open`, as the
//! example is built) and as the `serve --repo` process (global excludes, whose place the
//! environment says).

mod support;

use std::path::Path;
use std::sync::Arc;

use mcp_tool_client::{ClientTransport, Driver, DriverError, HttpTransport};
use mcp_tool_client::{InProcessTransport, ScriptedHost};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_runtime::protocol::ClientCapabilities;
use serde_json::{Value, json};

/// What every ignored or hidden file holds: it must never reach a client.
const IGNORED: &str = "IGNORED-CONTENT-NEVER-SERVED";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Files git does not publish here, with the rule that says so. Their names are innocuous:
/// the name filter alone would offer every one of them (checked below).
const NOT_PUBLISHED: &[&str] = &[
    "todo.txt",                 // `*.txt` in .gitignore
    "build/output.md",          // `build/`
    "config.local.json",        // `/config.local.json` (the root's only)
    "drafts/plan.md",           // `drafts/`
    "scratch.md",               // .git/info/exclude
    "sub/generated.rs",         // sub/.gitignore
    "sub/deeper/cache.json",    // `sub/**/cache.json` in the root's .gitignore
    ".env",                     // hidden
    ".hidden/readme.md",        // hidden directory
    "docs/.draft.md",           // hidden file in a directory
    ".github/workflows/ci.yml", // hidden directory git would publish: never served either
    ".git/config.md",           // the repository's own data
];

/// Files git publishes: listed and readable.
const PUBLISHED: &[&str] = &[
    "README.md",
    "keep.txt", // `!keep.txt` re-includes it
    "src/main.rs",
    "sub/config.local.json", // `/config.local.json` is anchored to the root
    "sub/lib.rs",
];

/// A git-like repository: `.gitignore` files, `.git/info/exclude`, hidden files, and the
/// files of [`NOT_PUBLISHED`] and [`PUBLISHED`].
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        ".gitignore",
        "# build output\nbuild/\n*.txt\n!keep.txt\n/config.local.json\ndrafts/\nsub/**/cache.json\n",
    );
    write(root, ".git/info/exclude", "scratch.md\n");
    write(root, ".git/HEAD", "ref: refs/heads/main\n");
    write(root, "sub/.gitignore", "generated.rs\n");
    for rel in NOT_PUBLISHED {
        write(root, rel, IGNORED);
    }
    for rel in PUBLISHED {
        write(root, rel, &format!("published: {rel}"));
    }
    dir
}

/// The files `summarize_repo` offers the model: the `- path` lines of its `pick_files`
/// request (the first message the server sent).
fn listing_of(transcript: &[mcp_tool_client::TranscriptEntry]) -> Vec<String> {
    let text = transcript[1].message["result"]["inputRequests"]["pick_files"]["params"]["messages"]
        [0]["content"]["text"]
        .as_str()
        .expect("the pick_files request");
    text.lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(str::to_owned)
        .collect()
}

/// The error of reading `uri`, its own URI replaced (only the URI the client sent is echoed).
async fn read_error<T: ClientTransport, H: mcp_tool_client::Host>(
    d: &mut Driver<T, H>,
    uri: &str,
) -> Value {
    match d.read_resource(uri).await {
        Err(DriverError::Rpc { error, .. }) => {
            let mut e = serde_json::to_value(&error).unwrap();
            e["message"] = Value::String(error.message.replace(uri, "URI"));
            e
        }
        other => panic!("{uri} read: {other:?}"),
    }
}

#[tokio::test]
async fn ignored_and_hidden_files_are_neither_listed_nor_read() {
    // the name filter alone would offer these names: git's rules are what hides them
    for rel in NOT_PUBLISHED
        .iter()
        .filter(|r| !r.split('/').any(|c| c.starts_with('.')))
    {
        use mcp_tool_examples::repo::{is_offered_file_name, is_secret_name};
        let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        assert!(
            is_offered_file_name(name) && !dirs.split('/').any(is_secret_name),
            "{rel}: the name filter refuses it already"
        );
    }
    let dir = repository();
    let repo = Repo::open(dir.path()).unwrap();
    let mut published: Vec<&str> = PUBLISHED.to_vec();
    published.sort_unstable();
    assert_eq!(repo.list_files().unwrap(), published);
    let server = Arc::new(
        mcp_tool_examples::example_server(None, repo, Notes::temporary().unwrap()).unwrap(),
    );

    // summarize_repo's listing, as the model sees it
    let mut d = Driver::new(InProcessTransport::new(server.clone()), FakeModel::new());
    let out = d
        .call_tool("summarize_repo", json!({"audience": "developer"}))
        .await
        .unwrap();
    assert_eq!(listing_of(&out.transcript), published);

    // a model that picks them anyway: -32602, nothing read
    for rel in NOT_PUBLISHED {
        let pick = serde_json::to_string(&[rel]).unwrap();
        let (code, all) = support::summarize_picking(&server, &pick).await;
        assert_eq!(code, Some(-32602), "{rel}");
        assert!(!all.contains(IGNORED), "{rel} read");
    }

    // repo://files/…: the published files read, the others refused as a missing file is
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    let mut d = Driver::new(InProcessTransport::new(server.clone()), host);
    for rel in PUBLISHED {
        let out = d
            .read_resource(&format!("repo://files/{rel}"))
            .await
            .unwrap();
        assert_eq!(
            out.result["contents"][0]["text"],
            format!("published: {rel}"),
            "{rel}"
        );
    }
    let missing = read_error(&mut d, "repo://files/missing.md").await;
    assert_eq!(missing["code"], -32602);
    for rel in NOT_PUBLISHED {
        let uri = format!("repo://files/{rel}");
        assert_eq!(read_error(&mut d, &uri).await, missing, "{rel}");
    }
    // and the completion of its path offers only the published files
    let done = d
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "repo://files/{+path}"},
                   "argument": {"name": "path", "value": ""}}),
        )
        .await
        .unwrap();
    let mut completed: Vec<&str> = done["completion"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    completed.sort_unstable();
    assert_eq!(completed, published);
    let all = support::wire(d.transcript());
    assert!(!all.contains(IGNORED));
}

/// The `serve` binary with `--repo`: the global git excludes (here the default file
/// `$XDG_CONFIG_HOME/git/ignore`, `HOME` pointing at an empty directory) are honoured too.
#[tokio::test]
async fn serve_skips_what_the_global_excludes_skip() {
    let dir = repository();
    write(dir.path(), "global-ignored.md", IGNORED);
    let home = tempfile::tempdir().unwrap();
    write(home.path(), "xdg/git/ignore", "global-ignored.md\n");
    let db = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_serve"));
    cmd.args(["--http", "127.0.0.1:0", "--repo"])
        .arg(dir.path())
        .arg("--db")
        .arg(db.path().join("notes.sqlite3"))
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("xdg"))
        .env_remove("GIT_CONFIG_GLOBAL");
    let serve = support::serve(cmd).await;
    let url = serve.url.clone();

    let mut d = Driver::new(HttpTransport::new(url.clone()), FakeModel::new());
    let out = d
        .call_tool("summarize_repo", json!({"audience": "developer"}))
        .await
        .unwrap();
    let mut published: Vec<&str> = PUBLISHED.to_vec();
    published.sort_unstable();
    // `global-ignored.md` is not among them
    assert_eq!(listing_of(&out.transcript), published);
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    let mut d = Driver::new(HttpTransport::new(url), host);
    let missing = read_error(&mut d, "repo://files/missing.md").await;
    assert_eq!(
        read_error(&mut d, "repo://files/global-ignored.md").await,
        missing
    );
    let readme = d.read_resource("repo://files/README.md").await.unwrap();
    assert_eq!(readme.result["contents"][0]["text"], "published: README.md");
}
