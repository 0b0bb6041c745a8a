-- demo.lua -- a paced demo for a talk, one phase per point. Three runs
-- train on the same batches: "tied" (one matrix), "control" (tied, the
-- same init seed: the same run until the last phase) and "untied" (its own
-- init, the partner the tied matrices are aligned with). The recipe is
-- paper.lua's (recipe=olmo, warmup the first 10% of 'steps', the cosine at
-- its floor at step 'steps'), so that the first 'steps' steps are one of
-- paper.lua's runs and the early window is the warmup; the later phases
-- train on at the floor. The phases:
--   1. the runs start; 2. they train 'steps' steps;
--   3. the gradient ratio out/in (G_in at the lookup's output) of tied
--      beside untied, charted step by step, and its means over the windows
--      paper.lua's early_l2_dominance and untied_ratio_spikes use (the
--      first and the last 10% of those steps);
--   4. where the tied matrix lies, still tied from its init as paper.lua's
--      tied arm (align_toward_output: linear map to the untied run's E_out
--      beside the map to its E_in, charted as training went);
--   5-6. tied and control are untied and tied again live (mean merge);
--   7-8. tied's input side is boosted five-fold, control stays at x1, both
--      charted side by side, and the last caption compares the two
--      (scaling_moves_toward_in: procrustes to the untied run's E_in, x5
--      beside control).
-- Each claim is computed by tielab.findings, the definitions paper.lua
-- decides across seeds; one seed decides nothing, so a caption says what
-- "this seed" showed, never a verdict, and names both arms' values. Each
-- claim's chart is a group of lab.plot series ("out/in: tied", "out/in:
-- untied"), the values its caption is computed from. Headless, each claim
-- also prints a "finding ..." line (findings.line) that a test reads back.
-- Each phase sets its caption (lab.phase) and, in the lab, the chart the
-- present view shows, then waits for the speaker's '.' or 'pace' seconds,
-- whichever comes first (pace=0: only '.'); ',' pauses the demo and its
-- training, Ctrl-C stops it (never the lab). The last caption stays.
-- Headless, the captions and numbers print and nothing waits.
--
--   tielab demo.lua            (in the lab)
--   tielab --headless demo.lua pace=0 steps=20 dim=32 ...
--     pace=3 steps=150 (per phase) vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 seed=1 corpus=
--     recipe=olmo (paper.lua's; recipe= : the lab's defaults, lr constant)
local lab = require "tielab"
local findings = require "tielab.findings"
local settings = require "tielab.settings"

local opt = lab.args(arg, {
  pace = 3, steps = 150,
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, seed = 1, corpus = "", recipe = "olmo",
})

-- A phase: its caption, the chart that makes its point (in the lab's
-- present view), and the wait for the speaker or the pace.
local function phase(chart, text, ...)
  lab.phase(text, ...)
  if ui then ui.present(chart) end
  lab.wait_key(opt.pace)
end

local function report(r)
  local m = r:metrics()
  print(string.format("  %-7s step %5d  loss %.3f  |G_out|/|G_in| %7.2f  (paper's input side %7.2f)", r.name, m.step,
                      m.loss, m.grad_ratio, m.grad_ratio_act))
end

-- A finding as one seed shows it: printed for people and for programs.
local function claim(id, values)
  local f = findings.get(id, {scaled = "tied_x5"})
  local r = findings.one_seed(f, values)
  print(string.format("  this seed: %s (%s, %s %+.3g)", findings.seen(f, r.diff), f.id, f.measure, r.diff))
  print("  " .. findings.line(f, r))
  return f, r
end

