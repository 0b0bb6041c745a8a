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
--             a file missing or bad (not a regular file, not JSON, not
--             the record of its task, a field of the wrong type) is
--             named on stderr and after the report, the rest reported,
--             and the exit status is 1
--   (none)    runs every unfinished task here, then merges; with out=
--             (no folder) nothing is written and the report is the same
--
-- Before any verb but merge every point is checked ('check', below): a
-- grid one of whose tasks could not run is refused whole, saying which and
-- why. A command line (tasks, slurm) carries what lab.command() gives (the
-- sandbox, the options of tielab's own command line) and is one line:
-- a value with a control character in it is refused, as is an #SBATCH
-- value that is not one (partition=, time=, cpus=).
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
--     check = function(p) return lab.check_run{...} end,   -- true, or nil and why
--     run = function(p, task) ... return {val_ppl = ...} end,
--     result = {val_ppl = "number"},                -- a record's shape (sweep.shape)
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

-- The largest task record read back (a paper.lua task holds every step's
-- CSV line): a larger file is no record of a task.
M.RECORD_MAX = 256 << 20

-- 'text' safe to show on one line: control characters as '?', at most 200
-- bytes, cut before a character left incomplete.
function M.clean(text)
  text = tostring(text):gsub("[%c\127]", "?")
  if #text <= 200 then return text end
  return (text:sub(1, 200):gsub("[\192-\255][\128-\191]*$", "")) .. "..."
end

-- The whole of the regular file 'path', or nil and why (nil alone: there is
-- none). A FIFO, a device or a folder is refused at once, never waited on.
local function read_file(path, max)
  local text, err, kind = lab.read(path, max)
  if text then return text end
  if kind == "missing" then return nil end
  local at = err:find(path, 1, true) == 1 and #path + 3 or 1   -- "<path>: why"
  return nil, M.clean(err:sub(at))
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

-- ------------------------------------------------------------ a record's shape
-- What a task's record must hold, so that a report never meets a field of
-- the wrong type: "number" (NaN and the infinities too), "integer",
-- "string", "line" (a string of one line, no control character),
-- "boolean"; M.array_of(shape), M.map_of(shape) (string keys); a table
-- {key = shape} (every key there, others allowed); M.optional(shape) as a
-- key's shape when it may be missing.

local ARRAY, MAP, OPTIONAL = {}, {}, {}
function M.array_of(shape) return {[ARRAY] = shape} end
function M.map_of(shape) return {[MAP] = shape} end
function M.optional(shape) return {[OPTIONAL] = shape} end

local function what(v)
  if v == json.null then return "null" end
  local t = math.type(v) or type(v)   -- "integer", "float", "string", ...
  return (t:find("^[aeiou]") and "an " or "a ") .. t
end

local leaf_ok = {
  number = function(v) return type(v) == "number" end,
  integer = function(v) return math.type(v) == "integer" end,
  string = function(v) return type(v) == "string" end,
  line = function(v) return type(v) == "string" and not v:find("[%c\127]") end,
  boolean = function(v) return type(v) == "boolean" end,
}
local leaf_name = {number = "a number", integer = "an integer", string = "a string", line = "a string",
                   boolean = "a boolean"}

local check_shape

local function check_array(v, shape, where)
  local n = #v
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return where .. " is not an array" end
  end
  for i = 1, n do
    local bad = check_shape(v[i], shape, string.format("%s[%d]", where, i))
    if bad then return bad end
  end
end

local function check_map(v, shape, where)
  for k in pairs(v) do if type(k) ~= "string" then return where .. " has a key that is not a string" end end
  for _, k in ipairs(sorted_keys(v)) do
    local bad = check_shape(v[k], shape, where .. "." .. k)
    if bad then return bad end
  end
end

local function check_fields(v, shape, where)
  for _, k in ipairs(sorted_keys(shape)) do
    local s, x = shape[k], v[k]
    local optional = type(s) == "table" and s[OPTIONAL]
    if x == nil and not optional then return where .. "." .. k .. " is missing" end
    local bad = x ~= nil and check_shape(x, optional or s, where .. "." .. k)
    if bad then return bad end
  end
end

-- nil when 'v' has 'shape', else what is wrong, naming where
-- ("result.val_ppl is a string, not a number").
function check_shape(v, shape, where)
  if type(shape) == "string" then
    if not leaf_ok[shape] then error("sweep: no shape '" .. shape .. "' (number, integer, string, line, boolean)", 0) end
    if leaf_ok[shape](v) then return nil end
    if shape == "line" and type(v) == "string" then return where .. " holds a control character, not one line" end
    return string.format("%s is %s, not %s", where, what(v), leaf_name[shape])
  end
  if type(v) ~= "table" then return string.format("%s is %s, not a table", where, what(v)) end
  if shape[ARRAY] then return check_array(v, shape[ARRAY], where) end
  if shape[MAP] then return check_map(v, shape[MAP], where) end
  return check_fields(v, shape, where)
end
M.check_shape = check_shape

-- ------------------------------------------------------------ the sweep

-- spec: name, script, out, grid, points, units, describe, check, run,
-- result (see above).
function M.new(spec)
  local sw = setmetatable({}, Sweep)
  for _, k in ipairs{"name", "script", "grid", "points", "run"} do
    if spec[k] == nil then error("sweep.new: '" .. k .. "' is missing", 2) end
  end
  sw.name, sw.grid, sw.points, sw.run_point = spec.name, spec.grid, spec.points, spec.run
  sw.check_point, sw.shape = spec.check, spec.result
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

-- 'text' with its control characters written as \ddd, to show it.
local function shown(text) return (tostring(text):gsub("[%c\127]", function(c) return string.format("\\%03d", c:byte()) end)) end

-- A word of a command line or a job script must be one line: one with a
-- control character in it ('what' says whose) is refused.
function Sweep:one_line(word, what)
  if tostring(word):find("[%c\127]") then
    M.usage("%s: %s holds a control character (%s): a command line or a job script could not keep it on one line",
            self.name, what, shown(word))
  end
  return word
end

-- The command line of task 'k' (or, 'k' a string, with that word as the
-- task: "$SLURM_ARRAY_TASK_ID"): lab.command() (the binary, --headless and
-- the options this process runs under, --sandbox among them), the script,
-- every grid key given, sorted.
function Sweep:command(k)
  local words = {}
  for _, w in ipairs(lab.command()) do words[#words + 1] = M.quote(self:one_line(w, "tielab's command line")) end
  words[#words + 1] = M.quote(self:one_line(self.script, "the script's path"))
  for _, key in ipairs(sorted_keys(self.grid)) do
    local v = self.grid[key]
    v = type(v) == "number" and M.num(v) or tostring(v)
    words[#words + 1] = M.quote(self:one_line(key .. "=" .. v, key .. "="))
  end
  words[#words + 1] = M.quote(self:one_line("out=" .. self.dir, "out="))
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
  local text, rerr = read_file(path, 1 << 20)
  if rerr then M.usage("%s: %s cannot be read (%s): use another out=", self.name, path, rerr) end
  if not text then
    local written, werr = M.write(path, json.encode(want, {indent = 2}) .. "\n")
    if not written then M.usage("%s: cannot write %s: %s", self.name, path, werr) end
    return
  end
  local okj, have = pcall(json.decode, text)
  if not okj or type(have) ~= "table" or type(have.grid) ~= "table" then
    M.usage("%s: %s is not a sweep's record (%s): use another out=", self.name, path,
            okj and "no grid in it" or M.clean(have))
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
-- What merge and a rerun read: whatever the file holds, this returns a
-- result of the sweep's shape or says, on one line, why not.
function Sweep:load(k)
  if not self.dir then return self.results[k] end
  local text, why = read_file(self:task_file(k), M.RECORD_MAX)
  if not text then return nil, why end
  local ok, t = pcall(json.decode, text)
  if not ok then return nil, "not JSON: " .. M.clean(tostring(t):gsub("^lab%.json%.decode: ", "")) end
  if type(t) ~= "table" or t.task ~= k or type(t.result) ~= "table" then return nil, "not task " .. k .. "'s record" end
  if not same(from_json(t.point), self.points[k + 1]) then return nil, "a record of another point" end
  local result = from_json(t.result)
  local bad = self.shape and check_shape(result, self.shape, "result")
  if bad then return nil, M.clean(bad) end
  return result
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

-- Every task's result in grid order, as {point, result, index}, and the
-- gap: each task missing or unreadable, as "task K (point): why", also
-- said on stderr.
function Sweep:collect()
  local done, gap = {}, {}
  for k = 0, #self.points - 1 do
    local result, why = self:load(k)
    if result then
      done[#done + 1] = {point = self.points[k + 1], result = result, index = k}
    else
      gap[#gap + 1] = string.format("task %d (%s): %s", k, self.describe(self.points[k + 1]),
                                    why and self:task_file(k) .. " cannot be read: " .. why
                                        or "no " .. (self.dir and self:task_file(k) or "result"))
      io.stderr:write(self.name, ": ", gap[#gap], "\n")
    end
  end
  return done, gap
end

-- Every point checked as its task would begin: the first that could not
-- run refuses the whole grid (status 2), so no task fails half-way.
function Sweep:check_all()
  if not self.check_point then return end
  for k, p in ipairs(self.points) do
    local ok, why = self.check_point(p)
    if not ok then
      M.usage("%s: task %d (%s) could not run: %s", self.name, k - 1, self.describe(p),
              M.clean(tostring(why):gsub("^lab%.run: ", "")))
    end
  end
end

-- The #SBATCH values: one line each, of the forms Slurm reads.
local function any_of(v, patterns)
  for _, p in ipairs(patterns) do if v:find(p) then return true end end
  return false
end
local sbatch_forms = {
  partition = {function(v) return v:find("^[%w._,-]+$") end,
               "partition names (letters, digits, '.', '_', '-', commas between)"},
  time = {function(v)
            return v == "UNLIMITED" or v == "INFINITE" or any_of(v, {"^%d+$", "^%d+:%d+$", "^%d+:%d+:%d+$", "^%d+%-%d+$",
                                                                    "^%d+%-%d+:%d+$", "^%d+%-%d+:%d+:%d+$"})
          end, "a time limit as Slurm writes one (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, UNLIMITED)"},
  cpus = {function(v) return v:find("^[1-9]%d*$") end, "a whole number >= 1"},
}

function Sweep:sbatch_value(key, v)
  v = self:one_line(tostring(v), key .. "=")
  local form = sbatch_forms[key]
  if not form[1](v) then M.usage("%s: %s=%s is not %s", self.name, key, v, form[2]) end
  return v
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
    if v ~= nil and v ~= "" then lines[#lines + 1] = "#SBATCH --" .. o[2] .. "=" .. M.quote(self:sbatch_value(o[1], v)) end
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
    self:check_all()
    self:claim()
    self:run_tasks{k}
    return 0
  end
  if verb ~= "merge" then self:check_all() end
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
  if #gap == 0 then return 0 end
  -- The gap ends the report too, so that a report saved alone says what it lacks.
  print()
  print(string.format("not merged: %d of %d tasks, missing or unreadable", #gap, n))
  for _, line in ipairs(gap) do print("  " .. line) end
  io.stderr:write(string.format("%s: merged %d of %d tasks; %d missing or unreadable (named above)\n", self.name,
                                #done, n, #gap))
  return 1
end

return M
