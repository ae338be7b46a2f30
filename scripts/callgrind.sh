#!/usr/bin/env bash
# Per-round CPU cost of the MRTR benchmark tool, macro vs hand-written, as instruction counts
# under `valgrind --tool=callgrind` (repeatable on a shared machine, unlike wall time).
#
# For each version (macro, hand) and round (r0: asks the login; r1: opens the state, asks the
# model; r2: opens, completes), `bench_tool rounds` handles that round's request N times in
# process (`Server::handle_text`: JSON text in, JSON bytes out, sealing included); the same run
# with 0 requests is subtracted, so start-up and the one call that prepares the requests drop
# out: instructions per request = (Ir(N) - Ir(0)) / N.
#
#   scripts/callgrind.sh          # N = 300
#   N=1000 scripts/callgrind.sh
#
# Then seal + open of one payload (the `seal` group's small / 1 KiB / 16 KiB payloads), our
# HMAC `Sealer` (compression off: the codec alone) vs rmcp 3.11's `RequestStateCodec`
# (example seal_cost), the same way: instructions per seal+open.
#
# Last, the parse of `get_weather`'s round bodies (example parse_cost): as a `Value` tree and
# dropped (what `serve` and the bare ceiling do) vs into borrowed typed structs (what a typed
# request path would hold): instructions per parse.
#
# Needs cargo; installs valgrind (Debian package) when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${N:-300}

if ! command -v valgrind >/dev/null 2>&1; then
    echo "installing valgrind (Debian package)"
    if [ "$(id -u)" = 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq valgrind >/dev/null
fi
cargo build --release -q -p mcp-tool-tests --bin bench_tool --example seal_cost --example parse_cost
bin="${CARGO_TARGET_DIR:-target}/release/bench_tool"
seal_bin="${CARGO_TARGET_DIR:-target}/release/examples/seal_cost"
parse_bin="${CARGO_TARGET_DIR:-target}/release/examples/parse_cost"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# instructions CMD... -> total instructions of one run of CMD under callgrind
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" >/dev/null 2>"$tmp/vg.log"
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/vg.log" | tail -n 1
}
# per_call CMD...: CMD takes the number of calls last; instructions per call, a run with none
# subtracted
per_call() {
    local full base
    full=$(instructions "$@" "$n")
    base=$(instructions "$@" 0)
    awk -v f="$full" -v b="$base" -v n="$n" 'BEGIN { printf "%.0f", (f - b) / n }'
}
per() { per_call "$bin" rounds --impl "$1" --round "$2" --calls; }

echo "| round | (a) macro, instructions | (b) hand-written, instructions | macro/hand |"
echo "|---|---|---|---|"
tm=0; th=0
for r in 0 1 2; do
    m=$(per macro "$r"); h=$(per hand "$r")
    tm=$((tm + m)); th=$((th + h))
    echo "| r$r | $m | $h | $(awk -v a="$m" -v b="$h" 'BEGIN { printf "%.3f×", a / b }') |"
done
echo "| whole call | $tm | $th | $(awk -v a="$tm" -v b="$th" 'BEGIN { printf "%.3f×", a / b }') |"
echo
echo "(instructions per request under callgrind, N = $n requests per measurement, minus a run with none)"

echo
echo "| payload | ours (HMAC, no compression), instructions per seal+open | rmcp 3.11 codec | ours/rmcp |"
echo "|---|---|---|---|"
for size in small 1k 16k; do
    o=$(per_call "$seal_bin" ours "$size"); r=$(per_call "$seal_bin" rmcp "$size")
    echo "| $size | $o | $r | $(awk -v a="$o" -v b="$r" 'BEGIN { printf "%.3f×", a / b }') |"
done

echo
echo "| get_weather body | as a Value tree (serve today, and the bare ceiling), instructions per parse+drop | typed, borrowed | typed/tree |"
echo "|---|---|---|---|"
for round in r1 r2; do
    v=$(per_call "$parse_bin" value "$round"); t=$(per_call "$parse_bin" typed "$round")
    echo "| $round | $v | $t | $(awk -v a="$t" -v b="$v" 'BEGIN { printf "%.3f×", a / b }') |"
done
