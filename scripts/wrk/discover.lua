-- wrk script: `server/discover` (2026-07-28) again and again on every connection: a request
-- that crosses the HTTP transport and the dispatch but runs no tool, seals no state.
--
--   wrk -t 16 -c 16 -d 6s -s scripts/wrk/discover.lua http://127.0.0.1:PORT/mcp
--
-- Prints `RESULT answers=… errors=… seconds=… requests=…` (answers: 200 with `supportedVersions`).

answers = 0
errors = 0

wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{'
    .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "server/discover"

function response(status, headers, body)
    if status == 200 and body:find('"supportedVersions"', 1, true) then
        answers = answers + 1
    else
        errors = errors + 1
    end
end

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function done(summary, latency, requests)
    local a, e = 0, 0
    for _, t in ipairs(threads) do
        a = a + t:get("answers")
        e = e + t:get("errors")
    end
    io.write(string.format("RESULT answers=%d errors=%d seconds=%.2f requests=%d\n",
        a, e, summary.duration / 1e6, summary.requests))
end
