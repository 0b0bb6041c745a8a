-- aux_recon.lua -- an auxiliary reconstruction loss, one of the fixes the
-- paper proposes: an early hidden state must predict its own input token
-- through the (tied) embedding, so that the matrix hears from the input
-- side directly.
--
-- Tests: does the extra term make a tied matrix lean less toward the output
-- space, and what does it cost in perplexity? Arm 'recon' (tied): at
-- residual position 'position' (1: after block 0) the hidden states h
-- [B*T, d] are read out through E_in, logits = h E_in^T, and the term
-- coef * mean cross-entropy against the input tokens is added. Its
-- gradient reaches the model through both hooks: r:on_hidden adds
-- coef (P - Y) E_in / n to dh (it flows into block 0, the positions and
-- E_in's lookup), r:on_grad adds coef (P - Y)^T h / n to g.E_in (the
-- readout's own use of the matrix). The term is logged as aux_loss. One
-- process only: under mpirun each rank's h holds its own rows of the batch,
-- which this script does not pair with their tokens.
--
--   tielab --headless lua/interventions/aux_recon.lua [key=value ...]
--     coef=0.1 position=1 steps=300 seeds=1,2,3
--     vocab=256 dim=64 layers=2 heads=4 ctx=32 batch=16 lr=0.001 corpus=
local lab = require "tielab"
local intervene = require "tielab.intervene"

local opt = intervene.args(arg, {coef = 0.1, position = 1})

-- Softmax of each row of 'logits' minus the one-hot rows of 'ids', times
-- 'scale', and the mean cross-entropy.
local function softmax_minus_onehot(logits, ids, scale)
  local rows, out, ce = logits:totable(), {}, 0
  for i, row in ipairs(rows) do
    local top = -math.huge
    for _, x in ipairs(row) do if x > top then top = x end end
    local sum = 0
    for j, x in ipairs(row) do
      row[j] = math.exp(x - top)
      sum = sum + row[j]
    end
    local id = ids[i] + 1
    ce = ce - math.log(row[id] / sum)
    for j = 1, #row do row[j] = row[j] / sum * scale end
    row[id] = row[id] - scale
    out[i] = row
  end
  return lab.matrix(out), ce / #rows
end

local function setup(r, state)
  r:on_hidden(opt.position, function(h, dh)
    local E = r:param("E_in")
    local n = h.rows
    state.dlogits, state.aux = softmax_minus_onehot(h:mul(E:t()), state.ids, opt.coef / n)
    state.h = h:copy()                      -- h is lent for this call only
    dh:add(state.dlogits:mul(E))
    return opt.coef * state.aux
  end)
  r:on_grad(function(g)
    g.E_in:add(state.dlogits:t():mul(state.h))
  end)
end

-- The input tokens of this step's batch, in the order of h's rows.
local function before(_, state, _, rows)
  local ids = {}
  for _, row in ipairs(rows) do
    for t = 1, #row - 1 do ids[#ids + 1] = row[t] end
  end
  state.ids = ids
end

intervene.compare{
  title = "auxiliary reconstruction", opt = opt,
  arms = {{name = "recon", settings = {tie = "tied"}, setup = setup, before = before}},
}
