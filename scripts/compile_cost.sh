#!/usr/bin/env bash
# What `#[mcp_tool]` costs the compiler: a generated crate of 50 tools of mixed shapes (asks
# and samples, loops that keep a local, loops that prune, flow calls with application state,
# rounds with a checkpoint, journaled; 10 of each, plus the 10 flows they call) is checked and
# built against the workspace at WS (default: this checkout), and timed:
#
#   (a) `cargo check` of the generated crate alone (its dependencies built before; the crate's
#       source touched, so rustc checks it from scratch: CARGO_INCREMENTAL=0);
#   (b) `cargo build --release` of it alone, likewise;
#   (c) `cargo check` after editing one tool body, incremental (CARGO_INCREMENTAL=1 for this
#       step only, which is what an editor's check does), the cache warmed first.
#
# Each is run RUNS times (default 3; wall time on a shared machine moves by ±30 %) and the
# median printed. Then the expanded lines: each `#[mcp_tool]`/`#[mcp_flow]` of the generated
# crate and of WS's snapshot fixtures (mcp-tool-macros/tests/expand/*.rs) expanded by WS's own
# macro pipeline and pretty-printed with prettyplease, as tests/expand.rs does (a small
# counting binary that mounts WS's mcp-tool-macros/src modules the same way), lines counted.
#
#   scripts/compile_cost.sh                       # this checkout
#   scripts/compile_cost.sh /path/to/other/tree   # e.g. a checkout of the commit before
#   scripts/compile_cost.sh --table BEFORE.txt AFTER.txt   # the before/after table with ratios
#
# Output (one run): `key value` lines (check_s, release_s, incr_s, lines_total,
# lines_<fixture>), which --table pairs up. Uses CARGO_TARGET_DIR (default WS/target).
set -euo pipefail

if [ "${1:-}" = "--table" ]; then
    before=$2 after=$3
    val() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
    echo "| measure | before | after | after/before |"
    echo "|---|---|---|---|"
    for k in $(awk '!/^#/ { print $1 }' "$after"); do
        b=$(val "$before" "$k"); a=$(val "$after" "$k")
        [ -n "$b" ] || continue
        label=$k
        case $k in
            check_s) label="(a) \`cargo check\`, generated crate alone, s (median of runs)" ;;
            release_s) label="(b) \`cargo build --release\`, generated crate alone, s" ;;
            incr_s) label="(c) incremental \`cargo check\` after editing one tool body, s" ;;
            lines_total) label="expanded lines, 50-tool crate" ;;
            lines_*) label="expanded lines, snapshot \`${k#lines_}\`" ;;
        esac
        echo "| $label | $b | $a | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f×", a / b }') |"
    done
    exit 0
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ws="$(cd "${1:-$here}" && pwd)"
runs=${RUNS:-3}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ws/target}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- the generated crate ----------------------------------------------------------------------
crate="$tmp/compile-cost"
mkdir -p "$crate/src"
cp "$ws/Cargo.lock" "$crate/Cargo.lock"
cat >"$crate/Cargo.toml" <<EOF
[package]
name = "mcp-compile-cost"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
mcp-tool-runtime = { path = "$ws/mcp-tool-runtime" }
serde = { version = "1", features = ["derive"] }
schemars = "1"

