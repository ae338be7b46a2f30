-- wrk script: `server/discover` (2026-07-28) again and again on every connection: a request
-- that crosses the HTTP transport and the dispatch but runs no tool, seals no state.
--
--   wrk -t 16 -c 16 -d 6s -s scripts/wrk/discover.lua http://127.0.0.1:PORT/mcp
--
-- Prints the RESULT line of result.lua (flows: answers 200 with `supportedVersions`).

-- the counters, `setup` and `done` (the RESULT line): result.lua beside this script
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "result.lua")

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
        flows = flows + 1
    else
        errors = errors + 1
    end
end

