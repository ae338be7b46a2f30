-- wrk script: one round of `get_weather` (SEP-2322's example: a form elicitation, then the
-- forecast) over Streamable HTTP, the same request again and again on every connection.
--
--   ROUND=1 wrk -t 16 -c 16 -d 10s -s scripts/wrk/get_weather.lua http://127.0.0.1:PORT/mcp
--   ROUND=2 STATE=<requestState of a round-1 answer> wrk ... (same)
--
-- ROUND=1: the first call (no answers); each answer must be 200 with
--   `"resultType":"input_required"` and a `requestState`.
-- ROUND=2: the call with the login answered and STATE (a real round-1 `requestState`, made by
--   the same server process, not expired: get_weather is not single-use, so it may be
--   replayed); each answer must be 200, `"resultType":"complete"` and name `octocat`.
-- ROUND=bare: round 1's body to the bare comparator (tests/examples/bare_axum.rs); each
--   answer must be 200 with `"resultType":"input_required"`.
-- ROUND=bare2: round 2's body (STATE needed) to the bare comparator, checked the same way:
--   the ceiling for round 2 parses the same, larger request.
--
-- Prints `RESULT flows=… errors=… seconds=… requests=… p50_us=… p99_us=…` at the end
-- (flows = answers that passed the check; latencies are per request, wrk's own).

local round = os.getenv("ROUND") or "1"
local state = os.getenv("STATE")
-- the counters, `setup` and `done` (the RESULT line): result.lua beside this script
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "result.lua")

local head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather",'
    .. '"arguments":{"location":"Oslo"},"_meta":{'
    .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
local body, want, also
if round == "2" or round == "bare2" then
    assert(state, "ROUND=2 needs STATE")
    body = head .. ',"inputResponses":{"github_login":{"action":"accept",'
        .. '"content":{"name":"octocat"}}},"requestState":"' .. state .. '"}}'
    want, also = '"resultType":"complete"', "octocat"
    if round == "bare2" then
        want, also = '"resultType":"input_required"', '"requestState":"'
    end
else
    body = head .. "}}"
    want, also = '"resultType":"input_required"', '"requestState":"'
end

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "get_weather"

function response(status, headers, body)
    if status == 200 and body:find(want, 1, true) and body:find(also, 1, true) then
        flows = flows + 1
    else
        errors = errors + 1
    end
end