[workspace]
EOF
python3 - "$crate/src/lib.rs" <<'EOF'
import sys
head = '''//! 50 generated tools of mixed shapes (scripts/compile_cost.sh).
#![allow(dead_code, clippy::all)]
use mcp_tool_runtime::protocol::CallToolResult;
use mcp_tool_runtime::{
    Ask, Elicitation, Roots, Sample, State, ToolContext, ToolError, mcp_flow, mcp_tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)] pub struct WeatherArgs { pub location: String }
#[derive(Serialize, Deserialize, JsonSchema)] pub struct GitHubLogin { pub name: String }
#[derive(Serialize, JsonSchema)] pub struct Forecast { pub user: String, pub verdict: String }
#[derive(Deserialize, JsonSchema)] pub struct Args { pub k: u32 }
#[derive(Serialize, Deserialize, JsonSchema)] pub struct NameForm { pub name: String }
#[derive(Serialize, Deserialize, JsonSchema)] pub struct Num { pub n: u32 }
#[derive(Deserialize, JsonSchema)] pub struct PruneArgs { pub branches: Vec<String> }
#[derive(Serialize, Deserialize, JsonSchema)] pub struct Confirm { pub yes: bool }
#[derive(Serialize, Deserialize, JsonSchema)] pub struct YesNo { pub ok: bool }
#[derive(Deserialize, JsonSchema)] pub struct Items { pub name: String }
#[derive(Serialize, Deserialize, JsonSchema)] pub struct City { pub name: String }
#[derive(Serialize, Deserialize, JsonSchema)] pub struct Label { pub text: String }
#[derive(Default)] pub struct Store(std::sync::Mutex<Vec<String>>);
impl Store { pub fn delete(&self, name: &str) { self.0.lock().unwrap().retain(|n| n != name) } }
async fn fetch_forecast(location: &str) -> Result<String, ToolError> { Ok(format!("sun in {location}")) }
'''
shapes = [
'''/// Weather {i}: a login, then a rating by the model.
#[mcp_tool(max_rounds = 3)]
async fn weather_{i}(cx: &mut ToolContext, args: WeatherArgs) -> Result<Forecast, ToolError> {{
    let github_login: GitHubLogin = cx.ask("Please provide your GitHub username").await?;
    let raw = fetch_forecast(&args.location).await?;
    let verdict = cx.sample(Sample::user(format!("Rate {i}: {{raw}}")).max_tokens(100)).key("verdict").await?.text()?;
    Ok(Forecast {{ user: github_login.name, verdict }})
}}
''',
'''/// Kept loop {i}.
#[mcp_tool]
async fn kept_loop_{i}(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {{
    let who: NameForm = cx.ask("which?").await?;
    let kids: Vec<String> = who.name.split(',').map(str::to_owned).collect();
    let mut out = Vec::new();
    for (i, k) in kids.iter().enumerate() {{
        let num: Num = cx.ask(format!("how many for {{k}} ({i})?")).key(format!("n_{{i}}")).await?;
        out.push(format!("{{k}}={{}}", num.n + args.k));
    }}
    Ok(out.join(","))
}}
''',
'''/// Prune {i}: deletes branches after confirmation, one by one.
#[mcp_tool(destructive, ttl = "5m")]
async fn prune_{i}(cx: &mut ToolContext, args: PruneArgs) -> Result<String, ToolError> {{
    let mut deleted = Vec::new();
    for branch in args.branches {{
        let confirm: Confirm = cx.ask(format!("Delete {{branch}} ({i})?")).await?;
        if !confirm.yes {{
            continue;
        }}
        deleted.push(branch);
    }}
    if deleted.is_empty() {{
        return Ok("nothing deleted".to_string());
    }}
    Ok(deleted.join(", "))
}}
''',
'''/// Asks to confirm `what` ({i}).
#[mcp_flow]
async fn confirm_{i}(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {{
    let answer: YesNo = cx.ask(format!("{{what}} ({i})?")).await?;
    Ok(answer.ok)
}}

/// Delete {i}: after a confirmation.
#[mcp_tool]
async fn delete_{i}(cx: &mut ToolContext, args: Items, store: State<Store>) -> Result<String, ToolError> {{
    let sure = confirm_{i}(cx, format!("Delete {{}}", args.name)).await?;
    if sure {{
        store.delete(&args.name);
    }}
    Ok(format!("{{sure}}"))
}}
''',
'''/// Plan {i}: a round of two requests, a checkpoint, an elicitation.
#[mcp_tool(journal)]
async fn plan_{i}(cx: &mut ToolContext) -> Result<CallToolResult, ToolError> {{
    let (city, dirs) = cx.round((Ask::<City>::new("Which city?"), Roots::new())).await?;
    cx.checkpoint().await?;
    let label = match cx.elicit::<Label>("Label?").key("label").await? {{
        Elicitation::Accept(l) => l.text,
        _ => city.name.clone(),
    }};
    Ok(CallToolResult::text(format!("{{label}}: {{}} roots ({i})", dirs.len())))
}}
''',
]
out = [head]
for i in range(50):
    src = shapes[i % len(shapes)].format(i=i)
    if i == 0:
        src = src.replace('"Please provide your GitHub username"', '"/*EDIT*/Please provide your GitHub username"')
    out.append(src)
