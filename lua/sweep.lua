-- sweep.lua -- the paper's intervention as a sweep: tied runs with the
-- input-side gradient scaled by each factor in 'scales', over seeds and
-- model sizes, each beside an untied partner (its own init, init_seed =
-- seed + 1000) trained on the same batches (data_seed = seed). Each grid
-- point is one task: a seed, a scale and a model size. A task records the
-- validation perplexity, the mean L2 gradient ratio over the first 10% of
-- training (the paper's input side) and the linear-map cosine of the tied
-- matrix to the partner's E_in and E_out. The report gives, per model size
-- and scale, the mean and sample standard deviation (after '+-') over
-- seeds, and each scale's paired difference from the first scale (the same
-- seed's tasks) with its 95% t interval.
--
--   tielab --headless [RUN OPTIONS] sweep.lua [key=value ...] [VERB]
--     scales=1,2,5,10 seeds=1,2,3 steps=500 corpus= threads=1
--     vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16
--                   each of the six sizes may be a list too (dim=64,128)
--     recipe=olmo   any run setting too (lr=, warmup=, eps=, clip=, ...)
--                   but those each run sets itself (name, tie, tie_merge,
--                   seed, init_seed, data_seed, in_scale, partner); a
--                   numeric one may be a list, an axis after the sizes
--                   (lr=1e-3,3e-3); with recipe=olmo, warmup defaults to
--                   10% of steps and decay_steps to steps. A run option
--                   given to tielab before the script (--recipe olmo,
--                   --dim 32) is the default of its key, so it is in the
--                   grid, every task line and the report like one given
--                   after it
--     out=sweep     the folder of the tasks' results (out= keeps none)
--     VERB          tasks | task=K | slurm | merge (see tielab.sweep, and
--                   docs/scale.md); none: every unfinished task here, then
--                   the report
--     partition= time= cpus=   the slurm verb's #SBATCH lines
--
-- The tasks go in this order (task=0 first): model size slowest (vocab,
-- then dim, layers, heads, ctx, batch), then the settings given as lists
-- (in lab.settings() order), then seed, then scale fastest;
-- seeds=1,2 scales=1,5 is task 0 seed 1 x1, 1 seed 1 x5, 2 seed 2 x1,
-- 3 seed 2 x5. DIR/sweep.csv has one row per task in that order.
--
-- threads is part of the grid: the gradient norms and the alignment sum in
-- another order with another count of threads, which moves their last
-- digits, so a folder's tasks all use one count.
local lab = require "tielab"
local findings = require "tielab.findings"
local stats = require "tielab.stats"
local settings = require "tielab.settings"
local sweep = require "tielab.sweep"

local defaults, passthrough = settings.defaults{
  scales = "1,2,5,10", seeds = "1,2,3", steps = 500, corpus = "", threads = 1,
  vocab = "1024", dim = "128", layers = "4", heads = "4", ctx = "64", batch = "16",
  out = "sweep", tasks = false, task = -1, slurm = false, merge = false, partition = "", time = "", cpus = "",
}
local opt = lab.args(arg, defaults)

local sizes = {"vocab", "dim", "layers", "heads", "ctx", "batch"}
local size_label = {vocab = "V", dim = "d", layers = "L", heads = "H", ctx = "T", batch = "B"}

-- The grid: every argument that changes results, written canonically.
local grid = {steps = opt.steps, threads = opt.threads, corpus = sweep.absolute(opt.corpus)}
local lists = {}
for _, k in ipairs{"seeds", "scales", table.unpack(sizes)} do lists[k], grid[k] = sweep.list(k, opt[k]) end
if opt.steps < 1 then sweep.usage("sweep.lua: steps= must be at least 1") end
if opt.threads < 1 then sweep.usage("sweep.lua: threads= must be at least 1") end

-- The run settings given: each numeric one given as a list an axis (its
-- values in 'lists'), the others fixed (in 'fixed', in their own types);
-- those not given are not in the grid, so that a folder's record names
-- every setting its tasks were trained with.
local function typed(s, text)
  local ok, v = pcall(settings.value, s, text)
  if not ok then sweep.usage("sweep.lua: %s", tostring(v)) end
  return v
end
local fixed, setting_axes = {}, {}
for _, s in ipairs(passthrough) do
  local text = opt[s.name]
  if text ~= "" and (s.type == "integer" or s.type == "number") and text:find(",") then
    lists[s.name], grid[s.name] = sweep.list(s.name, text)
    for _, x in ipairs(lists[s.name]) do typed(s, sweep.num(x)) end
    setting_axes[#setting_axes + 1] = s.name
  elseif text ~= "" then
    fixed[s.name] = typed(s, text)
    grid[s.name] = fixed[s.name]
  end
end

local axes = {}
for _, k in ipairs(sizes) do axes[#axes + 1] = {k, lists[k]} end
for _, k in ipairs(setting_axes) do axes[#axes + 1] = {k, lists[k]} end
axes[#axes + 1] = {"seed", lists.seeds}
axes[#axes + 1] = {"in_scale", lists.scales}
local points = sweep.product(axes)
for _, p in ipairs(points) do
  for _, k in ipairs(sizes) do
    if math.type(p[k]) ~= "integer" or p[k] < 1 then sweep.usage("sweep.lua: %s=%s is not a whole number >= 1", k, sweep.num(p[k])) end
  end
  if p.dim % p.heads ~= 0 then sweep.usage("sweep.lua: heads=%d does not divide dim=%d", p.heads, p.dim) end
end

-- A point's model size and the settings it takes from lists: what the
-- report groups the seeds and scales by.
local function size_of(p)
  local t = {}
  for _, k in ipairs(sizes) do t[#t + 1] = size_label[k] .. "=" .. p[k] end
  for _, k in ipairs(setting_axes) do t[#t + 1] = k .. "=" .. sweep.num(p[k]) end
  return table.concat(t, " ")
end

local function describe(p)
  return string.format("seed %s, in_scale %s, %s", sweep.num(p.seed), sweep.num(p.in_scale), size_of(p))
end


-- A task's two runs: the options they share, the untied partner's own and
-- the tied run's at this scale.
local function options(p)
  local shape = {vocab = p.vocab, dim = p.dim, layers = p.layers, heads = p.heads, ctx = p.ctx, batch = p.batch,
                 threads = opt.threads, align_every = 0, eval_every = math.max(1, math.min(50, opt.steps))}
  for k, v in pairs(fixed) do shape[k] = v end
  for _, k in ipairs(setting_axes) do shape[k] = p[k] end
  if grid.corpus ~= "" then shape.corpus = grid.corpus end
  settings.fit_recipe(shape, opt.steps)
  return shape, {name = string.format("untied_s%s", sweep.num(p.seed)), tie = "untied", data_seed = p.seed,
                 init_seed = p.seed + 1000},
         {name = string.format("x%s_s%s", sweep.num(p.in_scale), sweep.num(p.seed)), in_scale = p.in_scale, seed = p.seed}
end

-- Whether lab.run takes both runs of a task (a seed of -1, a scale out of
-- range are refused before any task is handed out).
local function check(p)
  local shape, untied, tied = options(p)
  local ok, why = lab.check_run(shape, tied)
  if ok then ok, why = lab.check_run(shape, untied) end
  return ok, why
end

-- One task: the tied run at this scale and its untied partner, side by side.
local function run(p, task)
  local shape, untied, tied = options(p)
  local partner = lab.run(shape, untied)
  local r = lab.run(shape, tied)
  -- the early window as tielab.findings (and so paper.lua) reads it
  local window = findings.ratio_windows(opt.steps)
  local hook = lab.on_step(function(step)
    task.progress:step(2, task.label)
    local m = r:metrics()
    if m.step == step then window:add(m) end
  end)
  lab.step(opt.steps)
  lab.off(hook)
  local ppl, al = r:evaluate_val().ppl, lab.align(r, partner)   -- at the last step, whatever eval_every
  r:remove()
  partner:remove()
  return {val_ppl = ppl, ratio_10pct = window:values().ratio_act_early, linear_in = al.linear_in,
          linear_out = al.linear_out}
end

-- ------------------------------------------------------------ the report

local measures = {{key = "val_ppl", title = "val perplexity", fmt = "%.2f"},
                  {key = "ratio_10pct", title = "ratio, first 10%", fmt = "%.2f"},
                  {key = "linear_in", title = "linear vs E_in", fmt = "%.3f"},
                  {key = "linear_out", title = "linear vs E_out", fmt = "%.3f"}}

local nan = 0 / 0

local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end

local function spread(xs, fmt)
  local v = {}
  for _, x in ipairs(xs) do if finite(x) then v[#v + 1] = x end end
  if #v == 0 then return "-" end
  if #v == 1 then return string.format(fmt, v[1]) end
  return string.format(fmt .. "+-" .. fmt, stats.mean(v), stats.sd(v))
end

local function signed(x, fmt) return x ~= x and "-" or string.format("%+" .. fmt:sub(2), x) end

local function difference(d, fmt)
  if d.n == 0 then return "-" end
  if d.lo ~= d.lo then return signed(d.mean, fmt) end
  return string.format("%s [%s, %s]", signed(d.mean, fmt), signed(d.lo, fmt), signed(d.hi, fmt))
end

-- The recipe and every other run setting given (the rest are the lab's
-- defaults, or the recipe's).
local function settings_line()
  local t = {"recipe " .. (grid.recipe or "(none)")}
  for _, s in ipairs(passthrough) do
    local v = grid[s.name]
    if v ~= nil and s.name ~= "recipe" then
      t[#t + 1] = s.name .. " " .. (type(v) == "number" and sweep.num(v) or tostring(v))
    end
  end
  return table.concat(t, ", ")
end

local function report(done)
  -- results[size][scale index][seed index] = result (nil: missing)
  local size_index, size_list, results = {}, {}, {}
  for _, p in ipairs(points) do
    local s = size_of(p)
    if not size_index[s] then
      size_list[#size_list + 1] = s
      size_index[s] = #size_list
      results[s] = {}
      for i = 1, #lists.scales do results[s][i] = {} end
    end
  end
  local scale_index, seed_index = {}, {}
  for i, k in ipairs(lists.scales) do scale_index[k] = i end
  for i, k in ipairs(lists.seeds) do seed_index[k] = i end
  for _, d in ipairs(done) do
    results[size_of(d.point)][scale_index[d.point.in_scale]][seed_index[d.point.seed]] = d.result
  end
  local function column(s, i, key)
    local xs = {}
    for j = 1, #lists.seeds do
      local r = results[s][i][j]
      xs[j] = r and r[key] or nan
    end
    return xs
  end

  print(string.format("in_scale sweep: %d steps, seeds %s, scales %s, threads %d, corpus %s", opt.steps,
                      grid.seeds, grid.scales, opt.threads, grid.corpus == "" and "(synthetic)" or grid.corpus))
  print(settings_line())
  print(string.format("%d of %d tasks", #done, #points))
  for _, s in ipairs(size_list) do
    print()
    print(s .. ": mean+-sd over seeds")
    local head = string.format("%9s %2s", "in_scale", "n")
    for _, m in ipairs(measures) do head = head .. string.format(" %18s", m.title) end
    print(head)
    for i, k in ipairs(lists.scales) do
      local n = 0
      for j = 1, #lists.seeds do if results[s][i][j] then n = n + 1 end end
      local line = string.format("%9s %2d", sweep.num(k), n)
      for _, m in ipairs(measures) do line = line .. string.format(" %18s", spread(column(s, i, m.key), m.fmt)) end
      print(line)
    end
    if #lists.scales > 1 then
      print(string.format("  minus in_scale %s, same seed: mean [95%% t interval]", sweep.num(lists.scales[1])))
      head = string.format("%9s %2s", "in_scale", "n")
      for _, m in ipairs(measures) do head = head .. string.format(" %24s", m.title) end
      print(head)
      for i = 2, #lists.scales do
        local line, n = string.format("%9s", sweep.num(lists.scales[i])), 0
        local cells = {}
        for _, m in ipairs(measures) do
          local d = stats.paired(column(s, i, m.key), column(s, 1, m.key))
          n = math.max(n, d.n)
          cells[#cells + 1] = string.format(" %24s", difference(d, m.fmt))
        end
        print(line .. string.format(" %2d", n) .. table.concat(cells))
      end
    end
  end
end

local sw = sweep.new{name = "sweep", script = arg[0], out = opt.out, grid = grid, points = points,
                     units = 2 * opt.steps, describe = describe, check = check, run = run,
                     result = {val_ppl = "number", ratio_10pct = "number", linear_in = "number", linear_out = "number"}}

-- DIR/sweep.csv: one row per task done, in grid order, every number exact.
local function report_and_csv(done)
  report(done)
  if not sw.dir then return end
  local columns = {"seed", "in_scale", table.unpack(sizes)}
  for _, k in ipairs(setting_axes) do columns[#columns + 1] = k end
  local head = {table.concat(columns, ",")}
  for _, m in ipairs(measures) do head[#head + 1] = m.key end
  local rows = {table.concat(head, ",")}
  for _, d in ipairs(done) do
    local p, r, t = d.point, d.result, {}
    for _, k in ipairs(columns) do t[#t + 1] = sweep.num(p[k]) end
    for _, m in ipairs(measures) do t[#t + 1] = sweep.num(r[m.key]) end
    rows[#rows + 1] = table.concat(t, ",")
  end
  local path = sw.dir .. "/sweep.csv"
  local ok, err = sweep.write(path, table.concat(rows, "\n") .. "\n")
  if not ok then error("sweep.lua: cannot write " .. path .. ": " .. tostring(err), 0) end
  io.stderr:write("sweep: wrote " .. path .. "\n")
end

os.exit(sw:main(opt, report_and_csv))
