-- POST /message/{link_id}: the anonymous write.   wrk ... -s post.lua URL -- LINK_ID
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  req = wrk.format("POST", "/message/" .. args[1], JSON_HEADERS, BODY)
end

function request()
  return req
end
