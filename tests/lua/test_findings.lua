-- test_findings.lua -- the findings paper.lua and demo.lua share
-- (lua/tielab/findings.lua): the early window, the ratio windows' means,
-- a finding decided across seeds and for one, its words, and the factors
-- at 2 significant digits.
local src = os.getenv("srcdir") or "."
package.path = src .. "/tests/lib/?.lua;" .. src .. "/lua/?.lua;" .. package.path
local tap = require "tap"
local findings = require "tielab.findings"

-- The early window: the warmup when there is one, else the first 10%.
local early, label = findings.early_window(150, 0)
tap.is(early, 15, "no warmup: the first 10% of 150 steps")
tap.is(label, "the first 10%, steps 1-15", "and the table names it so")
tap.is((findings.early_window(5, 0)), 1, "at least one step")
early, label = findings.early_window(100, "20")
tap.is(early, 20, "a warmup of 20 steps is the window")
tap.is(label, "the warmup, steps 1-20", "named as the warmup")
tap.is((findings.early_window(10, 20)), 10, "a warmup longer than the run: the whole run")

-- The ratio windows: per-step values averaged before and after the window.
local w = findings.ratio_windows(2)
for step, act in ipairs{2, 4, 10, 0 / 0, 20} do
  w:add{step = step, grad_ratio_act = act, grad_ratio = act / 2, grad_ratio_act_l1 = act / 10}
end
local v = w:values()
tap.is(v.ratio_act_early, 3, "the early window's mean of grad_ratio_act")
tap.is(v.ratio_early, 1.5, "and of grad_ratio, the chart's")
tap.is(v.ratio_act_late, 15, "the later steps' mean, NaN left out")
tap.is(v.ratio_act_l1_late, 1.5, "and of the L1 ratio")
tap.ok(findings.log(0) ~= findings.log(0), "the log of 0 is NaN, not measured")

-- Decided across seeds: the paired difference and the verdict.
local f = findings.get("scaling_moves_toward_in", {scaled = "tied_x5"})
tap.is(f.measure, "procrustes_in", "the in_scale finding compares procrustes to E_in")
tap.is(f.x[1] .. "-" .. f.y[1], "tied_x5-tied", "the scaled arm minus its tied control")
local per_seed = {tied_x5 = {procrustes_in = {0.5, 0.6, 0.7}}, tied = {procrustes_in = {0.4, 0.5, 0.6}}}
local d, verdict = findings.decide(f, function(arm, key) return per_seed[arm][key] end)
tap.ok(math.abs(d.mean - 0.1) < 1e-12 and d.n == 3, "the paired difference of three seeds")
tap.is(verdict, "held", "held when every seed moved toward E_in alike")
per_seed.tied.procrustes_in = {0.6, 0.7, 0.8}
tap.is(select(2, findings.decide(f, function(arm, key) return per_seed[arm][key] end)), "not held",
       "not held when every seed moved away")

-- One seed: its difference and words, never a verdict.
local r = findings.one_seed(f, {tied_x5 = {procrustes_in = 0.41}, tied = {procrustes_in = 0.4}})
tap.ok(math.abs(r.diff - 0.01) < 1e-12 and r.n == 1, "one seed's difference")
tap.is(r.verdict, "inconclusive", "one seed decides nothing")
tap.is(findings.seen(f, r.diff), "toward E_in vs its control", "above 0: toward E_in")
tap.is(findings.seen(f, -r.diff), "away from E_in vs its control", "below 0: away from it")
tap.is(findings.seen(f, 0), "no difference", "0: no difference")
tap.is(findings.line(f, r), "finding scaling_moves_toward_in measure=procrustes_in x=0.41 y=0.4 diff=+0.01 n=1 verdict=inconclusive",
       "the line a program reads back")
local g = findings.get("early_l2_dominance")
tap.is(findings.one_seed(g, {tied = {log_ratio_act_early = math.log(3)}}).y, 0, "a finding against 0 has y = 0")
tap.raises("no finding 'nope'", "an unknown finding is an error", findings.get, "nope")

-- Factors at 2 significant digits.
for _, c in ipairs{{12.4, "12x"}, {1.74, "1.7x"}, {0.934, "0.93x"}, {9.96, "10x"}, {123, "120x"}, {0 / 0, "?"}} do
  tap.is(findings.ratio_text(c[1]), c[2], string.format("%g reads %s", c[1], c[2]))
end
tap.done()
