#!/usr/bin/env bash
# Where `get_weather`'s wall time goes, round by round, natively (not under valgrind): the
# server (tests/src/bin/example_serve.rs) built with frame pointers into its own target
# directory, pinned to CPU 0, driven by wrk on CPU 1 (scripts/wrk/get_weather.lua, as
# scripts/throughput.sh does), sampled by `perf record -g` (cpu-clock, frame pointers) for
# SECONDS_EACH seconds per round. scripts/wall_profile.py prints the kernel / user-space
# split per request and the inclusive µs per request of the handler, the dispatch, the round
# engine and hyper's head reading, each with its largest direct callees.
#
#   scripts/wall_profile.sh                  # 6 s per round
#   SECONDS_EACH=10 scripts/wall_profile.sh
#   MOVES=1 scripts/wall_profile.sh          # then the bytes memmove copies per request
#
# Needs cargo, perf (Debian: linux-perf), wrk, curl, python3; root or
# kernel.perf_event_paranoid ≤ 1 for kernel samples. Loopback only; the server is stopped
# on exit. SKIP_BUILD=1 uses the frame-pointer build already made (target/frame-pointers).
# Sampling with call graphs slows the server: read the figures as shares.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/weather_lib.sh
seconds=${SECONDS_EACH:-6}
hz=2999
target=${FP_TARGET_DIR:-target/frame-pointers}
if [ -z "${SKIP_BUILD:-}" ]; then
    CARGO_TARGET_DIR="$target" RUSTFLAGS="-C force-frame-pointers=yes" \
        cargo build --release -q -p mcp-tool-tests --bin example_serve
fi
for tool in perf wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "wall_profile.sh needs $tool" >&2; exit 1; }
done
scratch_with_cleanup

RUST_LOG=error "$target/release/example_serve" --http 127.0.0.1:0 --state-ttl 3600 2>"$tmp/serve.log" &
server_pid=$!
url=$(wait_url "$tmp/serve.log" 200 0.05) || { cat "$tmp/serve.log" >&2; exit 1; }
taskset -a -p -c 0 "$server_pid" >/dev/null
state=$(round1_state "$url")
[ -n "$state" ] || { echo "no requestState from round 1" >&2; exit 1; }

for round in 1 2; do
    # warm up, then sample while wrk runs
    ROUND=$round STATE=$state taskset -c 1 wrk -t 16 -c 16 -d 2s -s scripts/wrk/get_weather.lua "$url" >/dev/null
    # wrk runs one second longer than perf samples, perf starting half a second in: the
    # window sampled is all load, and its requests are wrk's rate times its length
    ROUND=$round STATE=$state taskset -c 1 wrk -t 16 -c 16 -d "$((seconds + 1))s" \
        -s scripts/wrk/get_weather.lua "$url" >"$tmp/wrk.$round" &
    wpid=$!
    sleep 0.5
    perf record -q -e cpu-clock -F "$hz" -g -p "$server_pid" -o "$tmp/perf.$round" -- sleep "$seconds" \
        >/dev/null 2>&1 || true
    wait "$wpid"
    line=$(grep '^RESULT ' "$tmp/wrk.$round")
    errs=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$line")
    [ "$errs" = 0 ] || { echo "round $round: $line" >&2; exit 1; }
    requests=$(awk -v q="$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")" \
        -v w="$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")" -v s="$seconds" \
        'BEGIN { printf "%d", q * s / w }')
    perf script -i "$tmp/perf.$round" -F ip,sym >"$tmp/stacks.$round" 2>/dev/null
    echo
    echo "get_weather round $round (perf -g, ${seconds} s, 16 connections):"
    python3 scripts/wall_profile.py "$tmp/stacks.$round" "$requests" "$seconds" "$hz"
done

# MOVES=1: the bytes libc's memmove copies per request (futures and values moved by value),
# by the function that called it: a uprobe on memmove with its length (third argument, rdx),
# recorded with call graphs for one second of one wrk connection per round.
[ -n "${MOVES:-}" ] || exit 0
libc=$(ldd "$target/release/example_serve" | awk '/libc\.so/ { print $3 }')
memmove=$(nm -D "$libc" | awk '/ (T|i) __memmove_avx512_unaligned_erms$/ { print $3 }')
[ -n "$memmove" ] || memmove=memmove
perf probe -q -d 'probe_libc:mcp_moves' 2>/dev/null || true
perf probe -q -x "$libc" -a "mcp_moves=$memmove len=%dx:u64" >/dev/null
for round in 1 2; do
    perf record -q -e probe_libc:mcp_moves -g -p "$server_pid" -o "$tmp/moves.$round" -- sleep 1.5 \
        >/dev/null 2>&1 &
    ppid=$!
    sleep 0.3
    line=$(ROUND=$round STATE=$state taskset -c 1 wrk -t 1 -c 1 -d 1s \
        -s scripts/wrk/get_weather.lua "$url" | grep '^RESULT ')
    wait "$ppid" || true
    echo
    echo "get_weather round $round, memmove ($memmove) per request, by caller:"
    perf script -i "$tmp/moves.$round" -F trace,ip,sym 2>/dev/null |
        python3 scripts/wall_profile.py --moves "$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")"
done
perf probe -q -d 'probe_libc:mcp_moves' >/dev/null 2>&1 || true
