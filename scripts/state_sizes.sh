#!/usr/bin/env bash
# Sealed requestState sizes, before (compression off) and after (compression on), printed
# from real runs (they do not depend on the machine):
#
# 1. the MRTR benchmark tool (`forecast`) written with #[mcp_tool], by hand, and on rmcp 3.11
#    (the FIGURE lines of tests/benches/mrtr.rs, which drives one call through each);
# 2. every example tool of `serve`, and `summarize_repo` on a generated repository of FILES
#    files (default 20,000) and on this repository (examples/src/bin/state_sizes.rs).
#
#   scripts/state_sizes.sh
#   FILES=50000 scripts/state_sizes.sh
#
# Needs cargo (release builds of the bench and of state_sizes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cargo bench -q -p mcp-tool-tests --bench mrtr -- --list 2>/dev/null | grep '^FIGURE ' >"$tmp/figures" || true
fig() { awk -v n="$1" -v r="$2" '$2 == n && $3 == r { for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "state_bytes") print kv[2] } }' "$tmp/figures"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "n/a" }'; }

echo "### The benchmark tool (\`forecast\`), state after each request, bytes"
echo
echo "| version | r0 before | r0 after | r1 before | r1 after | r0 after / rmcp |"
echo "|---|---|---|---|---|---|"
r0=$(fig rmcp r0); r1=$(fig rmcp r1)
for v in macro hand; do
    b0=$(fig "${v}_uncompressed" r0); a0=$(fig "$v" r0); b1=$(fig "${v}_uncompressed" r1); a1=$(fig "$v" r1)
    label=$v; [ "$v" = macro ] && label="(a) #[mcp_tool]"; [ "$v" = hand ] && label="(b) hand-written"
    echo "| $label, HMAC | $b0 | $a0 | $b1 | $a1 | $(ratio "$a0" "$r0") |"
done
a0=$(fig macro_aes-256-gcm r0); a1=$(fig macro_aes-256-gcm r1)
echo "| (a) #[mcp_tool], AES-256-GCM (never compressed) | $a0 | $a0 | $a1 | $a1 | $(ratio "$a0" "$r0") |"
echo "| (c) rmcp 3.11 \`RequestStateCodec\` | $r0 | $r0 | $r1 | $r1 | 1.00× |"
echo
echo "### Example tools; \`summarize_repo\` on ${FILES:-20000} generated files and on this repository"
echo
cargo run --release -q -p mcp-tool-examples --bin state_sizes -- --files "${FILES:-20000}" --repo .
