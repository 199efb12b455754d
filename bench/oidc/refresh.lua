-- wrk script: refresh-token grants, one family per wrk thread (run with -tN -cN,
-- so each thread has one connection and its requests follow one another).
-- Each answer's refresh_token is the next request's: a family is rotated in
-- order, never reused. Any answer other than a 200 with a new refresh_token is
-- an error (a reused token revokes its family, so the errors would go on).
-- Env: OIDC_TOKENS (a file, one refresh token a line, at least N),
-- OIDC_BASIC (base64 of client_id:client_secret).
local tokens, threads = {}, {}

function setup(thread)
  if #tokens == 0 then
    for line in io.lines(os.getenv("OIDC_TOKENS")) do
      if line ~= "" then tokens[#tokens + 1] = line end
    end
  end
  local n = #threads + 1
  if n > #tokens then error("more wrk threads than refresh-token families in " .. os.getenv("OIDC_TOKENS")) end
  thread:set("token", tokens[n])
  threads[n] = thread
end

function init(args)
  grants, errors, last_error = 0, 0, ""
  auth = "Basic " .. os.getenv("OIDC_BASIC")
end

function request()
  return wrk.format("POST", nil,
    { ["Content-Type"] = "application/x-www-form-urlencoded", ["Authorization"] = auth },
    "grant_type=refresh_token&refresh_token=" .. token)
end

function response(status, headers, body)
  local next_token = status == 200 and body:match('"refresh_token"%s*:%s*"([^"]+)"')
  if next_token then
    token = next_token
    grants = grants + 1
  else
    errors = errors + 1
    last_error = status .. " " .. body:sub(1, 160)
  end
end

function done(summary, latency, requests)
  local g, e, last = 0, 0, ""
  for _, t in ipairs(threads) do
    g = g + t:get("grants")
    e = e + t:get("errors")
    if last == "" then last = t:get("last_error") or "" end
  end
  io.write(string.format("grants %d\nerrors %d\n", g, e))
  if last ~= "" then io.write("last_error " .. last:gsub("\n", " ") .. "\n") end
end
