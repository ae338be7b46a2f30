#!/usr/bin/env bash
# Memory and start-up of `serve` (mcp-tool-examples, release) over Streamable HTTP, beside
# the bare axum server of scripts/throughput.sh (tests/examples/bare_axum.rs): VmRSS growth
# per idle legacy session, per idle keep-alive connection and per in-flight modern request,
# and the time from exec to the first answered request (median of RUNS). The measuring is
# scripts/memory.py's (its docstring says exactly what each line counts); this builds the two
# servers and runs it. Prints Markdown tables (docs/BENCHMARKS.md keeps the last run's).
#
#   scripts/memory.sh                       # 500 sessions, 500 connections, 10 start-ups
#   SESSIONS=1000 CONNECTIONS=1000 RUNS=20 scripts/memory.sh
#
# Needs cargo and python3. Loopback only; the servers it starts are stopped on exit.
# SKIP_BUILD=1 uses the release binaries already built (no cargo build first).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --release -q -p mcp-tool-tests --example bare_axum
    cargo build --release -q -p mcp-tool-tests --bin example_serve
fi
bin="${CARGO_TARGET_DIR:-target}/release"
exec python3 scripts/memory.py "$bin/example_serve" "$bin/examples/bare_axum" \
    --sessions "${SESSIONS:-500}" --connections "${CONNECTIONS:-500}" --runs "${RUNS:-10}"
