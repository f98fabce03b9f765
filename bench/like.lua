-- PUT /message/{link_id}/{message_id}/like on one hot message, from the creator (contention).
--   wrk ... -s like.lua URL -- LINK_ID MESSAGE_ID API_KEY
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  req = wrk.format("PUT", "/message/" .. args[1] .. "/" .. args[2] .. "/like",
                   {["X-API-Key"] = args[3]})
end

function request()
  return req
end
