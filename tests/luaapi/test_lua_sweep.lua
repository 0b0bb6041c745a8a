-- test_lua_sweep.lua -- what a sweep reads back, piece by piece: lab.read
-- refuses a FIFO, a device, a folder and a file past its limit at once and
-- says which; lab.check_run says what lab.run would; a record's shape is
-- checked field by field; and Sweep:load, what merge reads each task file
-- with, turns every kind of bad file (wrong types, not JSON, cut short,
-- another point's, a FIFO, /dev/zero) into nil and one line of why, and a
-- good one into its result.
local src = os.getenv("srcdir") or "."
package.path = src .. "/tests/lib/?.lua;" .. src .. "/lua/?.lua;" .. package.path
local tap = require "tap"
local sweep = require "tielab.sweep"

local dir = "tests/test_lua_sweep.d"
os.execute("rm -rf " .. dir)
assert(lab.mkdir(dir))
local function put(name, text)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(text)
  f:close()
  return dir .. "/" .. name
end
local have_fifo = os.execute("mkfifo " .. dir .. "/fifo 2>/dev/null")

-- ---- lab.read
local path = put("plain.txt", "hello\n")
tap.is(lab.read(path), "hello\n", "lab.read reads a regular file whole")
local text, err, why = lab.read(path, 3)
tap.ok(text == nil and why == "refused" and err == path .. ": 6 bytes, more than the 3 read here",
       "a file larger than 'max' is refused: " .. tostring(err))
text, err, why = lab.read(dir .. "/none")
tap.ok(text == nil and why == "missing" and err:find("no such file", 1, true), "a missing file: " .. tostring(err))
text, err, why = lab.read("/dev/zero")
tap.ok(text == nil and why == "refused" and err == "/dev/zero: is a character device, not a regular file",
       "/dev/zero is refused at once: " .. tostring(err))
text, err, why = lab.read(dir)
tap.ok(text == nil and why == "refused" and err:find("is a folder", 1, true), "a folder: " .. tostring(err))
if have_fifo then
  text, err, why = lab.read(dir .. "/fifo")
  tap.ok(text == nil and why == "refused" and err:find("is a FIFO, not a regular file", 1, true),
         "a FIFO with no writer is refused, not waited on: " .. tostring(err))
else
  tap.skip("mkfifo is not allowed here")
end

-- ---- lab.check_run
local tiny = tap.tiny()
tap.is(lab.check_run(tiny), true, "lab.check_run: true for options lab.run takes")
local ok, msg = lab.check_run(tiny, {seed = -1})
tap.ok(ok == nil and msg:find("^lab%.run: 'seed' must be a whole number"), "nil and lab.run's message for seed -1: " .. tostring(msg))
ok, msg = lab.check_run(tiny, {in_scale = -2})
tap.ok(ok == nil and msg:find("'in_scale' must be a number in", 1, true), "and for in_scale -2: " .. tostring(msg))
ok, msg = lab.check_run(tiny, {colour = 1})
tap.ok(ok == nil and msg:find("unknown key 'colour'", 1, true), "and for a misspelled key: " .. tostring(msg))
tap.is(#lab.runs, 0, "and it makes no run")

-- ---- shapes
local shape = {val = "number", n = "integer", name = "line", flag = "boolean", list = sweep.array_of("number"),
               by = sweep.map_of({x = "number", note = sweep.optional("string")})}
local good = {val = 0 / 0, n = 3, name = "a b", flag = true, list = {1, 2.5}, by = {a = {x = 1}, b = {x = 2, note = "n"}}}
tap.is(sweep.check_shape(good, shape, "r"), nil, "a value of its shape passes (NaN is a number, a note may be missing)")
local function with(key, value)
  local t = {}
  for k, v in pairs(good) do t[k] = v end
  t[key] = value
  return t
end
for _, case in ipairs{
  {with("val", "1"), "r.val is a string, not a number"},
  {with("n", 2.5), "r.n is a float, not an integer"},
  {with("name", "two\nlines"), "r.name holds a control character, not one line"},
  {with("name", 5), "r.name is an integer, not a string"},
  {with("flag", nil), "r.flag is missing"},
  {with("list", {1, "x"}), "r.list[2] is a string, not a number"},
  {with("list", {[1] = 1, [3] = 3}), "r.list is not an array"},
  {with("by", {a = {x = {}}}), "r.by.a.x is a table, not a number"},
  {with("by", {[1] = {x = 1}}), "r.by has a key that is not a string"},
  {with("by", 7), "r.by is an integer, not a table"},
  {"x", "r is a string, not a table"},
} do
  tap.is(sweep.check_shape(case[1], shape, "r"), case[2], "a wrong shape is named: " .. case[2])
end

-- ---- Sweep:load, as merge reads a task's file
local points = sweep.product{{"seed", {1, 2}}}
local sw = sweep.new{name = "t", script = "t.lua", out = dir, grid = {seeds = "1,2"}, points = points,
                     run = function() end, result = {val_ppl = "number"}}
local function task0(text) put("task-0.json", text) return sw:load(0) end
local r, bad = task0('{"task":0,"point":{"seed":1},"result":{"val_ppl":"nan"}}')
tap.ok(r and r.val_ppl ~= r.val_ppl and bad == nil, "a good record loads, \"nan\" read back as NaN")
for _, case in ipairs{
  {'{"task":0,"point":{"seed":1},"result":{"val_ppl":"high"}}', "^result%.val_ppl is a string, not a number$"},
  {'{"task":0,"point":{"seed":1},"result":{"val_ppl":[1]}}', "^result%.val_ppl is a table, not a number$"},
  {'{"task":0,"point":{"seed":1},"result":{}}', "^result%.val_ppl is missing$"},
  {'{"task":0,"point":{"seed":2},"result":{"val_ppl":1}}', "^a record of another point$"},
  {'{"task":1,"point":{"seed":1},"result":{"val_ppl":1}}', "^not task 0's record$"},
  {'{"task":0,"point":{"seed":1},"result":7}', "^not task 0's record$"},
  {'{"task":0,"point":', "^not JSON: "},
  {"\0\1\2\27[2J", "^not JSON: "},
  {"", "^not JSON: "},
} do
  r, bad = task0(case[1])
  tap.ok(r == nil and type(bad) == "string" and bad:find(case[2]) and not bad:find("[%c]"),
         "a bad record is nil and one line of why: " .. tostring(bad))
end
os.remove(dir .. "/task-0.json")
r, bad = sw:load(0)
tap.ok(r == nil and bad == nil, "no file: nil alone (missing, not bad)")
os.execute("ln -s /dev/zero " .. dir .. "/task-0.json")
r, bad = sw:load(0)
tap.ok(r == nil and bad == "is a character device, not a regular file", "/dev/zero as a task file: " .. tostring(bad))
os.remove(dir .. "/task-0.json")
if have_fifo then
  os.rename(dir .. "/fifo", dir .. "/task-0.json")
  r, bad = sw:load(0)
  tap.ok(r == nil and bad == "is a FIFO, not a regular file", "a FIFO as a task file: " .. tostring(bad))
else
  tap.skip("mkfifo is not allowed here")
end

os.execute("rm -rf " .. dir)
tap.done()
