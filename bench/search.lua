-- GET /message/{link_id}/search?q=QUERY&limit=20: the creator's inbox search, first page.
--   wrk ... -s search.lua URL -- LINK_ID API_KEY QUERY   (QUERY already URL-encoded)
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  local path = "/message/" .. args[1] .. "/search?limit=20&q=" .. args[3]
  req = wrk.format("GET", path, {["X-API-Key"] = args[2]})
end

function request()
  return req
end
