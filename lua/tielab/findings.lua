-- tielab.findings -- the paper's findings, defined once: what each one
-- compares (two measures of two arms, or one against 0), the window of
-- steps a gradient ratio is averaged over, the direction the paper claims
-- and the verdict rule. paper.lua decides them across seeds; demo.lua says
-- what one seed shows by the same definitions, so the two cannot disagree
-- on the same runs.
--
--   local findings = require "tielab.findings"
--   local early, label = findings.early_window(steps, warmup)
--   local w = findings.ratio_windows(early)   -- one per run; w:add(m) each step
--   local v = w:values()                      -- v.ratio_act_early, ...
--   local f = findings.get("scaling_moves_toward_in", {scaled = "tied_x5"})
--   local d, verdict = findings.decide(f, function(arm, key) return per_seed[arm][key] end)
--   print(findings.seen(f, d.mean))           -- "toward E_in vs its control"
local stats = require "tielab.stats"

local M = {}

local nan = 0 / 0

local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end

-- ------------------------------------------------------------ windows

-- The paper's early window is its first 10% of training, its warmup: the
-- warmup when the run has one, else the first 10% of 'steps'. Returns the
-- window's last step and how a table names it.
function M.early_window(steps, warmup)
  warmup = tonumber(warmup) or 0
  if warmup > 0 then
    local early = math.min(warmup, steps)
    return early, string.format("the warmup, steps 1-%d", early)
  end
  local early = math.max(1, math.ceil(steps / 10))
  return early, string.format("the first 10%%, steps 1-%d", early)
end

-- A running mean of the finite values added.
local function mean_of()
  local w = {sum = 0, n = 0}
  function w.add(x)
    if finite(x) then w.sum, w.n = w.sum + x, w.n + 1 end
  end
  function w.mean() return w.n > 0 and w.sum / w.n or nan end
  return w
end

