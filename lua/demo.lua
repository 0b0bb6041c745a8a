-- demo.lua -- a paced demo for a talk, one phase per point: a tied and an
-- untied model train on the same batches; the output side of the tied
-- embedding's gradient dominates early; the tied model is untied and tied
-- again live, without a jump in loss; the input side is boosted five-fold,
-- and the demo answers whether that moved the tied matrix toward the
-- untied model's E_in. Each phase sets its caption (lab.phase) and, in the
-- lab, the chart the present view shows, then waits for the speaker's '.'
-- or 'pace' seconds, whichever comes first (pace=0: only '.'); ',' pauses
-- the demo and its training, Ctrl-C stops it (never the lab). The last
-- caption stays. Headless, the captions and numbers print and nothing waits.
--
--   tielab demo.lua            (in the lab)
--   tielab --headless demo.lua pace=0 steps=20 dim=32 ...
--     pace=3 steps=150 (per phase) vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 seed=1 corpus=
local lab = require "tielab"

local opt = lab.args(arg, {
  pace = 3, steps = 150,
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, seed = 1, corpus = "",
})

-- A factor as a room reads it: 1.3x, 12x (never "1x" for 1.34).
local function times(x)
  if x ~= x or x == math.huge or x == -math.huge then return "?" end
  if math.abs(x) >= 10 then return string.format("%.0f", x) end
  return string.format("%.1f", x)
end

-- A phase: its caption, the chart that makes its point (in the lab's
-- present view), and the wait for the speaker or the pace. The ratio on
-- screen (the present view's big figure, the chart) is grad_ratio, G_in
-- taken at E_in's rows: the caption quotes the same one.
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

-- The tied matrix against the untied model's E_in and E_out, now.
local function gap(tied, untied)
  local al = lab.align(tied, untied)
  lab.plot("linear cos to E_out", al.linear_out)
  lab.plot("linear cos to E_in", al.linear_in)
  print(string.format("  tied matrix vs untied E_in %.3f, vs E_out %.3f (random %.3f)", al.linear_in, al.linear_out,
                      al.baseline.linear_out))
  return al
end

-- Alignment on for both runs, so the lab's alignment panel and chart show
-- scores while the demo talks about them.
local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, corpus = opt.corpus, data_seed = opt.seed,
               align_every = math.max(1, math.min(50, opt.steps // 3)),
               eval_every = math.max(1, math.min(50, opt.steps))}
local function run(extra) return lab.run(shape, extra) end

-- Each phase's change is made before its caption, so that what the room
-- sees while the speaker talks is what the caption says; then it trains.
local tied = run{name = "tied", tie = "tied", init_seed = opt.seed}
local untied = run{name = "untied", tie = "untied", init_seed = opt.seed + 1000}
phase("loss", "One matrix: tokens in, tokens out")

phase("loss", "Tied and untied, the same batches")
lab.step(opt.steps)
report(tied)
report(untied)

phase("ratio", "Output side: %sx the input side",
      times(tied:metrics().grad_ratio))
gap(tied, untied)

tied:set{tie = "untied"}
phase("loss", "Untied live: E_out copies the matrix")
lab.step(opt.steps)
report(tied)

tied:set{tie_merge = "mean", tie = "tied"}
phase("loss", "Tied again: the mean of both")
lab.step(opt.steps)
report(tied)
local before = gap(tied, untied)

tied:set{in_scale = 5}
phase("align", "Input side x5: toward E_in?")
lab.step(opt.steps)
report(tied)
local after = gap(tied, untied)

-- Toward E_in means closer to E_in relative to E_out: the lead of E_out
-- over E_in shrank (both may rise as the models keep learning).
local shift = (after.linear_in - after.linear_out) - (before.linear_in - before.linear_out)
local answer = shift > 0 and "Yes, toward E_in" or "No, not toward E_in"
print(string.format("  %s: cos to E_in %.3f -> %.3f, to E_out %.3f -> %.3f", answer, before.linear_in,
                    after.linear_in, before.linear_out, after.linear_out))
phase("align", "%s", answer)

-- The last caption stays on screen after the demo ends: no wait after it.
local lean = after.linear_out > after.linear_in
if ui then ui.present("align") end
print(string.format("  cos to E_out %.2f, to E_in %.2f", after.linear_out, after.linear_in))
lab.phase("Tied embeddings lean to the %s", lean and "output" or "input")