-- Alignment on for the runs, so the lab's alignment panel and chart show
-- scores while the demo talks about them. The recipe fitted to 'steps'
-- as paper.lua fits it.
local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, corpus = opt.corpus, data_seed = opt.seed,
               align_every = math.max(1, math.min(50, opt.steps // 3)),
               eval_every = math.max(1, math.min(50, opt.steps))}
if opt.recipe ~= "" then shape.recipe = opt.recipe end
settings.fit_recipe(shape, opt.steps)
local function run(extra) return lab.run(shape, extra) end

-- Each claim's chart: its arm and the arm it is compared with, a group of
-- series ui.present shows together ("GROUP: arm").
local RATIO, ALIGN, SCALED = "out/in", "tied linear to", "procrustes E_in"

-- Each phase's change is made before its caption, so that what the room
-- sees while the speaker talks is what the caption says; then it trains.
local tied = run{name = "tied", tie = "tied", init_seed = opt.seed}
local control = run{name = "control", tie = "tied", init_seed = opt.seed}
local untied = run{name = "untied", tie = "untied", init_seed = opt.seed + 1000}
-- The recipe as the runs have it, for the record.
local o = tied:options()
print(string.format("  recipe %s: lr %s, warmup %s, %s to step %s", opt.recipe == "" and "(none)" or opt.recipe,
                    tostring(o.lr), tostring(o.warmup), tostring(o.schedule), tostring(o.decay_steps)))
phase("loss", "One matrix: tokens in, tokens out")

-- The tied matrix against the untied run's E_in and E_out, charted.
local function plot_align(step)
  local al = lab.align(tied, untied)
  lab.plot(ALIGN .. ": E_out", al.linear_out, step)
  lab.plot(ALIGN .. ": E_in", al.linear_in, step)
end

-- The gradient ratios over the first phase, in the windows paper.lua
-- averages: the first and the last 10% of its steps. The chart is the
-- series the windows average, step by step.
local win = findings.windows(opt.steps)
local windows = {tied = findings.ratio_windows(opt.steps), untied = findings.ratio_windows(opt.steps)}
local watched = {tied = tied, untied = untied}
local hook = lab.on_step(function(step)
  for name, w in pairs(windows) do
    local m = watched[name]:metrics()
    if m.step == step then
      w:add(m)
      lab.plot(RATIO .. ": " .. name, m.grad_ratio_act, m.step)
    end
  end
  if step % shape.align_every == 0 and step < opt.steps then plot_align(step) end
end)
phase("loss", "Tied, a tied twin and untied: the same batches")
lab.step(opt.steps)
lab.off(hook)
report(tied)
report(untied)

-- Phase 3: the ratio's window means, for tied and for untied beside it.
local function ratio_values(name)
  local v = windows[name]:values()
  for _, k in ipairs(findings.log_measures) do v["log_" .. k] = findings.log(v[k]) end
  return v
end
local ratios = {tied = ratio_values("tied"), untied = ratio_values("untied")}
-- "tied A, untied B" for one of the means, at 2 significant digits ("A, B"
-- when the runs are named already).
local function pair(key, named)
  return string.format(named and "tied %s, untied %s" or "%s, %s", findings.ratio_text(ratios.tied[key]),
                       findings.ratio_text(ratios.untied[key]))
end
local windows_text = string.format("steps 1-%d: %s", win.early, pair("ratio_act_early", true))
if win.late_from > win.early then
  windows_text = windows_text .. string.format("; %d-%d: %s", win.late_from, opt.steps, pair("ratio_act_late"))
end
print("  out/in, L2 with G_in at the lookup's output (the paper's, charted): " .. windows_text)
print(string.format("  the lab's ratio chart's out/in, G_in at E_in's rows, steps 1-%d: %s", win.early,
                    pair("ratio_early", true)))
claim("early_l2_dominance", ratios)
claim("untied_ratio_spikes", ratios)
phase(RATIO, "This seed, out/in %s", windows_text)

-- Phase 4: the tied matrix against the untied run's E_in and E_out, at
-- the end of the steps it trained tied from its init, as paper.lua's tied
-- arm is measured.
local function aligned(r)
  local al = lab.align(r, untied)
  print(string.format("  %s vs untied: linear E_in %.3f, E_out %.3f; procrustes E_in %.3f, E_out %.3f (random %.3f)",
                      r.name, al.linear_in, al.linear_out, al.procrustes_in, al.procrustes_out,
                      al.baseline.linear_out))
  return al
end
local al = aligned(tied)
lab.plot(ALIGN .. ": E_out", al.linear_out, tied:metrics().step)
lab.plot(ALIGN .. ": E_in", al.linear_in, tied:metrics().step)
local f, r = claim("align_toward_output", {tied = al})
phase(ALIGN, "This seed: tied matrix %s (linear cos %.2f vs %.2f)", findings.seen(f, r.diff), al.linear_out,
      al.linear_in)

-- Phases 5-6: the twins go through the same changes, so that control
-- stays the same run as tied until the input side is scaled.
local twins = {tied, control}
local function both(settings_)
  for _, t in ipairs(twins) do t:set(settings_) end
end
both{tie = "untied"}
phase("loss", "Untied live: E_out copies the matrix")
lab.step(opt.steps)
report(tied)

both{tie_merge = "mean", tie = "tied"}
phase("loss", "Tied again: the mean of both")
lab.step(opt.steps)
report(tied)

-- Phases 7-8: in_scale 5 on tied alone; control, the same run so far,
-- trains beside it on the same batches at x1. Both charted, from the
-- point where they are still one run.
local function plot_scaled(step)
  lab.plot(SCALED .. ": x5", lab.align(tied, untied).procrustes_in, step)
  lab.plot(SCALED .. ": control", lab.align(control, untied).procrustes_in, step)
end
local from = tied:metrics().step + 1
plot_scaled(from - 1)
tied:set{in_scale = 5}
hook = lab.on_step(function(step)
  if (step - from + 1) % shape.align_every == 0 and step - from + 1 < opt.steps then plot_scaled(step) end
end)
phase(SCALED, "Input side x5 on tied, control stays x1: toward E_in?")
lab.step(opt.steps)
lab.off(hook)
report(tied)
report(control)
local scaled, kept = aligned(tied), aligned(control)
lab.plot(SCALED .. ": x5", scaled.procrustes_in, tied:metrics().step)
lab.plot(SCALED .. ": control", kept.procrustes_in, control:metrics().step)
f, r = claim("scaling_moves_toward_in", {tied_x5 = scaled, tied = kept})

-- The last caption stays on screen after the demo ends: no wait after it.
if ui then ui.present(SCALED) end
-- Both arms' values, and their difference, which the claim rests on, at 2
-- significant digits.
lab.phase("This seed, x5 at steps %d-%d: %s (procrustes to E_in %.3f vs control %.3f, %+.2g)", from,
          tied:metrics().step, findings.seen(f, r.diff), r.x, r.y, r.diff)
