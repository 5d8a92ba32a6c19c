-- metrics.lua — wrk script: GET /v1/sessions/{id}/metrics round-robin over
-- SESSIONS sessions (PREFIX0 …). With ETAGS set to a Lua file returning
-- {session = etag}, each request carries If-None-Match (expects 304).
local nsess = tonumber(os.getenv("SESSIONS") or "1000")
local prefix = os.getenv("PREFIX") or "b"
local etags = os.getenv("ETAGS") and dofile(os.getenv("ETAGS")) or nil
local threads = {}
local counter = 0

function setup(thread)
   thread:set("tid", counter)
   counter = counter + 1
   table.insert(threads, thread)
end

function init(args)
   n = 0
   bad = 0
end

function request()
   n = n + 1
   local sess = prefix .. ((tid + 7 * n) % nsess)
   local hdr = nil
   if etags then hdr = {["If-None-Match"] = etags[sess]} end
   return wrk.format("GET", "/v1/sessions/" .. sess .. "/metrics", hdr, nil)
end

function response(status, headers, body)
   local want = etags and 304 or 200
   if status ~= want then bad = bad + 1 end
end

function done(summary, latency, requests)
   local bad_total = 0
   for _, t in ipairs(threads) do bad_total = bad_total + (t:get("bad") or 0) end
   io.write(string.format("RESULT requests=%d duration_us=%d rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f unexpected=%d errors=%d\n",
      summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
      latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
      latency.max / 1000, bad_total,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
