-- test_findings.lua -- the findings paper.lua and demo.lua share
-- (lua/tielab/findings.lua): the early and late windows, the ratio
-- windows' means and the L1 crossover step, a finding decided across seeds
-- and for one with the reason for its verdict, the lens finding's depth,
-- its words, and the factors at 2 significant digits.
local src = os.getenv("srcdir") or "."
package.path = src .. "/tests/lib/?.lua;" .. src .. "/lua/?.lua;" .. package.path
local tap = require "tap"
local findings = require "tielab.findings"

-- The windows: the first and the last 10% of the steps.
local win = findings.windows(150)
tap.is(win.early, 15, "early: the first 10% of 150 steps")
tap.is(win.late_from, 136, "late: the last 10%, from step 136")
tap.is(win.early_label, "steps 1-15, the first 10%", "and a table names it so")
tap.is(win.late_label, "steps 136-150, the last 10%", "and the late one")
tap.is(findings.windows(5).early, 1, "at least one step early")
tap.is(findings.windows(5).late_from, 5, "and late")
tap.is((findings.early_window(1000)), 100, "early_window is the windows' early one")

-- The ratio windows: per-step values averaged over each window.
local w = findings.ratio_windows(20)
for step = 1, 20 do
  local act = step <= 2 and 10 or (step >= 19 and 4 or 1)
  w:add{step = step, grad_ratio_act = act, grad_ratio = act / 2, grad_ratio_act_l1 = step <= 10 and 3 or 0.5}
end
local v = w:values()
tap.is(v.ratio_act_early, 10, "the early window's mean of grad_ratio_act (steps 1-2)")
tap.is(v.ratio_early, 5, "and of grad_ratio, the chart's")
tap.is(v.ratio_act_late, 4, "the late window's mean (steps 19-20), not the steps between")
tap.is(v.ratio_act_l1_late, 0.5, "and of the L1 ratio")
tap.is(v.l1_below_from, 11, "the L1 ratio stays below 1 from step 11")
w = findings.ratio_windows(4)
for step, l1 in ipairs{0.5, 0 / 0, 0.5, 2} do w:add{step = step, grad_ratio_act = 1, grad_ratio = 1, grad_ratio_act_l1 = l1} end
tap.ok(w:values().l1_below_from ~= w:values().l1_below_from, "above 1 at the end: it never stays below (NaN)")
-- One noisy step above 1 is smoothed over at 2% of 500 steps (5 either side).
w = findings.ratio_windows(500)
for step = 1, 500 do
  local l1 = step < 100 and 2 or (step == 300 and 1.5 or 0.8)
  w:add{step = step, grad_ratio_act = 1, grad_ratio = 1, grad_ratio_act_l1 = l1}
end
tap.ok(math.abs(w:values().l1_below_from - 104) <= 2, "one noisy step does not move the crossover: " ..
       tostring(w:values().l1_below_from))
tap.ok(findings.log(0) ~= findings.log(0), "the log of 0 is NaN, not measured")

-- Decided across seeds: the paired difference and the verdict.
local f = findings.get("scaling_moves_toward_in", {scaled = "tied_x5"})
tap.is(f.measure, "procrustes_in", "the in_scale finding compares procrustes to E_in")
tap.is(f.x[1] .. "-" .. f.y[1], "tied_x5-tied", "the scaled arm minus its tied control")
local per_seed = {tied_x5 = {procrustes_in = {0.5, 0.6, 0.7}}, tied = {procrustes_in = {0.4, 0.5, 0.6}}}
local function of(arm, key) return per_seed[arm][key] end
local d, verdict, reason = findings.decide(f, of)
tap.ok(math.abs(d.mean - 0.1) < 1e-12 and d.n == 3, "the paired difference of three seeds")
tap.is(verdict, "held", "held when every seed moved toward E_in alike")
tap.is(reason, "at the end: tied_x5 procrustes_in 0.6 vs tied procrustes_in 0.5 (per seed x-y: +0.1 +0.1 +0.1); "
       .. "95% interval [+0.1, +0.1] lies above 0", "the reason: window, values, per seed, interval")
per_seed.tied.procrustes_in = {0.6, 0.7, 0.8}
d, verdict, reason = findings.decide(f, of)
tap.is(verdict, "not held", "not held when every seed moved away")
tap.like(reason, "lies below 0: away from E_in vs its control, where the paper has the scaled matrix nearer E_in",
         "and says what would have to differ")
per_seed.tied.procrustes_in = {0.4, 0.7, 0.5}
d, verdict, reason = findings.decide(f, of, "a note")
tap.is(verdict, "inconclusive", "inconclusive when the seeds disagree")
tap.ok(reason:find("holds 0 over 3 seeds: the scaled matrix nearer E_in than its control's would need it wholly above 0", 1, true)
       and reason:sub(-8) == "; a note", "why, and the caller's note: " .. reason)
per_seed.tied.procrustes_in = {0 / 0, 0 / 0, 0 / 0}
d, verdict, reason = findings.decide(f, of)
tap.ok(verdict == "inconclusive" and reason:find("not measured in any seed", 1, true), "nothing measured: " .. reason)

-- The windows a finding reads, by name, with the steps of the run.
local list = findings.list{steps = 300, layers = 4, scaled = "tied_x5"}
local by = {}
for _, g in ipairs(list) do by[g.id] = g end
tap.is(by.l1_crossover.window_label, "steps 271-300, the last 10%", "the L1 crossover reads the last 10%")
tap.is(by.early_l2_dominance.window_label, "steps 1-30, the first 10%", "early dominance the first 10%")
tap.is(by.lens_kl_early.measure, "kl.1-2", "L=4: the lens's early half is positions 1-2")

-- The lens finding on a model too shallow for an early half.
local lens = findings.get("lens_kl_early", {layers = 3, steps = 100})
d, verdict, reason = findings.decide(lens, function(arm) return arm == "tied" and {0.5, 0.6, 0.7} or {0.1, 0.1, 0.1} end)
tap.is(verdict, "inconclusive", "L=3: inconclusive however clear the difference")
tap.like(reason, "L=3 is too shallow: positions 1-1 are no early half (L >= 4 needed)", "and says why")
tap.is(select(2, findings.decide(findings.get("lens_kl_early", {layers = 4}),
                                 function(arm) return arm == "tied" and {0.5, 0.6, 0.7} or {0.1, 0.1, 0.1} end)),
       "held", "L=4: the same values decide")

-- One seed: its difference and words, never a verdict.
local r = findings.one_seed(f, {tied_x5 = {procrustes_in = 0.41}, tied = {procrustes_in = 0.4}})
tap.ok(math.abs(r.diff - 0.01) < 1e-12 and r.n == 1, "one seed's difference")
tap.is(r.verdict, "inconclusive", "one seed decides nothing")
tap.like(r.reason, "one seed decides nothing: 2 or more seeds needed", "and the reason says so")
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
