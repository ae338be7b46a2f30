#!/usr/bin/env bash
# Instructions per request of `get_weather`'s round 1 and round 2 over Streamable HTTP, of
# `server/discover` (scripts/wrk/discover.lua: no tool, no state, the same server), of the
# floor every request pays (METHOD=ping scripts/wrk/discover.lua: a removed method refused,
# -32601), of the bare axum ceiling (tests/examples/bare_axum.rs) and of the same two rounds
# served by hand on bare axum without the framework (`hand` r1 and r2:
# tests/examples/hand_weather.rs, the job a round must do and nothing more), under
# `valgrind --tool=callgrind`:
# each server runs under callgrind, is warmed up, its counters are zeroed
# (`callgrind_control -z`), wrk (one connection, scripts/wrk/get_weather.lua) sends requests
# for SECONDS_EACH seconds, the counters are dumped (`callgrind_control -d`), and the
# instructions collected are divided by the requests wrk counted. The whole process is
# counted (transport, runtime, idle polling), as the wrk runs of scripts/throughput.sh see
# it. Exact and repeatable to ~1 %, unlike wall time on a shared machine. The last column is
# the part spent in SHA-256's block function (the seal's HMAC and the arguments' digest):
# valgrind hides the CPU's SHA extensions, so here it is the portable code's count; natively
# the sha2 crate uses the extensions where the CPU has them, and the same blocks cost less
# (scripts/throughput.sh measures the native run). The column after it is the code a
# request runs (scripts/code_footprint.py: 64-byte lines of machine code where at least one
# instruction per request runs), in KiB: most of a request's code runs once, so beyond the
# first-level instruction cache it is fetched again on every request, a cost instructions
# alone do not show.
#
#   scripts/callgrind_weather.sh                 # 8 s per measurement
#   CACHE=1 scripts/callgrind_weather.sh         # and simulated cache misses per request
#
# CACHE=1 adds callgrind's cache simulation (32 KiB 8-way first-level instruction and data
# caches, 1 MiB 16-way last level, 64-byte lines) and two columns: first-level instruction
# misses and first-level data misses (reads + writes) per request. Deterministic like the
# instruction count; it shows what instructions do not (data touched once per request:
# futures moved into fresh memory, large allocations, structures copied), and slows the
# run about twice.
#   KEEP=/tmp/cg scripts/callgrind_weather.sh    # keep the profiles (callgrind_annotate them)
#   ROWS="r1 r2" scripts/callgrind_weather.sh     # only these rows (default: all of them)
#
# Needs cargo, valgrind, wrk, curl, python3. Loopback only; the servers it starts are stopped on exit.
# SKIP_BUILD=1 uses the release binaries already built (no cargo build first).
# PROFILE=production: every server from that cargo profile instead of `release` (weather_lib.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/weather_lib.sh
seconds=${SECONDS_EACH:-8}
if [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --profile "$profile" -q -p mcp-tool-tests --example bare_axum --example hand_weather
    cargo build --profile "$profile" -q -p mcp-tool-tests --bin example_serve
fi
bin="${CARGO_TARGET_DIR:-target}/$profile"
scratch_with_cleanup
keep=${KEEP:-$tmp}
mkdir -p "$keep"

# measure NAME ROUND CMD...: starts CMD under callgrind, prints instructions per request
measure() {
    local name=$1 round=$2; shift 2
    local out="$keep/callgrind.$name"
    rm -f "$out"*
    local cache=()
    [ -z "${CACHE:-}" ] || cache=(--cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64)
    RUST_LOG=error valgrind --tool=callgrind "${cache[@]}" --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$out" "$@" 2>"$tmp/$name.log" &
    server_pid=$!
    local url
    url=$(wait_url "$tmp/$name.log" 600 0.1) || { cat "$tmp/$name.log" >&2; return 1; }
    local state=""
    if [ "$round" = 2 ] || [ "$round" = hand2 ]; then
        state=$(round1_state "$url")
    fi
    # warm up, then count from zero
    # `discover` is a server/discover request (no tool, no state): the transport and dispatch
    # `floor`: a request refused after the transport and the dispatch (-32601), nothing more
    local script=scripts/wrk/get_weather.lua method=server/discover
    [ "$round" = discover ] && script=scripts/wrk/discover.lua
    [ "$round" = floor ] && script=scripts/wrk/discover.lua method=ping
    # the hand-written server answers get_weather's rounds as `serve` does
    case $round in hand1) round=1 ;; hand2) round=2 ;; esac
    METHOD=$method ROUND=$round STATE=$state wrk -t 1 -c 1 -d 2s -s "$script" "$url" >/dev/null
    callgrind_control -z "$server_pid" >/dev/null 2>&1
    local line
    line=$(METHOD=$method ROUND=$round STATE=$state wrk -t 1 -c 1 -d "${seconds}s" -s "$script" "$url" | grep '^RESULT ')
    callgrind_control -d "$server_pid" >/dev/null 2>&1
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
    local req errs ir
    req=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")
    errs=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$line")
    [ "$errs" = 0 ] || { echo "$name: $line" >&2; return 1; }
    # the dump made by callgrind_control -d: the largest-numbered part file
    local part
    part=$(ls "$out".* 2>/dev/null | sort -t. -k3 -n | tail -n 1)
    ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$part" | head -n 1)
    # SHA-256's block function, inclusive (valgrind hides the CPU's SHA extensions, so the
    # sha2 crate runs its portable code here; natively it uses them where the CPU has them)
    local sha
    sha=$(callgrind_annotate --inclusive=yes "$part" 2>/dev/null |
        awk '/sha2::sha256::compress256 / { gsub(",", "", $1); print $1; exit }')
    local code
    code=$(python3 scripts/code_footprint.py "$part" "$req")
    # with CACHE=1, the summary line also holds the cache events (Ir Dr Dw I1mr D1mr D1mw ...)
    local i1=0 d1=0
    if [ -n "${CACHE:-}" ]; then
        read -r i1 d1 < <(sed -n 's/^summary: *//p; s/^totals: *//p' "$part" | head -n 1 |
            awk '{ print $4, $5 + $6 }')
    fi
    echo "$name $req $ir ${sha:-0} $code $i1 $d1"
}
if [ -n "${CACHE:-}" ]; then
    echo "| request | requests | instructions per request | of which SHA-256 blocks (portable code) | code run per request (KiB) | first-level instruction misses per request | first-level data misses per request |"
    echo "|---|---|---|---|---|---|---|"
