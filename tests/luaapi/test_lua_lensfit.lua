-- test_lua_lensfit.lua -- r:fit_lens from Lua: its options checked by
-- name, the fields and types of what it returns, r:metrics().fitted_lens
-- nil before a fit and the fit's table after, the live curve falling and a
-- huge rate not converged, the online lens left alone,
-- the fit an event, and the fitted lens kept by r:save and lab.load.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local r = lab.run(tap.tiny{name = "fit", seed = 3, lens_every = 5, eval_every = 20})
r:step(40)
tap.is(r:metrics().fitted_lens, nil, "metrics().fitted_lens is nil before a fit")
tap.ok(type(r.fit_lens) == "function", "r:fit_lens exists")

tap.raises("unknown key 'step'", "a misspelled key is an error naming it", r.fit_lens, r, {step = 3})
tap.raises("'steps'", "steps = 0 is refused by name", r.fit_lens, r, {steps = 0})
tap.raises("'steps'", "a fractional steps is refused by name", r.fit_lens, r, {steps = 2.5})
tap.raises("'lr'", "lr <= 0 is refused by name", r.fit_lens, r, {lr = 0})
tap.raises("'tokens_per_step'", "tokens_per_step < 1 is refused by name", r.fit_lens, r, {tokens_per_step = 0})
tap.raises("'tol'", "tol <= 0 is refused by name", r.fit_lens, r, {tol = -1})
tap.raises("'tol'", "a tol that is not a number is refused by name", r.fit_lens, r, {tol = "x"})
tap.raises("'patience'", "patience = 0 is refused by name", r.fit_lens, r, {patience = 0})
tap.raises("'progress' must be a lab.progress object", "a progress that is not one is refused", r.fit_lens, r,
           {progress = 3})
tap.raises("'units' needs 'progress'", "units without a progress is refused", r.fit_lens, r, {units = 3})
tap.is(r:metrics().fitted_lens, nil, "refused fits leave no fitted lens")

