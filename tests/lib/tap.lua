-- tap.lua -- the Test Anything Protocol for tielab's Lua tests, which
-- `tielab --headless` runs: one "ok N - what" or "not ok N - what" per
-- check, the plan at the end, and a non-zero exit status when a check
-- failed. A test finds this file through its source directory:
--
--   package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
--   local tap = require "tap"

local tap = {}
local n, failed = 0, 0

-- One line of text for the log; in a check's description a '#' is
-- escaped too, so that no text it quotes reads as a directive ("# TODO").
local function line(s)
  return (tostring(s):gsub("\n", " | "))
end

local function what_of(s)
  return (line(s):gsub("#", "\\#"))
end

function tap.diag(msg)
  print("# " .. line(msg))
end

-- The caller to blame is two levels above 'check' (tap.ok, tap.is, ... call it).
local function check(cond, what)
  n = n + 1
  print((cond and "ok " or "not ok ") .. n .. " - " .. what_of(what))
  if not cond then
    failed = failed + 1
    local info = debug.getinfo(3, "Sl")
    tap.diag("failed at " .. info.short_src .. ":" .. info.currentline)
  end
  return cond
end

function tap.ok(cond, what)
  local good = check(cond, what)   -- not a tail call: keep this frame for the blame
  return good
end

function tap.is(got, want, what)
  local same = got == want
  if not check(same, what) then
    tap.diag("got:  " .. tostring(got))
    tap.diag("want: " .. tostring(want))
  end
  return same
end

-- 'pattern' is plain text to find in the string.
function tap.like(s, pattern, what)
  local found = type(s) == "string" and s:find(pattern, 1, true) ~= nil
  if not check(found, what) then tap.diag("got: " .. tostring(s)) end
  return found
end

-- fn(...) must raise an error whose message contains 'pattern'.
function tap.raises(pattern, what, fn, ...)
  local okay, err = pcall(fn, ...)
  local good = not okay and tostring(err):find(pattern, 1, true) ~= nil
  if not check(good, what) then tap.diag(okay and "no error" or ("error: " .. tostring(err))) end
  return good, err
end

-- `count` checks (1 unless said) skipped, saying why: a tool they need is
-- missing. Never a "# SKIP" line of a test's own, so the plan counts it.
function tap.skip(why, count)
  for _ = 1, count or 1 do
    n = n + 1
    print("ok " .. n .. " # SKIP " .. line(why))
  end
end

-- The whole test skipped, before its first check: the plan of none, and
-- the end. After a check the plan could no longer say so: a failure.
function tap.skip_all(why)
  if n > 0 then
    check(false, "skip_all after " .. n .. " checks: " .. why)
    tap.done()
  end
  print("1..0 # SKIP " .. line(why))
  os.exit(true)
end

-- The test cannot go on (what every later check needs failed): an error,
-- never a skip.
function tap.bail_out(why)
  print("Bail out! " .. line(why))
  os.exit(false)
end

-- Print the plan and end the script with the right status.
function tap.done()
  print("1.." .. n)
  os.exit(failed == 0)
end

-- The smallest useful model, so the suite stays fast.
function tap.tiny(extra)
  local o = {vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

return tap
