#!/usr/bin/env bash
# Fuzzing on stable Rust: the proptest-driven fuzz targets with a large case budget.
# MCP_FUZZ_CASES (default 1,000,000) is the number of cases *per target*; the normal
# `cargo test` run (and so CI) uses each target's small default instead.
#
# Targets:
#   seal_open_arbitrary, seal_open_mutated, seal_open_other_binding   (Sealer::open)
#   handle_str_mutated, input_responses, and the four proptest properties of
#     tests/fuzz_server.rs (arbitrary strings, JSON, envelopes, answers to a real state)
#                                                                     (Server::handle_text)
#   http_check_headers, http_consistent_headers, http_header_codec,
#     http_accept_origin, http_param_schemas                          (HTTP header checks)
#   repo_paths                                                        (repository paths)
#
#   scripts/fuzz.sh                       # a million cases per target (about 7 minutes on 2 cores)
#   MCP_FUZZ_CASES=20000 scripts/fuzz.sh  # a quick look
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export MCP_FUZZ_CASES=${MCP_FUZZ_CASES:-1000000}
log=$(mktemp)
trap 'rm -f "$log" "$log.targets"' EXIT
started=$(date +%s)

run() {
    echo "==> cargo test --release $*" >&2
    cargo test --release "$@" -- --nocapture --test-threads 1 2>&1 | tee -a "$log" >&2
}

run -p mcp-tool-runtime --lib transport::http::fuzz
run -p mcp-tool-runtime --test fuzz_seal
run -p mcp-tool-runtime --test fuzz_server
run -p mcp-tool-examples --test fuzz_repo

# The proptest! properties of fuzz_server.rs do not print: each ran MCP_FUZZ_CASES cases.
properties=$(grep -o '^test arbitrary_[a-z_]* ' "$log" | sort -u | wc -l)
grep -o 'fuzz target [a-z_]*: [0-9]* cases, [0-9]* failures, [0-9.]* s' "$log" > "$log.targets" || true
targets=$(wc -l < "$log.targets")
printed=$(awk '{s+=$4} END {print s+0}' "$log.targets")
total=$((printed + properties * MCP_FUZZ_CASES))
failed=$(grep -c 'FAILED\|panicked' "$log" || true)
echo
cat "$log.targets"
echo "proptest properties: $properties x $MCP_FUZZ_CASES cases"
echo "fuzz: $((targets + properties)) targets, $total cases, $failed failures, $(( $(date +%s) - started )) s"
[ "$failed" -eq 0 ]
