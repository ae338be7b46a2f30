#!/usr/bin/env bash
# Scale-out test (not part of CI): three `serve --http` replicas sharing one state key behind
# nginx (round robin, so consecutive rounds of one call land on different replicas), under a
# bounded load of full multi-round calls of several tools (`loadgen`: the project's Driver,
# a RetryTransport that sends a round again when its replica went away). Mid-run it kills one
# replica (SIGKILL) and restarts it, then rotates the state key with rolling restarts:
#
#   phase 1: each replica in turn restarts with the old key active and the new key as a
#            previous key (it can open states sealed with the new key, seals with the old);
#   phase 2: each replica in turn restarts with the new key active and the old key as a
#            previous key (states sealed before the rotation still open).
#
# One phase is not enough: a replica that seals with the new key while another does not yet
# know it would see the next round fail (-32602). It reports calls started / completed /
# retried / lost and fails unless none was lost.
#
#   scripts/scaleout.sh                                  # 40 s of load, 16 clients
#   SCALEOUT_SECONDS=60 SCALEOUT_CONCURRENCY=32 scripts/scaleout.sh
#
# Needs cargo and python3 (to find free ports); installs nginx (Debian package) when missing.
# nginx runs as the current user with its own config, pid file, logs and temp dirs in a
# temporary directory on a free loopback port; everything is stopped and removed on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${SCALEOUT_SECONDS:-40}
concurrency=${SCALEOUT_CONCURRENCY:-16}
replicas=3

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    echo "installing nginx (Debian package)"
    if [ "$(id -u)" = 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

cargo build --release -q -p mcp-tool-examples --bin serve --bin loadgen
bin="${CARGO_TARGET_DIR:-target}/release"

tmp=$(mktemp -d)
declare -a pids=() ports=()
nginx_pid=""
loadgen_pid=""
cleanup() {
    status=$?
    [ -n "$loadgen_pid" ] && kill "$loadgen_pid" 2>/dev/null || true
    for p in "${pids[@]}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    if [ -n "$nginx_pid" ]; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$nginx_pid" 2>/dev/null || true
    fi
    wait 2>/dev/null || true
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

key_old=k1:$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
key_new=k2:$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')

# start_replica I ACTIVE PREVIOUS: starts replica I on its port and waits until it listens.
start_replica() {
    local i=$1 active=$2 previous=$3 log="$tmp/replica-$1.log"
    : >"$log"
    MCP_TOOL_STATE_KEY=$active MCP_TOOL_STATE_KEY_PREVIOUS=$previous RUST_LOG=${RUST_LOG:-warn} \
        "$bin/serve" --http "127.0.0.1:${ports[$i]}" 2>>"$log" &
    pids[$i]=$!
    for _ in $(seq 1 100); do
        grep -q '^listening on ' "$log" && return 0
        kill -0 "${pids[$i]}" 2>/dev/null || break
        sleep 0.05
    done
    echo "replica $i did not start:" >&2
    cat "$log" >&2
    return 1
}

# stop_replica I SIGNAL: stops replica I and waits for it.
stop_replica() {
    local i=$1 sig=$2
    kill "-$sig" "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
    pids[$i]=""
}

for i in $(seq 0 $((replicas - 1))); do
    ports[$i]=$(free_port)
    start_replica "$i" "$key_old" ""
done

port=$(free_port)
mkdir -p "$tmp/nginx"
user_line=""
[ "$(id -u)" = 0 ] && user_line="user $(id -un) $(id -gn);"
{
    echo "$user_line"
    echo "daemon off; worker_processes 1; pid $tmp/nginx/nginx.pid; error_log $tmp/nginx/error.log warn;"
    echo "events { worker_connections 4096; }"
    echo "http {"
    echo "  log_format up '\$status \$upstream_addr';"
    echo "  access_log $tmp/nginx/access.log up;"
    for d in client_body proxy fastcgi uwsgi scgi; do echo "  ${d}_temp_path $tmp/nginx/$d;"; done
    echo "  client_body_buffer_size 1m; client_max_body_size 2m;"
    echo "  upstream replicas {"
    for i in $(seq 0 $((replicas - 1))); do
        echo "    server 127.0.0.1:${ports[$i]} max_fails=1 fail_timeout=2s;"
    done
    echo "    keepalive 64;"
    echo "  }"
    echo "  server {"
    echo "    listen 127.0.0.1:$port;"
    echo "    location /mcp {"
    echo "      proxy_pass http://replicas;"
    echo "      proxy_http_version 1.1;"
    echo "      proxy_set_header Connection \"\";"
    echo "      proxy_buffering off;"
    # Retried by nginx: what it knows no replica processed (connect errors); a POST already
    # sent is not (non_idempotent is off): the client retries those.
    echo "      proxy_next_upstream error timeout http_502 http_504;"
    echo "      proxy_next_upstream_tries $replicas;"
    echo "      proxy_connect_timeout 1s; proxy_read_timeout 60s;"
    echo "    }"
    echo "  }"
    echo "}"
} >"$tmp/nginx/nginx.conf"
"$NGINX" -t -q -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" 2>"$tmp/nginx/test.log" ||
    { cat "$tmp/nginx/test.log" >&2; exit 1; }
"$NGINX" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" 2>>"$tmp/nginx/error.log" &
nginx_pid=$!
url="http://127.0.0.1:$port/mcp"
for _ in $(seq 1 100); do
    python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$port)))" && break
    sleep 0.05
