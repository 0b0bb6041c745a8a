-- test_lua_recipe.lua -- the training recipe from Lua: the optimizer and
-- schedule settings through lab.run, r:set, r:options and lab.settings, the
-- olmo preset with explicit keys, the scheduled rate in the metrics and the
-- history, r:train_on and r:batch, refusals, and a checkpoint round trip.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local function near(a, b) return math.abs(a - b) <= 1e-6 * math.abs(b) end

-- every new setting is in the table, settable at creation, read back
local new = {
  warmup = 3, schedule = "linear", decay_steps = 50, lr_min = 1e-5, eps = 1e-6, beta1 = 0.8, beta2 = 0.99,
  weight_decay = 0.01, decay_all = true, optimizer = "sgd", momentum = 0.5, nesterov = true, clip = 0,
  grad_scale = 2, emb_lr_scale = 0.5, emb_warmup = 4,
}
local rows = {}
for _, s in ipairs(lab.settings()) do rows[s.name] = s end
local in_table = true
for k in pairs(new) do in_table = in_table and rows[k] ~= nil end
tap.ok(in_table and rows.recipe and rows.recipe.live == false and rows.optimizer.live == false,
       "lab.settings lists every new setting; optimizer and recipe are fixed at creation")
tap.is(rows.decay_all.type, "boolean", "decay_all is a boolean setting")
tap.ok(rows.beta1.max_open and not rows.beta1.min_open and rows.grad_scale.min_open,
       "open bounds are marked: beta1 < 1, grad_scale > 0")

local opts = tap.tiny{name = "all", eval_every = 0}
for k, v in pairs(new) do opts[k] = v end
local all = lab.run(opts)
local o = all:options()
local same = true
for k, v in pairs(new) do
  if o[k] ~= v then same = false; tap.diag(k .. ": " .. tostring(o[k]) .. " ~= " .. tostring(v)) end
end
tap.ok(same, "lab.run takes every new setting and r:options gives each back, booleans as booleans")

-- live ones through r:set
all:set{warmup = 5, schedule = "cosine", decay_steps = 40, lr_min = 2e-5, momentum = 0.7, nesterov = false,
        clip = 0.5, grad_scale = 3, emb_lr_scale = 0.25, emb_warmup = 0, decay_all = false, eps = 1e-7,
        beta1 = 0.85, beta2 = 0.9, weight_decay = 0}
o = all:options()
tap.ok(o.warmup == 5 and o.schedule == "cosine" and o.decay_steps == 40 and o.momentum == 0.7 and
       o.nesterov == false and o.decay_all == false and o.grad_scale == 3 and o.weight_decay == 0,
       "r:set changes the live ones")
local fresh = lab.run(tap.tiny{name = "fresh", eval_every = 0})
fresh:set{schedule = "cosine", decay_steps = 100}
tap.ok(fresh:options().schedule == "cosine" and fresh:options().decay_steps == 100,
       "r:set changes schedule and decay_steps together, checked as a whole")
local e1 = fresh:evaluate{{1, 2, 3, 4}}
fresh:set{grad_scale = 2}
local e2 = fresh:evaluate{{1, 2, 3, 4}}
tap.ok(near(e2.total_norm, 2 * e1.total_norm) and near(e2.grad_norm["lm_head.weight"] or e2.grad_norm["transformer.wte.weight"],
       2 * (e1.grad_norm["lm_head.weight"] or e1.grad_norm["transformer.wte.weight"])),
       "r:evaluate's norms include grad_scale, as the clip sees them")
tap.raises("'optimizer' is fixed", "r:set refuses the optimizer", all.set, all, {optimizer = "adam"})
tap.raises("'recipe' is fixed", "r:set refuses a recipe", all.set, all, {recipe = "olmo"})
local events = {}
for _, e in ipairs(all:events()) do events[e.text] = true end
tap.ok(events["decay_steps=40"] and events["schedule=cosine"], "decay_steps and schedule changes are events")

-- the olmo recipe; an explicit key wins wherever it is written
local preset = {lr = 3e-4, eps = 1e-5, beta1 = 0.9, beta2 = 0.95, weight_decay = 0.1, decay_all = true,
                warmup = 1000, warmup_start = 0.1, schedule = "cosine", decay_steps = 10000, lr_min = 0,
                lr_min_ratio = 0.1, clip = 1}
