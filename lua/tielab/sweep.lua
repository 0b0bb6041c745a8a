-- tielab.sweep -- a script's grid of runs as tasks that separate processes
-- run: GNU parallel on a laptop, a Slurm job array on a cluster, or this
-- process one after another. The script declares its grid (every argument
-- that changes results) and its points in a fixed order, trains one point
-- when asked, and reports the points' records; this module does the rest:
--
--   verb      what it does (out=DIR; DIR is made if need be)
--   tasks     prints one shell command per task, for '| parallel -j N'
--   task=K    runs task K (0-based) alone: DIR/task-K.json, written to a
--             temporary file in DIR and renamed, so a file there is whole;
--             a task whose file is there and reads back is skipped
--   slurm     writes DIR/sweep.sbatch, an array job of every task, logs
--             in DIR/logs/ (partition=, time=, cpus= for its #SBATCH lines)
--   merge     reads every task's file in grid order and reports them;
--             files missing or unreadable are named on stderr, the rest
--             reported, and the exit status is 1
--   (none)    runs every unfinished task here, then merges; with out=
--             (no folder) nothing is written and the report is the same
--
-- DIR/sweep.json records the grid the first time the folder is used; a
-- later call with another grid is refused, naming each key that differs.
-- Records hold numbers exactly (JSON doubles, 17 digits) and are read back
-- in grid order, so a report is the same byte for byte however the tasks
-- ran; timings and progress go to stderr only.
--
--   local sweep = require "tielab.sweep"
--   local sw = sweep.new{
--     name = "sweep", script = arg[0], out = opt.out,
--     grid = {seeds = "1,2", steps = 500, ...},     -- as on the command line
--     points = sweep.product{{"seed", {1, 2}}, {"in_scale", {1, 5}}},
--     units = 2 * opt.steps,                        -- progress units a task
--     describe = function(p) return "seed " .. p.seed end,
--     run = function(p, task) ... return {val_ppl = ...} end,
--   }
--   os.exit(sw:main(opt, function(done) ... end))   -- done: {point, result}
local lab = require "tielab"

local M = {}

local json = lab.json
local Sweep = {}
Sweep.__index = Sweep

-- ------------------------------------------------------------ small things

-- The shortest decimal that reads back as 'x' (integers as integers).
function M.num(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  for digits = 15, 17 do
    local s = string.format("%." .. digits .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

-- "1, 2,5" -> {1, 2, 5}, and the list written back canonically ("1,2,5"):
-- what the grid records, so that "1, 2" and "1,2" are the same grid.
function M.list(key, text)
  local t, words = {}, {}
  for w in tostring(text):gmatch("[^,%s]+") do
    local x = tonumber(w)
    if not x then M.usage("%s=: '%s' is not a number", key, w) end
    t[#t + 1] = x
    words[#words + 1] = M.num(x)
  end
  if #t == 0 then M.usage("%s= names no value", key) end
  return t, table.concat(words, ",")
end

-- A usage error: one line on stderr, exit status 2 (as lab.args's own).
function M.usage(fmt, ...)
  io.stderr:write(string.format(fmt, ...), "\n")
  os.exit(2)
end

-- 'path' made absolute against the working directory.
function M.absolute(path)
  if path == "" or path:sub(1, 1) == "/" then return path end
  path = path:gsub("^%./+", "")
  return (lab.cwd == "/" and "" or lab.cwd) .. "/" .. path
end

-- One word for a POSIX shell: as it is when it is made of safe characters,
-- else in single quotes (a quote inside as '\'').
function M.quote(word)
  word = tostring(word)
  if word ~= "" and not word:find("[^%w@%%+=:,./_-]") then return word end
  return "'" .. word:gsub("'", "'\\''") .. "'"
end

-- Every combination of the axes' values, the first axis slowest: {{"a",
-- {1, 2}}, {"b", {3, 4}}} gives a=1 b=3, a=1 b=4, a=2 b=3, a=2 b=4.
function M.product(axes)
  local points = {{}}
  for _, axis in ipairs(axes) do
    local key, values, grown = axis[1], axis[2], {}
    for _, p in ipairs(points) do
      for _, v in ipairs(values) do
        local q = {}
        for k, x in pairs(p) do q[k] = x end
        q[key] = v
        grown[#grown + 1] = q
      end
    end
    points = grown
  end
  return points
end

-- Records hold NaN and the infinities, which JSON has not, as these
-- strings, and get them back on reading.
local nonfinite = {nan = 0 / 0, inf = math.huge, ["-inf"] = -math.huge}
local function to_json(v)
  if type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge) then return M.num(v) end
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = to_json(x) end
  return t
end
local function from_json(v)
  if type(v) == "string" and nonfinite[v] then return nonfinite[v] end
  if type(v) ~= "table" then return v end
  for k, x in pairs(v) do v[k] = from_json(x) end
  return v
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- Write 'text' to 'path' whole or not at all: a temporary file in the same
-- folder (named for this process's clock, so two processes never share
-- one), then a rename over the name.
function M.write(path, text)
  local tmp = string.format("%s.%d.%d.tmp", path, os.time(), math.floor(lab.clock() * 1e9) % 1000000000)
  local f, err = io.open(tmp, "wb")
  if not f then return nil, err end
  local ok, werr = f:write(text)
  local closed, cerr = f:close()
  if not ok or not closed then
    os.remove(tmp)
    return nil, werr or cerr
  end
  local moved, merr = os.rename(tmp, path)
  if not moved then
    os.remove(tmp)
    return nil, merr
  end
  return true
end

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b or (a ~= a and b ~= b) end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- ------------------------------------------------------------ the sweep

-- spec: name, script, out, grid, points, units, describe, run (see above).
function M.new(spec)
  local sw = setmetatable({}, Sweep)
  for _, k in ipairs{"name", "script", "grid", "points", "run"} do
    if spec[k] == nil then error("sweep.new: '" .. k .. "' is missing", 2) end
  end
  sw.name, sw.grid, sw.points, sw.run_point = spec.name, spec.grid, spec.points, spec.run
  sw.units = spec.units or 1
  sw.describe = spec.describe or function(p)
    local t = {}
    for _, k in ipairs(sorted_keys(p)) do t[#t + 1] = k .. " " .. M.num(p[k]) end
    return table.concat(t, ", ")
  end
  sw.script = M.absolute(spec.script)
  sw.dir = spec.out and spec.out ~= "" and M.absolute(spec.out):gsub("/+$", "") or nil
  if sw.dir == "" then sw.dir = "/" end
  sw.results = {}   -- task index (0-based) -> result, for a run with no folder
  return sw
end

function Sweep:count() return #self.points end

function Sweep:task_file(k) return string.format("%s/task-%d.json", self.dir, k) end

-- The command line of task 'k' (or, 'k' a string, with that word as the
-- task: "$SLURM_ARRAY_TASK_ID"), every grid key given, sorted.
function Sweep:command(k)
  local words = {M.quote(lab.executable), "--headless", M.quote(self.script)}
  for _, key in ipairs(sorted_keys(self.grid)) do
    local v = self.grid[key]
    words[#words + 1] = M.quote(key .. "=" .. (type(v) == "number" and M.num(v) or tostring(v)))
  end
  words[#words + 1] = M.quote("out=" .. self.dir)
  words[#words + 1] = "task=" .. k
  return table.concat(words, " ")
end

-- The folder and its sweep.json: made on first use, else the grid it
-- records must be this one.
function Sweep:claim()
  local made, ok, err = pcall(lab.mkdir, self.dir)
  if not (made and ok) then M.usage("%s: cannot make the folder %s: %s", self.name, self.dir, made and err or ok) end
  local path = self.dir .. "/sweep.json"
  local want = {script = self.name, grid = self.grid, tasks = #self.points}
  local text = read_file(path)
  if not text then
    local written, werr = M.write(path, json.encode(want, {indent = 2}) .. "\n")
    if not written then M.usage("%s: cannot write %s: %s", self.name, path, werr) end
    return
  end
  local okj, have = pcall(json.decode, text)
  if not okj or type(have) ~= "table" or type(have.grid) ~= "table" then
    M.usage("%s: %s is not a sweep's record (%s): use another out=", self.name, path,
            okj and "no grid in it" or tostring(have))
  end
  if have.script ~= self.name then
    M.usage("%s: %s holds a sweep of %s.lua, not of %s.lua: use another out=", self.name, self.dir,
            tostring(have.script), self.name)
  end
  local diffs = {}
  local keys = {}
  for k in pairs(have.grid) do keys[k] = true end
  for k in pairs(self.grid) do keys[k] = true end
  local function show(v)
    if v == nil then return "(none)" end
    if type(v) == "number" then return M.num(v) end
    return v == "" and '""' or tostring(v)
  end
  for _, k in ipairs(sorted_keys(keys)) do
    local a, b = have.grid[k], self.grid[k]
    if type(a) == "number" and type(b) == "number" then a, b = M.num(a), M.num(b) end
    if a ~= b then diffs[#diffs + 1] = string.format("%s recorded %s, given %s", k, show(have.grid[k]), show(self.grid[k])) end
  end
  if #diffs > 0 then
    M.usage("%s: %s holds another grid: %s (use another out=, or the recorded values)", self.name, path,
            table.concat(diffs, "; "))
  end
end

-- The result of task 'k' read back, or nil and why (nil alone: no file).
function Sweep:load(k)
  if not self.dir then return self.results[k] end
  local path = self:task_file(k)
  local text = read_file(path)
  if not text then return nil end
  local ok, t = pcall(json.decode, text)
  if not ok then return nil, tostring(t):gsub("^lab%.json%.decode: ", "") end
  if type(t) ~= "table" or t.task ~= k or type(t.result) ~= "table" then return nil, "not task " .. k .. "'s record" end
  if not same(from_json(t.point), self.points[k + 1]) then return nil, "a record of another point" end
  return from_json(t.result)
end

function Sweep:save(k, result)
  if not self.dir then
    self.results[k] = result
    return
  end
  local record = {task = k, point = to_json(self.points[k + 1]), result = to_json(result)}
  local ok, err = M.write(self:task_file(k), json.encode(record) .. "\n")
  if not ok then error(string.format("%s: cannot write %s: %s", self.name, self:task_file(k), err), 0) end
end

-- Run the tasks in 'list' (0-based indices) here, one after another,
-- those already done skipped.
function Sweep:run_tasks(list)
  local todo = {}
  for _, k in ipairs(list) do
    local result, why = self:load(k)
    if result then
      io.stderr:write(string.format("%s: task %d (%s) is done already: %s, skipped\n", self.name, k,
                                    self.describe(self.points[k + 1]), self:task_file(k)))
    else
      if why then
        io.stderr:write(string.format("%s: task %d: %s cannot be read (%s): it runs again\n", self.name, k,
                                      self:task_file(k), why))
      end
      todo[#todo + 1] = k
    end
  end
  if #todo == 0 then return end
  local progress = lab.progress(#todo * self.units)
  for i, k in ipairs(todo) do
    local point, t0 = self.points[k + 1], lab.clock()
    local label = string.format("task %d (%d/%d): %s", k, i, #todo, self.describe(point))
    lab.log("%s: %s", self.name, label)
    local result = self.run_point(point, {index = k, progress = progress, label = label})
    self:save(k, result)
    lab.log("%s: task %d done in %.1f s", self.name, k, lab.clock() - t0)
  end
  progress:done()
end

-- Every task's result in grid order, as {point, result, index}; the
-- missing and unreadable ones named on stderr. Returns the list and how
-- many were left out.
function Sweep:collect()
  local done, gap = {}, 0
  for k = 0, #self.points - 1 do
    local result, why = self:load(k)
    if result then
      done[#done + 1] = {point = self.points[k + 1], result = result, index = k}
    else
      gap = gap + 1
      io.stderr:write(string.format("%s: task %d (%s): %s\n", self.name, k, self.describe(self.points[k + 1]),
                                    why and self:task_file(k) .. " cannot be read: " .. why
                                        or "no " .. (self.dir and self:task_file(k) or "result")))
    end
  end
  return done, gap
end

function Sweep:write_sbatch(opt)
  local logs = self.dir .. "/logs"
  local made, ok, err = pcall(lab.mkdir, logs)
  if not (made and ok) then M.usage("%s: cannot make the folder %s: %s", self.name, logs, made and err or ok) end
  local lines = {
    "#!/bin/bash",
    "#SBATCH --job-name=" .. M.quote("tielab-" .. self.name),
    string.format("#SBATCH --array=0-%d", #self.points - 1),
    "#SBATCH --output=" .. M.quote(logs .. "/task-%a.out"),
    "#SBATCH --error=" .. M.quote(logs .. "/task-%a.err"),
  }
  for _, o in ipairs{{"partition", "partition"}, {"time", "time"}, {"cpus", "cpus-per-task"}} do
    local v = opt[o[1]]
    if v ~= nil and v ~= "" then lines[#lines + 1] = "#SBATCH --" .. o[2] .. "=" .. M.quote(tostring(v)) end
  end
  lines[#lines + 1] = string.format("# %d tasks of %s.lua; written by tielab %s", #self.points, self.name, lab.version)
  lines[#lines + 1] = 'if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then'
  lines[#lines + 1] = '  echo "sweep.sbatch: run it with sbatch (SLURM_ARRAY_TASK_ID is not set)" >&2'
  lines[#lines + 1] = "  exit 2"
  lines[#lines + 1] = "fi"
  lines[#lines + 1] = "exec " .. self:command('"$SLURM_ARRAY_TASK_ID"')
  local path = self.dir .. "/sweep.sbatch"
  local written, werr = M.write(path, table.concat(lines, "\n") .. "\n")
  if not written then M.usage("%s: cannot write %s: %s", self.name, path, werr) end
  return path
end

-- The verbs: 'opt' holds tasks, task, slurm, merge (from lab.args) and
-- partition, time, cpus; 'report(done)' prints the results of the tasks
-- done, in grid order. Returns the exit status.
function Sweep:main(opt, report)
  local verbs = {}
  if opt.tasks then verbs[#verbs + 1] = "tasks" end
  if opt.task ~= nil and opt.task ~= -1 and opt.task ~= "" then verbs[#verbs + 1] = "task=" .. tostring(opt.task) end
  if opt.slurm then verbs[#verbs + 1] = "slurm" end
  if opt.merge then verbs[#verbs + 1] = "merge" end
  if #verbs > 1 then M.usage("%s: one of tasks, task=K, slurm, merge at a time (given: %s)", self.name, table.concat(verbs, ", ")) end
  local verb = verbs[1]
  local n = #self.points
  if verb and not self.dir then M.usage("%s: %s needs out=DIR (a folder for the tasks' results)", self.name, verb) end
  if verb and verb:match("^task=") then
    local k = math.tointeger(tonumber(opt.task))
    if not k or k < 0 or k >= n then
      M.usage("%s: task=%s is out of range: this grid has %d task%s, task=0..%d", self.name, tostring(opt.task), n,
              n == 1 and "" or "s", n - 1)
    end
    self:claim()
    self:run_tasks{k}
    return 0
  end
  if self.dir then self:claim() end
  if verb == "tasks" then
    for k = 0, n - 1 do print(self:command(k)) end
    return 0
  elseif verb == "slurm" then
    local path = self:write_sbatch(opt)
    io.stderr:write(string.format("%s: %d tasks in %s; submit them with:\n", self.name, n, path))
    print("sbatch " .. M.quote(path))
    return 0
  end
  if not verb then
    local all = {}
    for k = 0, n - 1 do all[#all + 1] = k end
    self:run_tasks(all)
  end
  local done, gap = self:collect()
  report(done)
  if gap > 0 then
    io.stderr:write(string.format("%s: merged %d of %d tasks; %d missing or unreadable (named above)\n", self.name,
                                  #done, n, gap))
    return 1
  end
  return 0
end

return M