done
echo "nginx (pid $nginx_pid) at $url -> replicas on ports ${ports[*]}; ${seconds}s of load, $concurrency clients"

started_at=$(date +%s)
"$bin/loadgen" --url "$url" --concurrency "$concurrency" --duration "$seconds" \
    --report-every 5 >"$tmp/loadgen.out" 2>"$tmp/loadgen.err" &
loadgen_pid=$!
at() { # at SECOND: sleeps until SECOND seconds after the load started
    local now; now=$(date +%s)
    [ $((started_at + $1)) -gt "$now" ] && sleep $((started_at + $1 - now))
    return 0
}
say() { echo "t=$(($(date +%s) - started_at))s $*"; }

at $((seconds / 8))
say "kill -9 replica 1 (port ${ports[1]})"
stop_replica 1 KILL
sleep 2
start_replica 1 "$key_old" ""
say "replica 1 restarted"

at $((seconds / 4))
say "key rotation, phase 1: the new key k2 opens everywhere (k1 still seals)"
for i in $(seq 0 $((replicas - 1))); do
    stop_replica "$i" TERM
    start_replica "$i" "$key_old" "$key_new"
    say "replica $i restarted (active k1, previous k2)"
    sleep 1
done
say "key rotation, phase 2: k2 seals everywhere (k1 still opens)"
for i in $(seq 0 $((replicas - 1))); do
    stop_replica "$i" TERM
    start_replica "$i" "$key_new" "$key_old"
    say "replica $i restarted (active k2, previous k1)"
    sleep 1
done

status=0
wait "$loadgen_pid" || status=$?
loadgen_pid=""
cat "$tmp/loadgen.out"
if [ -s "$tmp/loadgen.err" ]; then
    echo "--- loadgen errors (first 20 lines) ---"
    head -n 20 "$tmp/loadgen.err"
fi
echo "--- requests by where nginx sent them (access log) ---"
awk '{ addr = $0; sub(/^[0-9]+ /, "", addr) }
     addr == "replicas" { none++; next }
     index(addr, ",") { moved++; next }
     { n[addr]++ }
     END { for (u in n) print "  replica " u ": " n[u];
           print "  retried by nginx on another replica: " moved + 0;
           print "  no replica up (502 from nginx, retried by the client): " none + 0 }' \
    "$tmp/nginx/access.log" | sort
echo "--- responses by status ---"
awk '{ n[$1]++ } END { for (s in n) print "  " s, n[s] }' "$tmp/nginx/access.log" | sort
r=$(grep '^RESULT ' "$tmp/loadgen.out" || true)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $r"; }
echo
echo "| replicas | clients | seconds | started | completed | retried (retries) | lost | flows/s | p50 | p99 |"
echo "|---|---|---|---|---|---|---|---|---|---|"
echo "| $replicas behind nginx | $concurrency | $(field elapsed_s) | $(field started) | $(field completed) | $(field retried) ($(field retries)) | $(field lost) | $(field flows_per_s) | $(field p50_ms) ms | $(field p99_ms) ms |"
echo "total wall time of the script: $(($(date +%s) - started_at)) s of load and chaos"
exit "$status"
