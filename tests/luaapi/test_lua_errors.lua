-- test_lua_errors.lua -- what raises and what returns nil and a message:
-- misspelled keys and wrong types name the key, a removed run is a closed
-- handle, a failing on_step callback is reported and removed while training
-- goes on, and files that cannot be written or read give nil, message.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

tap.raises("lab.step: the lab has no runs", "lab.step with no runs", lab.step, 1)
tap.raises("string expected, got table", "lab.phase takes a caption, not a table", lab.phase, {})

-- keys and types
tap.raises("unknown key 'in_scal' (did you mean 'in_scale'?)", "a misspelled key is named", lab.run,
           tap.tiny{in_scal = 2})
tap.raises("'dim' must be a number, got string", "a string for a number", lab.run, tap.tiny{dim = "64"})
tap.raises("'dim' must be an integer", "a fraction for an integer", lab.run, tap.tiny{dim = 32.5})
tap.raises("'name' must be a string, got number", "a number for a name", lab.run, tap.tiny{name = 3})
tap.raises("'name' holds a control character", "a name with an escape sequence", lab.run, tap.tiny{name = "a\27[2Jb"})
tap.raises("'tie' must be", "a table for tie", lab.run, tap.tiny{tie = {}})
tap.raises("'tie' must be tied, untied or a column count", "a bad tie mode", lab.run, tap.tiny{tie = "half"})
tap.raises("'tie_merge' must be in, out or mean", "a bad merge rule", lab.run, tap.tiny{tie_merge = "both"})
tap.raises("'lr' must be a number in", "lr out of range", lab.run, tap.tiny{lr = -1})
tap.raises("keys are setting names", "a positional value", lab.run, {1, 2})
tap.raises("heads (3) must divide dim (32)", "the whole set is checked", lab.run, tap.tiny{heads = 3})
tap.raises("table expected", "lab.run needs a table", lab.run, 5)

local r = lab.run(tap.tiny{name = "r"})
tap.raises("a run named 'r' already exists", "names are unique", lab.run, tap.tiny{name = "r"})
tap.raises("'dim' is fixed when a run is created", "r:set refuses a fixed setting", r.set, r, {dim = 64})
tap.raises("unknown key 'out_scal'", "r:set names an unknown key", r.set, r, {out_scal = 1})
tap.raises("'in_scale' must be a number, got boolean", "r:set checks types", r.set, r, {in_scale = true})
tap.raises("'lens_every'", "r:set with one bad key raises", r.set, r, {in_scale = 2, lens_every = -1})
tap.is(r:options().in_scale, 1, "and applies none of the others")
tap.is(#r:events(), 1, "nor records them")
tap.raises("steps must be in", "negative steps", r.step, r, -1)
tap.raises("tielab.run expected", "a method on something else", r.step, {}, 1)

-- evaluate's batch
tap.raises("rows need 2 to 33 token ids", "a row longer than ctx+1", r.evaluate, r, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34}})
tap.raises("row 2 must be a table of 3 token ids", "ragged rows", r.evaluate, r, {{1, 2, 3}, {1, 2}})
tap.raises("token ids are integers in [0, 256)", "an id outside the vocabulary", r.evaluate, r, {{1, 2, 300}})
tap.raises("r:sample: unknown key 'count'", "sample names an unknown key", r.sample, r, {count = 3})

-- a failing callback is reported, removed, and training goes on
local calls = 0
lab.on_step(function(step)
  calls = calls + 1
  if step == 2 then error("callback broke") end
end)
local good = 0
lab.on_step(function() good = good + 1 end)
local m = r:step(4)
tap.is(m.step, 4, "training went on past the failing callback")
tap.is(calls, 2, "the failing callback ran until it failed, then never again")
tap.is(good, 4, "the other callback kept running")
tap.raises("training cannot be stepped from an on_step callback", "no stepping inside a callback", function()
  local err
  local id = lab.on_step(function() local ok, e = pcall(r.step, r, 1); err = e end)
  r:step(1)
  lab.off(id)
  error(err)
end)
tap.raises("r:train_on: training cannot be stepped from an on_step callback", "nor with r:train_on", function()
  local err, batch = nil, r:batch()
  local before = r:metrics().step
  local id = lab.on_step(function() local ok, e = pcall(r.train_on, r, batch); err = e end)
  r:step(1)
  lab.off(id)
  if r:metrics().step ~= before + 1 then error("the callback stepped the run: step " .. r:metrics().step) end
  error(err)
end)

-- files: expected failures return nil, message
local okay, msg = r:save("/nonexistent-dir/sub/x.safetensors")
tap.ok(okay == nil and type(msg) == "string", "r:save to an unwritable path gives nil, message: " .. tostring(msg))
okay, msg = lab.load("/nonexistent-dir/x.safetensors")
tap.ok(okay == nil and type(msg) == "string", "lab.load of a missing file gives nil, message: " .. tostring(msg))
local path = "tests/test_lua_errors.safetensors"
assert(r:save(path))
local f = assert(io.open(path, "rb"))
local whole = f:read("a")
f:close()
f = assert(io.open(path, "wb"))
f:write(whole:sub(1, #whole // 2))
f:close()
okay, msg = lab.load(path, "half")
tap.ok(okay == nil and type(msg) == "string", "lab.load of a truncated file gives nil, message: " .. tostring(msg))
tap.is(lab.runs.half, nil, "and adds no run")
os.remove(path)
okay, msg = r:export("/nonexistent-dir/h.csv")
tap.ok(okay == nil and type(msg) == "string", "r:export to an unwritable path gives nil, message")

-- a removed run
r:remove()
tap.raises("attempt to use a removed run", "stepping a removed run", r.step, r, 1)
tap.raises("attempt to use a removed run", "reading a removed run", r.metrics, r)
tap.raises("attempt to use a removed run", "removing twice", r.remove, r)
tap.raises("attempt to use a removed run", "lab.remove of a removed run", lab.remove, r)
tap.is(r.name, "r", "a removed run keeps its name for messages")

-- other programming errors
tap.raises("unknown key", "lab.bind with a bad key name", lab.bind, "Hyper-x", function() end)
tap.raises("unknown argument 'stepz' (known: dim, steps)", "lab.args names the argument", lab.args, {"stepz=3"},
           {steps = 1, dim = 2})
tap.raises("argument 'steps' must be a number", "lab.args checks types", lab.args, {"steps=many"}, {steps = 1})

-- the module's views are read-only; methods have names in messages
tap.raises("lab.runs is read-only", "assigning lab.runs", function() lab.runs = 1 end)
tap.raises("lab.version is read-only", "assigning lab.version", function() lab.version = "9" end)
tap.ok(type(lab.runs) == "table" and type(lab.version) == "string", "and both are still there")
lab.my_helper = 42
tap.is(lab.my_helper, 42, "a script may add its own fields to lab")
local r2 = lab.run(tap.tiny{name = "r2"})
tap.raises("bad argument #2 to 'tielab.run.step'", "a method called through pcall is named", r2.step, r2, "x")
tap.raises("bad argument #2 to 'tielab.run.sample'", "so is another", r2.sample, r2, 5)
tap.raises("bad argument #1 to 'tielab.step'", "and a module function", lab.step, "x")
tap.raises("bad argument #3 to 'tielab.plot' (steps are whole numbers >= 0)", "lab.plot blames a negative step",
           lab.plot, "b", 1, -5)
tap.raises("is not a series name", "lab.plot blames a bad name, not the limit", lab.plot, "a\1b", 1)
lab.plot("b", 1, 3)
tap.is(lab.plot("b").values[1], 1, "a good point is kept")
r2:remove()

tap.done()
