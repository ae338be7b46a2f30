//! The Skills extension against skills written to a temporary directory and served with
//! `.skills(dir)`: `skills/list`, `skills/get`, `resources/read` and
//! `resources/directory/read` with their digests, sizes and caching hints; the directories
//! `build()` refuses; requests that try to leave the directory.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::RegistrationError;
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::{Server, ServerBuilder};
use mcp_tool_skills::SkillsExt as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p = std::env::temp_dir().join(format!("mcp-skills-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> &Self {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
        self
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const ALPHA_MD: &str = "---\nname: alpha\ndescription: \"Alpha: the first skill\"\nlicense: MIT\n\
metadata:\n  version: \"1.0\"\n  reviewed: true\n---\n\n# Alpha\n\nSee `ref/guide.md`.\n";
const BETA_MD: &str = "---\nname: beta\ndescription: Beta skill\n---\nBody.\n";
const BINARY: &[u8] = &[0, 159, 146, 150, 255, 1];

fn sample() -> TempDir {
    let d = TempDir::new();
    d.write("alpha/SKILL.md", ALPHA_MD)
        .write("alpha/ref/guide.md", "# Guide\n")
        .write("alpha/data.bin", BINARY)
        .write("team/beta/SKILL.md", BETA_MD)
        .write("team/README.md", "not in any skill\n")
        .write("alpha/.hidden", "skipped");
    d
}

fn builder() -> ServerBuilder {
    Server::builder(Implementation::new("skills-test", "1"))
}

async fn rpc(s: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    s.handle(msg, &Principal::anonymous())
        .await
        .expect("a response")
        .to_value()
}

fn sha(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The raw bytes of a `resources/read` result's single content.
fn bytes_of(read: &Value) -> Vec<u8> {
    let c = &read["result"]["contents"][0];
    match (c["text"].as_str(), c["blob"].as_str()) {
        (Some(t), _) => t.as_bytes().to_vec(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
        _ => panic!("no content in {read}"),
    }
}

#[tokio::test]
async fn list_get_and_read_agree_with_the_files() {
    let dir = sample();
    let s = builder()
        .list_ttl(std::time::Duration::from_secs(42))
        .skills(dir.path())
        .build()
        .unwrap();

    let discover = rpc(&s, "server/discover", json!({})).await;
    let caps = &discover["result"]["capabilities"];
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert!(caps["resources"].is_object());

    let list = rpc(&s, "skills/list", json!({})).await;
    let r = &list["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["ttlMs"], 42_000);
    assert_eq!(r["cacheScope"], "public");
    let skills = r["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2);
    let alpha = &skills[0];
    assert_eq!(alpha["uri"], "skill://alpha/SKILL.md");
    assert_eq!(
        alpha["frontmatter"],
        json!({"name": "alpha", "description": "Alpha: the first skill", "license": "MIT",
               "metadata": {"version": "1.0", "reviewed": true}})
    );
    // The manifest: every file once (hidden ones aside), with digests and sizes of the bytes.
    let expected = [
        ("skill://alpha/SKILL.md", ALPHA_MD.as_bytes()),
        ("skill://alpha/data.bin", BINARY),
        ("skill://alpha/ref/guide.md", b"# Guide\n".as_slice()),
    ];
    let manifest = alpha["resources"].as_array().unwrap();
    assert_eq!(manifest.len(), expected.len(), "{manifest:?}");
    for (uri, bytes) in expected {
        let entry = manifest.iter().find(|e| e["uri"] == uri).expect(uri);
        assert_eq!(entry["digest"], sha(bytes));
        assert_eq!(entry["size"], bytes.len());
        // resources/read returns exactly those bytes.
        let read = rpc(&s, "resources/read", json!({"uri": uri})).await;
        assert_eq!(bytes_of(&read), bytes, "{uri}");
        assert!(read["result"]["ttlMs"].is_u64());
    }
    let beta = &skills[1];
    assert_eq!(beta["uri"], "skill://team/beta/SKILL.md");
    assert_eq!(
        beta["frontmatter"],
        json!({"name": "beta", "description": "Beta skill"})
    );

    // skills/get gives the listed entry; an unknown skill is -32602.
    let got = rpc(
        &s,
        "skills/get",
        json!({"uri": "skill://team/beta/SKILL.md"}),
    )
    .await;
    assert_eq!(&got["result"]["skill"], beta);
    assert!(got["result"]["nextCursor"].is_null());
    assert!(got["result"]["ttlMs"].is_u64() && got["result"]["cacheScope"].is_string());
    for uri in [
        "skill://gamma/SKILL.md",
        "skill://alpha/ref/guide.md",
        "skill://team/README.md",
    ] {
        let err = rpc(&s, "skills/get", json!({"uri": uri})).await;
        assert_eq!(err["error"]["code"], -32602, "{uri}");
    }

    // resources/list: SKILL.md named and described from the frontmatter, as markdown; the
    // file outside any skill is not served.
    let list = rpc(&s, "resources/list", json!({})).await;
    let res = list["result"]["resources"].as_array().unwrap();
    let md = res
        .iter()
        .find(|r| r["uri"] == "skill://alpha/SKILL.md")
        .unwrap();
    assert_eq!(md["name"], "alpha");
    assert_eq!(md["description"], "Alpha: the first skill");
    assert_eq!(md["mimeType"], "text/markdown");
    assert!(!res.iter().any(|r| r["uri"] == "skill://team/README.md"));
    assert!(
        !res.iter()
            .any(|r| r["uri"].as_str().unwrap().contains("hidden"))
    );
}

#[tokio::test]
async fn directories_are_read_and_paginated() {
    let dir = sample();
    let s = builder().page_size(1).skills(dir.path()).build().unwrap();
    let mut uris = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut params = json!({"uri": "skill://alpha"});
        if !cursor.is_null() {
            params["cursor"] = cursor.clone();
        }
        let r = rpc(&s, "resources/directory/read", params).await;
        for c in r["result"]["resources"].as_array().unwrap() {
            uris.push((c["uri"].as_str().unwrap().to_owned(), c["mimeType"].clone()));
        }
        cursor = r["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
        // A cursor of one directory is refused for another.
        let other = rpc(
            &s,
            "resources/directory/read",
            json!({"uri": "skill://team", "cursor": cursor}),
        )
        .await;
        assert_eq!(other["error"]["code"], -32602);
    }
    assert_eq!(
        uris,
        vec![
            ("skill://alpha/SKILL.md".to_owned(), json!("text/markdown")),
            (
                "skill://alpha/data.bin".to_owned(),
                json!("application/octet-stream")
            ),
            ("skill://alpha/ref".to_owned(), json!("inode/directory")),
        ]
    );
    let team = rpc(
        &s,
        "resources/directory/read",
        json!({"uri": "skill://team"}),
    )
    .await;
    assert_eq!(team["result"]["resources"][0]["uri"], "skill://team/beta");
    assert_eq!(
        team["result"]["resources"][0]["mimeType"],
        "inode/directory"
    );
    for not_dir in [
        "skill://alpha/SKILL.md",
        "skill://alpha/",
        "skill://nope",
        "skill://",
        "file:///etc",
    ] {
        let r = rpc(&s, "resources/directory/read", json!({"uri": not_dir})).await;
        assert_eq!(r["error"]["code"], -32602, "{not_dir}");
    }
}

#[tokio::test]
async fn requests_cannot_leave_the_directory() {
    let outside = TempDir::new();
    outside.write("secret.txt", "top secret");
    let dir = sample();
    let s = builder().skills(dir.path()).build().unwrap();
    let secret = outside.path().join("secret.txt");
    let attempts = [
        "skill://alpha/../../etc/passwd".to_owned(),
        "skill://alpha/%2e%2e/%2e%2e/etc/passwd".to_owned(),
        "skill://alpha/ref/../SKILL.md".to_owned(),
        "skill://alpha/./SKILL.md".to_owned(),
        "skill://alpha//SKILL.md".to_owned(),
        "skill://alpha/.hidden".to_owned(),
        "skill://team/README.md".to_owned(),
        format!("skill://alpha/{}", secret.display()),
        format!("file://{}", secret.display()),
        "skill://ALPHA/SKILL.md".to_owned(),
        "skill://alpha/SKILL.md\0".to_owned(),
    ];
    for uri in &attempts {
        for method in ["resources/read", "skills/get", "resources/directory/read"] {
            let r = rpc(&s, method, json!({"uri": uri})).await;
            assert_eq!(r["error"]["code"], -32602, "{method} {uri}: {r}");
            assert!(!r.to_string().contains("top secret"));
        }
    }
    for bad in [
        json!(1),
        json!(null),
        json!(["skill://alpha/SKILL.md"]),
        json!("x".repeat(5000)),
    ] {
        for method in ["skills/get", "resources/directory/read"] {
            let r = rpc(&s, method, json!({"uri": bad})).await;
            assert_eq!(r["error"]["code"], -32602, "{method} {bad}");
        }
    }
    let r = rpc(&s, "skills/list", json!({"cursor": "bogus"})).await;
    assert_eq!(r["error"]["code"], -32602);
}

fn refused(dir: &TempDir) -> String {
    match builder().skills(dir.path()).build() {
        Ok(_) => panic!("accepted"),
        Err(e @ RegistrationError::Skill { .. }) => e.to_string(),
        Err(e) => panic!("not a skill error: {e}"),
    }
}

/// What is wrong, the files, and what the error says.
type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

#[test]
fn invalid_directories_are_refused_at_build() {
    let cases: &[Case] = &[
        (
            "no frontmatter",
            &[("a/SKILL.md", "# A\n")],
            "must begin with a `---` line",
        ),
        (
            "unclosed",
            &[("a/SKILL.md", "---\nname: a\n")],
            "no closing `---`",
        ),
        (
            "name mismatch",
            &[("a/SKILL.md", "---\nname: b\ndescription: d\n---\n")],
            "must match",
        ),
        (
            "bad name",
            &[("A/SKILL.md", "---\nname: A\ndescription: d\n---\n")],
            "naming rules",
        ),
        (
            "no name",
            &[("a/SKILL.md", "---\ndescription: d\n---\n")],
            "no string `name`",
        ),
        (
            "no description",
            &[("a/SKILL.md", "---\nname: a\n---\n")],
            "`description`",
        ),
        (
            "empty description",
            &[("a/SKILL.md", "---\nname: a\ndescription: \"\"\n---\n")],
            "`description`",
        ),
        (
            "an alias",
            &[("a/SKILL.md", "---\nname: &n a\ndescription: *n\n---\n")],
            "aliases",
        ),
        (
            "a duplicate key",
            &[("a/SKILL.md", "---\nname: a\nname: a\ndescription: d\n---\n")],
            "duplicated key",
        ),
        (
            "root skill",
            &[("SKILL.md", "---\nname: x\ndescription: d\n---\n")],
            "directory of its own",
        ),
        (
            "odd file name",
            &[
                ("a/SKILL.md", "---\nname: a\ndescription: d\n---\n"),
                ("a/my notes.md", "x"),
            ],
            "URI segment",
        ),
    ];
    for (what, files, message) in cases {
        let d = TempDir::new();
        for (rel, text) in *files {
            d.write(rel, text);
        }
        let e = refused(&d);
        assert!(e.contains(message), "{what}: {e}");
    }
    // Missing directory.
    let e = builder()
        .skills("/nonexistent/skills/dir")
        .build()
        .unwrap_err();
    assert!(matches!(e, RegistrationError::Skill { .. }), "{e}");
}

#[test]
fn oversize_skills_are_refused_at_build() {
    // One file over the 16 MiB of a skill (sparse: nothing is read).
    let d = TempDir::new();
    d.write("a/SKILL.md", "---\nname: a\ndescription: d\n---\n");
    let f = std::fs::File::create(d.path().join("a/big.bin")).unwrap();
    f.set_len(16 * 1024 * 1024 + 1).unwrap();
    assert!(refused(&d).contains("16777216"));
    // More than 512 files in one skill.
    let d = TempDir::new();
    d.write("a/SKILL.md", "---\nname: a\ndescription: d\n---\n");
    for i in 0..512 {
        d.write(&format!("a/f{i}.txt"), "x");
    }
    assert!(refused(&d).contains("512"));
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_refused_at_build() {
    let outside = TempDir::new();
    outside.write("secret.txt", "top secret");
    for link_to_dir in [false, true] {
        let d = TempDir::new();
        d.write("a/SKILL.md", "---\nname: a\ndescription: d\n---\n");
        let target = if link_to_dir {
            outside.path().to_owned()
        } else {
            outside.path().join("secret.txt")
        };
        std::os::unix::fs::symlink(target, d.path().join("a/leak")).unwrap();
        assert!(refused(&d).contains("symbolic link"));
    }
    // A hard link to a file outside.
    let d = TempDir::new();
    d.write("a/SKILL.md", "---\nname: a\ndescription: d\n---\n");
    std::fs::hard_link(
        outside.path().join("secret.txt"),
        d.path().join("a/leak.txt"),
    )
    .unwrap();
    assert!(refused(&d).contains("hard link"));
    // Even a link that stays inside the directory, and a linked skills directory itself.
    let d = TempDir::new();
    d.write("a/SKILL.md", "---\nname: a\ndescription: d\n---\n");
    std::os::unix::fs::symlink(d.path().join("a/SKILL.md"), d.path().join("a/copy.md")).unwrap();
    assert!(refused(&d).contains("symbolic link"));
    let link = TempDir::new();
    let root = link.path().join("skills");
    std::os::unix::fs::symlink(d.path(), &root).unwrap();
    assert!(builder().skills(&root).build().is_err());
}

#[tokio::test]
async fn a_nested_skill_is_listed_in_its_parent_and_served_once() {
    let d = TempDir::new();
    d.write("docs/SKILL.md", "---\nname: docs\ndescription: d\n---\n")
        .write("docs/api/SKILL.md", BETA_MD.replace("beta", "api"))
        .write("docs/api/ref.json", "{}");
    let s = builder().skills(d.path()).build().unwrap();
    let list = rpc(&s, "skills/list", json!({})).await;
    let skills = list["result"]["skills"].as_array().unwrap();
    let manifest = |i: usize| -> Vec<String> {
        skills[i]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["uri"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        manifest(0),
        [
            "skill://docs/SKILL.md",
            "skill://docs/api/SKILL.md",
            "skill://docs/api/ref.json"
        ]
    );
    assert_eq!(
        manifest(1),
        ["skill://docs/api/SKILL.md", "skill://docs/api/ref.json"]
    );
    let res = rpc(&s, "resources/list", json!({})).await;
    let res = res["result"]["resources"].as_array().unwrap();
    assert_eq!(res.len(), 3);
    let api = res
        .iter()
        .find(|r| r["uri"] == "skill://docs/api/SKILL.md")
        .unwrap();
    assert_eq!(api["name"], "api");
    assert_eq!(api["description"], "Beta skill");
    let json_file = res
        .iter()
        .find(|r| r["uri"] == "skill://docs/api/ref.json")
        .unwrap();
    assert_eq!(json_file["mimeType"], "application/json");
}
