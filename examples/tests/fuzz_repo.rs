//! Fuzz target for the repository path resolver (`Repo::resolve`, `Repo::parse_picks`,
//! `Repo::read_files`) over a repository holding every trap: `..`, absolute paths,
//! symbolic links in and out, a FIFO, a hard link to an outside file, dotfiles, secrets,
//! `.git` in odd letter cases. Whatever the model proposes: no panic, nothing accepted
//! outside the offered listing, no secret ever read. Budget: `MCP_FUZZ_CASES`
//! (scripts/fuzz.sh), else a small default.

#![cfg(unix)]

use mcp_tool_examples::repo::Repo;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const SECRET: &str = "FUZZ-SECRET-VALUE";

fn cases(default: u32) -> u32 {
    std::env::var("MCP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn atoms() -> Vec<&'static str> {
    vec![
        "..",
        ".",
        "/",
        "//",
        "\\",
        "README.md",
        "docs",
        "intro.md",
        "src",
        "lib.rs",
        ".git",
        ".GIT",
        "config",
        "Target",
        ".env",
        "id_rsa",
        "key.pem",
        "out",
        "in-link.md",
        "pipe",
        "hard.txt",
        "secret.txt",
        "é",
        "\u{0}",
        "\n",
        ":",
        "C:",
        "~",
        "*",
        " ",
        "%2e",
        "\u{202e}",
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(atoms()), 0..7).prop_map(|v| v.concat()),
        prop::collection::vec(prop::sample::select(atoms()), 1..5).prop_map(|v| v.join("/")),
        ".{0,40}",
    ]
}

#[test]
fn fuzz_repo_path_resolver() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let write = |rel: &str, text: &str| {
        let p = r.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("README.md", "# readme");
    write("docs/intro.md", "intro");
    write("src/lib.rs", "//! lib");
    write(".env", SECRET);
    write("id_rsa", SECRET);
    write("key.pem", SECRET);
    write(".git/config", SECRET);
    write(".GIT/config", SECRET);
    write("Target/out", SECRET);
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), r.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path(), r.join("docs/out")).unwrap();
    std::os::unix::fs::symlink("README.md", r.join("in-link.md")).unwrap();
    std::fs::hard_link(outside.path().join("secret.txt"), r.join("hard.txt")).unwrap();
    let _ = std::process::Command::new("mkfifo")
        .arg(r.join("pipe"))
        .status();
    let repo = Repo::open(r).unwrap();
    let offered = repo.list_files().unwrap();
    assert_eq!(offered, ["README.md", "docs/intro.md", "src/lib.rs"]);

    let n = cases(1500);
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = prop::collection::vec(path(), 1..4);
    let started = std::time::Instant::now();
    runner
        .run(&strategy, |paths| {
            for p in &paths {
                if let Ok(canonical) = repo.resolve(p) {
                    prop_assert!(canonical.starts_with(repo.root()), "{p:?}");
                    prop_assert!(std::fs::symlink_metadata(&canonical).unwrap().is_file());
                }
            }
            let answer = serde_json::to_string(&paths).unwrap();
            if let Ok(picks) = repo.parse_picks(&answer) {
                for p in &picks {
                    prop_assert!(offered.contains(p), "{p:?} accepted but not offered");
                }
            }
            if let Ok(read) = repo.read_files(&paths) {
                for f in read {
                    prop_assert!(!f.text.contains(SECRET), "{:?} read a secret", f.path);
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("fuzz target repo_paths failed: {e}"));
    println!(
        "fuzz target repo_paths: {n} cases, 0 failures, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
