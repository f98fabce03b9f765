-- A link gone viral: 95% readers of its pages (the send page and an answer page, half
-- each, as a phone browser asks), 5% anonymous posts to it.
--   wrk ... -s flood.lua URL -- LINK_ID ANSWER_ID "Header: value" ...
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  math.randomseed(os.time() * 100 + (thread_number or 0))
  local headers = {}
  for i = 3, #args do
    local name, value = args[i]:match("^([^:]+):%s*(.*)$")
    if name then
      headers[name] = value
    end
  end
  send = wrk.format("GET", "/" .. args[1], headers)
  answer = wrk.format("GET", "/" .. args[1] .. "/a/" .. args[2], headers)
  post = wrk.format("POST", "/message/" .. args[1], JSON_HEADERS, BODY)
end

function request()
  local r = math.random()
  if r < 0.05 then
    return post
  elseif r < 0.525 then
    return send
  end
  return answer
end
