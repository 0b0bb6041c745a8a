-- tielab.findings -- the paper's findings, defined once: for each, the
-- arm(s) it compares, the measure, the window of training it reads, the
-- direction the paper claims, and the verdict rule with the reason for
-- it. paper.lua decides them across seeds (and tielab --compare paper runs
-- paper.lua); demo.lua says what one seed shows by the same definitions,
-- so none of them can disagree on the same runs.
--
-- The windows are those of the paper's analysis: early = the first 10% of
-- training, late = the last 10%. The L1 crossover is also reported as the
-- first step after which the tied L1 ratio stays below 1.
--
--   local findings = require "tielab.findings"
--   local win = findings.windows(steps)     -- win.early, win.late_from, labels
--   local w = findings.ratio_windows(steps) -- one per run; w:add(m) each step
--   local v = w:values()                    -- v.ratio_act_early, ..., v.l1_below_from
--   local list = findings.list{steps = steps, layers = L, scaled = "tied_x5"}
--   local d, verdict, reason = findings.decide(list[1], function(arm, key) return per_seed[arm][key] end)
--   print(findings.seen(f, d.mean))         -- "toward E_in vs its control"
local stats = require "tielab.stats"

local M = {}

local nan = 0 / 0

local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end

-- The lens finding compares the early half of the layers; below this depth
-- that half is a single position and "early" says nothing.
M.lens_min_layers = 4

-- ------------------------------------------------------------ windows

-- The paper's windows over a run of 'steps' steps: early = steps
-- 1..early, the first 10%; late = steps late_from..steps, the last 10%.
-- Each has a label a table prints.
function M.windows(steps)
  steps = math.max(1, math.tointeger(steps) or math.floor(tonumber(steps) or 1))
  local tenth = math.max(1, math.ceil(steps / 10))
  local late_from = steps - tenth + 1
  return {steps = steps, early = tenth, late_from = late_from,
          early_label = string.format("steps 1-%d, the first 10%%", tenth),
          late_label = string.format("steps %d-%d, the last 10%%", late_from, steps)}
end

-- The early window's last step and its label (windows(steps).early).
function M.early_window(steps)
  local w = M.windows(steps)
  return w.early, w.early_label
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

-- The first step after which 'series' (step -> value) stays below 1, read
-- through a centred moving mean of half width 'half' steps so that one
-- noisy step neither makes nor breaks it. NaN when it ends at 1 or above,
-- or nothing was measured.
local function below_one_from(series, last, half)
  -- prefix sums of the finite values and of their count: each window's
  -- mean in constant time
  local sum, count = {[0] = 0}, {[0] = 0}
  for s = 1, last do
    local v = series[s]
    local ok = finite(v)
    sum[s], count[s] = sum[s - 1] + (ok and v or 0), count[s - 1] + (ok and 1 or 0)
  end
  local from, seen = nil, false
  for s = 1, last do
    local lo, hi = math.max(1, s - half), math.min(last, s + half)
    local n = count[hi] - count[lo - 1]
    if n > 0 then
      seen = true
      if (sum[hi] - sum[lo - 1]) / n >= 1 then from = nil elseif not from then from = s end
    end
  end
  return seen and from or nan
end

