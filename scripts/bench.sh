#!/usr/bin/env bash
# Run the MRTR benchmarks (tests/benches/mrtr.rs) and print a compact table:
# per-round server time for the same 3-round tool written with #[mcp_tool] (macro),
# by hand against the Tool trait (hand) and on rmcp 3.11's server side (rmcp),
# requestState sizes, seal/open cost by protection, and lines of author code.
#
#   scripts/bench.sh                 # measure (a few minutes on 2 cores), then the table
#   scripts/bench.sh --table-only    # the table from the last run's results
#   MEASURE=5 WARMUP=2 scripts/bench.sh   # longer measurement per benchmark (seconds)
#   scripts/bench.sh -- round_pure   # extra arguments after -- go to criterion (a filter)
#
# Needs cargo and jq. Results: target/criterion (criterion's estimates),
# target/bench/figures.txt (sizes), target/bench/table.md (the table).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=$TARGET/bench
export CRITERION_HOME=$TARGET/criterion
mkdir -p "$OUT"

table_only=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --table-only) table_only=1 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ "$table_only" = 0 ]; then
  cargo bench -p mcp-tool-tests --bench mrtr -- \
    --measurement-time "${MEASURE:-3}" --warm-up-time "${WARMUP:-1}" --noplot \
    ${extra[@]+"${extra[@]}"} | tee "$OUT/run.log"
  grep '^FIGURE ' "$OUT/run.log" > "$OUT/figures.txt"
fi

# --- helpers ---------------------------------------------------------------------------
# est GROUP ID -> median point estimate in ns (robust to a shared, noisy machine) ("" when absent)
est() {
  local f="$CRITERION_HOME/$1/$2/new/estimates.json"
  [ -f "$f" ] && jq -r '.median.point_estimate' "$f" || echo ""
}
# fmt NS -> human time
fmt() {
  [ -z "$1" ] && { echo "n/a"; return; }
  awk -v n="$1" 'BEGIN { if (n >= 1e6) printf "%.2f ms", n/1e6; else if (n >= 1e3) printf "%.2f µs", n/1e3; else printf "%.0f ns", n }'
}
# ratio A B -> A/B
ratio() {
  { [ -z "$1" ] || [ -z "$2" ]; } && { echo "n/a"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a/b }'
}
sum() { awk 'BEGIN { s = 0; bad = 0; for (i = 1; i < ARGC; i++) { if (ARGV[i] == "") bad = 1; s += ARGV[i] } if (bad) print ""; else printf "%.1f", s }' "$@"; }
# fig NAME ROUND FIELD -> value from figures.txt
fig() {
  [ -f "$OUT/figures.txt" ] || { echo ""; return; }
  awk -v n="$1" -v r="$2" -v k="$3" '$2 == n && $3 == r { for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$OUT/figures.txt"
}
sealfig() {
  [ -f "$OUT/figures.txt" ] || { echo ""; return; }
  awk -v n="$1" -v k="$2" '$2 == "seal" && $3 == n { for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$OUT/figures.txt"
}
# loc FILE -> non-blank, non-comment lines between the author-code markers
loc() {
  awk '/--- author code begin ---/ { on = 1; next } /--- author code end ---/ { on = 0 }
       on && !/^[[:space:]]*$/ && !/^[[:space:]]*\/\// { n++ } END { print n + 0 }' "$1"
}
bytes_ratio() {
  { [ -z "$1" ] || [ -z "$2" ] || [ "$2" = 0 ]; } && { echo "n/a"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a/b }'
}

