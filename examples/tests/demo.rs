//! The README's first command prints every message of discovery, listing and the
//! `summarize_repo` rounds, and ends with the final result.

use std::process::Command;

#[test]
fn demo_prints_every_round_and_the_result() {
    let out = Command::new(env!("CARGO_BIN_EXE_demo"))
        .output()
        .expect("demo runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let order = [
        "--- client -> server: server/discover id 1",
        "--- server -> client: id 1 complete",
        "\"ttlMs\"",
        "--- client -> server: tools/list id 2",
        "--- client -> server: tools/call id 1",
        "--- server -> client: id 1 input_required",
        "\"pick_files\"",
        "--- client -> server: tools/call id 2",
        "--- server -> client: id 2 input_required",
        "\"summary\"",
        "--- client -> server: tools/call id 3",
        "--- server -> client: id 3 complete",
        "=== final result after 3 requests ===",
        "Files: README.md, server.py, docs/intro.md",
        "Summary: For a developer:",
    ];
    let mut at = 0;
    for needle in order {
        match text[at..].find(needle) {
            Some(i) => at += i + needle.len(),
            None => panic!("{needle:?} missing (or out of order) in:\n{text}"),
        }
    }
}

#[test]
fn demo_with_critique_takes_a_third_round() {
    let out = Command::new(env!("CARGO_BIN_EXE_demo"))
        .args(["--critique", "--audience", "manager"])
        .output()
        .expect("demo runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("--- server -> client: id 3 input_required"));
    assert!(text.contains("--- server -> client: id 4 complete"));
    assert!(text.contains("Critique: The summary is"));
    assert!(text.contains("Summary: For a manager:"));
}
