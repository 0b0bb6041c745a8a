-- test_lua_files.lua -- checkpoints and exports from Lua: a saved run loads
-- back with its step, settings, metrics and history, and trains on from
-- where it stopped exactly as the original does; history exports as CSV
-- and JSONL.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local r = lab.run(tap.tiny{name = "orig", tie = "untied", seed = 3, in_scale = 2})
r:step(4)
local path = "tests/test_lua_files.safetensors"
tap.is(r:save(path), true, "r:save returns true")

local l, msg = lab.load(path, "copy")
tap.ok(l ~= nil, "lab.load gives a run " .. tostring(msg))
if not l then tap.done() end
tap.is(l.name, "copy", "under the name asked for")
tap.is(l:metrics().step, 4, "at the saved step")
tap.is(l:options().tie, "untied", "with its settings (tie)")
tap.is(l:options().in_scale, 2, "with its settings (in_scale)")
tap.is(l:metrics().loss, r:metrics().loss, "with its metrics")
tap.is(l:history("loss").n, 4, "with its history")

local a, b = r:step(3), l:step(3)
tap.is(b.loss, a.loss, "and trains on exactly as the original")

local l2, msg2 = lab.load(path)
tap.ok(l2 == nil and tostring(msg2):find("already exists", 1, true),
       "loading under the saved name, already taken, gives nil, message: " .. tostring(msg2))

tap.is(r:export("tests/test_lua_files.csv"), true, "r:export to CSV")
local f = io.open("tests/test_lua_files.csv")
local csv = f and f:read("a") or ""
if f then f:close() end
tap.like(csv, "loss", "the CSV holds the loss series")
local function settings_line(csv_path)
  local m = io.open((csv_path:gsub("%.csv$", ".meta.json")))
  local line = m and m:read("a"):match('"settings_line": "([^"]*)"') or ""
  if m then m:close() end
  return line
end
local settings = settings_line("tests/test_lua_files.csv")
tap.ok(settings:find("tie=untied .*in_scale=2 ") ~= nil, "the settings line has the model's tie and in_scale")
tap.ok(not settings:find("warmup=", 1, true), "settings at their defaults are left out: " .. settings)

-- A run trained by a recipe says so, with every setting that differs from the defaults.
local o = lab.run(tap.tiny{name = "olmo", recipe = "olmo", warmup = 2, decay_steps = 20, lens_every = 0})
o:step(1)
tap.is(o:export("tests/test_lua_files_olmo.csv"), true, "r:export of a run with the olmo recipe")
local line = settings_line("tests/test_lua_files_olmo.csv")
for _, kv in ipairs{"lr=0.0003", "warmup=2", "schedule=cosine", "decay_steps=20", "eps=1e-05",
                    "decay_all=true", "lens_every=0", "recipe=olmo"} do
  tap.ok((" " .. line .. " "):find(" " .. kv .. " ", 1, true), "the settings line holds " .. kv)
end
for _, suffix in ipairs{".csv", ".events.csv", ".meta.json"} do
  os.remove("tests/test_lua_files_olmo" .. suffix)
  os.remove("tests/test_lua_files" .. suffix)
end
tap.is(r:export("tests/test_lua_files.jsonl"), true, "r:export to JSONL")
f = io.open("tests/test_lua_files.jsonl")
local first = f and f:read("l") or ""
if f then f:close() end
tap.ok(first:sub(1, 1) == "{", "JSONL lines are objects")

os.remove(path)
os.remove("tests/test_lua_files.jsonl")
tap.done()
