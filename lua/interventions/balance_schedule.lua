-- balance_schedule.lua -- a learned balance schedule, one of the fixes the
-- paper proposes: in_scale driven every step toward a target ratio of the
-- two gradients of a tied matrix.
--
-- Tests: does holding the output side's gradient to 'target' times the
-- input side's make the tied matrix lean less toward the output space, and
-- at what cost in perplexity? Arm 'balance' (tied): r:on_grad reads the two
-- gradients as the backward made them, g.E_out:norm() and g.E_in:norm();
-- after the step in_scale is multiplied by (applied ratio / target)^gain,
-- where the applied ratio is out_scale |G_out| / (in_scale |G_in|), and
-- kept in [0.01, 1000]. The schedule is the run's in_scale history series.
--
--   tielab --headless lua/interventions/balance_schedule.lua [key=value ...]
--     target=1 gain=0.5 steps=300 seeds=1,2,3
--     vocab=256 dim=64 layers=2 heads=4 ctx=32 batch=16 lr=0.001 corpus=
local intervene = require "tielab.intervene"

local opt = intervene.args(arg, {target = 1, gain = 0.5})

local function setup(r, state)
  state.in_scale = 1
  r:on_grad(function(g)
    state.ratio = g.E_out:norm() / g.E_in:norm()
  end)
end

local function after(r, state)
  local applied = state.ratio / state.in_scale      -- out_scale is 1
  local k = state.in_scale * (applied / opt.target) ^ opt.gain
  state.in_scale = math.min(1e3, math.max(1e-2, k))
  r:set{in_scale = state.in_scale}
end

intervene.compare{
  title = "learned balance", opt = opt,
  arms = {{name = "balance", settings = {tie = "tied"}, setup = setup, after = after}},
}