-- One run's gradient ratios |G_out|/|G_in| over a run of 'steps' steps:
-- call w:add(metrics) once for each step the run took. w:values() gives
-- the measures the findings use: ratio_act_early and ratio_act_late (L2,
-- G_in at the lookup's output: the paper's), ratio_early (L2, G_in at
-- E_in's rows: the lab's chart), ratio_act_l1_late (L1), each the mean over
-- its window, and l1_below_from, the first step after which the L1 ratio
-- stays below 1 (moving mean over 2% of the steps).
function M.ratio_windows(steps)
  local win = M.windows(steps)
  local act_early, rows_early, act_late, l1_late = mean_of(), mean_of(), mean_of(), mean_of()
  local l1, last = {}, 0
  local w = {early = win.early, late_from = win.late_from, windows = win}
  function w:add(m)
    if m.step <= win.early then
      act_early.add(m.grad_ratio_act)
      rows_early.add(m.grad_ratio)
    end
    if m.step >= win.late_from then
      act_late.add(m.grad_ratio_act)
      l1_late.add(m.grad_ratio_act_l1)
    end
    if m.step >= 1 and m.step <= win.steps then
      l1[m.step] = m.grad_ratio_act_l1
      last = math.max(last, m.step)
    end
  end
  function w:values()
    return {ratio_act_early = act_early.mean(), ratio_early = rows_early.mean(), ratio_act_late = act_late.mean(),
            ratio_act_l1_late = l1_late.mean(),
            l1_below_from = below_one_from(l1, last, math.floor(win.steps / 100))}
  end
  return w
end

-- The ratios a finding compares on a log scale.
M.log_measures = {"ratio_act_early", "ratio_act_late", "ratio_act_l1_late"}

-- log(v), NaN for what is not positive (or not measured).
function M.log(v) return v > 0 and math.log(v) or nan end

-- ------------------------------------------------------------ the findings

-- How a finding's values read: 'ratio' for logs of ratios (shown as the
-- factor, e.g. 0.78x), 'number' for the rest.
local function signed(x) return string.format("%+.3g", x) end

local function shown(unit, v)
  if not finite(v) then return "-" end
  if unit == "ratio" then return M.ratio_text(math.exp(v)) end
  return string.format("%.3g", v)
end

