//! Expansion snapshots: each `tests/expand/<name>.rs` fixture (`#[mcp_tool]`/`#[mcp_flow]` functions) is
//! expanded by the macro's own pipeline, formatted with prettyplease and compared with
//! `tests/expand/<name>.expanded.rs`. Regenerate with `MCP_TOOL_BLESS=1`.

#[allow(dead_code)]
#[path = "../src/analyse/mod.rs"]
mod analyse;
#[allow(dead_code)]
#[path = "../src/errors.rs"]
mod errors;
#[allow(dead_code)]
#[path = "../src/expand/mod.rs"]
mod expand;
#[allow(dead_code)]
#[path = "../src/fallback.rs"]
mod fallback;
#[allow(dead_code)]
#[path = "../src/parse/mod.rs"]
mod parse;
#[allow(dead_code)]
#[path = "../src/pipeline.rs"]
mod pipeline;
#[allow(dead_code)]
#[path = "../src/rt.rs"]
mod rt;

use std::path::Path;

use quote::ToTokens;

/// Expands the `#[mcp_tool]` and `#[mcp_flow]` functions of `source` and pretty-prints the
/// result.
fn expand_source(source: &str) -> String {
    let file: syn::File = syn::parse_file(source).expect("fixture parses");
    let mut out = String::new();
    for item in file.items {
        let syn::Item::Fn(mut f) = item else { continue };
        let Some(pos) = f
            .attrs
            .iter()
            .position(|a| a.path().is_ident("mcp_tool") || a.path().is_ident("mcp_flow"))
        else {
            continue;
        };
        let attr = f.attrs.remove(pos);
        let flow = attr.path().is_ident("mcp_flow");
        let args = match attr.meta {
            syn::Meta::List(l) => l.tokens,
            _ => proc_macro2::TokenStream::new(),
        };
        let expanded = if flow {
            pipeline::expand_flow(args, f.to_token_stream())
        } else {
            pipeline::expand_tool(args, f.to_token_stream())
        };
        let parsed: syn::File = syn::parse2(expanded).expect("expansion parses");
        out.push_str(&prettyplease::unparse(&parsed));
    }
    out
}

#[test]
fn snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expand");
    let bless = std::env::var_os("MCP_TOOL_BLESS").is_some();
    let mut fixtures: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/expand")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "rs")
                && !p.to_string_lossy().ends_with(".expanded.rs")
        })
        .collect();
    fixtures.sort();
    assert!(!fixtures.is_empty());
    let mut failed = Vec::new();
    for path in fixtures {
        let source = std::fs::read_to_string(&path).expect("read fixture");
        let actual = expand_source(&source);
        let snap = path.with_extension("expanded.rs");
        if bless || !snap.exists() {
            std::fs::write(&snap, &actual).expect("write snapshot");
            continue;
        }
        let expected = std::fs::read_to_string(&snap).expect("read snapshot");
        if expected != actual {
            failed.push(snap.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "expansion changed (rerun with MCP_TOOL_BLESS=1 and review): {failed:?}"
    );
}

/// Under `crate = "…"` every runtime path of the expansion (tool and flow alike) goes
/// through the given root, into the versioned private module: nothing names
/// `::mcp_tool_runtime`, `::serde`, `::serde_json` or `::schemars` itself, so a crate that
/// only depends on a re-exporting framework compiles.
#[test]
fn crate_path_reaches_everything_through_the_root() {
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expand/crate_path.rs"),
    )
    .expect("read fixture");
    let out = expand_source(&source);
    let version = format!("v{}", env!("CARGO_PKG_VERSION").replace('.', "_"));
    for banned in ["mcp_tool_runtime", "::serde", "::schemars"] {
        assert!(!out.contains(banned), "{banned} in:\n{out}");
    }
    // outside the impls' block (the flow's call value) and at its alias
    let rooted = format!("::my_framework::mcp::__private::{version}");
    assert!(out.contains(&format!("use {rooted} as __mcp;")), "{out}");
    // every `__private` is the versioned one, under the root
    assert_eq!(
        out.matches("__private").count(),
        out.matches(&rooted).count(),
        "{out}"
    );
}

/// Without `crate = "…"`, generated code names the runtime's versioned private module.
#[test]
fn default_root_is_the_versioned_private_module() {
    let out = expand_source(
        "#[mcp_tool]\nasync fn t(cx: &mut ToolContext, a: A) -> Result<String, ToolError> { Ok(a.s) }",
    );
    let version = format!("v{}", env!("CARGO_PKG_VERSION").replace('.', "_"));
    let rooted = format!("::mcp_tool_runtime::__private::{version}");
    assert!(out.contains(&format!("use {rooted} as __mcp;")), "{out}");
    assert_eq!(
        out.matches("__private").count(),
        out.matches(&rooted).count(),
        "{out}"
    );
}

/// Prints the expansion of a fixture: `MCP_TOOL_SHOW=tests/expand/x.rs cargo test --test expand show -- --nocapture`.
#[test]
fn show() {
    if let Some(p) = std::env::var_os("MCP_TOOL_SHOW") {
        let source = std::fs::read_to_string(p).expect("read");
        println!("{}", expand_source(&source));
    }
}

/// The expansion's size goals: `get_weather` (two suspension points) within 200 lines and
/// `flow_call` (a flow and a tool calling it) within 300, as formatted in the snapshots.
#[test]
fn expansion_sizes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expand");
    for (name, most) in [("get_weather", 200), ("flow_call", 300)] {
        let source = std::fs::read_to_string(dir.join(format!("{name}.rs"))).expect("fixture");
        let lines = expand_source(&source).lines().count();
        assert!(
            lines <= most,
            "{name} expands to {lines} lines, more than {most}"
        );
    }
}
