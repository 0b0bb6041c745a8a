-- bench_align.lua -- how long the alignment instrument takes on two [V,d]
-- embedding matrices (default 4096 x 256): every metric of one matrix
-- against another, with its random baseline.
--
--   tielab --headless scripts/bench_align.lua [vocab] [dim] [repeats]
--
-- lab.align(a, b) compares a's matrix with b's E_in and with b's E_out, so
-- one call is two comparisons; the first call also builds the workspace and
-- the baseline's factorisation, which later calls reuse.
--
-- This is the live instrument, every metric, in a warm workspace. The
-- paper's Table 1 alone, fresh, at a released model's size (two random
-- 50k x 2048 matrices) is `tielab --bench --align --vocab 50304 --dim 2048`.
local lab = require "tielab"
local vocab, dim, reps = tonumber(arg[1]) or 4096, tonumber(arg[2]) or 256, tonumber(arg[3]) or 5
local function run(name, tie)
  return lab.run{name = name, tie = tie, vocab = vocab, dim = dim, layers = 1, heads = 4, ctx = 16,
                 batch = 2, lens_every = 0, eval_every = 0, align_every = 0, init_seed = #name}
end
local a, b = run("tied", "tied"), run("untied", "untied")
local function timed()
  local t0 = lab.clock()
  lab.align(a, b)
  return (lab.clock() - t0) / 2 * 1e3
end
local first, times = timed(), {}
for i = 1, reps do times[i] = timed() end
table.sort(times)
print(string.format('{"vocab":%d,"dim":%d,"first_ms":%.1f,"median_ms":%.1f,"best_ms":%.1f}', vocab, dim, first,
                    times[(reps + 1) // 2], times[1]))
