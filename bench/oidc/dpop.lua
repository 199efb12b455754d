-- wrk script: requests that each carry a DPoP proof used once (RFC 9449), or none (the bearer baseline).
-- Env: DPOP_METHOD (GET or POST), DPOP_AUTH (the Authorization header), DPOP_BODY (a form body, for POST),
-- DPOP_PROOFS (a file prefix: thread n reads PREFIX-n, one proof a line; unset: no DPoP header).
-- A thread that runs out of proofs stops; any answer but a 200 is counted as an error.
local threads = {}

function setup(thread)
  local n = #threads + 1
  threads[n] = thread
  thread:set("n", n)
end

function init(args)
  proofs, next_proof, ok, errors, last_error = {}, 1, 0, 0, ""
  local prefix = os.getenv("DPOP_PROOFS")
  if prefix and prefix ~= "" then
    for line in io.lines(prefix .. "-" .. n) do proofs[#proofs + 1] = line end
  end
  method, auth, body = os.getenv("DPOP_METHOD"), os.getenv("DPOP_AUTH"), os.getenv("DPOP_BODY")
end

function request()
  local headers = { ["Authorization"] = auth }
  if #proofs > 0 then
    if next_proof > #proofs then
      -- Out of proofs: stop; the request this call must still return is not counted (see response).
      exhausted = true
      wrk.thread:stop()
      return wrk.format(method, nil, headers, body)
    end
    headers["DPoP"] = proofs[next_proof]
    next_proof = next_proof + 1
  end
  if method == "POST" then headers["Content-Type"] = "application/x-www-form-urlencoded" end
  return wrk.format(method, nil, headers, body)
end

function response(status, headers, body)
  if exhausted then return end
  if status == 200 then ok = ok + 1 else
    errors = errors + 1
    last_error = status .. " " .. (headers["WWW-Authenticate"] or "") .. " " .. body:sub(1, 120)
  end
end

function done(summary, latency, requests)
  local o, e, last = 0, 0, ""
  for _, t in ipairs(threads) do
    o = o + t:get("ok")
    e = e + t:get("errors")
    if last == "" then last = t:get("last_error") or "" end
  end
  io.write(string.format("ok %d\nerrors %d\n", o, e))
  if last ~= "" then io.write("last_error " .. last:gsub("\n", " ") .. "\n") end
end
