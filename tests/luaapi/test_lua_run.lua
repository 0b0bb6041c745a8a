-- test_lua_run.lua -- runs from Lua: creation, stepping one run and all in
-- lockstep, the metrics table, live settings, history and events, the live
-- view lab.runs, evaluate, sample, pause, alignment and callbacks.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

tap.ok(require("tielab") == lab, "require 'tielab' is the global lab")
tap.ok(type(lab.version) == "string", "lab.version is " .. tostring(lab.version))

local a = lab.run(tap.tiny{name = "a", seed = 7, lens_every = 2, eval_every = 4})
tap.is(a.name, "a", "r.name")
tap.ok(math.type(a.id) == "integer", "r.id is an integer")
tap.like(tostring(a), "tielab.run 'a'", "tostring names the run")

local m = a:step(3)
tap.is(m.step, 3, "r:step(3) returns the metrics after three steps")
tap.ok(m.loss > 0 and m.loss < 20, "a finite loss " .. m.loss)
tap.ok(m.grad_in > 0 and m.grad_out > 0 and m.grad_in_act > 0, "both embedding gradients are measured")
tap.ok(math.abs(m.grad_ratio - m.grad_out / m.grad_in) < 1e-9 * m.grad_ratio, "grad_ratio = grad_out / grad_in")
tap.ok(math.abs(m.grad_ratio_act - m.grad_out / m.grad_in_act) < 1e-9 * m.grad_ratio_act,
       "grad_ratio_act = grad_out / grad_in_act")
