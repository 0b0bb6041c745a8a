-- bench_workers.lua -- several small runs on identical batches, as
-- lua/paper.lua trains its arms, stepped two ways: one run at a time on
-- 'threads' kernel threads each (one worker), against 'workers' runs at a
-- time on one kernel thread each. Prints the tokens/s of each way (the
-- median of the rounds) and their ratio.
--
--   tielab --headless scripts/bench_workers.lua [key=value ...]
--   tielab --headless scripts/bench_workers.lua corpus=tiny.txt vocab=512 dim=64 layers=3
--
-- Each round times 'steps' lab.steps of each way; which goes first
-- alternates between rounds. Both ways' runs start from the same seeds.
local lab = require "tielab"

local opt = lab.args(arg, {vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, corpus = "",
                           steps = 5, warmup = 2, rounds = 10, threads = 2, workers = 2, eval_every = 50})

-- paper.lua's arms: tied, untied, untied from the tied init, tied with
-- in_scale 2, 5 and 10.
local arms = {{tie = "tied", in_scale = 1, init = 0}, {tie = "untied", in_scale = 1, init = 1000},
              {tie = "untied", in_scale = 1, init = 0}, {tie = "tied", in_scale = 2, init = 0},
              {tie = "tied", in_scale = 5, init = 0}, {tie = "tied", in_scale = 10, init = 0}}

local function options(i, threads)
  local a = arms[i]
  return {name = "arm" .. i, vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads,
          ctx = opt.ctx, batch = opt.batch, corpus = opt.corpus ~= "" and opt.corpus or nil, tie = a.tie,
          in_scale = a.in_scale, init_seed = 1 + a.init, data_seed = 1, threads = threads, align_every = 0,
          eval_every = opt.eval_every}
end

-- Both ways' runs live side by side, the way not being timed paused, so
-- that the two alternate in short bursts (a machine whose load drifts slows
-- both alike) and no burst pays for making runs or tokenizing the corpus.
local ways = {{label = string.format("1 worker, threads=%d", opt.threads), workers = 1, threads = opt.threads},
              {label = string.format("%d workers, threads=1", opt.workers), workers = opt.workers, threads = 1}}
for w, way in ipairs(ways) do
  way.runs = {}
  for i = 1, #arms do
    local o = options(i, way.threads)
    o.name = string.format("way%d_arm%d", w, i)
    way.runs[i] = lab.run(o):pause()
  end
end

-- Tokens per second of 'steps' lab.steps of 'way''s runs alone, after
-- 'warmup' untimed ones (a run's first step allocates and measures), and
-- tokens per second of the process's CPU time (os.clock counts every
-- thread's): on a machine others load, the wall clock says what each way
-- got, the CPU time what each way needs.
local function measure(way, steps, warmup)
  for _, r in ipairs(way.runs) do r:resume() end
  local before = lab.workers(way.workers)
  lab.step(warmup)
  local t0, c0 = lab.clock(), os.clock()
  lab.step(steps)
  local seconds, cpu = lab.clock() - t0, os.clock() - c0
  lab.workers(before)
  for _, r in ipairs(way.runs) do r:pause() end
  local tokens = #arms * steps * opt.batch * opt.ctx
  return tokens / seconds, tokens / cpu
end

local function median(xs)
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

local rates, per_cpu, ratios = {{}, {}}, {{}, {}}, {}
print(string.format("%d runs, vocab %d dim %d layers %d heads %d ctx %d batch %d, corpus %s: %d rounds of %d steps",
                    #arms, opt.vocab, opt.dim, opt.layers, opt.heads, opt.ctx, opt.batch,
                    opt.corpus ~= "" and opt.corpus or "(synthetic)", opt.rounds, opt.steps))
for round = 1, opt.rounds do
  for _, w in ipairs(round % 2 == 1 and {1, 2} or {2, 1}) do
    rates[w][round], per_cpu[w][round] = measure(ways[w], opt.steps, round == 1 and opt.warmup or 0)
  end
  ratios[round] = rates[2][round] / rates[1][round]
  print(string.format("round %d: %s %.0f tok/s (%.0f per CPU s), %s %.0f tok/s (%.0f per CPU s), ratio %.3f", round,
                      ways[1].label, rates[1][round], per_cpu[1][round], ways[2].label, rates[2][round],
                      per_cpu[2][round], ratios[round]))
end
print(string.format("median: %s %.0f tok/s (%.0f per CPU s); %s %.0f tok/s (%.0f per CPU s)", ways[1].label,
                    median(rates[1]), median(per_cpu[1]), ways[2].label, median(rates[2]), median(per_cpu[2])))
print(string.format("ratio %s / %s: %.3f of the medians, %.3f the median of the rounds' ratios", ways[2].label,
                    ways[1].label, median(rates[2]) / median(rates[1]), median(ratios)))