local function check_olmo(r, what)
  local got, bad = r:options(), {}
  for k, v in pairs(preset) do
    local want = k == "lr" and 1e-3 or v
    if got[k] ~= want then bad[#bad + 1] = k .. "=" .. tostring(got[k]) end
  end
  tap.is(table.concat(bad, ", "), "", what)
end
check_olmo(lab.run(tap.tiny{name = "olmo1", recipe = "olmo", lr = 1e-3}), "recipe then lr: lr 1e-3, the rest olmo's")
check_olmo(lab.run(tap.tiny{name = "olmo2", lr = 1e-3, recipe = "olmo"}), "lr then recipe: the same")
-- olmo's schedule is OLMo's cosine_with_warmup: from 0.1*lr, to 0.1*lr
local olmo = lab.run(tap.tiny{name = "olmo3", recipe = "olmo", lr = 1e-3, warmup = 4, decay_steps = 8,
                              eval_every = 0, lens_every = 0})
tap.ok(near(olmo:metrics().lr, 1e-4 + 9e-4 * 1 / 4), "olmo warms up from 0.1*lr (" .. olmo:metrics().lr .. ")")
tap.ok(near(olmo:step(8).lr, 1e-4), "olmo with lr 1e-3 decays to 1e-4, a tenth of its peak")
local low = lab.run(tap.tiny{name = "olmo4", recipe = "olmo", lr = 1e-5, warmup = 2, decay_steps = 6,
                             eval_every = 0, lens_every = 0})
tap.ok(near(low:step(6).lr, 1e-6), "olmo with lr 1e-5 decays to 1e-6, never rising")
local own = lab.run(tap.tiny{name = "olmo5", lr_min = 2e-5, recipe = "olmo"}):options()
tap.ok(own.lr_min == 2e-5 and own.lr_min_ratio == 0, "an explicit lr_min under olmo is the floor")
local own2 = lab.run(tap.tiny{name = "olmo6", recipe = "olmo", lr_min = 2e-5}):options()
tap.ok(own2.lr_min == 2e-5 and own2.lr_min_ratio == 0, "the same when lr_min comes after the recipe")
tap.raises("'lr_min' (0.01) is above 'lr' (0.001)", "a decay that would rise names both keys", lab.run,
           tap.tiny{lr = 1e-3, lr_min = 1e-2, schedule = "cosine", decay_steps = 10})
local plain = lab.run(tap.tiny{name = "plain"}):options()
tap.ok(plain.recipe == "" and plain.lr == 1e-3 and plain.warmup_start == 0 and plain.lr_min_ratio == 0 and plain.eps == 1e-8 and plain.schedule == "constant" and
       plain.decay_all == false and plain.optimizer == "adamw" and plain.clip == 1 and plain.weight_decay == 0.1,
       "no recipe: the defaults")

-- the scheduled rate: warmup 4, cosine to step 12
local cos = lab.run(tap.tiny{name = "cos", lr = 1e-2, lr_min = 1e-3, warmup = 4, schedule = "cosine",
                             decay_steps = 12, emb_lr_scale = 0.5, emb_warmup = 10, eval_every = 0})
tap.ok(near(cos:metrics().lr, 1e-2 / 4), "before any step: the rate step 1 will use (" .. cos:metrics().lr .. ")")
tap.ok(near(cos:step(2).lr, 1e-2 * 2 / 4), "step 2 of a 4-step warmup: lr/2")
local m = cos:step(6)
tap.ok(near(m.lr, (1e-2 + 1e-3) / 2), "step 8, the cosine midpoint: (lr + lr_min)/2 (" .. m.lr .. ")")
tap.ok(near(m.emb_lr, m.lr * 0.5 * 8 / 10), "emb_lr = lr x emb_lr_scale x its warmup 8/10 (" .. m.emb_lr .. ")")
tap.ok(near(cos:step(4).lr, 1e-3) and near(cos:step(3).lr, 1e-3), "lr_min from decay_steps on")
local h = cos:history("lr")
tap.ok(h and #h.values == 15 and near(h.values[1], 1e-2 / 4) and near(h.values[8], 5.5e-3),
       "history series lr, one value a step")
tap.ok(cos:history("emb_lr") ~= nil, "history series emb_lr")

-- r:train_on(r:batch()) is r:step(1), bit for bit
local function pair(name, extra)
  local o1 = tap.tiny{name = name .. "1", seed = 5, eval_every = 0, lens_every = 0}
  for k, v in pairs(extra) do o1[k] = v end
  local o2 = {}
  for k, v in pairs(o1) do o2[k] = v end
  o2.name = name .. "2"
  return lab.run(o1), lab.run(o2)
end
-- The weights and optimizer moments of a run, tensor by tensor, as the
-- bytes of its checkpoint (names, history and timings left out).
local function weight_bytes(r)
  local path = os.tmpname()
  assert(r:save(path))
  local f = assert(io.open(path, "rb"))
  local data = f:read("a")
  f:close()
  os.remove(path)
  local n = string.unpack("<I8", data)
  local header, out = data:sub(9, 8 + n), {}
  for name, a, b in header:gmatch('"([^"]+)":{"dtype":"F32","shape":%[[%d,]*%],"data_offsets":%[(%d+),(%d+)%]}') do
    if name:match("^transformer%.") or name:match("^lm_head%.") or name:match("^optim%.") then
      out[name] = data:sub(8 + n + tonumber(a) + 1, 8 + n + tonumber(b))
    end
  end
  return out
end
local function same_model(a, b)
  local wa, wb, count = weight_bytes(a), weight_bytes(b), 0
  for k, v in pairs(wa) do
    if wb[k] ~= v then tap.diag(k .. " differs"); return false end
    count = count + 1
  end
  for k in pairs(wb) do if wa[k] == nil then return false end end
  return count > 0 and wa["transformer.wte.weight"] ~= nil and wa["optim.m.transformer.wte.weight"] ~= nil
end
local s1, s2 = pair("st", {warmup = 2, schedule = "linear", decay_steps = 6, grad_scale = 1.5})
for _ = 1, 4 do
  s1:step(1)
  local mm = s2:train_on(s2:batch())
  if mm.step ~= s1:metrics().step then tap.diag("steps differ") end
end
local probe = s1:batch(1)
tap.ok(same_model(s1, s2), "four r:train_on(r:batch()) give bit-identical weights and moments to four r:step(1)")
local s3 = pair("off", {warmup = 2, schedule = "linear", decay_steps = 6, grad_scale = 1.5})
for _ = 1, 3 do s3:step(1) end
tap.ok(not same_model(s1, s3), "and the comparison sees one step fewer")
tap.is(s2:metrics().step, 4, "r:train_on advances the step")
tap.is(s2:metrics().lr, s1:metrics().lr, "and follows the schedule")
local b3 = s1:batch(3)
tap.ok(#b3 == 4 and #b3[1] == 33, "r:batch(k) is B rows of T+1 ids")
tap.ok(table.concat(s1:batch(3)[2], ",") == table.concat(s2:batch(3)[2], ","), "the same rows for the same data seed")
tap.raises("training steps count from 1", "r:batch(0) is refused", s1.batch, s1, 0)
tap.raises("training steps count from 1", "r:batch(-2) is refused", s1.batch, s1, -2)
local few = s1:train_on{probe[1], probe[2]}
tap.is(few.step, 5, "r:train_on takes fewer rows than B")
tap.raises("r:train_on: row 1, position 3: token ids are integers in [0, 256)", "a bad token id is refused",
           s1.train_on, s1, {{1, 2, 999}})
tap.raises("r:train_on: the batch needs 1 to 4 rows", "an empty batch is refused", s1.train_on, s1, {})

-- refusals
tap.raises("'schedule' must be constant, cosine or linear, got 'cosin'", "a misspelled schedule", lab.run,
           tap.tiny{schedule = "cosin"})
tap.raises("'decay_steps' (10) above 'warmup' (10)", "cosine with decay_steps <= warmup names both", lab.run,
           tap.tiny{schedule = "cosine", warmup = 10, decay_steps = 10})
tap.raises("'nesterov' needs 'momentum' above 0", "nesterov without momentum", lab.run,
           tap.tiny{optimizer = "sgd", nesterov = true})
tap.raises("'momentum' must be a number in [0, 1), got 1", "momentum 1", lab.run, tap.tiny{momentum = 1})
tap.raises("'grad_scale' must be a number in (0, 1000000]", "grad_scale 0", lab.run, tap.tiny{grad_scale = 0})
tap.raises("'decay_all' must be a boolean, got number", "a number for a boolean", lab.run, tap.tiny{decay_all = 1})
tap.raises("'optimizer' must be adamw, adam or sgd", "an unknown optimizer", lab.run, tap.tiny{optimizer = "lion"})
tap.raises("'recipe' must be \"\" or olmo", "an unknown recipe", lab.run, tap.tiny{recipe = "gpt3"})
tap.raises("r:set: schedule cosine needs 'decay_steps' (1) above 'warmup' (2)",
           "a live change to a horizon inside the warmup", s1.set, s1, {schedule = "cosine", decay_steps = 1})
tap.is(s1:options().schedule, "linear", "and the run is left as it was")

-- a checkpoint keeps every new setting
local dir = os.tmpname()
os.remove(dir)
local path = dir .. ".safetensors"
all:step(2)
tap.ok(all:save(path), "a run with every new setting saved")
local back = lab.load(path, "back")
local ob, oa, diff = back:options(), all:options(), {}
for k, v in pairs(oa) do if k ~= "name" and ob[k] ~= v then diff[#diff + 1] = k end end
tap.is(table.concat(diff, ", "), "", "and loaded with every setting as it was")
tap.is(back:metrics().lr, all:metrics().lr, "and with the rate of the step it was saved at")
os.remove(path)

-- an olmo checkpoint from before warmup_start and lr_min_ratio trains on as it did
local old = lab.run(tap.tiny{name = "old", recipe = "olmo", eval_every = 0, lens_every = 0})
old:step(1)
assert(old:save(path))
local f = assert(io.open(path, "rb"))
local bytes = f:read("a")
f:close()
local function blank(text, key)   -- the key's entry as spaces: the header keeps its length
  local s, e = text:find('"' .. key .. '":"[^"]*",')
  return s and text:sub(1, s - 1) .. string.rep(" ", e - s + 1) .. text:sub(e + 1) or text
end
bytes = blank(blank(bytes, "opt.warmup_start"), "opt.lr_min_ratio")
f = assert(io.open(path, "wb"))
f:write(bytes)
f:close()
local ob2 = lab.load(path, "old_back"):options()
tap.ok(not bytes:find("opt.warmup_start", 1, true) and ob2.recipe == "olmo" and ob2.warmup_start == 0 and
       ob2.lr_min_ratio == 0, "a setting the file lacks keeps its default, not the recipe's")
os.remove(path)

tap.done()
