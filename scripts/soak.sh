#!/usr/bin/env bash
# Soak test (not part of CI): `serve` (release build) over loopback Streamable HTTP under
# mixed multi-round calls of every example tool (plus tampered states), for
# SOAK_SECONDS (default 600), sampling the server's RSS; fails unless RSS stays flat:
# the peak after SOAK_WARMUP seconds (default 120) is less than SOAK_MAX_GROWTH_PCT
# (default 5) percent above the RSS at the end of the warm-up, and every call ends as
# expected. Bounded in time (the duration) and in count (SOAK_MAX_CALLS, default 2,000,000).
# If serve exits by itself, its status and the end of its log are printed (SOAK_KEEP_LOG=FILE
# keeps the whole log of a failed run).
#
#   scripts/soak.sh                      # 10 minutes
#   SOAK_SECONDS=60 SOAK_WARMUP=20 scripts/soak.sh   # a quick look
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${SOAK_SECONDS:-600}
warmup=${SOAK_WARMUP:-120}
concurrency=${SOAK_CONCURRENCY:-4}
pause_ms=${SOAK_PAUSE_MS:-5}
max_calls=${SOAK_MAX_CALLS:-2000000}
max_growth=${SOAK_MAX_GROWTH_PCT:-5}

cargo build --release -q -p mcp-tool-examples --bin serve --bin soak
bin="${CARGO_TARGET_DIR:-target}/release"

MCP_TOOL_STATE_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export MCP_TOOL_STATE_KEY
log=$(mktemp)
RUST_LOG=${RUST_LOG:-warn} "$bin/serve" --http 127.0.0.1:0 2>"$log" &
pid=$!
cleanup() {
    status=$?
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    else
        # serve ended by itself: that is a failure whatever the driver said.
        wait "$pid" 2>/dev/null && code=0 || code=$?
        echo "serve (pid $pid) exited on its own with status $code; the last lines of its log:" >&2
        tail -n 40 "$log" >&2
        status=1
    fi
    if [ "$status" -ne 0 ] && [ -n "${SOAK_KEEP_LOG:-}" ]; then
        cp "$log" "$SOAK_KEEP_LOG"
    fi
    rm -f "$log"
    exit "$status"
}
trap cleanup EXIT

url=""
for _ in $(seq 1 200); do
    url=$(sed -n 's|^listening on \(http://[^ ]*/mcp\)$|\1|p' "$log" | head -n 1)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "serve did not start" >&2; cat "$log" >&2; exit 1; }
echo "serve (pid $pid) at $url; soaking for ${seconds}s (warm-up ${warmup}s, ${concurrency} clients)"

timeout $((seconds + 120)) "$bin/soak" --url "$url" --pid "$pid" --duration "$seconds" \
    --warmup "$warmup" --concurrency "$concurrency" --pause-ms "$pause_ms" \
    --max-calls "$max_calls" --max-growth-pct "$max_growth"
