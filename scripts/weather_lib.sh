# Shared by the get_weather measuring scripts (throughput.sh, callgrind_weather.sh,
# wall_profile.sh); sourced, not run.

# The cargo profile the servers are built with (and taken from, under SKIP_BUILD=1):
# PROFILE=production is the workspace's fat-LTO, one-codegen-unit profile; default `release`.
profile=${PROFILE:-release}

# listening_url LOG: the MCP URL a server printed in LOG (`listening on URL`), or nothing yet
# (the whole URL only: a server's stderr is unbuffered, the line may be read half written)
listening_url() {
    sed -n 's|^listening on \(http://[^ ]*/mcp\)$|\1|p' "$1" | head -n 1
}

# wait_url LOG TRIES PAUSE: waits for listening_url LOG, printing it; fails after TRIES tries
wait_url() {
    local u
    for _ in $(seq 1 "$2"); do
        u=$(listening_url "$1")
        [ -n "$u" ] && { echo "$u"; return 0; }
        sleep "$3"
    done
    return 1
}

# round1_state URL: the requestState of get_weather's round 1 at URL (anonymous), or nothing
round1_state() {
    curl -sS -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_weather' \
        --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Oslo"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}' \
        "$1" | sed -n 's/.*"requestState":"\([^"]*\)".*/\1/p'
}

# scratch_with_cleanup: makes the temporary directory $tmp and, on exit or interruption,
# stops the server whose pid is in $server_pid (when set), waits for the children and
# removes $tmp. Call it in the script itself, not in a subshell (it sets the trap).
scratch_with_cleanup() {
    tmp=$(mktemp -d)
    server_pid=""
    trap 'cleanup_scratch' EXIT INT TERM
}

cleanup_scratch() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
