-- 90% anonymous posts, 10% creator reads of the inbox's first page, on one link.
--   wrk ... -s mixed.lua URL -- LINK_ID API_KEY
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  math.randomseed(os.time() * 100 + (thread_number or 0))
  post = wrk.format("POST", "/message/" .. args[1], JSON_HEADERS, BODY)
  read = wrk.format("GET", "/message/" .. args[1] .. "?limit=20", {["X-API-Key"] = args[2]})
end

function request()
  if math.random() < 0.9 then
    return post
  end
  return read
end
