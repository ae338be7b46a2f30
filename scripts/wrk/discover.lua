-- wrk script: one request that runs no tool, again and again on every connection.
--
-- Default, `server/discover` (2026-07-28): it crosses the HTTP transport and the dispatch,
-- seals no state, and builds the server's discovery result.
--
-- METHOD=ping: the floor of a request through `serve`, a well-formed 2026-07-28 request for a
-- method this revision removed. It crosses what every request crosses (admission, the body
-- read and parsed, the `Mcp-*` header checks, the dispatch, the method refused with -32601,
-- that error written and sent) and nothing else: no `_meta` check, no tool, no state, no
-- result to build.
--
--   wrk -t 16 -c 16 -d 6s -s scripts/wrk/discover.lua http://127.0.0.1:PORT/mcp
--   METHOD=ping wrk -t 16 -c 16 -d 6s -s scripts/wrk/discover.lua http://127.0.0.1:PORT/mcp
--
-- Prints the RESULT line of result.lua (flows: answers 200 with `supportedVersions`; with
-- METHOD=ping, answers that are the -32601 error).

-- the counters, `setup` and `done` (the RESULT line): result.lua beside this script
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "result.lua")

local method = os.getenv("METHOD") or "server/discover"
assert(method == "server/discover" or method == "ping", "METHOD: server/discover or ping")

wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":{"_meta":{'
    .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = method

function response(status, headers, body)
    local ok
    if method == "ping" then
        ok = body:find('"code":-32601', 1, true)
    else
        ok = status == 200 and body:find('"supportedVersions"', 1, true)
    end
    if ok then
        flows = flows + 1
    else
        errors = errors + 1
    end
end
