-- Shared by the scenario scripts (loaded with dofile): the JSON report wrk prints at the end.
-- bench/run.py reads the line that starts with BENCH_JSON.

local QUANTILES = {1, 5, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 90, 95, 97.5, 99, 99.5,
                   99.9, 99.95, 99.99}

function done(summary, latency, requests)
  local e = summary.errors
  local parts = {}
  for _, q in ipairs(QUANTILES) do
    parts[#parts + 1] = string.format('"%s": %d', tostring(q), latency:percentile(q))
  end
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "bytes": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"mean": %.1f, "stdev": %.1f, "max": %d, "percentiles": {%s}}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency.max, table.concat(parts, ", ")))
end

-- Give each wrk thread its own random sequence (used by mixed.lua).
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("thread_number", counter)
end

BODY = '{"message_content": "What are you reading these days? Anything you would recommend?"}'
JSON_HEADERS = {["Content-Type"] = "application/json"}
