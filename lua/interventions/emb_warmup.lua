-- emb_warmup.lua -- an embedding learning-rate warmup, one of the fixes the
-- paper proposes: the shared matrix's rate rises from 0 over the first
-- steps, while the output side's early gradient spike would otherwise
-- shape it.
--
-- Tests: does holding the embedding back early make the tied matrix lean
-- less toward the output space, and what does it cost in perplexity? Arm
-- 'warmup' (tied) trains with emb_warmup = floor(fraction * steps): the
-- embedding's rate is scaled by step/emb_warmup until then (the lr series
-- of its history is the rest of the model's).
--
--   tielab --headless lua/interventions/emb_warmup.lua [key=value ...]
--     fraction=0.2 steps=300 seeds=1,2,3
--     vocab=256 dim=64 layers=2 heads=4 ctx=32 batch=16 lr=0.001 corpus=
local intervene = require "tielab.intervene"

local opt = intervene.args(arg, {fraction = 0.2})

intervene.compare{
  title = "embedding warmup", opt = opt,
  arms = {{name = "warmup", settings = {tie = "tied", emb_warmup = math.max(1, math.floor(opt.fraction * opt.steps))}}},
}
