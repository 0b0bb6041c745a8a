-- test_lua_val.lua -- r:evaluate_val: the validation loss measured when a
-- script asks, between the periodic evaluations. It must be the very value
-- the periodic evaluation gives at that step, land in the metrics and the
-- history, and refuse where it cannot measure.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local sparse = lab.run(tap.tiny{name = "sparse", seed = 11, eval_every = 50, lens_every = 0})
local dense = lab.run(tap.tiny{name = "dense", seed = 11, eval_every = 20, lens_every = 0})
sparse:step(20)
dense:step(20)

local stale = sparse:metrics()
tap.is(stale.val_step, 1, "with eval_every=50, after 20 steps the validation loss is step 1's")

local v = sparse:evaluate_val()
tap.is(v.step, 20, "r:evaluate_val measures at the current step")
local periodic = dense:metrics()
tap.is(periodic.val_step, 20, "the run with eval_every=20 measured at step 20 by itself")
tap.ok(v.loss == periodic.val_loss,
       string.format("and both give the same loss: %.17g asked, %.17g periodic", v.loss, periodic.val_loss))
tap.ok(v.loss ~= stale.val_loss, "a value other than the stale one of step 1")
tap.ok(math.abs(v.ppl - math.exp(v.loss)) <= 1e-12 * v.ppl, "ppl = exp(loss)")

local m = sparse:metrics()
tap.is(m.val_step, 20, "the metrics' val_step is the step measured")
tap.ok(m.val_loss == v.loss and m.val_ppl == v.ppl, "the metrics hold the values returned")

local h = sparse:history("val_loss")
tap.is(h.steps[h.n], 20, "the history's last validation point is step 20")
tap.ok(h.values[h.n] == v.loss, "with the value measured")
local again = sparse:evaluate_val()
tap.ok(again.loss == v.loss and again.step == 20, "measured again at the same step: the same value")
tap.is(sparse:history("val_loss").n, h.n, "and no second point in the history")

sparse:step(30)
tap.is(sparse:metrics().val_step, 50, "the periodic evaluation goes on at its interval")
local at50 = sparse:metrics().val_loss
tap.ok(sparse:evaluate_val().loss == at50, "where r:evaluate_val agrees with it")

-- refusals
local inside
local hook = sparse:on_grad(function() inside = select(2, pcall(function() return sparse:evaluate_val() end)) end)
sparse:step(1)
lab.off(hook)
tap.like(tostring(inside), "evaluate_val cannot be called inside a step hook", "refused inside a step hook")
tap.is(sparse:metrics().val_step, 50, "which measured nothing")

local gone = lab.run(tap.tiny{name = "gone"})
gone:remove()
tap.raises("attempt to use a removed run", "a removed run raises", function() return gone:evaluate_val() end)
tap.raises("bad argument", "called without its run", function() return sparse.evaluate_val(42) end)

tap.done()