local before = r:evaluate({{1, 2, 3, 4, 5, 6, 7, 8, 9}}).loss
local online = r:metrics().lens
local f = r:fit_lens{steps = 30, lr = 0.5, tokens_per_step = 128, tol = 1e-4}
tap.is(r:evaluate({{1, 2, 3, 4, 5, 6, 7, 8, 9}}).loss, before, "the weights do not change (the same loss)")
tap.is(f.n, 3, "the fit covers positions 0..L")
for _, k in ipairs{"kl", "ce", "entropy", "acc", "agree", "contrib"} do
  tap.ok(type(f[k]) == "table" and #f[k] == 3 and type(f[k][1]) == "number", "f." .. k .. " per position")
end
tap.is(f.kl[3], 0.0, "KL at position L is exactly 0")
tap.is(f.step, 40, "f.step is the run's step")
tap.ok(math.type(f.steps) == "integer" and f.steps >= 1 and f.steps <= 30, "f.steps " .. tostring(f.steps))
tap.is(type(f.converged), "boolean", "f.converged is a boolean")
tap.is(f.lr, 0.5, "f.lr")
tap.is(f.tol, 1e-4, "f.tol")
tap.is(f.tokens_per_step, 128, "f.tokens_per_step")
tap.ok(type(f.curve) == "table" and #f.curve >= 2, "f.curve has points (" .. #f.curve .. ")")
tap.ok(f.curve[1].step == 0 and f.curve[#f.curve].step == f.steps, "the curve runs from step 0 to the last")
local kept_falls = true
for i = 2, #f.curve do kept_falls = kept_falls and f.curve[i].kept <= f.curve[i - 1].kept end
tap.ok(kept_falls and type(f.curve[2].kl) == "number", "each point has kl, and the kept mean never rises")
tap.is(f.patience, 50, "f.patience (the default)")
tap.ok(f.stopped == "converged" or f.stopped == "max_steps" or f.stopped == "diverged", "f.stopped " .. f.stopped)
tap.is(f.converged, f.stopped == "converged", "converged exactly when stopped says so")
tap.ok(type(f.seconds) == "number" and f.seconds > 0, "f.seconds, the fit's wall time")
tap.ok(#f.start_kl == 3 and #f.lsq_kl == 3 and #f.chosen_kl == 3, "f.start_kl, f.lsq_kl and f.chosen_kl per position")
local function mean(t) return (t[1] + t[2]) / 2 end
tap.ok(mean(f.chosen_kl) < 0.8 * mean(f.start_kl),
       string.format("where chosen, the fitted lens is well below the online lens it started from (%.4f vs %.4f)",
                     mean(f.chosen_kl), mean(f.start_kl)))
tap.ok(math.abs(mean(f.chosen_kl) - f.curve[#f.curve].kept) < 1e-9,
       "f.chosen_kl is the kept lens where it was chosen: the curve's last kept mean")
tap.ok(f.kl[1] ~= f.chosen_kl[1],
       string.format("f.kl is measured elsewhere, on the report set (%.3g vs %.3g where chosen, at position 0)",
                     f.kl[1], f.chosen_kl[1]))

local m = r:metrics()
tap.ok(type(m.fitted_lens) == "table", "metrics().fitted_lens after a fit")
tap.is(m.fitted_lens.kl[1], f.kl[1], "it holds the fit's numbers")
tap.is(m.fitted_lens.steps, f.steps, "and its steps")
tap.is(m.fitted_lens.converged, f.converged, "and whether it converged")
tap.is(m.fitted_lens.step, 40, "and the step it was fitted at")
tap.is(m.lens.kl[1], online.kl[1], "metrics().lens stays the online lens")
local found = false
for _, e in ipairs(r:events()) do found = found or e.text:find("lens fitted: " .. f.steps .. " steps", 1, true) ~= nil end
tap.ok(found, "the fit is an event in the history")

r:step(5)
tap.is(r:metrics().fitted_lens.step, 40, "training on leaves the fitted lens at the step it was fitted at")

local path = os.tmpname()
tap.ok(r:save(path), "a run with a fitted lens saves")
local back = lab.load(path, "back")
tap.ok(back and back:metrics().fitted_lens and back:metrics().fitted_lens.kl[1] == f.kl[1],
       "and loads with it")
local bf = back and back:metrics().fitted_lens
tap.ok(bf and bf.stopped == f.stopped and bf.converged == f.converged and bf.seconds == f.seconds and
       bf.patience == f.patience, "with why it stopped, its wall time and patience")
os.remove(path)

-- A rate far too high sends the live lens off the kept one; the fit goes
-- back to the kept translators at half the rate until the live lens holds
-- them (here, where the kept KL is near 0, its gradient vanishes there),
-- and only then may say converged. (Diverged for good: tests/lab/test_lensfit.)
local hot = r:fit_lens{steps = 200, lr = 1e6, tokens_per_step = 128, patience = 10}
local hot_end, left = hot.curve[#hot.curve], false
for _, p in ipairs(hot.curve) do left = left or p.kl > 1.25 * p.kept + 0.02 end
tap.ok(left, "at lr 1e6 the live lens leaves the kept one")
tap.ok(hot.converged == (hot.stopped == "converged") and hot.diverged == (hot.stopped == "diverged") and
       (not hot.converged or hot_end.kl <= 1.25 * hot_end.kept + 0.02),
       string.format("and is called converged only once it holds it again (%s at %d steps, live %.4f, kept %.4f)",
                     hot.stopped, hot.steps, hot_end.kl, hot_end.kept))
tap.is(f.diverged, false, "the default fit did not diverge")

local g = r:fit_lens{steps = 10, tokens_per_step = 64}
tap.is(g.step, 45, "a later fit is stamped with the run's step then")
tap.is(r:metrics().fitted_lens.steps, g.steps, "and replaces the last one in the metrics")

-- At the defaults, on a small model trained on the structured synthetic
-- language, the fit converges; capped at 2 steps it says it did not.
local c = lab.run(tap.tiny{name = "conv", seed = 5, batch = 8, lens_every = 0, eval_every = 0, align_every = 0})
c:step(150)
local p = lab.progress(100)
local d = c:fit_lens{progress = p, units = 60}
tap.ok(d.converged == true and d.stopped == "converged" and d.steps < 1000,
       string.format("at the defaults the fit converges (%d steps, %.1f s, %s)", d.steps, d.seconds, d.stopped))
tap.is(p.count, 60, "a fit with progress = p adds its units to p (60)")
-- lens_every = 0: the online lens never trained, its translators are the
-- identity, so the fit's start_kl is the identity translator's (the logit lens)
local logit = d.start_kl
local lsq_better = true
for i = 1, 2 do lsq_better = lsq_better and d.lsq_kl[i] < 0.5 * logit[i] end
tap.ok(lsq_better, string.format("the least-squares start alone is under half the identity translator's KL " ..
                                 "(%.4f, %.4f vs %.4f, %.4f)", d.lsq_kl[1], d.lsq_kl[2], logit[1], logit[2]))
local not_above = true
for i = 1, 2 do not_above = not_above and d.chosen_kl[i] <= d.start_kl[i] and d.chosen_kl[i] <= d.lsq_kl[i] end
tap.ok(not_above, "where chosen, the kept KL is not above either start at any position")
local e = c:fit_lens{steps = 2, progress = p}
tap.ok(e.converged == false and e.stopped ~= "converged" and e.steps == 2,
       "capped at 2 steps the fit says not converged (" .. e.stopped .. ")")
tap.is(c:metrics().fitted_lens.converged, false, "and so do the metrics")
tap.is(c:metrics().fitted_lens.stopped, e.stopped, "with the reason")
tap.is(p.count, 62, "its units default to its step limit (2)")
-- A refit starts at the optimum the first fit found, where the starting
-- rate only wanders off it: the fit halves its rate until the live lens
-- holds the kept one, and converges there.
local again = c:fit_lens{}
local last = again.curve[#again.curve]
tap.ok(again.converged == true and again.stopped == "converged" and last.kl <= 1.25 * last.kept + 0.02,
       string.format("a refit from the optimum converges (%d steps, live %.4f, kept %.4f, %s)", again.steps, last.kl,
                     last.kept, again.stopped))
p:done()

tap.done()
