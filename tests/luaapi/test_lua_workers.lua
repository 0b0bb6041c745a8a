-- test_lua_workers.lua -- lab.workers: the number of runs lab.step steps
-- at once, checked; runs stepped two at a time end with the bits of runs
-- stepped one at a time (a hooked run among them, its hook changing the
-- gradient); hooks are called once a step and refuse lab.workers; paused
-- and removed runs are left alone; a failing run's error is the step's.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

-- ------------------------------------------------------------ the setting
tap.is(lab.workers(), 1, "one worker by default")
tap.is(lab.workers(2), 1, "lab.workers(2) returns the number before")
tap.is(lab.workers(), 2, "and sets it")
for _, bad in ipairs{0, 257, 2.5, -1, "2", true} do
  local okk, err = pcall(lab.workers, bad)
  tap.ok(not okk and tostring(err):find("whole number from 1 to 256, not " .. (type(bad) == "number" and tostring(bad) or "a " .. type(bad)), 1, true),
         "lab.workers(" .. tostring(bad) .. ") is refused: " .. tostring(err))
end
tap.is(lab.workers(), 2, "a refused value changes nothing")
lab.workers(1)

-- ------------------------------------------------------------ the same bits
local arms = {{tie = "tied", in_scale = 1}, {tie = "untied", in_scale = 1}, {tie = "tied", in_scale = 5},
              {tie = "untied", in_scale = 2}}

-- The arms as runs named with 'prefix', one kernel thread each, on the same
-- batches; the second has an on_grad hook that halves G_in, counted in 'calls'.
local function make_arms(prefix, calls)
  local runs = {}
  for i, a in ipairs(arms) do
    runs[i] = lab.run(tap.tiny{name = prefix .. i, tie = a.tie, in_scale = a.in_scale, threads = 1, init_seed = 7,
                               data_seed = 3, lens_every = 2, eval_every = 3, align_every = 4})
  end
  runs[2]:on_grad(function(g, step)
    calls[#calls + 1] = step
    g.E_in:scale(0.5)
  end)
  return runs
end

local function same_bits(a, b)
  for _, name in ipairs(a:param_names()) do
    if a:param(name):add(b:param(name), -1):norm() ~= 0 then return false, name end
  end
  return true
end

local calls1, calls2 = {}, {}
local one = make_arms("one", calls1)
lab.workers(1)
lab.step(6)
for _, r in ipairs(one) do r:pause() end
local two = make_arms("two", calls2)
lab.workers(2)
lab.step(6)
for i = 1, #arms do
  local same, differs = same_bits(one[i], two[i])
  tap.ok(same and two[i]:metrics().step == 6 and one[i]:metrics().loss == two[i]:metrics().loss,
         string.format("arm %d (%s, in_scale %g): the bits of one worker after 6 steps with two%s", i, arms[i].tie,
                       arms[i].in_scale, same and "" or " (" .. differs .. " differs)"))
end
tap.is(#calls2, 6, "the hooked run's on_grad ran once a step beside the runs stepped at once")
tap.is(calls2[6], 6, "with the step it completes")
tap.ok(one[1]:metrics().step == 6, "paused runs were not stepped")

-- ------------------------------------------------------------ inside a hook
local refused
local h = two[3]:on_grad(function() refused = select(2, pcall(lab.workers, 1)) end)
lab.step(1)
lab.off(h)
tap.ok(refused and tostring(refused):find("cannot be called inside a step hook"), "lab.workers(n) inside a hook: "
       .. tostring(refused))
tap.is(lab.workers(), 2, "and the workers stay")

-- ------------------------------------------------------------ pause, remove, errors
two[4]:pause()
lab.step(2)
tap.ok(two[4]:metrics().step == 7 and two[1]:metrics().step == 9, "a paused run stays while the others step at once")
two[4]:resume()
lab.remove(two[1])
lab.step(1)
tap.ok(two[4]:metrics().step == 8 and two[3]:metrics().step == 10, "after a removal the others step on")

local fail = two[3]:on_grad(function() error("third says no") end)
local okk, err = pcall(lab.step, 1)
tap.ok(not okk and tostring(err):find("run 'two3'") and tostring(err):find("third says no"),
       "a failing run's error is the step's: " .. tostring(err))
tap.ok(two[3]:metrics().paused and two[4]:metrics().step == 9 and two[2]:metrics().step == 11,
       "its run is paused; the others stepped")
lab.off(fail)
lab.workers(1)
tap.done()
