-- GET one public page or picture with a client's headers (bench/pages.py names them).
--   wrk ... -s page.lua URL -- PATH ["Header: value" ...]
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  local headers = {}
  for i = 2, #args do
    local name, value = args[i]:match("^([^:]+):%s*(.*)$")
    if name then
      headers[name] = value
    end
  end
  req = wrk.format("GET", args[1], headers)
end

function request()
  return req
end