{
echo "### Per-round server time, 3-round tool (elicitation, sampling, final)"
echo
echo "In process, JSON text in -> JSON text out, sealing included (\`Server::handle_text\`):"
echo
echo "| round | (a) macro | (b) hand-written | macro/hand |"
echo "|---|---|---|---|"
tm=(); th=()
for r in 0 1 2; do
  m=$(est round_pure "macro_r$r"); h=$(est round_pure "hand_r$r")
  tm+=("$m"); th+=("$h")
  echo "| r$r | $(fmt "$m") | $(fmt "$h") | $(ratio "$m" "$h") |"
done
m=$(sum "${tm[@]}"); h=$(sum "${th[@]}")
echo "| whole call | $(fmt "$m") | $(fmt "$h") | $(ratio "$m" "$h") |"
echo
echo "Over each SDK's line transport on an in-memory duplex stream (request line written -> response line read):"
echo
echo "| round | (a) macro, ours | (c) rmcp 3.11 | macro/rmcp |"
echo "|---|---|---|---|"
tm=(); tr=()
for r in 0 1 2; do
  m=$(est round_duplex "macro_r$r"); p=$(est round_duplex "rmcp_r$r")
  tm+=("$m"); tr+=("$p")
  echo "| r$r | $(fmt "$m") | $(fmt "$p") | $(ratio "$m" "$p") |"
done
m=$(sum "${tm[@]}"); p=$(sum "${tr[@]}")
echo "| whole call | $(fmt "$m") | $(fmt "$p") | $(ratio "$m" "$p") |"
echo
echo "### Sealed \`requestState\` and response size per round (bytes)"
echo
echo "| round | state (a) macro | state (b) hand | state (c) rmcp | macro/hand | macro/rmcp | response (a) / (b) / (c) |"
echo "|---|---|---|---|---|---|---|"
for r in 0 1; do
  a=$(fig macro "r$r" state_bytes); b=$(fig hand "r$r" state_bytes); c=$(fig rmcp "r$r" state_bytes)
  ra=$(fig macro "r$r" response_bytes); rb=$(fig hand "r$r" response_bytes); rc=$(fig rmcp "r$r" response_bytes)
  echo "| r$r | $a | $b | $c | $(bytes_ratio "$a" "$b") | $(bytes_ratio "$a" "$c") | $ra / $rb / $rc |"
done
ra=$(fig macro r2 response_bytes); rb=$(fig hand r2 response_bytes); rc=$(fig rmcp r2 response_bytes)
echo "| r2 (final) | – | – | – | | | $ra / $rb / $rc |"
a0=$(fig macro_aes-256-gcm r0 state_bytes); a1=$(fig macro_aes-256-gcm r1 state_bytes)
c0=$(fig macro_chacha20-poly1305 r0 state_bytes); c1=$(fig macro_chacha20-poly1305 r1 state_bytes)
echo
echo "(a) with AEAD: r0/r1 state = $a0/$a1 B (AES-256-GCM), $c0/$c1 B (ChaCha20-Poly1305)."
echo
echo "### Seal and open, by protection and payload size"
echo
echo "| payload (JSON bytes) | protection | token bytes | seal | open | seal+open | vs rmcp HMAC seal+open |"
echo "|---|---|---|---|---|---|---|"
for size in small 1k 16k; do
  rs=$(est seal "rmcp_hmac_seal_$size"); ro=$(est seal "rmcp_hmac_open_$size"); rso=$(sum "$rs" "$ro")
  for p in hmac-sha256 aes-256-gcm chacha20-poly1305 rmcp_hmac; do
    if [ "$p" = rmcp_hmac ]; then s=$rs; o=$ro; else s=$(est seal "${p}_seal_$size"); o=$(est seal "${p}_open_$size"); fi
    so=$(sum "$s" "$o")
    label=$p; [ "$p" = rmcp_hmac ] && label="rmcp codec (HMAC)"
    echo "| $size ($(sealfig "${p}_$size" payload_json_bytes)) | $label | $(sealfig "${p}_$size" token_bytes) | $(fmt "$s") | $(fmt "$o") | $(fmt "$so") | $(ratio "$so" "$rso") |"
  done
done
echo
echo "### Lines of author code (non-blank, non-comment, between the markers)"
echo
la=$(loc tests/benches/mrtr/macro_tool.rs); lb=$(loc tests/benches/mrtr/hand_written.rs); lc=$(loc tests/benches/mrtr/rmcp_peer.rs)
echo "| (a) macro | (b) hand-written | (c) rmcp | macro/hand | macro/rmcp |"
echo "|---|---|---|---|---|"
echo "| $la | $lb | $lc | $(bytes_ratio "$la" "$lb") | $(bytes_ratio "$la" "$lc") |"
} | tee "$OUT/table.md"
