#!/usr/bin/env bash
# Per-round CPU cost of telemetry (issue 22): instructions per request under callgrind of
# the MRTR benchmark tool (`bench_tool rounds --impl macro`), with no subscriber (telemetry
# off: the spans are disabled, no ids are made, no trace context is sealed) and with a
# subscriber that records every span of the runtime as OpenTelemetry spans, all sampled
# (MCP_TOOL_BENCH_TELEMETRY=1: tracing-opentelemetry over an opentelemetry_sdk tracer
# provider, nothing exported). Method as scripts/callgrind.sh: (Ir(N) - Ir(0)) / N.
#
#   scripts/telemetry_cost.sh        # N = 200
#
# Needs cargo and valgrind (installed as in scripts/callgrind.sh when missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${N:-200}
if ! command -v valgrind >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq valgrind >/dev/null
fi
cargo build --release -q -p mcp-tool-tests --bin bench_tool
bin="${CARGO_TARGET_DIR:-target}/release/bench_tool"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" >/dev/null 2>"$tmp/vg.log"
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/vg.log" | tail -n 1
}
per() {
    local full base
    full=$(instructions "$bin" rounds --impl macro --round "$1" --calls "$n")
    base=$(instructions "$bin" rounds --impl macro --round "$1" --calls 0)
    awk -v f="$full" -v b="$base" -v n="$n" 'BEGIN { printf "%.0f", (f - b) / n }'
}
echo "| round | telemetry off, instructions | on (spans recorded), instructions | on/off |"
echo "|---|---|---|---|"
for r in 0 1 2; do
    off=$(env -u MCP_TOOL_BENCH_TELEMETRY bash -c "$(declare -f instructions per); bin=$bin n=$n tmp=$tmp; per $r")
    on=$(MCP_TOOL_BENCH_TELEMETRY=1 bash -c "$(declare -f instructions per); bin=$bin n=$n tmp=$tmp; per $r")
    echo "| r$r | $off | $on | $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f×", a / b }') |"
done
echo
echo "(instructions per request under callgrind, N = $n, minus a run with none)"
