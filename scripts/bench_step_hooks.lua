-- bench_step_hooks.lua -- what an empty r:on_grad and an empty r:on_hidden
-- cost per training step, at config A by default: four runs of the same
-- shape (no hook, an empty on_grad, an empty on_hidden at position 1, both)
-- step in turn, round after round, and the median time per step of each
-- is printed beside the extra milliseconds each hook adds.
--
--   tielab --headless scripts/bench_step_hooks.lua [rounds [steps [threads]]]
local lab = require "tielab"
local rounds, steps, threads = tonumber(arg[1]) or 7, tonumber(arg[2]) or 10, tonumber(arg[3]) or 2
local shape = {vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, threads = threads,
               eval_every = 100000, lens_every = 0}
local arms = {
  {name = "none"},
  {name = "on_grad", setup = function(r) r:on_grad(function() end) end},
  {name = "on_hidden", setup = function(r) r:on_hidden(1, function() end) end},
  {name = "both", setup = function(r) r:on_grad(function() end); r:on_hidden(1, function() end) end},
}
for _, a in ipairs(arms) do
  a.run = lab.run(shape, {name = a.name})
  if a.setup then a.setup(a.run) end
  a.run:step(2)   -- warm
  a.times = {}
end
for _ = 1, rounds do
  for _, a in ipairs(arms) do
    local t0 = lab.clock()
    a.run:step(steps)
    a.times[#a.times + 1] = (lab.clock() - t0) / steps * 1e3
  end
end
local function median(xs)
  table.sort(xs)
  local n = #xs
  return n % 2 == 1 and xs[(n + 1) // 2] or (xs[n // 2] + xs[n // 2 + 1]) / 2
end
local base = median(arms[1].times)
for _, a in ipairs(arms) do
  local m = median(a.times)
  print(string.format("%-10s %8.3f ms/step  %+7.3f ms  (%+.1f%%)", a.name, m, m - base, (m / base - 1) * 100))
end
