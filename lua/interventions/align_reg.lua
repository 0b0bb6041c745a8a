-- align_reg.lua -- an alignment regulariser between E_in and E_out, one of
-- the fixes the paper proposes, and its opposite.
--
-- Tests: does pulling an untied model's two matrices together make its
-- input matrix lean toward the output space as tying does, and does
-- pushing them apart keep it further from it? Arms (tie= sets the untied
-- or partially tied layout of all three):
--   untied   no penalty: the control
--   pull     penalty lambda/2 ||E_in - E_out||^2 (Frobenius), its
--            gradient lambda (E_in - E_out) added to g.E_in and subtracted
--            from g.E_out in r:on_grad, before the clip and the optimizer
--   push     the same with -lambda
-- each against the tied baseline and against 'untied'. With partial tying
-- (tie=K) the shared columns are equal and the penalty falls on the rest.
--
--   tielab --headless lua/interventions/align_reg.lua [key=value ...]
--     lambda=0.1 tie=untied steps=300 seeds=1,2,3
--     vocab=256 dim=64 layers=2 heads=4 ctx=32 batch=16 lr=0.001 corpus=
local intervene = require "tielab.intervene"

local opt = intervene.args(arg, {lambda = 0.1, tie = "untied"})

-- r:on_grad adding the gradient of (sign*lambda/2) ||E_in - E_out||^2.
local function penalty(sign)
  return function(r)
    r:on_grad(function(g)
      local diff = r:param("E_in") - r:param("E_out")   -- the weights of this step
      g.E_in:add(diff, sign * opt.lambda)
      g.E_out:add(diff, -sign * opt.lambda)
    end)
  end
end

intervene.compare{
  title = "alignment regulariser", opt = opt,
  arms = {
    {name = "untied", settings = {tie = opt.tie}},
    {name = "pull", settings = {tie = opt.tie}, setup = penalty(1), against = {"tied", "untied"},
     claims = {untied = {bias = "+"}}},
    {name = "push", settings = {tie = opt.tie}, setup = penalty(-1), against = {"tied", "untied"},
     claims = {untied = {bias = "-"}}},
  },
}
