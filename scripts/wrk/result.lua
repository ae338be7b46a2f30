-- Shared by the wrk scripts here (loaded with `dofile` next to the script): each thread counts
-- `flows` (answers that passed the script's check) and `errors`; at the end one line:
-- `RESULT flows=… errors=… seconds=… requests=… p50_us=… p99_us=…` (latencies per request,
-- wrk's own).

flows = 0
errors = 0

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function done(summary, latency, requests)
    local f, e = 0, 0
    for _, t in ipairs(threads) do
        f = f + t:get("flows")
        e = e + t:get("errors")
    end
    io.write(string.format(
        "RESULT flows=%d errors=%d seconds=%.2f requests=%d p50_us=%d p99_us=%d\n",
        f, e, summary.duration / 1e6, summary.requests,
        latency:percentile(50), latency:percentile(99)))
end
