-- POST /message/{link_id}/{message_id}: the creator replies to messages of their inbox, each
-- request to the next message of a list (the newest seeded ones), so replies spread over
-- many rows as a creator working through the inbox does.
--   wrk ... -s reply.lua URL -- LINK_ID API_KEY TARGETS_FILE   (one message id a line)
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

local REPLY = '{"message_content": "Thanks for asking! Lately a lot of short stories."}'

function init(args)
  local headers = {["Content-Type"] = "application/json", ["X-API-Key"] = args[2]}
  requests = {}
  for id in io.lines(args[3]) do
    if id ~= "" then
      requests[#requests + 1] = wrk.format("POST", "/message/" .. args[1] .. "/" .. id,
                                           headers, REPLY)
    end
  end
  -- Each thread starts at its own place in the list.
  position = ((thread_number or 1) - 1) * math.floor(#requests / 2)
end

function request()
  position = position % #requests + 1
  return requests[position]
end
