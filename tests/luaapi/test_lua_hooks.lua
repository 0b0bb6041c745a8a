-- test_lua_hooks.lua -- a run's step hooks: r:on_grad's gradients against
-- the metrics, a gradient added there trained on exactly (plain SGD), what
-- r:on_hidden's dh reaches and what it leaves alone, the position-0 term's
-- gradient worked out by hand, aux_loss, lent matrices that expire, errors
-- that stop the step before the update, NaN caught, calls refused inside a
-- hook, and lab.off.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local function close(a, b, rel) return math.abs(a - b) <= rel * math.max(math.abs(a), math.abs(b), 1e-30) end

-- SGD without decay, clip or momentum: an update is exactly w - lr * g.
local sgd = {optimizer = "sgd", weight_decay = 0, clip = 0, momentum = 0, lr = 0.1}
local function tiny(name, extra)
  local o = tap.tiny{name = name, seed = 3, eval_every = 1000}
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- ------------------------------------------------------------ the gradients as the metrics measure them
do
  local r = lab.run(tiny("norms"))
  local seen = {}
  local h = r:on_grad(function(g, step)
    seen[#seen + 1] = {step = step, gin = g.E_in:norm(), gout = g.E_out:norm(), rows = g.E_in.rows,
                       same = rawequal(g.E_in, g["transformer.wte.weight"]) and rawequal(g.E_out, g["lm_head.weight"])}
  end)
  tap.ok(math.type(h) == "integer", "r:on_grad returns a handle")
  for k = 1, 3 do
    local m = r:step(1)
    local s = seen[k]
    tap.is(s and s.step, k, "step " .. k .. ": the hook's step is the step this update completes")
    tap.ok(s and close(s.gin, m.grad_in, 1e-5), string.format("g.E_in:norm() %.7g = grad_in %.7g", s and s.gin or 0, m.grad_in))
    tap.ok(s and close(s.gout, m.grad_out, 1e-5),
           string.format("g.E_out:norm() %.7g = grad_out %.7g (tied: kept apart)", s and s.gout or 0, m.grad_out))
  end
  tap.ok(seen[1].same, "g.E_in and g.E_out are g['transformer.wte.weight'] and g['lm_head.weight']")
  tap.is(seen[1].rows, 256, "g.E_in is V x d")
  tap.ok(lab.off(h), "lab.off removes the hook")
  r:step(1)
  tap.is(#seen, 3, "and it is called no more")
  tap.ok(not lab.off(h), "a second lab.off finds nothing")
  r:remove()
end

-- ------------------------------------------------------------ what on_grad adds is trained on
do
  local function with_sgd(extra)
    for k, v in pairs(sgd) do extra[k] = v end
    return extra
  end
  local plain = lab.run(tiny("plain", with_sgd{tie = "untied", init_seed = 5}))
  local hooked = lab.run(tiny("hooked", with_sgd{tie = "untied", init_seed = 5}))
  local add = lab.matrix(256, 32, 0.01)
  hooked:on_grad(function(g) g.E_in:add(add) end)
  local rows = plain:batch()
  plain:train_on(rows)
  hooked:train_on(rows)
  local diff = hooked:param("E_in") - plain:param("E_in")
  local want = add * -0.1
  tap.ok((diff - want):norm() < 1e-5 * want:norm(),
         string.format("the added gradient moved E_in by -lr * it (off by %.3g of %.3g)", (diff - want):norm(), want:norm()))
  tap.ok((hooked:param("E_out") - plain:param("E_out")):norm() == 0, "and left E_out as it was")
  plain:remove()
  hooked:remove()
end

-- ------------------------------------------------------------ on_hidden at position 1: below changes, above does not
do
  local function grads_after(on_hidden)
    local r = lab.run(tiny("h" .. tostring(on_hidden ~= nil), {init_seed = 9}))
    local got
    if on_hidden then r:on_hidden(1, on_hidden) end
    r:on_grad(function(g)
      got = {}
      for _, name in ipairs(r:param_names()) do got[name] = g[name]:copy() end
    end)
    r:step(1)
    r:remove()
    return got
  end
  local base = grads_after(nil)
  local bumped = grads_after(function(h, dh) dh:add(h, 0.5) end)
  local function changed(name) return (bumped[name] - base[name]):norm() > 0 end
  for _, name in ipairs{"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.ln_1.weight",
                        "transformer.h.0.attn.c_attn.weight", "transformer.h.0.mlp.c_proj.bias"} do
    tap.ok(changed(name), "dh at position 1 reaches " .. name)
  end
  for _, name in ipairs{"lm_head.weight", "transformer.ln_f.weight", "transformer.ln_f.bias",
                        "transformer.h.1.ln_1.weight", "transformer.h.1.mlp.c_fc.weight"} do
    tap.ok(not changed(name), "and leaves " .. name .. " as it was")
  end
end

-- ------------------------------------------------------------ position 0: the term's gradient by hand
do
  local r = lab.run(tiny("p0", {tie = "untied", init_seed = 11}))
  local u = lab.run(tiny("p0plain", {tie = "untied", init_seed = 11}))
  local rows = r:batch()
  local n, d, T = 4 * 32, 32, 32
  local R = lab.matrix(n, d)
  for i = 1, n do for j = 1, d do R:set(i, j, math.sin(i * 7 + j)) end end
  local with, without = {}, {}
  r:on_hidden(0, function(h, dh) dh:add(R) end)
  r:on_grad(function(g) with.wte, with.wpe = g.E_in:copy(), g["transformer.wpe.weight"]:copy() end)
  u:on_grad(function(g) without.wte, without.wpe = g.E_in:copy(), g["transformer.wpe.weight"]:copy() end)
  r:train_on(rows)
  u:train_on(rows)
  local want_wte, want_wpe = lab.matrix(256, d), lab.matrix(32, d)
  for b = 1, 4 do
    for t = 1, T do
      local i, tok = (b - 1) * T + t, rows[b][t]
      for j = 1, d do
        want_wte:set(tok + 1, j, want_wte:get(tok + 1, j) + R:get(i, j))
        want_wpe:set(t, j, want_wpe:get(t, j) + R:get(i, j))
      end
    end
  end
  local dwte, dwpe = with.wte - without.wte, with.wpe - without.wpe
  tap.ok((dwte - want_wte):norm() < 1e-5 * want_wte:norm(),
         string.format("position 0: E_in's gradient grew by R scattered into the tokens' rows (off %.3g)", (dwte - want_wte):norm()))
  tap.ok((dwpe - want_wpe):norm() < 1e-5 * want_wpe:norm(),
         string.format("and the position embedding's by R summed over the batch (off %.3g)", (dwpe - want_wpe):norm()))
  r:remove()
  u:remove()
end

-- ------------------------------------------------------------ aux_loss
do
  local r = lab.run(tiny("aux"))
  r:on_hidden(2, function(h, dh) return 1.25 end)
  r:on_hidden(2, function(h, dh) return 0.5 end)
  local m = r:step(2)
  tap.is(m.aux_loss, 1.75, "a number on_hidden returns is the step's aux_loss (summed over hooks)")
  local hist = r:history("aux_loss")
  tap.is(hist and hist.n, 2, "aux_loss is a history series, one point a step")
  tap.raises("position 3 is not in 0..2", "a position beyond L is refused", function() r:on_hidden(3, function() end) end)
  r:remove()
end

-- ------------------------------------------------------------ lent matrices, refusals, errors, NaN
do
  local r = lab.run(tiny("lent"))
  local kept, refused, read
  local h = r:on_grad(function(g)
    kept = g.E_in
    refused = select(2, pcall(r.set, r, {lr = 0.5}))
    read = r:param("E_in"):norm()
  end)
  r:step(1)
  tap.raises("valid only during its hook call", "a lent gradient touched after its call raises", function() return kept:norm() end)
  tap.like(tostring(refused), "cannot be called inside a step hook", "r:set inside a hook is refused")
  tap.ok(read and read > 0, "r:param reads the weights inside the run's own hook")
  lab.off(h)

  local before, step = r:param("E_in"), r:metrics().step
  local bad = r:on_grad(function() error("broken hook") end)
  local ok, msg = pcall(r.step, r, 1)
  tap.ok(not ok, "a hook that raises stops r:step")
  tap.like(tostring(msg), "broken hook", "with the hook's error")
  tap.like(tostring(msg), "traceback", "and its traceback")
  tap.is(r:metrics().step, step, "the step was not taken")
  tap.ok((r:param("E_in") - before):norm() == 0, "the weights are as they were")
  tap.ok(not lab.off(bad), "the failed hook was removed")
  r:resume()
  tap.is(r:step(1).step, step + 1, "and the run steps again without it")

  local nan = r:on_grad(function(g) g.E_out:set(1, 1, 0 / 0) end)
  before, step = r:param("E_in"), r:metrics().step
  ok, msg = pcall(r.step, r, 1)
  tap.ok(not ok, "a NaN written into a gradient stops the step")
  tap.like(tostring(msg), "not finite", "caught by the gradient's check: " .. tostring(msg))
  tap.ok((r:param("E_in") - before):norm() == 0, "and is not trained on")
  lab.off(nan)
  r:remove()
end

-- ------------------------------------------------------------ hooks changed inside a hook, deep models
do
  local r = lab.run(tiny("inner"))
  local low, high, calls = nil, nil, 0
  high = r:on_hidden(2, function()
    calls = calls + 1
    lab.off(low)                                   -- the hook below goes, this step too
    lab.off(high)
  end)
  low = r:on_hidden(0, function() calls = calls + 100 end)
  tap.is(r:step(1).step, 1, "a hook that removes itself and the hook below it: the step goes on")
  tap.is(calls, 1, "and the hook removed inside the step is not called in it")
  r:step(1)
  tap.is(calls, 1, "nor after")
  r:remove()

  local deep = lab.run{name = "deep", vocab = 256, dim = 8, layers = 90, heads = 1, ctx = 4, batch = 1}
  local seen = 0
  deep:on_grad(function(g) for _ in pairs(g) do seen = seen + 1 end end)
  deep:step(1)
  tap.is(seen, 5 + 12 * 90 + 2, "a 90-layer model lends every gradient (5 + 12 L, E_in and E_out beside)")
  tap.raises("beyond 63", "a position beyond 63 is refused by name", function() deep:on_hidden(70, function() end) end)
  deep:remove()
end

-- ------------------------------------------------------------ r:set_param from an on_step callback
do
  local r = lab.run(tiny("cb"))
  local wrote = 0
  local h = lab.on_step(function()
    local e = r:param("E_in")
    r:set_param("E_in", e:scale(0.999))
    wrote = wrote + 1
  end)
  r:step(3)
  lab.off(h)
  tap.is(wrote, 3, "an on_step callback writes weights between the steps it is called for")
  r:remove()
end

tap.done()
