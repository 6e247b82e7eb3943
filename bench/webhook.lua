-- webhook.lua -- wrk script: POST one Alertmanager payload to /webhook, keep-alive,
-- and print the figures as BENCH key=value lines for bench/run.sh.
-- Environment: BENCH_PAYLOAD (file with the JSON body; unset = plain GETs of the
-- URL wrk was given), BENCH_TOKEN (bearer token).
local payload_file = os.getenv("BENCH_PAYLOAD")
local token = os.getenv("BENCH_TOKEN") or ""

if payload_file and payload_file ~= "" then
    local f = assert(io.open(payload_file, "rb"))
    local body = f:read("*a")
    f:close()
    wrk.method = "POST"
    wrk.path = "/webhook"
    wrk.body = body
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Authorization"] = "Bearer " .. token
end

function done(summary, latency, requests)
    -- No response() hook: it would cost wrk a Lua call per answer. The only
    -- 2xx answered here is 200, so 200s = requests - non-2xx/3xx.
    io.write(string.format("BENCH status200=%d other=%d\n",
        summary.requests - summary.errors.status, summary.errors.status))
    io.write(string.format("BENCH requests=%d duration_us=%d rps=%.0f\n",
        summary.requests, summary.duration, summary.requests / (summary.duration / 1e6)))
    io.write(string.format("BENCH p50_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d\n",
        latency:percentile(50), latency:percentile(90), latency:percentile(99),
        latency:percentile(99.9), latency.max))
    io.write(string.format("BENCH errors connect=%d read=%d write=%d status=%d timeout=%d\n",
        summary.errors.connect, summary.errors.read, summary.errors.write,
        summary.errors.status, summary.errors.timeout))
end