open(sys.argv[1], 'w').write("\n".join(out))
EOF

now() { date +%s.%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }'; }
cargo_cc() { (cd "$crate" && cargo "$@" -q --offline 2>"$tmp/cargo.log") || { cat "$tmp/cargo.log" >&2; exit 1; }; }

echo "# compile cost of $ws (target $CARGO_TARGET_DIR, $runs runs each)" >&2
export CARGO_INCREMENTAL=0
cargo_cc check # dependencies, untimed
cargo_cc build --release
times_check=() times_release=() times_incr=()
for _ in $(seq "$runs"); do
    touch "$crate/src/lib.rs"; t0=$(now); cargo_cc check; t1=$(now)
    times_check+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
    touch "$crate/src/lib.rs"; t0=$(now); cargo_cc build --release; t1=$(now)
    times_release+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
done
export CARGO_INCREMENTAL=1
touch "$crate/src/lib.rs"; cargo_cc check # warm the incremental cache
for r in $(seq "$runs"); do
    sed -i "s|/\*EDIT[0-9]*\*/|/*EDIT$r*/|" "$crate/src/lib.rs"
    t0=$(now); cargo_cc check; t1=$(now)
    times_incr+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
done
export CARGO_INCREMENTAL=0
echo "check_s $(printf '%s\n' "${times_check[@]}" | median)"
echo "release_s $(printf '%s\n' "${times_release[@]}" | median)"
echo "incr_s $(printf '%s\n' "${times_incr[@]}" | median)"
echo "# runs: check ${times_check[*]} | release ${times_release[*]} | incremental ${times_incr[*]}" >&2

# ---- expanded lines ---------------------------------------------------------------------------
counter="$tmp/count-lines"
mkdir -p "$counter/src"
cp "$ws/Cargo.lock" "$counter/Cargo.lock"
cat >"$counter/Cargo.toml" <<EOF
[package]
name = "mcp-expanded-lines"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
syn = { version = "2", features = ["full", "visit", "visit-mut", "extra-traits"] }
quote = "1"
proc-macro2 = "1"
prettyplease = "0.2"

[workspace]
EOF
src="$ws/mcp-tool-macros/src"
{
    for m in analyse/mod.rs:analyse errors.rs:errors expand/mod.rs:expand fallback.rs:fallback \
        parse/mod.rs:parse pipeline.rs:pipeline rt.rs:rt; do
        echo "#[allow(dead_code)] #[path = \"$src/${m%%:*}\"] mod ${m##*:};"
    done
    cat <<'EOF'
use quote::ToTokens;
/// The lines of the `#[mcp_tool]`/`#[mcp_flow]` functions of each file, expanded and
/// pretty-printed as `mcp-tool-macros/tests/expand.rs` does.
fn main() {
    for path in std::env::args().skip(1) {
        let file: syn::File = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut out = String::new();
        for item in file.items {
            let syn::Item::Fn(mut f) = item else { continue };
            let Some(pos) = f.attrs.iter().position(|a| a.path().is_ident("mcp_tool") || a.path().is_ident("mcp_flow")) else { continue };
            let attr = f.attrs.remove(pos);
            let flow = attr.path().is_ident("mcp_flow");
            let args = match attr.meta { syn::Meta::List(l) => l.tokens, _ => Default::default() };
            let expanded = if flow {
                pipeline::expand_flow(args, f.to_token_stream())
            } else {
                pipeline::expand_tool(args, f.to_token_stream())
            };
            out.push_str(&prettyplease::unparse(&syn::parse2(expanded).unwrap()));
        }
        println!("{path} {}", out.lines().count());
    }
}
EOF
} >"$counter/src/main.rs"
(cd "$counter" && cargo build -q --offline 2>"$tmp/cargo.log") || { cat "$tmp/cargo.log" >&2; exit 1; }
count="$CARGO_TARGET_DIR/debug/mcp-expanded-lines"
echo "lines_total $("$count" "$crate/src/lib.rs" | awk '{ print $2 }')"
for f in "$ws"/mcp-tool-macros/tests/expand/*.rs; do
    case $f in *.expanded.rs) continue ;; esac
    echo "lines_$(basename "$f" .rs) $("$count" "$f" | awk '{ print $2 }')"
done
