-- wrk script: whole calls of the MRTR benchmark tool (`forecast`) over Streamable HTTP, one
-- call after another on each connection: r0 asks (a form elicitation), r1 answers it and
-- gets a sampling request, r2 answers that and must complete with the model's verdict.
-- Run with as many threads as connections (`-t N -c N`): wrk keeps one Lua state per thread,
-- so each state follows exactly one connection's call.
--
--   wrk -t 8 -c 8 -d 10s -s scripts/wrk/forecast.lua http://127.0.0.1:PORT/mcp
--
-- Prints `RESULT flows=… errors=… seconds=… requests=… p50_us=… p99_us=…` at the end
-- (latencies are per request, wrk's own).

stage = 0
state = nil
-- the counters, `setup` and `done` (the RESULT line): result.lua beside this script
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "result.lua")

local head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forecast",'
    .. '"arguments":{"city":"Oslo"},"_meta":{'
    .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}'
local answers = {
    '"inputResponses":{"login":{"action":"accept","content":{"name":"octocat"}}}',
    '"inputResponses":{"verdict":{"role":"assistant",'
        .. '"content":{"type":"text","text":"nine out of ten"},"model":"wrk"}}',
}

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "forecast"

function request()
    local body
    if stage == 0 then
        body = head .. "}}"
    else
        body = head .. "," .. answers[stage] .. ',"requestState":"' .. state .. '"}}'
    end
    return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
    if status ~= 200 then
        errors = errors + 1
        stage = 0
        return
    end
    if stage < 2 then
        local st = body:match('"requestState":"([^"]+)"')
        if st and body:find('"resultType":"input_required"', 1, true) then
            state = st
            stage = stage + 1
        else
            errors = errors + 1
            stage = 0
        end
    else
        if body:find('"resultType":"complete"', 1, true)
            and body:find('nine out of ten', 1, true)
            and body:find('octocat', 1, true) then
            flows = flows + 1
        else
            errors = errors + 1
        end
        stage = 0
    end
end
