-- untie_late.lua -- train tied, untie at a fraction of training with the
-- optimizer's moments copied (one public speed-run recipe unties its head
-- at 2/3 of training), one of the tying schedules the paper's discussion
-- invites.
--
-- Tests: once untied, does E_in lean back toward the input space, and what
-- does the late split cost or buy in perplexity? Arm 'untie' (tied) gets
-- r:set{tie = "untied"} after step floor(at * steps): E_out takes a copy of
-- the shared matrix and of its Adam moments, and the two train apart from
-- there.
--
--   tielab --headless lua/interventions/untie_late.lua [key=value ...]
--     at=0.667 steps=300 seeds=1,2,3
--     vocab=256 dim=64 layers=2 heads=4 ctx=32 batch=16 lr=0.001 corpus=
local intervene = require "tielab.intervene"

local opt = intervene.args(arg, {at = 0.667})
local untie_after = math.floor(opt.at * opt.steps)

intervene.compare{
  title = "untie late", opt = opt,
  arms = {{name = "untie", settings = {tie = "tied"},
           after = function(r, _, step) if step == untie_after then r:set{tie = "untied"} end end}},
}
