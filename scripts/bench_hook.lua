-- bench_hook.lua -- what an on_step hook that reads the metrics costs,
-- as a share of the training step (config A by default).
--
--   tielab --headless scripts/bench_hook.lua [steps]
--
-- It trains with a hook that calls r:metrics() on every step, then times the
-- same hook alone many times: the hook's cost over the step's time is the
-- overhead the hook adds to training.
local lab = require "tielab"
local steps = tonumber(arg[1]) or 60
local r = lab.run{name = "a", vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16,
                  threads = 2}
local last
lab.on_step(function() last = r:metrics() end)
r:step(steps)
local step_s = 1024 / last.tokens_per_s
local n, t0 = 2000, os.clock()
for _ = 1, n do last = r:metrics() end
local hook_s = (os.clock() - t0) / n
print(string.format('{"step_ms":%.3f,"hook_ms":%.4f,"hook_share":%.5f}', step_s * 1e3, hook_s * 1e3,
                    hook_s / step_s))
