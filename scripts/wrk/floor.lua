-- wrk script: the floor of a request through `serve`. A well-formed 2026-07-28 request for
-- `ping` (a method this revision removed), sent again and again on every connection. It
-- crosses what every request crosses (admission, the body read and parsed, the `Mcp-*`
-- header checks, the dispatch, the method refused with -32601, that error written and sent)
-- and nothing else: no `_meta` check, no tool, no state, no result to build.
--
--   wrk -t 16 -c 16 -d 6s -s scripts/wrk/floor.lua http://127.0.0.1:PORT/mcp
--
-- Prints the RESULT line of result.lua (flows: answers that are the -32601 error).

-- the counters, `setup` and `done` (the RESULT line): result.lua beside this script
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "result.lua")

wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{'
    .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "ping"

function response(status, headers, body)
    if body:find('"code":-32601', 1, true) then
        flows = flows + 1
    else
        errors = errors + 1
    end
end
