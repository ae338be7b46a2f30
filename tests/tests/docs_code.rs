//! The code of the README and of the guide (docs/GUIDE.md) is real: every ```` ```rust ````
//! block is compiled by this package's doctests (`src/lib.rs` includes both files), except
//! an excerpt, marked `ignore` after an `<!-- excerpt: PATH -->` line, whose lines (but for
//! `// …` elisions) stand in that compiled file in the same order. Every block names its
//! language, so that nothing is compiled as Rust by accident.

use std::path::Path;

/// A fenced block: its info string, the line before its fence, its lines, where it starts.
struct Block {
    info: String,
    before: String,
    lines: Vec<String>,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let mut previous = String::new();
    for (n, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        match &mut open {
            Some(b) if trimmed.starts_with("```") => {
                out.push(std::mem::replace(
                    b,
                    Block {
                        info: String::new(),
                        before: String::new(),
                        lines: Vec::new(),
                        line: 0,
                    },
                ));
                open = None;
            }
            Some(b) => b.lines.push(raw.to_owned()),
            None if trimmed.starts_with("```") => {
                open = Some(Block {
                    info: trimmed.trim_start_matches('`').trim().to_owned(),
                    before: previous.clone(),
                    lines: Vec::new(),
                    line: n + 1,
                });
            }
            None => {}
        }
        if !raw.trim().is_empty() {
            previous = raw.trim().to_owned();
        }
    }
    assert!(open.is_none(), "a fence is not closed");
    out
}

fn is_elision(line: &str) -> bool {
    line.trim().starts_with("// …")
}

fn check(doc: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join(doc)).expect("the document");
    let mut excerpts = 0;
    for b in blocks(&text) {
        assert!(
            !b.info.is_empty(),
            "{doc}:{}: a block without a language is compiled as Rust; name it (`text`, `sh`, …)",
            b.line
        );
        if !b.info.starts_with("rust") || !b.info.contains("ignore") {
            continue;
        }
        let path = b
            .before
            .strip_prefix("<!-- excerpt:")
            .and_then(|r| r.strip_suffix("-->"))
            .map(str::trim)
            .unwrap_or_else(|| {
                panic!(
                    "{doc}:{}: an `ignore` block must be an excerpt: `<!-- excerpt: PATH -->` before it",
                    b.line
                )
            });
        let source = std::fs::read_to_string(root.join(path))
            .unwrap_or_else(|e| panic!("{doc}:{}: {path}: {e}", b.line));
        let mut lines = source.lines().map(str::trim);
        for want in b
            .lines
            .iter()
            .filter(|l| !l.trim().is_empty() && !is_elision(l))
        {
            let want = want.trim();
            assert!(
                lines.any(|l| l == want),
                "{doc}:{}: `{want}` is not in {path} (in this order)",
                b.line
            );
        }
        excerpts += 1;
    }
    excerpts
}

#[test]
fn the_readme_shows_compiled_code() {
    assert_eq!(check("README.md"), 1);
}

#[test]
fn the_guide_shows_compiled_code() {
    assert_eq!(check("docs/GUIDE.md"), 3);
}

#[test]
fn an_excerpt_that_is_not_in_its_file_is_found() {
    let doc = "<!-- excerpt: examples/tests/readme.rs -->\n```rust,ignore\nlet nothing = 1;\n```\n";
    let b = blocks(doc);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].before, "<!-- excerpt: examples/tests/readme.rs -->");
    let dir = std::env::temp_dir().join(format!("docs-code-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("doc.md"), doc).unwrap();
    // an absolute path: `check` reads it as it is
    let path = dir.join("doc.md");
    let result = std::panic::catch_unwind(|| check(&path.to_string_lossy()));
    std::fs::remove_dir_all(&dir).ok();
    assert!(result.is_err(), "a line missing from the file is refused");
}