else
    echo "| request | requests | instructions per request | of which SHA-256 blocks (portable code) | code run per request (KiB) |"
    echo "|---|---|---|---|---|"
fi
for spec in "bare bare $bin/examples/bare_axum 127.0.0.1:0" \
    "r1 1 $bin/example_serve --http 127.0.0.1:0 --state-ttl 3600" \
    "r2 2 $bin/example_serve --http 127.0.0.1:0 --state-ttl 3600" \
    "hand-r1 hand1 $bin/examples/hand_weather 127.0.0.1:0" \
    "hand-r2 hand2 $bin/examples/hand_weather 127.0.0.1:0" \
    "discover discover $bin/example_serve --http 127.0.0.1:0 --state-ttl 3600" \
    "floor floor $bin/example_serve --http 127.0.0.1:0 --state-ttl 3600"; do
    read -r name round cmd <<<"$spec"
    [ -z "${ROWS:-}" ] || [[ " $ROWS " == *" $name "* ]] || continue
    # shellcheck disable=SC2086
    set -- $(measure "$name" "$round" $cmd)
    row="| $1 | $2 | $(awk -v i="$3" -v n="$2" 'BEGIN { printf "%.0f", i / n }') | $(awk -v i="$4" -v n="$2" 'BEGIN { printf "%.0f", i / n }') | $5 |"
    if [ -n "${CACHE:-}" ]; then
        row="$row $(awk -v i="$6" -v n="$2" 'BEGIN { printf "%.0f", i / n }') | $(awk -v i="$7" -v n="$2" 'BEGIN { printf "%.0f", i / n }') |"
    fi
    echo "$row"
done
