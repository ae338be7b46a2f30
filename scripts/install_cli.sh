#!/usr/bin/env bash
# `cargo install --path mcp-tool-cli` into a temporary root, then the installed binary on its
# own: `mcp-tool --help`, and one real call against the examples' `serve` over stdio
# (the tool's argument asked field by field from its inputSchema, the elicitation answered at
# the prompt, both from standard input).
#
#   scripts/install_cli.sh            # --debug: shares the workspace's dev build (CI)
#   scripts/install_cli.sh --release  # what a user gets from `cargo install --path mcp-tool-cli`
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

profile=(--debug)
if [ "${1:-}" = "--release" ]; then
    profile=()
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --path uses the workspace's target directory; --locked: the workspace's Cargo.lock.
cargo install --locked "${profile[@]}" --path mcp-tool-cli --root "$tmp/root"
client="$tmp/root/bin/mcp-tool"
test -x "$client"

"$client" --help >"$tmp/help.txt"
for flag in --url --stdio --ca-cert --call --args --retries; do
    grep -q -- "$flag" "$tmp/help.txt" || { echo "--help does not mention $flag" >&2; cat "$tmp/help.txt" >&2; exit 1; }
done
"$client" --version

cargo build -q -p mcp-tool-examples --bin serve
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$(pwd)/$target_dir" ;; esac
serve="$target_dir/debug/serve"

# get_weather: `location` asked from the inputSchema, then the GitHub login form (accept, name).
printf 'Paris\na\nmona\n' | "$client" --stdio "'$serve' --db '$tmp/notes.sqlite3'" \
    --call get_weather >"$tmp/call.txt" 2>"$tmp/call.err" \
    || { echo "the call failed" >&2; cat "$tmp/call.txt" "$tmp/call.err" >&2; exit 1; }
grep -q "Weather in Paris for mona" "$tmp/call.txt" \
    || { echo "unexpected answer" >&2; cat "$tmp/call.txt" >&2; exit 1; }
echo "installed mcp-tool: --help and a get_weather call over stdio passed"
