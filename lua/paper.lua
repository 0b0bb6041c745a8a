-- paper.lua -- the measurements of "Weight Tying Biases Token Embeddings
-- Towards the Output Space" (Lopardo et al., arXiv 2603.26663) on a model a
-- laptop trains, each finding tested across seeds.
--
-- For each seed, these arms train side by side on identical batches (the
-- seed's data_seed):
--   tied           one matrix, E_in = E_out
--   untied         its own init (init_seed + 1000): the partner every tied
--                  matrix is aligned with, so that no E_in starts equal to it
--   untied_shared  untied, sharing the tied arm's init: the control for that
--                  bias (a tied matrix starts equal to this run's E_in)
--   tied_xK        tied with the input-side gradient scaled by K (scales=)
-- The training recipe is the paper's (recipe=olmo: AdamW lr 3e-4, eps 1e-5,
-- decay on every tensor, cosine to 0.1x) with the warmup at 10% of the steps
-- and the cosine reaching its floor at the last step. The windows are the
-- paper's analysis's (tielab.findings): early = the first 10% of the
-- steps (the warmup, under this recipe), late = the last 10%.
--
-- After training, the tuned lens of tied, untied and untied_shared (fit=)
-- is fitted post hoc (r:fit_lens, the tuned-lens package's recipe) and
-- every KL reported is a fitted lens's; the online lens the lab trains as it
-- goes is written beside it in PREFIX_lens.csv with lens=online, never in
-- the table. (fit=all fits the scaled arms too, at a fit per arm and seed.)
--
-- Each finding is the paired difference across seeds (the arms of a seed
-- share its batches), with its 95% t interval, n (seeds) and a verdict on
-- the direction the paper claims: held (the interval lies on that side of
-- 0), not held (on the other), inconclusive (it holds 0, or n < 2, or the
-- model cannot show it), and the reason in a line of its own (the reason
-- column of PREFIX_summary.csv): the window, the values, and for anything
-- but held what would have to differ:
--   align_toward_output       tied: linear_out - linear_in > 0
--   early_l2_dominance        tied: log mean L2 ratio |G_out|/|G_in act|
--                             over the early window > 0 (ratio > 1)
--   l1_crossover              tied: log mean L1 ratio over the late
--                             window < 0 (ratio < 1); the table also
--                             gives the step after which it stays below 1
--   untied_ratio_spikes       untied: log early ratio - log late ratio > 0
--   lens_kl_early             fitted KL tied - untied, positions 1..L/2 > 0
--                             (L >= 4; a fit that did not converge is
--                             marked in the table, the CSV and the reason)
--   scaling_moves_toward_in   procrustes_in tied_x5 - tied > 0 (Table 2)
--   scaling_moves_toward_in_linear   the same with the linear map
--   scaling_costs_ppl         val_ppl tied_x5 - tied > 0
--   align_above_baseline      tied: linear_out - its random baseline > 0
--   shared_init_biases_in     tied: linear_in against untied_shared minus
--                             against untied > 0 (tielab's control)
-- and, per arm, the paper's other measures with their intervals: drift
-- from init per matrix (its Figure 3), row norm against log frequency (its
-- Figure 5), KNN@10 and CKA, validation perplexity. All are computed from
-- these runs; 1 seed gives numbers and no verdicts.
--
-- The defaults (V=512 d=64 L=4 H=4 T=64 B=16, 1000 steps, seeds 1,2,3,
-- six arms, nine lens fits) give a verdict in minutes on two cores: the
-- arms of a seed train two at a time on a thread each. On two idle cores
-- the whole run took 5.5 minutes (5.9 on tinyshakespeare), every fit
-- converged in 50-330 lens steps of 2-13 s; training its 18 arms one
-- after another at --bench's speed alone would take 4.5. L=4 is the least
-- depth at which the lens finding's early half (positions 1-2) means
-- something. At V=1024 d=128 (vocab=1024 dim=128) a training step is 2.7
-- times slower. The tests run V=256 d=16-32 L=1-2 for 30 steps.
-- The paper trains OLMo-1B and Pythia-size models on billions of tokens;
-- that scale is out of reach here, and effects that need it may not show.
--
--   tielab --headless paper.lua [key=value ...]
--     steps=1000 seeds=1,2,3 scales=2,5,10
--     vocab=512 dim=64 layers=4 heads=4 ctx=64 batch=16 corpus=
--     recipe=olmo   any run setting too (lr=, warmup=, schedule=,
--                   decay_steps=, lr_min=, eps=, clip=, ...); with
--                   recipe=olmo, warmup defaults to 10% of steps and
--                   decay_steps to steps
--     fit=tied,untied,untied_shared   arms whose lens is fitted and
--                   reported (a list, or all; empty: none)
--     lens_steps=0  the most steps of each fit (0: r:fit_lens's default)
--     lens_tokens=0 positions per lens step (0: r:fit_lens's default; the
--                   paper's lenses take 131072)
--     workers=2     arms of a seed trained at once (each arm on one
--                   thread: threads=1 unless given); 1: one at a time
--     out=paper     PREFIX_steps.csv, PREFIX_lens.csv, PREFIX_summary.csv
--                   (out= writes none); with a verb, the folder DIR
--     VERB          tasks | task=K | slurm | merge: one seed a task, run
--                   by other processes (GNU parallel, a Slurm array; see
--                   tielab.sweep and docs/scale.md), task K the K-th seed
--                   of seeds= (from 0); merge prints this same report and
--                   writes DIR/paper_steps.csv, DIR/paper_lens.csv and
--                   DIR/paper_summary.csv. No verb: every seed here, now.
--     partition= time= cpus=   the slurm verb's #SBATCH lines
local lab = require "tielab"
local findings = require "tielab.findings"
local script = require "tielab.script"
local stats = require "tielab.stats"
local settings = require "tielab.settings"
local sweep = require "tielab.sweep"

local nan = 0 / 0

-- ------------------------------------------------------------ options

local script_defaults = {
  steps = 1000, seeds = "1,2,3", scales = "2,5,10", fit = "tied,untied,untied_shared", lens_steps = 0, lens_tokens = 0, out = "paper",
  vocab = 512, dim = 64, layers = 4, heads = 4, ctx = 64, batch = 16, corpus = "", recipe = "olmo",
  workers = 2, tasks = false, task = -1, slurm = false, merge = false, partition = "", time = "", cpus = "",
}
-- The arguments that choose what to do, not what is measured.
local not_grid = {out = true, tasks = true, task = true, slurm = true, merge = true, partition = true, time = true,
                  cpus = true, workers = true}

-- Every other run setting may be given as key=value ("" = not given),
-- before the script's name or after it (tielab.settings).
local defaults, passthrough = settings.defaults(script_defaults)
local opt = lab.args(arg, defaults)
local given = settings.given(opt, passthrough)

local numbers = script.numbers

local seeds, scales = numbers(opt.seeds), numbers(opt.scales)
-- What cannot be run is said in one line, before any run is made.
if #seeds == 0 then sweep.usage("paper.lua: seeds= names no seed") end
if opt.steps < 1 then sweep.usage("paper.lua: steps= must be at least 1, got %d", opt.steps) end
if opt.workers < 1 or opt.workers > 256 then
  sweep.usage("paper.lua: workers= must be a whole number from 1 to 256, got %d", opt.workers)
end

-- The settings every arm shares.
local shared = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
                batch = opt.batch, corpus = opt.corpus, align_every = 0,
                eval_every = math.max(1, math.min(50, opt.steps))}
if opt.recipe ~= "" then shared.recipe = opt.recipe end
for k, v in pairs(given) do shared[k] = v end
settings.fit_recipe(shared, opt.steps)
-- Small models train fastest side by side, one thread each: the arms of
-- a seed step at once on 'workers' threads (lab.workers), each arm on one
-- thread unless threads= says otherwise. A run's bits depend on its
-- thread count, not on how many step beside it, so 'threads' is part of
-- the tasks' grid and 'workers' is not.
if shared.threads == nil then shared.threads = 1 end

-- The arms: name, tie mode, in_scale, init seed offset from the seed.
local arms = {
  {name = "tied", tie = "tied", in_scale = 1, init = 0},
  {name = "untied", tie = "untied", in_scale = 1, init = 1000},
  {name = "untied_shared", tie = "untied", in_scale = 1, init = 0},
}
for _, k in ipairs(scales) do
  arms[#arms + 1] = {name = string.format("tied_x%g", k), tie = "tied", in_scale = k, init = 0}
end
local arm_index = {}
for i, a in ipairs(arms) do arm_index[a.name] = i end

local fitted = {}
if opt.fit == "all" then
  for _, a in ipairs(arms) do fitted[a.name] = true end
else
  for name in tostring(opt.fit):gmatch("[^,%s]+") do
    if not arm_index[name] then sweep.usage("paper.lua: fit=: no arm '%s'", name) end
    fitted[name] = true
  end
end

-- The scaled arm the scaling findings compare with tied: x5 as in the
-- paper, else the first scale given.
local scaled = arm_index.tied_x5 and "tied_x5" or (arms[4] and arms[4].name)

-- ------------------------------------------------------------ CSV

local function cell(x)
  if x == nil or (type(x) == "number" and x ~= x) then return "" end
  if math.type(x) == "integer" then return string.format("%d", x) end
  if type(x) == "number" then return string.format("%.6g", x) end
  local text = tostring(x)
  -- RFC 4180: a cell with a comma, a quote or a line break is quoted
  if text:find('[,"\r\n]') then return '"' .. text:gsub('"', '""') .. '"' end
  return text
end

-- One CSV line of the cells given.
-- 'text' cut into lines of at most 'width' characters at spaces.
local function wrapped(text, width)
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > width then
      lines[#lines + 1] = line
      line = word
    else
      line = line == "" and word or line .. " " .. word
    end
  end
  if line ~= "" then lines[#lines + 1] = line end
  return lines
end

local function line_of(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = cell(t[i]) end
  return table.concat(t, ",", 1, t.n)
end

local function row(f, ...)
  if f then f:write(line_of(...), "\n") end
end

local headers = {
  steps = "seed,arm,step,loss,lr,warmup,grad_ratio,grad_ratio_act,grad_ratio_l1,grad_ratio_act_l1",
  lens = "seed,arm,position,lens,kl,ce,entropy,acc,converged",
  summary = "finding,measure,arm,mean,ci_low,ci_high,n,verdict,reason",
}

-- PREFIX_steps.csv, PREFIX_lens.csv and PREFIX_summary.csv, opened (none
-- for the prefix "").
local function csv_files(prefix)
  return {steps = script.csv(prefix, "steps", headers.steps), lens = script.csv(prefix, "lens", headers.lens),
          summary = script.csv(prefix, "summary", headers.summary)}
end

-- ------------------------------------------------------------ one seed

local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end

-- The lens finding's early half, as tielab.findings defines it (it says
-- when L is too shallow for one).
local mid = findings.get("lens_kl_early", {layers = opt.layers}).mid

local align_keys = {"linear_in", "linear_out", "procrustes_in", "procrustes_out", "knn_in", "knn_out",
                    "cka_in", "cka_out"}

-- Every arm trained on one seed's batches and measured: the seed's record,
-- which a task keeps in its file and the report reads. 'values[arm][key]'
-- each measure (a number; NaN: not measured), 'steps' and 'lens' the
-- seed's CSV lines, 'fits' each fitted lens's steps, and the early window
-- and recipe as the table names them. The runs stay in the lab when
-- 'keep' (its charts show them).
-- The options of arm 'a''s run for 'seed'.
-- The recipe as the runs have it, in one line: the rate, the warmup and
-- the schedule with the floor it decays to (lr_min, or lr_min_ratio of
-- the rate when lr_min is 0).
local function recipe_line(o)
  local lr = tonumber(o.lr)
  local decay = "constant"
  if (o.schedule or "constant") ~= "constant" then
    local floor = tonumber(o.lr_min) or 0
    local how = ""
    if floor == 0 and (tonumber(o.lr_min_ratio) or 0) > 0 then
      floor = lr * tonumber(o.lr_min_ratio)
      how = string.format(" (%sx lr)", cell(tonumber(o.lr_min_ratio)))
    end
    decay = string.format("%s to %s%s at step %s", o.schedule, cell(floor), how, o.decay_steps or "-")
  end
  return string.format("recipe %s: lr %s, warmup %s, %s", opt.recipe == "" and "(none)" or opt.recipe, cell(lr),
                       o.warmup or "-", decay)
end

local function arm_options(a, seed)
  local o = {name = string.format("%s_s%s", a.name, sweep.num(seed)), tie = a.tie, in_scale = a.in_scale,
             init_seed = seed + a.init, data_seed = seed}
  for k, v in pairs(shared) do o[k] = v end
  return o
end

-- What a lens fit counts for on the progress line, in training steps of
-- one arm: a typical fit's lens steps (about 250: most converge in 100-400)
-- times the work of a lens step against a training step's, from their
-- matrix products (a lens step: the model's forward on its positions and,
-- per position, the translator and the V-wide readout forward and back).
local function lens_fit_units()
  local n_fitted = 0
  for _ in pairs(fitted) do n_fitted = n_fitted + 1 end
  if n_fitted == 0 then return 0, 0 end
  local L, d, V, T = opt.layers, opt.dim, opt.vocab, opt.ctx
  local tokens = opt.lens_tokens > 0 and opt.lens_tokens or 1024
  local train = opt.batch * T * (6 * (12 * L * d * d + V * d) + 12 * L * T * d)
  local lens = tokens * (2 * (12 * L * d * d + V * d) + (L + 1) * 6 * (d * d + V * d))
  local typical = math.min(250, opt.lens_steps > 0 and opt.lens_steps or 250)
  return math.max(1, math.ceil(typical * lens / train)), n_fitted
end
local fit_units, n_fitted = lens_fit_units()
-- A seed's progress units: its arms' steps and its fits.
local seed_units = #arms * opt.steps + n_fitted * fit_units

local function run_seed(seed, progress, label, keep)
  local rec = {seed = seed, values = {}, steps = {}, lens = {}, fits = {}}
  for _, a in ipairs(arms) do rec.values[a.name] = {} end
  local function put(arm, key, v)
    if type(v) == "number" then rec.values[arm][key] = v end
  end
  local function put_alignment(arm, al, suffix)
    for _, k in ipairs(align_keys) do
      put(arm, k .. suffix, al[k])
      put(arm, k .. suffix .. "_base", al.baseline and al.baseline[k])
    end
  end
  -- converged: "" for the online lens, else whether the fit converged.
  local function put_lens(arm, which, t, converged)
    if not t or not t.kl then return end
    for p = 1, #t.kl do
      rec.lens[#rec.lens + 1] = line_of(seed, arm, p - 1, which, t.kl[p], t.ce and t.ce[p], t.entropy and t.entropy[p],
                                        t.acc and t.acc[p], converged)
      if which == "fitted" then put(arm, "kl." .. (p - 1), t.kl[p]) end
    end
    if which == "fitted" then
      local s = 0
      for p = 1, mid do s = s + t.kl[p + 1] end
      put(arm, "kl_early", s / mid)
    end
  end

  local runs = {}
  for i, a in ipairs(arms) do runs[i] = lab.run(arm_options(a, seed)) end
  local o = runs[1]:options()
  local warmup = tonumber(o.warmup) or 0
  local win = findings.windows(opt.steps)
  rec.early_label, rec.late_label = win.early_label, win.late_label
  local acc = {}
  for i = 1, #runs do acc[i] = findings.ratio_windows(opt.steps) end
  rec.recipe_line = recipe_line(o)
  local hook = lab.on_step(function(step)
    progress:step(#runs, label)
    for i, r in ipairs(runs) do
      local m = r:metrics()
      if m.step == step then
        acc[i]:add(m)
        rec.steps[#rec.steps + 1] = line_of(seed, arms[i].name, m.step, m.loss, m.lr, warmup, m.grad_ratio,
                                            m.grad_ratio_act, m.grad_ratio_l1, m.grad_ratio_act_l1)
      end
    end
  end)
  lab.log("seed %d: training %d runs for %d steps, %d at a time", seed, #runs, opt.steps, math.min(opt.workers, #runs))
  local workers = lab.workers(opt.workers)
  lab.step(opt.steps)
  lab.workers(workers)
  lab.off(hook)

  local untied, untied_shared = runs[arm_index.untied], runs[arm_index.untied_shared]
  for i, r in ipairs(runs) do
    r:evaluate_val()   -- the validation loss of the last step, not of the last eval_every
    local a, w, m = arms[i], acc[i]:values(), r:metrics()
    for _, k in ipairs{"ratio_act_early", "ratio_early", "ratio_act_late", "ratio_act_l1_late", "l1_below_from"} do
      put(a.name, k, w[k])
    end
    for _, k in ipairs{"val_ppl", "drift_in", "drift_out", "normfreq_in", "normfreq_out"} do put(a.name, k, m[k]) end
    -- Each matrix against the untied run of another init: for the tied arms
    -- the paper's comparison; for untied_shared how alike two untied runs'
    -- matrices come out, the level "aligned" is read against.
    if a.name ~= "untied" then put_alignment(a.name, lab.align(r, untied), "") end
    if a.name == "tied" then put_alignment(a.name, lab.align(r, untied_shared), "_shared_init") end
    put_lens(a.name, "online", m.lens, "")
    if fitted[a.name] then
      if not r.fit_lens then error("this tielab has no r:fit_lens (the post-hoc tuned lens)", 0) end
      lab.log("seed %d: fitting the tuned lens of %s", seed, a.name)
      local f = r:fit_lens{steps = opt.lens_steps > 0 and opt.lens_steps or nil,
                           tokens_per_step = opt.lens_tokens > 0 and opt.lens_tokens or nil,
                           progress = progress, units = fit_units}
      put_lens(a.name, "fitted", f, f.converged and "true" or "false")
      -- its time on stderr: the report stays the same from run to run
      lab.log("seed %d: %s's lens: %d lens steps, %.1f s, %s", seed, a.name, f.steps, f.seconds,
              f.converged and "converged" or "NOT CONVERGED (" .. tostring(f.stopped) .. ")")
      rec.fits[a.name] = {steps = f.steps, converged = f.converged and true or false, tokens = f.tokens_per_step,
                          seconds = f.seconds}
    end
  end
  if not keep then
    for _, r in ipairs(runs) do r:remove() end
  end
  return rec
end

-- ------------------------------------------------------------ the report

-- The report of the seeds done: 'done' lists {si, rec} (si the seed's
-- place in seeds=), in that order; the CSV lines go to 'files'.
local function report(done, files)
  -- results[arm][measure][seed index] = value (NaN: not measured), so
  -- that the arms' values pair up by seed.
  local results = {}
  for _, a in ipairs(arms) do results[a.name] = {} end
  local function record(arm, key, si, v)
    local r = results[arm]
    if not r[key] then
      r[key] = {}
      for i = 1, #seeds do r[key][i] = nan end
    end
    if type(v) == "number" then r[key][si] = v end
  end
  local function values(arm, key)
    local v = results[arm] and results[arm][key]
    if v then return v end
    local none = {}
    for i = 1, #seeds do none[i] = nan end
    return none
  end
  local steps_csv, lens_csv, summary_csv = files.steps, files.lens, files.summary
  local labels, fit_notes = {}, {}
  for _, d in ipairs(done) do
    local rec = d.rec
    for _, k in ipairs{"early_label", "late_label", "recipe_line"} do labels[k] = labels[k] or rec[k] end
    for _, a in ipairs(arms) do
      for k, v in pairs(rec.values[a.name] or {}) do record(a.name, k, d.si, v) end
      local f = rec.fits[a.name]
      if f then
        local note = fit_notes[a.name] or {steps = {}, converged = 0, tokens = f.tokens}
        note.steps[#note.steps + 1] = f.steps
        note.converged = note.converged + (f.converged and 1 or 0)
        fit_notes[a.name] = note
      end
    end
    if steps_csv then for _, l in ipairs(rec.steps) do steps_csv:write(l, "\n") end end
    if lens_csv then for _, l in ipairs(rec.lens) do lens_csv:write(l, "\n") end end
  end

  -- "k of n lens fits of ARM did not converge", for the arms a lens
  -- finding compares; nil when every fit converged.
  local function unconverged(f)
    local parts = {}
    for _, side in ipairs{f.x, f.y} do
      local n = fit_notes[side[1]]
      if n and n.converged < #n.steps then
        parts[#parts + 1] = string.format("%d of %d %s lens fits not converged", #n.steps - n.converged, #n.steps, side[1])
      end
    end
    return #parts > 0 and table.concat(parts, ", ") or nil
  end

  -- Per-seed quantities the findings difference.
  for _, a in ipairs(arms) do
    for _, k in ipairs(findings.log_measures) do
      for si, v in ipairs(values(a.name, k)) do record(a.name, "log_" .. k, si, findings.log(v)) end
    end
  end

  -- ------------------------------------------------------------ the statistics

  -- The findings, as tielab.findings defines them (demo.lua reports one
  -- seed's by the same definitions).
  local findings_list = findings.list{scaled = scaled, layers = opt.layers, steps = opt.steps}
  for _, f in ipairs(findings_list) do
    f.d, f.verdict, f.reason = findings.decide(f, values, f.window == "lens" and unconverged(f) or nil)
    row(summary_csv, f.id, f.measure, f.arm, f.d.mean, f.d.lo, f.d.hi, f.d.n, f.verdict, f.reason)
  end

  -- Descriptive rows: each measure of each arm, mean over seeds and its 95%
  -- t interval.
  local function finite_values(xs)
    local t = {}
    for _, x in ipairs(xs) do if finite(x) then t[#t + 1] = x end end
    return t
  end
  local function describe(arm, key)
    local xs = finite_values(values(arm, key))
    local m, lo, hi = stats.t_interval(xs)
    return {mean = m, lo = lo, hi = hi, n = #xs}
  end

  local measures = {"val_ppl", "ratio_act_early", "ratio_early", "ratio_act_late", "ratio_act_l1_late", "l1_below_from"}
  for _, suffix in ipairs{"", "_shared_init"} do
    for _, k in ipairs(align_keys) do
      measures[#measures + 1] = k .. suffix
      measures[#measures + 1] = k .. suffix .. "_base"
    end
  end
  for _, k in ipairs{"drift_in", "drift_out", "normfreq_in", "normfreq_out"} do measures[#measures + 1] = k end
  for p = 0, opt.layers do measures[#measures + 1] = "kl." .. p end
  for _, k in ipairs(measures) do
    for _, a in ipairs(arms) do
      local d = describe(a.name, k)
      if d.n > 0 then row(summary_csv, "", k, a.name, d.mean, d.lo, d.hi, d.n, "", "") end
    end
  end
  for _, f in ipairs{steps_csv, lens_csv, summary_csv} do f:close() end

  -- ------------------------------------------------------------ the table

  -- "mean+-h": the mean over seeds and the half width of its 95% t
  -- interval; the mean alone with one seed, "-" when not measured.
  local function show(arm, key, fmt)
    local d = describe(arm, key)
    fmt = fmt or "%.3f"
    if d.n == 0 then return "-" end
    if d.lo ~= d.lo then return string.format(fmt, d.mean) end
    return string.format(fmt .. "+-" .. fmt, d.mean, (d.hi - d.lo) / 2)
  end

  local function signed(x) return x ~= x and "-" or string.format("%+.3f", x) end

  -- A table of arms (rows) by measures (columns), as narrow as 80 columns
  -- allow.
  local function table_of(title, columns, rows_of)
    local width = math.max(8, math.min(14, (80 - 17) // #columns - 1))
    local cellfmt = " %" .. width .. "s"
    print()
    print(title)
    local head = string.format("  %-15s", "arm")
    for _, c in ipairs(columns) do head = head .. string.format(cellfmt, c.title) end
    print(head)
    for _, r in ipairs(rows_of) do
      local line = string.format("  %-15s", r.label)
      for _, c in ipairs(columns) do line = line .. string.format(cellfmt, show(r.arm, c.key .. (r.suffix or ""), c.fmt)) end
      print(line)
    end
  end

  local function arm_rows(filter, baseline)
    local t = {}
    for _, a in ipairs(arms) do
      if not filter or filter(a) then
        t[#t + 1] = {arm = a.name, label = a.name}
        if baseline then t[#t + 1] = {arm = a.name, label = "  random", suffix = "_base"} end
      end
    end
    return t
  end

  print(string.format("tielab paper comparison: %d steps, seeds %s, V=%d d=%d L=%d H=%d T=%d B=%d",
                      opt.steps, table.concat(seeds, ","), opt.vocab, opt.dim, opt.layers, opt.heads, opt.ctx, opt.batch))
  print(labels.recipe_line or "recipe -")
  local given_words = {}
  for _, s in ipairs(passthrough) do
    local v = given[s.name]
    if v ~= nil then given_words[#given_words + 1] = s.name .. " " .. (type(v) == "number" and sweep.num(v) or tostring(v)) end
  end
  if #given_words > 0 then
    for _, l in ipairs(wrapped("settings given: " .. table.concat(given_words, ", "), 80)) do print(l) end
  end
  print(string.format("windows: early %s; late %s", labels.early_label or "-", labels.late_label or "-"))
  print()
  print("the paper's findings: paired difference across seeds (same batches),")
  print("mean and 95% t interval; verdict on the direction the paper claims")
  print(string.format("  %-31s %7s %19s %2s  %s", "finding", "mean", "95% interval", "n", "verdict"))
  for _, f in ipairs(findings_list) do
    local ci = f.d.lo == f.d.lo and string.format("[%s, %s]", signed(f.d.lo), signed(f.d.hi)) or "-"
    print(string.format("  %-31s %7s %19s %2d  %s", f.id, signed(f.d.mean), ci, f.d.n, f.verdict))
    print(string.format("    %s, claim %s 0", f.label, f.dir == "+" and ">" or "<"))
    for _, l in ipairs(wrapped("why: " .. f.reason, 80 - 6)) do print("      " .. l) end
  end
  print()
  print("below: mean over seeds +- half width of its 95% t interval")

  local function gradient_columns()
    return {{title = "L2 early", key = "ratio_act_early", fmt = "%.2f"}, {title = "L2 rows early", key = "ratio_early", fmt = "%.2f"},
            {title = "L2 late", key = "ratio_act_late", fmt = "%.2f"}, {title = "L1 late", key = "ratio_act_l1_late", fmt = "%.2f"}}
  end
  table_of("gradient ratio |G_out|/|G_in|: G_in at the lookup's output (rows: V x d)",
           gradient_columns(), arm_rows())
  print("  early and late: the first and last 10% of the steps")
  print()
  print("the L1 crossover: the step after which the L1 ratio stays below 1")
  for _, a in ipairs(arms) do
    local d = describe(a.name, "l1_below_from")
    print(string.format("  %-13s %s", a.name, d.n == 0 and "never, in any seed"
                        or string.format("%s (in %d of %d seeds; the others never)", show(a.name, "l1_below_from", "%.0f"),
                                         d.n, #done)))
  end
  table_of("alignment with the untied run of another init, after a map (mean row cosine)",
           {{title = "linear E_in", key = "linear_in"}, {title = "linear E_out", key = "linear_out"},
            {title = "procr. E_in", key = "procrustes_in"}, {title = "procr. E_out", key = "procrustes_out"}},
           arm_rows(function(a) return a.name ~= "untied" end, true))
  table_of("neighbours and CKA against the same untied run",
           {{title = "KNN@10 E_in", key = "knn_in"}, {title = "KNN@10 E_out", key = "knn_out"},
            {title = "CKA E_in", key = "cka_in"}, {title = "CKA E_out", key = "cka_out"}},
           arm_rows(function(a) return a.name ~= "untied" end, true))
  table_of("control: tied against untied_shared, whose E_in starts equal to it",
           {{title = "linear E_in", key = "linear_in_shared_init"}, {title = "linear E_out", key = "linear_out_shared_init"},
            {title = "procr. E_in", key = "procrustes_in_shared_init"},
            {title = "procr. E_out", key = "procrustes_out_shared_init"}},
           {{arm = "tied", label = "tied"}, {arm = "tied", label = "  random", suffix = "_base"}})
  table_of("drift (row cosine to step 0) and row norm vs log frequency (correlation)",
           {{title = "drift E_in", key = "drift_in"}, {title = "drift E_out", key = "drift_out"},
            {title = "normfreq E_in", key = "normfreq_in"}, {title = "normfreq E_out", key = "normfreq_out"}},
           arm_rows())

  local lens_columns = {}
  for p = 0, opt.layers do lens_columns[#lens_columns + 1] = {title = string.format("pos %d", p), key = "kl." .. p, fmt = "%.2f"} end
  local lens_rows, marked = arm_rows(function(a) return fitted[a.name] end), false
  for _, r in ipairs(lens_rows) do
    local n = fit_notes[r.arm]
    if n and n.converged < #n.steps then r.label, marked = r.label .. " *", true end
  end
  if #lens_rows > 0 then
    table_of("fitted tuned lens KL(final || lens), bits/token, by position (0: embeddings)",
             lens_columns, lens_rows)
    if marked then print("  * from fits that did not all converge: read these numbers with care") end
    print("  fits (lens steps per seed, how many converged, positions a lens step):")
    for _, a in ipairs(arms) do
      local n = fit_notes[a.name]
      if n then
        print(string.format("    %-13s %s, %d/%d converged, %d a step", a.name, table.concat(n.steps, "/"),
                            n.converged, #n.steps, n.tokens))
      end
    end
  end
  table_of("validation perplexity", {{title = "val ppl", key = "val_ppl", fmt = "%.2f"}}, arm_rows())

end

-- ------------------------------------------------------------ what to do

local verb = opt.tasks or opt.slurm or opt.merge or opt.task ~= -1
if not verb then
  -- Every seed here, one after another, as one comparison.
  local files = csv_files(opt.out)
  local progress = lab.progress(#seeds * seed_units)
  local done = {}
  for si, seed in ipairs(seeds) do
    -- The last seed's runs stay in the lab (its charts show them); the
    -- others make room for the seeds that follow.
    done[si] = {si = si, rec = run_seed(seed, progress, string.format("seed %d (%d/%d)", seed, si, #seeds),
                                        si == #seeds)}
  end
  progress:done()
  report(done, files)
  if opt.out ~= "" then
    print()
    print(string.format("wrote %s_steps.csv, %s_summary.csv, %s_lens.csv", opt.out, opt.out, opt.out))
  end
  return
end

-- One seed a task. The grid: every argument but those that say what to
-- do, lists written canonically, the corpus absolute, run settings not
-- given left out.
local grid = {}
for k, v in pairs(opt) do
  if given[k] ~= nil then grid[k] = given[k]   -- in its own type: lr=3e-3 and lr=0.003 are one grid
  elseif not not_grid[k] and not (defaults[k] == "" and v == "" and script_defaults[k] == nil) then grid[k] = v end
end
grid.seeds = select(2, sweep.list("seeds", opt.seeds))
local scale_words = {}
for _, k in ipairs(scales) do scale_words[#scale_words + 1] = sweep.num(k) end
grid.scales = table.concat(scale_words, ",")
grid.corpus = sweep.absolute(opt.corpus)
grid.threads = shared.threads   -- a run's bits depend on its thread count
shared.corpus = grid.corpus ~= "" and grid.corpus or nil

local sw = sweep.new{
  name = "paper", script = arg[0], out = opt.out, grid = grid,
  points = sweep.product{{"seed", seeds}}, units = seed_units,
  describe = function(p) return "seed " .. sweep.num(p.seed) end,
  check = function(p)
    for _, a in ipairs(arms) do
      local ok, why = lab.check_run(arm_options(a, p.seed))
      if not ok then return nil, a.name .. " arm: " .. why:gsub("^lab%.run: ", "") end
    end
    return true
  end,
  run = function(p, task) return run_seed(p.seed, task.progress, task.label, false) end,
  -- a seed's record: per arm its measures, the CSV lines of its steps and
  -- lenses, and how each post-hoc lens fit went
  result = {seed = "number", early_label = "line", late_label = "line", recipe_line = "line",
            values = sweep.map_of(sweep.map_of("number")), steps = sweep.array_of("line"),
            lens = sweep.array_of("line"),
            fits = sweep.map_of({steps = "number", converged = "boolean", tokens = sweep.optional("number"),
                                 seconds = sweep.optional("number")})},
}
os.exit(sw:main(opt, function(done)
  local list = {}
  for _, d in ipairs(done) do list[#list + 1] = {si = d.index + 1, rec = d.result} end
  report(list, csv_files(sw.dir .. "/paper"))
  io.stderr:write(string.format("paper: wrote %s/paper_steps.csv, paper_summary.csv, paper_lens.csv\n", sw.dir))
end))
