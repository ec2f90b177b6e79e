-- wrk script for the benches: the request comes from the environment (WRK_METHOD,
-- WRK_BODY; headers are given with -H), and the summary is printed as one JSON line.
local method = os.getenv("WRK_METHOD")
if method and method ~= "" then wrk.method = method end
local body = os.getenv("WRK_BODY")
if body and body ~= "" then wrk.body = body end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.4f, "socket_errors": %d, "http_errors": %d, ' ..
    '"p50_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f}\n',
    summary.requests, summary.duration / 1e6, e.connect + e.read + e.write + e.timeout,
    e.status, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000))
end