tap.ok(m.grad_in_l1 > 0 and m.grad_ratio_l1 > 0, "L1 norms too")
tap.ok(m.rows_touched > 0 and m.rows_touched <= 1, "share of rows touched " .. m.rows_touched)
tap.ok(m.tokens_per_s > 0, "tokens per second")
tap.is(m.tie, "tied", "m.tie")
tap.is(m.tie_k, 32, "m.tie_k is dim when tied")
tap.is(m.name, "a", "m.name")
tap.is(m.lens.n, 3, "lens over positions 0..L")
tap.is(#m.lens.kl, 3, "lens.kl per position")
tap.ok(m.lens.kl[3] < 1e-6, "the last position is the model's own output (KL " .. tostring(m.lens.kl[3]) .. ")")
tap.ok(#m.logit_lens.acc == 3 and #m.lens.contrib == 3, "logit lens and contributions")
tap.ok(m.val_loss > 0, "validation after the first step")

tap.is(a:metrics().step, 3, "r:metrics() is the same snapshot")
tap.is(a:step(0).step, 3, "r:step(0) only reads")

-- identical settings give identical training: the same batches and init
local b = lab.run(tap.tiny{name = "b", seed = 7, lens_every = 2, eval_every = 4})
b:step(3)
tap.is(b:metrics().loss, a:metrics().loss, "the same seeds give the same loss")

-- lockstep
local u = lab.run(tap.tiny{name = "u", tie = "untied", seed = 7, init_seed = 8})
lab.step(2)
tap.is(a:metrics().step, 5, "lab.step steps every run (a)")
tap.is(u:metrics().step, 2, "lab.step steps every run (u)")
tap.is(u:metrics().tie, "untied", "an untied run")

-- the runs view
tap.is(#lab.runs, 3, "#lab.runs")
tap.ok(lab.runs[1] == a and lab.runs.u == u, "lab.runs[i] and lab.runs.name give the same handles")
local names = {}
for i, r in ipairs(lab.runs) do names[i] = r.name end
tap.is(table.concat(names, ","), "a,b,u", "ipairs(lab.runs) in order")
local all = lab.runs()
tap.is(#all, 3, "lab.runs() is an array")
local n = 0
for _, r in pairs(lab.runs) do n = n + 1 end
tap.is(n, 3, "pairs(lab.runs)")
tap.raises("read-only", "lab.runs cannot be assigned", function() lab.runs.x = 1 end)

-- live settings
a:set{in_scale = 2, lr = 2e-3}
m = a:step(1)
tap.is(m.in_scale, 2, "r:set changes in_scale")
tap.is(m.lr, 2e-3, "r:set changes lr")
tap.is(a:options().in_scale, 2, "r:options() shows it")
a:set{tie = "untied"}
tap.is(a:step(1).tie, "untied", "untie while training")
a:set{tie_merge = "mean", tie = true}
tap.is(a:step(1).tie, "tied", "tie again with the mean of both matrices")
a:set{tie = 16}
tap.is(a:step(1).tie_k, 16, "partial tying")
local texts = {}
for _, e in ipairs(a:events()) do texts[#texts + 1] = e.text end
local ev = table.concat(texts, ";")
tap.like(ev, "in_scale=2", "the change is an event in the history")
tap.like(ev, "tie=untied", "untying is an event")

-- history
local h = a:history("loss")
tap.is(h.n, a:metrics().step, "one loss point per step")
tap.is(#h.steps, #h.values, "steps and values")
tap.ok(h.min[1] <= h.values[1] and h.values[1] <= h.max[1], "min <= mean <= max")
tap.is(h.steps[h.n], a:metrics().step, "the last point is the last step")
local series = a:history()
local has_ratio = false
for _, s in ipairs(series) do if s == "grad_ratio" then has_ratio = true end end
tap.ok(has_ratio, "r:history() lists the series")

-- on_step callbacks
local seen = {}
local id = lab.on_step(function(step) seen[#seen + 1] = step end)
lab.step(3)
tap.is(#seen, 3, "an on_step callback runs after every step")
tap.ok(lab.off(id), "lab.off removes it")
lab.step(1)
tap.is(#seen, 3, "and it runs no more")
local changed = lab.on_step(function() a:set{out_scale = 0.5} end)
a:step(1)
tap.is(a:metrics().out_scale, 0.5, "a callback may change settings")
lab.off(changed)

-- pause
u:pause()
local before = u:metrics().step
lab.step(2)
tap.is(u:metrics().step, before, "a paused run is skipped by lab.step")
tap.ok(u:metrics().paused, "metrics say paused")
u:resume()
lab.step(1)
tap.is(u:metrics().step, before + 1, "a resumed run steps again")

-- evaluate
local row = {}
for i = 1, 33 do row[i] = (i * 7) % 256 end
local e = a:evaluate{row, row}
tap.ok(e.loss > 0, "r:evaluate gives a loss")
tap.ok(e.grad_in > 0 and e.grad_out > 0, "and both embedding gradients")
tap.ok(type(e.grad_norm["transformer.wte.weight"]) == "number", "and a norm per tensor")
local step = a:metrics().step
tap.is(a:evaluate{row}.loss, a:evaluate{row}.loss, "evaluate does not change the weights")
tap.is(a:metrics().step, step, "nor the step")

-- sample
local s = a:sample{n = 10, seed = 3}
tap.ok(type(s) == "string" and #s > 0, "r:sample writes text")
tap.is(a:sample{n = 10, seed = 3}, s, "the same seed, the same text")

-- alignment
local al = lab.align(b, u)
for _, k in ipairs{"linear_in", "linear_out", "procrustes_in", "procrustes_out", "cka_in", "cka_out",
                   "cca_in", "cca_out", "cos_in", "cos_out"} do
  tap.ok(type(al[k]) == "number" and al[k] == al[k], "lab.align gives " .. k)
end
tap.ok(type(al.baseline) == "table" and type(al.baseline.linear_out) == "number", "with random baselines")

-- removal
b:remove()
tap.is(#lab.runs, 2, "r:remove takes the run out of the lab")
-- row norms against token frequency
local rn = a:row_norms()
tap.ok(#rn.log_freq > 0 and #rn.norm_in == #rn.log_freq and #rn.norm_out == #rn.log_freq,
       "r:row_norms gives one norm per seen token (" .. #rn.log_freq .. ")")
tap.ok(rn.norm_in[1] > 0 and rn.log_freq[1] >= 0, "norms positive, log frequencies of seen tokens")

-- a second table laid over the first
local base = tap.tiny{name = "base"}
local merged = lab.run(base, {name = "merged", tie = "untied"})
tap.is(merged:metrics().tie, "untied", "lab.run(base, extra): extra's keys win")
tap.is(merged.name, "merged", "lab.run(base, extra): the name from extra")
tap.is(base.name, "base", "lab.run(base, extra) leaves base alone")
tap.raises("in_scal", "a misspelled key in extra is named", lab.run, base, {in_scal = 2})
merged:remove()

lab.remove(u)
tap.is(#lab.runs, 1, "lab.remove(r) too")
tap.like(tostring(u), "removed", "tostring says removed")

tap.done()
