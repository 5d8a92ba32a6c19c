-- post.lua — wrk script: POSTs TICO-19 segments (bench/tico.py) as new
-- confirmed segments, spread round-robin over SESSIONS sessions named
-- PREFIX0 … PREFIX(SESSIONS-1). Environment:
--   SEGS      Lua file with the segment bodies (tico.py lua)
--   SESSIONS  number of sessions (default 1000)   PREFIX  session id prefix
--   RUN       run id, makes the segment ids unique across runs
--   DELAY_MS  pause before each request on a connection (pacing; default 0)
local segs = dofile(os.getenv("SEGS"))
local nsess = tonumber(os.getenv("SESSIONS") or "1000")
local prefix = os.getenv("PREFIX") or "b"
local run = os.getenv("RUN") or "r"
local delay_ms = tonumber(os.getenv("DELAY_MS") or "0")
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
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
end

function request()
   n = n + 1
   local k = tid + counter_threads() * n
   local sess = prefix .. (k % nsess)
   local body = "{\"id\":\"" .. run .. "-" .. tid .. "-" .. n .. "\"," .. segs[(k % #segs) + 1]
   return wrk.format("POST", "/v1/sessions/" .. sess .. "/segments", nil, body)
end

function counter_threads()
   return tonumber(os.getenv("WRK_THREADS") or "2")
end

function response(status, headers, body)
   if status ~= 201 then
      bad = bad + 1
      if bad <= 3 then io.stderr:write("status " .. status .. ": " .. body .. "\n") end
   end
end

if delay_ms > 0 then
   function delay() return delay_ms end
end

function done(summary, latency, requests)
   local bad_total = 0
   for _, t in ipairs(threads) do bad_total = bad_total + (t:get("bad") or 0) end
   io.write(string.format("RESULT requests=%d duration_us=%d rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f non201=%d errors=%d\n",
      summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
      latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
      latency.max / 1000, bad_total,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
