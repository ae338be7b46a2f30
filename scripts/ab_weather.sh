#!/usr/bin/env bash
# Two builds of `serve` (`example_serve` of mcp-tool-tests) side by side under the same wrk load:
# get_weather's round 1 and round 2, the builds alternated RUNS times (SECONDS_EACH seconds
# each, 16 connections, both servers on CPU 0 and wrk on CPU 1, as scripts/throughput.sh
# runs them). Alternating cancels most of a shared machine's drift, which moves a single
# server by ±15 % between runs: what one change does to the wall time shows here when
# comparing two throughput.sh runs cannot resolve it. Prints req/s per run, the medians and
# new / base.
#
#   BASE=/work/base-target scripts/ab_weather.sh      # BASE: a target dir holding release/example_serve
#   NEW=target RUNS=5 SECONDS_EACH=10 scripts/ab_weather.sh
#
# BASE is required (build the other commit with its own CARGO_TARGET_DIR, e.g. in a git
# worktree: `cargo build --release -p mcp-tool-tests --bin example_serve`); NEW defaults to
# ${CARGO_TARGET_DIR:-target}, built in release first unless SKIP_BUILD=1 or NEW is given.
# Needs curl and taskset; installs wrk (Debian package) when missing. Loopback only; the
# servers are stopped on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/weather_lib.sh
base=${BASE:?set BASE to the target dir of the build to compare against}
if [ -z "${NEW:-}" ] && [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --release -q -p mcp-tool-tests --bin example_serve
fi
new=${NEW:-${CARGO_TARGET_DIR:-target}}
if ! command -v wrk >/dev/null 2>&1; then
    echo "installing wrk (Debian package)"
    if [ "$(id -u)" = 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq wrk >/dev/null
fi
runs=${RUNS:-3}
seconds=${SECONDS_EACH:-6}
for d in "$base" "$new"; do
    [ -x "$d/release/example_serve" ] || { echo "no $d/release/example_serve: build it first" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

declare -A url
for n in base new; do
    dir=$base
    [ "$n" = new ] && dir=$new
    RUST_LOG=error taskset -c 0 "$dir/release/example_serve" --http 127.0.0.1:0 --state-ttl 3600 \
        2>"$tmp/$n.log" &
    pids+=($!)
    url[$n]=$(wait_url "$tmp/$n.log" 600 0.1) || { cat "$tmp/$n.log" >&2; exit 1; }
done

: >"$tmp/results"
for round in 1 2; do
    for r in $(seq 1 "$runs"); do
        for n in base new; do
            state=""
            [ "$round" = 2 ] && state=$(round1_state "${url[$n]}")
            line=$(METHOD=server/discover ROUND=$round STATE=$state taskset -c 1 wrk -t 16 -c 16 \
                -d "${seconds}s" -s scripts/wrk/get_weather.lua "${url[$n]}" | grep '^RESULT ')
            requests=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")
            secs=$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")
            rps=$(awk -v q="$requests" -v s="$secs" 'BEGIN { printf "%.1f", q / s }')
            echo "round $round run $r $n: $rps req/s"
            echo "$round $n $rps" >>"$tmp/results"
        done
    done
done

echo
echo "| round | base req/s (median) | new req/s (median) | new / base |"
echo "|---|---|---|---|"
for round in 1 2; do
    b=$(awk -v r="$round" '$1 == r && $2 == "base" { print $3 }' "$tmp/results" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    n=$(awk -v r="$round" '$1 == r && $2 == "new" { print $3 }' "$tmp/results" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    echo "| $round | $b | $n | $(awk -v a="$n" -v b="$b" 'BEGIN { printf "%.2f×", a / b }') |"
done