-- One run's gradient ratios |G_out|/|G_in|, averaged over the early window
-- (steps 1..'early') and over the steps after it: call w:add(metrics) once
-- for each step the run took. w:values() gives the means the findings use:
-- ratio_act_early and ratio_act_late (L2, G_in at the lookup's output: the
-- paper's), ratio_early (L2, G_in at E_in's rows: the lab's chart) and
-- ratio_act_l1_late (L1).
function M.ratio_windows(early)
  local act_early, rows_early, act_late, l1_late = mean_of(), mean_of(), mean_of(), mean_of()
  local w = {early = early}
  function w:add(m)
    if m.step <= early then
      act_early.add(m.grad_ratio_act)
      rows_early.add(m.grad_ratio)
    else
      act_late.add(m.grad_ratio_act)
      l1_late.add(m.grad_ratio_act_l1)
    end
  end
  function w:values()
    return {ratio_act_early = act_early.mean(), ratio_early = rows_early.mean(), ratio_act_late = act_late.mean(),
            ratio_act_l1_late = l1_late.mean()}
  end
  return w
end

-- The ratios a finding compares on a log scale.
M.log_measures = {"ratio_act_early", "ratio_act_late", "ratio_act_l1_late"}

-- log(v), NaN for what is not positive (or not measured).
function M.log(v) return v > 0 and math.log(v) or nan end

-- ------------------------------------------------------------ the findings

-- Each finding: 'x' minus 'y' ({arm, measure} each; no 'y': 0) per seed,
-- the paired difference across seeds, and the direction the paper claims
-- ('dir'). 'label' says it in a table; 'seen' says what one seed's
-- difference shows: {above 0, below 0}. 'opt.scaled' names the scaled arm
-- (none: no scaling findings), 'opt.mid' the last lens position of the
-- early KL.
function M.list(opt)
  local scaled, mid = opt.scaled, opt.mid or 1
  local t = {
    {id = "align_toward_output", arm = "tied", measure = "linear_out-linear_in", dir = "+",
     x = {"tied", "linear_out"}, y = {"tied", "linear_in"},
     label = "tied: linear map to E_out - to E_in", seen = {"nearer E_out than E_in", "nearer E_in than E_out"}},
    {id = "early_l2_dominance", arm = "tied", measure = "log(ratio_act_early)", dir = "+",
     x = {"tied", "log_ratio_act_early"},
     label = "tied: log L2 ratio out/in, early window", seen = {"output side larger early", "input side larger early"}},
    {id = "l1_crossover", arm = "tied", measure = "log(ratio_act_l1_late)", dir = "-",
     x = {"tied", "log_ratio_act_l1_late"},
     label = "tied: log L1 ratio out/in, after it", seen = {"L1 output side larger late", "L1 input side larger late"}},
    {id = "untied_ratio_spikes", arm = "untied", measure = "log(ratio_act_early)-log(ratio_act_late)", dir = "+",
     x = {"untied", "log_ratio_act_early"}, y = {"untied", "log_ratio_act_late"},
     label = "untied: log L2 ratio, early - late", seen = {"untied ratio higher early", "untied ratio higher late"}},
    {id = "lens_kl_early", arm = "tied-untied", measure = string.format("kl.1-%d", mid), dir = "+",
     x = {"tied", "kl_early"}, y = {"untied", "kl_early"},
     label = string.format("fitted KL bits, positions 1-%d, tied - untied", mid),
     seen = {"tied lens KL higher early", "untied lens KL higher early"}},
  }
  if scaled then
    local function scaling(id, measure, label, seen)
      t[#t + 1] = {id = id, arm = scaled .. "-tied", measure = measure, dir = "+", x = {scaled, measure},
                   y = {"tied", measure}, label = scaled .. " - tied: " .. label, seen = seen}
    end
    scaling("scaling_moves_toward_in", "procrustes_in", "procrustes to E_in",
            {"toward E_in vs its control", "away from E_in vs its control"})
    scaling("scaling_moves_toward_in_linear", "linear_in", "linear map to E_in",
            {"toward E_in vs its control", "away from E_in vs its control"})
    scaling("scaling_costs_ppl", "val_ppl", "validation perplexity",
            {"perplexity higher than its control", "perplexity lower than its control"})
  end
  t[#t + 1] = {id = "align_above_baseline", arm = "tied", measure = "linear_out-linear_out_base", dir = "+",
               x = {"tied", "linear_out"}, y = {"tied", "linear_out_base"},
               label = "tied: linear to E_out - random baseline", seen = {"above chance", "below chance"}}
  t[#t + 1] = {id = "shared_init_biases_in", arm = "tied", measure = "linear_in_shared_init-linear_in", dir = "+",
               x = {"tied", "linear_in_shared_init"}, y = {"tied", "linear_in"},
               label = "tied: linear to E_in, shared init - own", seen = {"shared init nearer", "own init nearer"}}
  return t
end

-- The finding 'id' as M.list defines it with 'opt'.
function M.get(id, opt)
  for _, f in ipairs(M.list(opt or {})) do
    if f.id == id then return f end
  end
  error("tielab.findings: no finding '" .. tostring(id) .. "'", 2)
end

-- The finding decided: 'values(arm, measure)' gives one value per seed
-- (NaN: not measured), paired across arms by seed. Returns the paired
-- difference (stats.paired: mean, lo, hi, n, ...) and the verdict on the
-- claimed direction: "held", "not held" or "inconclusive" (always with one
-- seed: a single run decides nothing).
function M.decide(f, values)
  local xs = values(f.x[1], f.x[2])
  local ys = {}
  if f.y then ys = values(f.y[1], f.y[2]) else for i = 1, #xs do ys[i] = 0 end end
  local d = stats.paired(xs, ys)
  return d, stats.verdict(d.lo, d.hi, f.dir)
end

-- One seed's finding from 'values[arm][measure]' (numbers): the paired
-- difference of that one seed, its verdict, and x and y themselves.
function M.one_seed(f, values)
  local function one(arm, key)
    local v = values[arm] and values[arm][key]
    return {type(v) == "number" and v or nan}
  end
  local d, verdict = M.decide(f, one)
  return {x = one(f.x[1], f.x[2])[1], y = f.y and one(f.y[1], f.y[2])[1] or 0, diff = d.mean, n = d.n,
          verdict = verdict}
end

-- What one seed's difference shows, in the finding's words; "no difference"
-- at 0 and "not measured" for NaN.
function M.seen(f, diff)
  if diff ~= diff then return "not measured" end
  if diff > 0 then return f.seen[1] end
  if diff < 0 then return f.seen[2] end
  return "no difference"
end

-- A line a program reads back: the finding, x, y, their difference, n and
-- the verdict, the numbers to 6 significant digits.
function M.line(f, r)
  return string.format("finding %s measure=%s x=%.6g y=%.6g diff=%+.6g n=%d verdict=%s", f.id, f.measure, r.x, r.y,
                       r.diff, r.n, r.verdict:gsub(" ", "_"))
end

-- A ratio to 2 significant digits, as the noise of one run allows: 12x,
-- 1.7x, 0.93x ("?" when not finite).
function M.ratio_text(x)
  if not finite(x) or x <= 0 then return "?" end
  x = tonumber(string.format("%.2g", x))   -- rounded first: 9.96 is 10x, not 10.0x
  local digits = math.floor(math.log(x, 10) + 1e-9)
  if digits >= 1 then
    local unit = 10 ^ (digits - 1)
    return string.format("%.0fx", math.floor(x / unit + 0.5) * unit)
  end
  return string.format("%." .. (1 - digits) .. "fx", x)
end

return M
