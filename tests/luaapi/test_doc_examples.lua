-- test_doc_examples.lua -- the examples of the tensors' API run as printed:
-- every ```lua block of docs/lua-api.md under the matrix headings (lab.matrix
-- and m:...) and under the run methods that reach weights, gradients, hidden
-- states and text, and the README's worked example. Each runs in a fresh
-- environment where 'r' is a small tied run and 'u' an untied one, so an
-- example may use them as the text does.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local srcdir = os.getenv("srcdir") or "."
local function read(path)
  local f = assert(io.open(srcdir .. "/" .. path))
  local text = f:read("a")
  f:close()
  return text
end

local tensor_methods = {param = true, param_names = true, set_param = true, on_grad = true, on_hidden = true,
                        hidden = true, tokenize = true, detokenize = true, token = true}

-- The examples: {heading, code} for each heading of interest (its first
-- ```lua block before the next heading).
local function examples(doc)
  local out, heading, body = {}, nil, {}
  local function close_section()
    local name = heading and heading:match("^([%w_]+[.:][%w_]+)")
    local wanted = name and (name:match("^lab%.matrix") or name:match("^m:") or
                             (name:match("^r:") and tensor_methods[name:sub(3)]))
    local block = table.concat(body, "\n"):match("```lua\n(.-)\n```")
    if wanted and block then out[#out + 1] = {heading, block} end
  end
  for line in (doc .. "\n"):gmatch("([^\n]*)\n") do
    local h = line:match("^#+ (.+)$")
    if h then
      close_section()
      heading, body = h, {}
    else
      body[#body + 1] = line
    end
  end
  close_section()
  return out
end

local function run_example(what, code)
  local r = lab.run(tap.tiny{name = "doc_r", eval_every = 1000})
  local u = lab.run(tap.tiny{name = "doc_u", tie = "untied", init_seed = 9, eval_every = 1000})
  local quiet = function() end   -- what an example prints would break the TAP stream
  local env = setmetatable({r = r, u = u, print = quiet, io = setmetatable({write = quiet}, {__index = io})},
                           {__index = _G})
  local chunk, err = load(code, "=" .. what, "t", env)
  local ok, msg = chunk ~= nil, err
  if chunk then ok, msg = pcall(chunk) end
  tap.ok(ok, what .. (ok and "" or ": " .. tostring(msg)))
  for _, run in ipairs{r, u} do pcall(run.remove, run) end
  for _, other in ipairs(lab.runs) do pcall(other.remove, other) end   -- runs an example made
end

local found = examples(read("docs/lua-api.md"))
tap.ok(#found >= 20, #found .. " examples of the tensors' API in docs/lua-api.md")
local seen = {}
for _, e in ipairs(found) do
  seen[e[1]:match("^([%w_]+[.:][%w_]+)")] = true
  run_example("docs/lua-api.md: " .. e[1], e[2])
end
for m in pairs(tensor_methods) do tap.ok(seen["r:" .. m], "r:" .. m .. " has an example") end

local readme = read("README.md")
local worked = readme:match("Scripts reach the tensors.-```lua\n(.-)\n```")
tap.ok(worked ~= nil, "the README's worked example is there")
if worked then run_example("README: the worked example", worked) end

tap.done()
