-- GET /message/{link_id}?limit=20[&cursor=ID]: the creator's inbox, first page or deep page.
--   wrk ... -s inbox.lua URL -- LINK_ID API_KEY [CURSOR]
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  local path = "/message/" .. args[1] .. "?limit=20"
  if args[3] and args[3] ~= "" then
    path = path .. "&cursor=" .. args[3]
  end
  req = wrk.format("GET", path, {["X-API-Key"] = args[2]})
end

function request()
  return req
end
