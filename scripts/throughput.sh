#!/usr/bin/env bash
# Side-by-side HTTP throughput of the MRTR benchmark tool (`forecast`: a form elicitation, a
# sampling request, a structured result; 3 requests per call) over loopback Streamable HTTP,
# at the same concurrency, in one run:
#
#   (a) macro  — `#[mcp_tool]`            (bench_tool serve --impl macro)
#   (b) hand   — hand-written `Tool`       (bench_tool serve --impl hand)
#   (c) rmcp   — rmcp 3.11's Streamable HTTP server, stateless mode (example rmcp_forecast_http)
#
# The load: `loadgen` (the project's Driver over HTTP, the fake host answering), CONCURRENCY
# clients running whole calls for SECONDS_EACH seconds, REPEAT times per server, the servers taking turns
# (a, b, c, a, b, c, ...) so that the machine's background load hits all of them alike.
# Prints one line per run and a table of medians (flows/s, p50, p99 of a whole call, and
# the server process's CPU time per call from /proc/PID/stat: the client shares the two
# cores, so flows/s measures client and server together, CPU per call the server alone).
#
#   scripts/throughput.sh                          # 16 clients, 10 s, 3 repeats
#   CONCURRENCY=32 SECONDS_EACH=20 REPEAT=5 scripts/throughput.sh
#
# Then the same servers again under `wrk` (C, a Lua script driving whole calls:
# scripts/wrk/forecast.lua) at the same concurrency, with each server pinned to CPU 0 and wrk
# to CPU 1 (`taskset`): a client that costs little and a core of its own for each side, so
# that flows/s measure the servers rather than our Rust client.
#
# Last, one round at a time of `get_weather` (SEP-2322's example, served by `serve`, built
# as `example_serve` of mcp-tool-tests from the same source file: round 1 asks the GitHub login, round 2 carries the answer and a real
# `requestState` made at the start by the same process, and completes) under wrk
# (scripts/wrk/get_weather.lua), beside the ceiling: `bare` (tests/examples/bare_axum.rs), an
# axum server that parses each JSON-RPC body into a `serde_json::Value` and answers a fixed
# result of round 1's size, doing no MCP work; and `bare2`, the same server fed round 2's
# request (larger: the answer and the requestState), round 2's ceiling. Same pinning, same
# connections. Prints req/s, p50, p99 and ours / bare for the bare server fed the same request
# (req/s, and p99 as a multiple of bare's) and for bare fed round 1's request, and ours / rmcp
# (rmcp's requests per second of whole `forecast` calls, the only tool its comparator serves).
# A row is the floor of `serve` (scripts/wrk/discover.lua with METHOD=ping: a request
# crossing the transport and the dispatch and refused, -32601; compared with `bare`): what
# every request pays before any MCP work. Two rows are the same rounds served by hand
# (tests/examples/hand_weather.rs: bare axum, the headers and body checked, the state sealed
# and opened with HMAC-SHA-256 and bound to the arguments, the answer read, no framework):
# the job a round must do, and nothing more; the last column is ours / hand-written.
#
#   SECTIONS=weather scripts/throughput.sh       # only that part (default: loadgen forecast weather)
#
# Needs cargo; installs wrk (Debian package) when missing. Everything runs on loopback;
# servers are stopped on exit.
# SKIP_BUILD=1 uses the release binaries already built (no cargo build first).
# PROFILE=production: every server from that cargo profile instead of `release` (weather_lib.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/weather_lib.sh

concurrency=${CONCURRENCY:-16}
seconds=${SECONDS_EACH:-10}
repeat=${REPEAT:-3}
sections=${SECTIONS:-loadgen forecast weather}
has() { [[ " $sections " == *" $1 "* ]]; }

