-- test_luadoc.lua -- docs/lua-api.md against the module: every function and
-- field of `lab`, every method and field of a run handle and of a matrix,
-- every field of the tables they return and every setting must be
-- documented, and every documented function or method must exist. The
-- examples of the matrix section run, and print what their comments say.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local path = (os.getenv("srcdir") or ".") .. "/docs/lua-api.md"
local f = io.open(path)
if not tap.ok(f ~= nil, "docs/lua-api.md is readable") then tap.done() end
local doc = f:read("a")
f:close()

local headings, words = {}, {}
for name in doc:gmatch("\n### ([%w_]+[.:][%w_]+)") do headings[name] = true end
for quoted in doc:gmatch("`([^`\n]+)`") do
  for w in quoted:gmatch("[%a_][%w_]*") do words[w] = true end
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  return keys
end

local missing = {}
local function need(cond, name)
  if not cond then missing[#missing + 1] = name end
end

-- the module
for _, k in ipairs(sorted_keys(lab)) do need(headings["lab." .. k], "lab." .. k) end

-- a run handle
local r = lab.run(tap.tiny{name = "doc", eval_every = 1})
local u = lab.run(tap.tiny{name = "docu", tie = "untied", init_seed = 9})
local meta = getmetatable(r)
tap.ok(type(meta.__methods) == "table" and type(meta.__fields) == "table", "the run metatable lists methods and fields")
for _, k in ipairs(sorted_keys(meta.__methods)) do need(headings["r:" .. k], "r:" .. k) end
for _, k in ipairs(meta.__fields) do need(headings["r." .. k], "r." .. k) end

-- a matrix
local mmeta = getmetatable(lab.matrix(1, 1))
tap.ok(type(mmeta.__methods) == "table" and type(mmeta.__fields) == "table",
       "the matrix metatable lists methods and fields")
for _, k in ipairs(sorted_keys(mmeta.__methods)) do need(headings["m:" .. k], "m:" .. k) end
for _, k in ipairs(mmeta.__fields) do need(headings["m." .. k], "m." .. k) end
tap.is(table.concat(missing, ", "), "", "every exported function and field has a heading")

-- the tables returned
missing = {}
local function fields(t, where)
  for _, k in ipairs(sorted_keys(t)) do need(words[k], where .. "." .. k) end
end
local m = r:step(2)
fields(m, "metrics")
fields(m.lens, "metrics.lens")
local al = lab.align(r, u)
fields(al, "align")
fields(al.baseline, "align.baseline")
local row = {}
for i = 1, 9 do row[i] = i end
local e = r:evaluate{row}
e.grad_norm = nil          -- keyed by tensor names, not documented one by one
fields(e, "evaluate")
fields(r:history("loss"), "history")
fields(lab.settings()[1], "settings row")
for _, s in ipairs(lab.settings()) do need(words[s.name], "setting " .. s.name) end
fields(r:events()[1] or {}, "events")
tap.is(table.concat(missing, ", "), "", "every returned field and every setting is documented")

-- nothing documented that does not exist
local ghosts = {}
for _, name in ipairs(sorted_keys(headings)) do
  local scope, sep, key = name:match("^(%w+)([.:])([%w_]+)$")
  local exists
  if scope == "lab" then exists = lab[key] ~= nil
  elseif scope == "r" and sep == ":" then exists = meta.__methods[key] ~= nil
  elseif scope == "r" then
    exists = false
    for _, k in ipairs(meta.__fields) do if k == key then exists = true end end
  elseif scope == "m" and sep == ":" then exists = mmeta.__methods[key] ~= nil
  elseif scope == "m" then
    exists = false
    for _, k in ipairs(mmeta.__fields) do if k == key then exists = true end end
  end
  if not exists then ghosts[#ghosts + 1] = name end
end
tap.is(table.concat(ghosts, ", "), "", "every documented function and field exists")

-- The matrix section's examples: each runs, and a `print(...)` line with
-- a comment prints that comment (spaces aside).
local function squeeze(s) return (tostring(s):gsub("%s+", " ")) end
local section = doc:match("\n## Matrices[^\n]*\n(.-)\n## ") or ""
local wrong, examples = {}, 0
for block in section:gmatch("```lua\n(.-)```") do
  examples = examples + 1
  local printed = {}
  local function print_line(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    printed[#printed + 1] = table.concat(t, " ")
  end
  local chunk, err = load(block, "=example " .. examples, "t", setmetatable({print = print_line}, {__index = _G}))
  local ran, why = chunk ~= nil, err
  if chunk then ran, why = pcall(chunk) end
  if not ran then wrong[#wrong + 1] = "example " .. examples .. " raised: " .. tostring(why) end
  local k = 0
  for line in block:gmatch("[^\n]+") do
    if ran and line:find("^print%(") then
      k = k + 1
      local want = line:match("%-%- (.*)$")
      if want and squeeze(printed[k]) ~= squeeze(want) then
        wrong[#wrong + 1] = string.format("example %d: %s printed '%s'", examples, line, tostring(printed[k]))
      end
    end
  end
end
tap.ok(examples >= 20, "the matrix section has its examples (" .. examples .. ")")
tap.is(table.concat(wrong, "; "), "", "each runs and prints what its comments say")

tap.done()
