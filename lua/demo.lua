-- demo.lua -- a paced demo for a talk, one caption per phase: a tied and an
-- untied model train on the same batches; the output side of the tied
-- embedding's gradient dominates early; the tied model is untied and tied
-- again live, without a jump in loss; the input side is boosted five-fold;
-- and the tied matrix is compared with the untied model's input and output
-- matrices. Each phase waits 'pace' seconds after its caption so the room
-- can read it; in the lab the graphs move meanwhile (press Ctrl-C to stop
-- the demo, never the lab). Headless, the captions and numbers print.
--
--   tielab demo.lua            (in the lab)
--   tielab --headless demo.lua pace=0 steps=20 dim=32 ...
--     pace=3 steps=150 (per phase) vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 seed=1 corpus=
local lab = require "tielab"

local opt = lab.args(arg, {
  pace = 3, steps = 150,
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, seed = 1, corpus = "",
})

local function phase(text, ...)
  lab.caption(text, ...)
  lab.sleep(opt.pace)
end

local function report(r)
  local m = r:metrics()
  print(string.format("  %-7s step %5d  loss %.3f  |G_out|/|G_in| %7.2f  (paper's input side %7.2f)", r.name, m.step,
                      m.loss, m.grad_ratio, m.grad_ratio_act))
end

local function gap(tied, untied)
  local al = lab.align(tied, untied)
  lab.plot("linear cos to E_out", al.linear_out)
  lab.plot("linear cos to E_in", al.linear_in)
  print(string.format("  tied matrix vs untied E_in %.3f, vs E_out %.3f (random %.3f)", al.linear_in, al.linear_out,
                      al.baseline.linear_out))
end

local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, corpus = opt.corpus, data_seed = opt.seed, align_every = 0,
               eval_every = math.max(1, math.min(50, opt.steps))}
local function run(extra) return lab.run(shape, extra) end

phase("Weight tying: one matrix both reads tokens in and writes them out")
local tied = run{name = "tied", tie = "tied", init_seed = opt.seed}
local untied = run{name = "untied", tie = "untied", init_seed = opt.seed + 1000}

phase("Two models, the same batches: tied and untied")
lab.step(opt.steps)
report(tied)
report(untied)

phase("The tied matrix gets two gradients: the output side is %.0fx the input side", tied:metrics().grad_ratio_act)
gap(tied, untied)

phase("Untie it, live: E_out gets a copy of the shared matrix")
tied:set{tie = "untied"}
lab.step(opt.steps)
report(tied)

phase("Tie it again, keeping the mean of both matrices")
tied:set{tie_merge = "mean", tie = "tied"}
lab.step(opt.steps)
report(tied)
gap(tied, untied)

phase("Boost the input side five-fold: does the matrix move toward E_in?")
tied:set{in_scale = 5}
lab.step(opt.steps)
report(tied)
gap(tied, untied)

phase("Tied embeddings lean toward the output space")
lab.caption()
