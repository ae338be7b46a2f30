#!/usr/bin/env bash
# The example tools on AWS Lambda's runtime emulator against `serve`: the cold start of an
# invocation and the duration of each round (tests/src/bin/lambda_rounds.rs).
#
# `cargo lambda watch --only-lambda-apis` (cargo-lambda from PyPI, installed into a venv under
# <target>/peers/ when missing; CARGO_LAMBDA names another one) emulates the Lambda Runtime
# API and the function URL. A 3-round `summarize_repo` and a 2-round `get_weather` are driven
# through it by our Driver, every round on a fresh function process (`example_lambda`, the
# `lambda` example): *cold* = process start to answer; the same message is then sent again to
# that instance, *warm*; cold start = cold − warm. The same calls go to one `serve --http`
# (`example_serve`, the same build). Medians of LAMBDA_REPEAT calls (default 5), in ms,
# printed as markdown (the tables of docs/BENCHMARKS.md, "Lambda").
#
#   scripts/lambda.sh
#   LAMBDA_REPEAT=10 LAMBDA_PROFILE=release scripts/lambda.sh
#
# Needs cargo and python3 with venv (for cargo-lambda). Not part of CI (CI runs the test,
# tests/tests/lambda_emulator.rs, which asserts the rounds complete; this measures).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

repeat=${LAMBDA_REPEAT:-5}
profile=${LAMBDA_PROFILE:-dev}
target=${CARGO_TARGET_DIR:-target}
case "$profile" in
    dev) dir=debug; flags=() ;;
    release) dir=release; flags=(--release) ;;
    *) echo "LAMBDA_PROFILE is dev or release" >&2; exit 2 ;;
esac

cargo build -q ${flags[@]+"${flags[@]}"} -p mcp-tool-tests \
    --bin lambda_rounds --bin example_lambda --bin example_serve
echo "### Lambda (cargo lambda watch) vs serve, $profile build, medians of $repeat calls, $(date -u +%Y-%m-%d)"
echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)"
echo
"$target/$dir/lambda_rounds" --repeat "$repeat"