-- Each finding: 'x' minus 'y' ({arm, measure} each; no 'y': 0) per seed,
-- the paired difference across seeds, and the direction the paper claims
-- ('dir'). 'label' says it in a table; 'seen' says what a difference
-- shows: {above 0, below 0}; 'window' names the part of training it reads
-- ('early', 'late', 'end' or 'lens'); 'unit' how its values read; 'want'
-- what a held verdict needs, in words. opt: 'steps' (the windows), 'layers'
-- (the lens positions), 'scaled' (the scaled arm; none: no scaling
-- findings).
function M.list(opt)
  opt = opt or {}
  local scaled, layers = opt.scaled, opt.layers or M.lens_min_layers
  local mid = math.max(1, layers // 2)
  local t = {
    {id = "align_toward_output", arm = "tied", measure = "linear_out-linear_in", dir = "+", window = "end",
     unit = "number", x = {"tied", "linear_out"}, y = {"tied", "linear_in"},
     label = "tied: linear map to E_out - to E_in", want = "the tied matrix nearer E_out than E_in",
     seen = {"nearer E_out than E_in", "nearer E_in than E_out"}},
    {id = "early_l2_dominance", arm = "tied", measure = "log(ratio_act_early)", dir = "+", window = "early",
     unit = "ratio", x = {"tied", "log_ratio_act_early"},
     label = "tied: log L2 ratio out/in, early", want = "the early L2 ratio above 1x",
     seen = {"output side larger early", "input side larger early"}},
    {id = "l1_crossover", arm = "tied", measure = "log(ratio_act_l1_late)", dir = "-", window = "late",
     unit = "ratio", x = {"tied", "log_ratio_act_l1_late"},
     label = "tied: log L1 ratio out/in, late", want = "the late L1 ratio below 1x",
     seen = {"L1 output side larger late", "L1 input side larger late"}},
    {id = "untied_ratio_spikes", arm = "untied", measure = "log(ratio_act_early)-log(ratio_act_late)", dir = "+",
     window = "early and late", unit = "ratio", x = {"untied", "log_ratio_act_early"},
     y = {"untied", "log_ratio_act_late"},
     label = "untied: log L2 ratio, early - late", want = "the untied ratio higher early than late",
     seen = {"untied ratio higher early", "untied ratio higher late"}},
    {id = "lens_kl_early", arm = "tied-untied", measure = string.format("kl.1-%d", mid), dir = "+", window = "lens",
     unit = "number", x = {"tied", "kl_early"}, y = {"untied", "kl_early"}, layers = layers, mid = mid,
     label = string.format("fitted KL bits, positions 1-%d, tied - untied", mid),
     want = "the tied lens KL above the untied one early",
     seen = {"tied lens KL higher early", "untied lens KL higher early"}},
  }
  if scaled then
    local function scaling(id, measure, label, want, seen)
      t[#t + 1] = {id = id, arm = scaled .. "-tied", measure = measure, dir = "+", window = "end", unit = "number",
                   x = {scaled, measure}, y = {"tied", measure}, label = scaled .. " - tied: " .. label,
                   want = want, seen = seen}
    end
    scaling("scaling_moves_toward_in", "procrustes_in", "procrustes to E_in",
            "the scaled matrix nearer E_in than its control's", {"toward E_in vs its control", "away from E_in vs its control"})
    scaling("scaling_moves_toward_in_linear", "linear_in", "linear map to E_in",
            "the scaled matrix nearer E_in than its control's", {"toward E_in vs its control", "away from E_in vs its control"})
    scaling("scaling_costs_ppl", "val_ppl", "validation perplexity",
            "the scaled arm's perplexity above its control's",
            {"perplexity higher than its control", "perplexity lower than its control"})
  end
  t[#t + 1] = {id = "align_above_baseline", arm = "tied", measure = "linear_out-linear_out_base", dir = "+",
               window = "end", unit = "number", x = {"tied", "linear_out"}, y = {"tied", "linear_out_base"},
               label = "tied: linear to E_out - random baseline", want = "the alignment above its random baseline",
               seen = {"above chance", "below chance"}}
  t[#t + 1] = {id = "shared_init_biases_in", arm = "tied", measure = "linear_in_shared_init-linear_in", dir = "+",
               window = "end", unit = "number", x = {"tied", "linear_in_shared_init"}, y = {"tied", "linear_in"},
               label = "tied: linear to E_in, shared init - own", want = "the shared init nearer E_in than its own",
               seen = {"shared init nearer", "own init nearer"}}
  local win = M.windows(opt.steps or 1)
  local window_label = {early = win.early_label, late = win.late_label,
                        ["early and late"] = win.early_label .. " vs " .. win.late_label,
                        ["end"] = opt.steps and string.format("at step %d, the end", win.steps) or "at the end",
                        lens = string.format("fitted lens, positions 1-%d of %d", mid, layers)}
  for _, f in ipairs(t) do f.window_label = window_label[f.window] end
  return t
end

-- The finding 'id' as M.list defines it with 'opt'.
function M.get(id, opt)
  for _, f in ipairs(M.list(opt or {})) do
    if f.id == id then return f end
  end
  error("tielab.findings: no finding '" .. tostring(id) .. "'", 2)
end

-- The per-seed values (or differences) as they read ("0.79x 0.73x 0.82x").
local function per_seed(unit, xs, sign)
  local t = {}
  for _, v in ipairs(xs) do t[#t + 1] = (sign and unit ~= "ratio") and signed(v) or shown(unit, v) end
  return table.concat(t, " ")
end

-- What was measured, in the finding's terms: its window and value (the
-- mean over seeds; x against y when there is one).
local function measured(f, xs, ys, d)
  local function mean(vs)
    local s, n = 0, 0
    for i, v in ipairs(vs) do
      if finite(v) and (not f.y or finite(xs[i]) and finite(ys[i])) then s, n = s + v, n + 1 end
    end
    return n > 0 and s / n or nan
  end
  local text
  if f.y then
    text = string.format("%s %s %s vs %s %s %s", f.x[1], f.x[2]:gsub("^log_", ""), shown(f.unit, mean(xs)), f.y[1],
                         f.y[2]:gsub("^log_", ""), shown(f.unit, mean(ys)))
  else
    text = string.format("%s %s %s", f.x[1], f.x[2]:gsub("^log_", ""), shown(f.unit, mean(xs)))
  end
  if d.n > 1 and f.y then
    text = text .. string.format(" (per seed %s: %s)", f.unit == "ratio" and "x/y" or "x-y", per_seed(f.unit, d.diffs, true))
  elseif d.n > 1 then
    text = text .. " (per seed " .. per_seed(f.unit, d.diffs) .. ")"
  end
  return string.format("%s: %s", f.window_label or f.window, text)
end


-- The reason for a verdict on the paired difference 'd': what was
-- measured, then why the interval gives this verdict, and for anything
-- but "held" what would have to differ. 'why_not' overrides the verdict
-- with its own reason (a model too shallow, nothing measured).
local function reason_of(f, verdict, d, xs, ys, why_not)
  local what = measured(f, xs, ys, d)
  if why_not then return string.format("%s; %s", what, why_not) end
  if d.n == 1 then
    return string.format("%s; one seed decides nothing: 2 or more seeds needed for %s", what, f.want)
  end
  local ci = string.format("[%s, %s]", signed(d.lo), signed(d.hi))
  if verdict == "held" then
    return string.format("%s; 95%% interval %s lies %s 0", what, ci, f.dir == "+" and "above" or "below")
  elseif verdict == "not held" then
    return string.format("%s; 95%% interval %s lies %s 0: %s, where the paper has %s", what, ci,
                         f.dir == "+" and "below" or "above", f.seen[f.dir == "+" and 2 or 1], f.want)
  end
  return string.format("%s; 95%% interval %s holds 0 over %d seeds: %s would need it wholly %s 0 (more seeds or "
                       .. "steps narrow it)", what, ci, d.n, f.want, f.dir == "+" and "above" or "below")
end

-- Why a finding cannot be decided whatever the values: a lens finding on
-- a model too shallow for an early half. 'opt.notes[id]' adds a caller's
-- note (e.g. lenses that did not converge) to the reason.
local function precondition(f)
  if f.window == "lens" and f.layers < M.lens_min_layers then
    return string.format("L=%d is too shallow: positions 1-%d are no early half (L >= %d needed)", f.layers, f.mid,
                         M.lens_min_layers)
  end
end

-- The finding decided: 'values(arm, measure)' gives one value per seed
-- (NaN: not measured), paired across arms by seed. Returns the paired
-- difference (stats.paired: mean, lo, hi, n, ...), the verdict on the
-- claimed direction -- exactly "held", "not held" or "inconclusive"
-- (always inconclusive with one seed, with nothing measured, or when the
-- model cannot show it) -- and the reason, in one line: the measure, its
-- window and value, and for anything but "held" what would have to differ.
-- 'note' (optional) is added to the reason (e.g. "2/3 lens fits not
-- converged").
function M.decide(f, values, note)
  local xs = values(f.x[1], f.x[2])
  local ys = {}
  if f.y then ys = values(f.y[1], f.y[2]) else for i = 1, #xs do ys[i] = 0 end end
  local d = stats.paired(xs, ys)
  local verdict, why_not = stats.verdict(d.lo, d.hi, f.dir), precondition(f)
  if d.n == 0 then why_not = why_not or "not measured in any seed" end
  if why_not then verdict = "inconclusive" end
  local reason = reason_of(f, verdict, d, xs, f.y and ys or {}, why_not)
  if note and note ~= "" then reason = reason .. "; " .. note end
  return d, verdict, reason
end

-- One seed's finding from 'values[arm][measure]' (numbers): the paired
-- difference of that one seed, its verdict (inconclusive: one seed decides
-- nothing), the reason, and x and y themselves.
function M.one_seed(f, values)
  local function one(arm, key)
    local v = values[arm] and values[arm][key]
    return {type(v) == "number" and v or nan}
  end
  local d, verdict, reason = M.decide(f, one)
  return {x = one(f.x[1], f.x[2])[1], y = f.y and one(f.y[1], f.y[2])[1] or 0, diff = d.mean, n = d.n,
          verdict = verdict, reason = reason}
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