if [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --profile "$profile" -q -p mcp-tool-tests --bin bench_tool --example rmcp_forecast_http \
    --example bare_axum --example hand_weather
    cargo build --profile "$profile" -q -p mcp-tool-examples --bin loadgen
    cargo build --profile "$profile" -q -p mcp-tool-tests --bin example_serve
fi
if ! command -v wrk >/dev/null 2>&1; then
    echo "installing wrk (Debian package)"
    if [ "$(id -u)" = 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq wrk >/dev/null
fi
bin="${CARGO_TARGET_DIR:-target}/$profile"

tmp=$(mktemp -d)
declare -A pid url
cleanup() {
    status=$?
    for k in "${!pid[@]}"; do kill "${pid[$k]}" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT INT TERM

start() { # start NAME CMD...: starts a server, waits for its `listening on URL` line
    # (the whole URL: a server's stderr is unbuffered, the line may be read half written)
    local name=$1; shift
    : >"$tmp/$name.log" # exists before the first look (the server's redirection may come later)
    "$@" 2>>"$tmp/$name.log" &
    pid[$name]=$!
    for _ in $(seq 1 200); do
        url[$name]=$(listening_url "$tmp/$name.log")
        [ -n "${url[$name]}" ] && return 0
        kill -0 "${pid[$name]}" 2>/dev/null || break
        sleep 0.05
    done
    echo "$name did not start:" >&2
    cat "$tmp/$name.log" >&2
    return 1
}

start macro env RUST_LOG=error "$bin/bench_tool" serve --impl macro
start hand env RUST_LOG=error "$bin/bench_tool" serve --impl hand
start rmcp env RUST_LOG=error "$bin/examples/rmcp_forecast_http" 127.0.0.1:0
echo "macro ${url[macro]}, hand ${url[hand]}, rmcp ${url[rmcp]}; $concurrency clients, ${seconds}s x $repeat each"

# cpu_ticks PID -> user + system CPU ticks the process used so far
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# user_ticks PID -> the user-space part of them (the rest is the kernel's: sockets, epoll)
user_ticks() { awk '{ print $14 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

names=(macro hand rmcp)
has loadgen && for r in $(seq 1 "$repeat"); do
    for n in "${names[@]}"; do
        before=$(cpu_ticks "${pid[$n]}")
        line=$("$bin/loadgen" --url "${url[$n]}" --tool forecast --args '{"city":"Oslo"}' \
            --rounds 3 --concurrency "$concurrency" --duration "$seconds" --report-every 0 \
            2>"$tmp/loadgen-$n.err" | grep '^RESULT ') || {
            echo "loadgen against $n failed:" >&2
            head -n 20 "$tmp/loadgen-$n.err" >&2
            exit 1
        }
        after=$(cpu_ticks "${pid[$n]}")
        completed=$(sed -n 's/.* completed=\([0-9]*\).*/\1/p' <<<"$line")
        cpu_us=$(awk -v t=$((after - before)) -v hz="$hz" -v c="$completed" 'BEGIN { printf "%.0f", t * 1e6 / hz / c }')
        echo "run $r $n: ${line#RESULT } server_cpu_us_per_flow=$cpu_us"
        echo "$n ${line#RESULT } server_cpu_us_per_flow=$cpu_us" >>"$tmp/results"
    done
done

# label NAME: the table's name for a server
label() {
    case $1 in
    macro) echo "(a) ours, #[mcp_tool]" ;;
    hand) echo "(b) ours, hand-written" ;;
    rmcp) echo "(c) rmcp 3.11, stateless Streamable HTTP" ;;
    esac
}
# ratio A B: A / B as "1.23×"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; }
# median NAME FIELD [FILE]: the median of FIELD over the runs of server NAME (default: the loadgen runs)
median() {
    awk -v n="$1" -v f="$2" '$1 == n { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }' \
        "${3:-$tmp/results}" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
loadgen_table() {
rmcp_fps=$(median rmcp flows_per_s)
macro_fps=$(median macro flows_per_s)
echo
echo "Medians of $repeat runs, $concurrency concurrent clients, ${seconds} s each, whole calls (3 requests):"
echo
rmcp_cpu=$(median rmcp server_cpu_us_per_flow)
echo "| server | flows/s | p50 | p99 | server CPU per call | flows/s vs rmcp | server CPU vs rmcp | flows/s vs macro |"
echo "|---|---|---|---|---|---|---|---|"
for n in "${names[@]}"; do
    fps=$(median "$n" flows_per_s)
    label=$(label "$n")
    cpu=$(median "$n" server_cpu_us_per_flow)
    echo "| $label | $fps | $(median "$n" p50_ms) ms | $(median "$n" p99_ms) ms | $cpu µs | $(ratio "$fps" "$rmcp_fps") | $(ratio "$cpu" "$rmcp_cpu") | $(ratio "$fps" "$macro_fps") |"
done
}
if has loadgen; then loadgen_table; fi

# --- the same servers under wrk (server on CPU 0, wrk on CPU 1) ------------------------------
for n in "${names[@]}"; do taskset -a -p -c 0 "${pid[$n]}" >/dev/null; done
: >"$tmp/wrk"
has forecast && for r in $(seq 1 "$repeat"); do
    for n in "${names[@]}"; do
        before=$(cpu_ticks "${pid[$n]}")
        line=$(taskset -c 1 wrk -t "$concurrency" -c "$concurrency" -d "${seconds}s" \
            -s scripts/wrk/forecast.lua "${url[$n]}" | grep '^RESULT ') || {
            echo "wrk against $n failed" >&2
            exit 1
        }
        after=$(cpu_ticks "${pid[$n]}")
        flows=$(sed -n 's/.* flows=\([0-9]*\).*/\1/p' <<<"$line")
        errs=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$line")
        secs=$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")
        if [ "$errs" != 0 ] || [ "$flows" = 0 ]; then
            echo "wrk against $n: $line" >&2
            exit 1
        fi
        fps=$(awk -v f="$flows" -v s="$secs" 'BEGIN { printf "%.1f", f / s }')
        cpu_us=$(awk -v t=$((after - before)) -v hz="$hz" -v c="$flows" 'BEGIN { printf "%.0f", t * 1e6 / hz / c }')
        echo "wrk run $r $n: ${line#RESULT } flows_per_s=$fps server_cpu_us_per_flow=$cpu_us"
        echo "$n ${line#RESULT } flows_per_s=$fps server_cpu_us_per_flow=$cpu_us" >>"$tmp/wrk"
    done
done
wmedian() { median "$1" "$2" "$tmp/wrk"; }
if has forecast; then
rmcp_fps=$(wmedian rmcp flows_per_s)
rmcp_cpu=$(wmedian rmcp server_cpu_us_per_flow)
echo
echo "wrk (scripts/wrk/forecast.lua), server on CPU 0, wrk on CPU 1, medians of $repeat runs, $concurrency connections, ${seconds} s each (latencies per request):"
echo
echo "| server | flows/s | p50 | p99 | server CPU per call | flows/s vs rmcp | server CPU vs rmcp |"
echo "|---|---|---|---|---|---|---|"
for n in "${names[@]}"; do
    fps=$(wmedian "$n" flows_per_s)
    cpu=$(wmedian "$n" server_cpu_us_per_flow)
    label=$(label "$n")
    echo "| $label | $fps | $(wmedian "$n" p50_us) µs | $(wmedian "$n" p99_us) µs | $cpu µs | $(ratio "$fps" "$rmcp_fps") | $(ratio "$cpu" "$rmcp_cpu") |"
done
fi

# --- get_weather, one round at a time, beside the bare-axum ceiling ----------------------
has weather || exit 0
start bare env RUST_LOG=error "$bin/examples/bare_axum" 127.0.0.1:0
# round 2's ceiling: the same bare server fed round 2's request, answering as few bytes as its
# fixed result allows (about 430; round 2's own answer is 327)
start bare2 env RUST_LOG=error "$bin/examples/bare_axum" 127.0.0.1:0 --result-bytes 327
start serve env RUST_LOG=error "$bin/example_serve" --http 127.0.0.1:0 --state-ttl 3600
start handw env RUST_LOG=error "$bin/examples/hand_weather" 127.0.0.1:0
for n in bare bare2 serve handw; do taskset -a -p -c 0 "${pid[$n]}" >/dev/null; done
# round 2's requestState: a real round-1 answer of this `serve` (anonymous, valid for an hour)
state=$(round1_state "${url[serve]}")
[ -n "$state" ] || { echo "no requestState from serve's round 1" >&2; exit 1; }
hstate=$(round1_state "${url[handw]}")
[ -n "$hstate" ] || { echo "no requestState from hand_weather's round 1" >&2; exit 1; }
: >"$tmp/weather"
# wrk_round NAME ROUND URL [SERVER [METHOD [STATE]]]: one wrk run, its RESULT line appended
# to $tmp/weather as NAME. With METHOD, scripts/wrk/discover.lua sends that method (the floor:
# `ping`) instead of get_weather's round. STATE is round 2's requestState (default: serve's).
wrk_round() {
    local name=$1 round=$2 u=$3 method=${5:-} st=${6:-$state} script=get_weather.lua line flows errs secs
    [ -n "$method" ] && script=discover.lua
    before=$(cpu_ticks "${pid[${4:-serve}]}"); ubefore=$(user_ticks "${pid[${4:-serve}]}")
    line=$(env ${method:+METHOD=$method} ROUND=$round STATE=$st taskset -c 1 wrk \
        -t "$concurrency" -c "$concurrency" -d "${seconds}s" -s "scripts/wrk/$script" "$u" |
        grep '^RESULT ') || {
        echo "wrk against $name failed" >&2
        exit 1
    }
    after=$(cpu_ticks "${pid[${4:-serve}]}"); uafter=$(user_ticks "${pid[${4:-serve}]}")
    flows=$(sed -n 's/.* flows=\([0-9]*\).*/\1/p' <<<"$line")
    errs=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$line")
    secs=$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")
    if [ "$errs" != 0 ] || [ "$flows" = 0 ]; then
        echo "wrk against $name: $line" >&2
        exit 1
    fi
    rps=$(awk -v f="$flows" -v s="$secs" 'BEGIN { printf "%.1f", f / s }')
    cpu_us=$(awk -v t=$((after - before)) -v hz="$hz" -v c="$flows" 'BEGIN { printf "%.1f", t * 1e6 / hz / c }')
    user_us=$(awk -v t=$((uafter - ubefore)) -v hz="$hz" -v c="$flows" 'BEGIN { printf "%.1f", t * 1e6 / hz / c }')
    echo "weather run $r $name: ${line#RESULT } req_per_s=$rps server_cpu_us_per_req=$cpu_us server_user_us_per_req=$user_us"
    echo "$name ${line#RESULT } req_per_s=$rps server_cpu_us_per_req=$cpu_us server_user_us_per_req=$user_us" >>"$tmp/weather"
}
for r in $(seq 1 "$repeat"); do
    wrk_round bare bare "${url[bare]}" bare
    wrk_round bare2 bare2 "${url[bare2]}" bare2
    wrk_round r1 1 "${url[serve]}"
    wrk_round r2 2 "${url[serve]}"
    wrk_round floor 1 "${url[serve]}" serve ping
    wrk_round hand1 1 "${url[handw]}" handw
    wrk_round hand2 2 "${url[handw]}" handw "" "$hstate"
    # rmcp: whole forecast calls (3 requests each), as requests per second
    line=$(taskset -c 1 wrk -t "$concurrency" -c "$concurrency" -d "${seconds}s" \
        -s scripts/wrk/forecast.lua "${url[rmcp]}" | grep '^RESULT ')
    rps=$(awk -v q="$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")" \
        -v s="$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")" 'BEGIN { printf "%.1f", q / s }')
    echo "weather run $r rmcp (forecast): ${line#RESULT } req_per_s=$rps"
    echo "rmcp ${line#RESULT } req_per_s=$rps" >>"$tmp/weather"
done
wt() { median "$1" "$2" "$tmp/weather"; }
bare_rps=$(wt bare req_per_s); rmcp_rps=$(wt rmcp req_per_s)
echo
echo "get_weather under wrk (scripts/wrk/get_weather.lua), server on CPU 0, wrk on CPU 1, medians of $repeat runs, $concurrency connections, ${seconds} s each."
echo "Each round is compared with the bare server fed the same request (its ceiling: the same"
echo "body parsed), and with the bare server fed round 1's request:"
echo
echo "| server | req/s | p50 | p99 | server CPU per request (user space) | req/s ours / bare, same request | p99 ours / bare, same request | req/s ours / bare, round 1's request | req/s ours / rmcp | req/s ours / hand-written |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in bare bare2 r1 r2 floor hand1 hand2 rmcp; do
    case $n in
    bare) l="bare axum, round 1's request (parse into Value, fixed result)"; same="" ;;
    bare2) l="bare axum, round 2's request"; same="" ;;
    r1) l="ours (serve), get_weather round 1"; same=bare ;;
    r2) l="ours (serve), get_weather round 2"; same=bare2 ;;
    floor) l="ours (serve), the floor: \`ping\` refused (-32601)"; same=bare ;;
    hand1) l="hand-written (hand_weather), round 1"; same=bare ;;
    hand2) l="hand-written (hand_weather), round 2"; same=bare2 ;;
    rmcp) l="rmcp 3.11, forecast (all 3 rounds)"; same="" ;;
    esac
    rps=$(wt "$n" req_per_s)
    if [ "$n" = rmcp ]; then cpu="–"; else
        cpu="$(wt "$n" server_cpu_us_per_req) µs (user $(wt "$n" server_user_us_per_req))"
    fi
    if [ -n "$same" ]; then
        vs=$(ratio "$rps" "$(wt "$same" req_per_s)"); ps=$(ratio "$(wt "$n" p99_us)" "$(wt "$same" p99_us)")
        vb=$(ratio "$rps" "$bare_rps"); vr=$(ratio "$rps" "$rmcp_rps")
    else
        vs="–"; ps="–"; vb="–"; vr="–"
    fi
    case $n in
    r1) vh=$(ratio "$rps" "$(wt hand1 req_per_s)") ;;
    r2) vh=$(ratio "$rps" "$(wt hand2 req_per_s)") ;;
    hand1 | hand2) vh="–"; vr="–" ;; # hand-written, not ours
    *) vh="–" ;;
    esac
    echo "| $l | $rps | $(wt "$n" p50_us) µs | $(wt "$n" p99_us) µs | $cpu | $vs | $ps | $vb | $vr | $vh |"
done
echo
echo "Goal: req/s ours / bare (same request) ≥ 0.80 for both rounds, p99 ours / bare ≤ 1.50."
# The server has one CPU: its req/s is 1 / (CPU per request). The kernel's part (loopback
# TCP, epoll) is the same for every server, so the goal bounds ours' user-space time.
for pair in "r1 bare" "r2 bare2"; do
    set -- $pair
    awk -v b="$(wt "$2" server_cpu_us_per_req)" -v o="$(wt "$1" server_cpu_us_per_req)" \
        -v u="$(wt "$1" server_user_us_per_req)" -v bu="$(wt "$2" server_user_us_per_req)" -v n="$1" \
        'BEGIN { k = o - u; printf "%s: kernel %.1f µs per request; user space %.1f µs (bare: %.1f); 0.80 needs user space ≤ %.1f µs\n", n, k, u, bu, b / 0.8 - k }'
done
