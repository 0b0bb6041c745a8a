-- tielab.settings -- the run settings (lab.settings()) as a script's
-- key=value arguments: which a script lets through to its runs, each given
-- as text read in its own type, and the recipe's schedule fitted to the
-- script's steps. paper.lua and sweep.lua take every run setting this way,
-- so that a setting given to tielab before the script's name (which
-- lab.args makes the default of the key of the same name) or after it is
-- carried into their runs, their task lines and their folders' records.
--
--   local settings = require "tielab.settings"
--   local defaults, passthrough = settings.defaults{steps = 500, dim = 128}
--   local opt = lab.args(arg, defaults)
--   local given = settings.given(opt, passthrough)   -- {lr = 0.003, ...}
--   settings.fit_recipe(given, opt.steps)            -- warmup, decay_steps
local lab = require "tielab"

local M = {}

-- The settings each run of a script sets itself (its name, its tie, its
-- seeds, its scale, its partner): not the user's to give. tie_merge acts
-- only when a run's tie changes, which no run of these scripts does.
M.per_run = {name = true, tie = true, tie_merge = true, seed = true, init_seed = true, data_seed = true,
             in_scale = true, partner = true}

-- The setting rows a script lets through as key=value: every run setting
-- but those each run sets itself and those the script names in 'own' (its
-- own defaults, which it reads itself), in lab.settings() order.
function M.passthrough(own)
  local list = {}
  for _, s in ipairs(lab.settings()) do
    if not M.per_run[s.name] and (own == nil or own[s.name] == nil) then list[#list + 1] = s end
  end
  return list
end

-- A copy of the script's defaults 'own' with "" (not given) for every
-- setting let through, and that list, for lab.args.
function M.defaults(own)
  local defaults, list = {}, M.passthrough(own)
  for k, v in pairs(own) do defaults[k] = v end
  for _, s in ipairs(list) do defaults[s.name] = "" end
  return defaults, list
end

-- Setting row 's' given as 'text', in its own type: a number for
-- "integer" and "number" (an integer must be whole), a boolean for
-- "boolean", the text for the rest. A bad value raises an error naming
-- the key, as lab.args's own do.
function M.value(s, text)
  text = tostring(text)
  if s.type == "integer" or s.type == "number" then
    local x = tonumber(text)
    if not x or (s.type == "integer" and not math.tointeger(x)) then
      error(string.format("argument '%s' must be %s, got '%s'", s.name,
                          s.type == "integer" and "a whole number" or "a number", text), 0)
    end
    return s.type == "integer" and math.tointeger(x) or x
  elseif s.type == "boolean" then
    if text == "true" or text == "1" then return true end
    if text == "false" or text == "0" then return false end
    error(string.format("argument '%s' must be true or false, got '%s'", s.name, text), 0)
  end
  return text
end

-- The settings of 'list' that 'opt' gives (not ""), each in its own type.
function M.given(opt, list)
  local t = {}
  for _, s in ipairs(list) do
    if opt[s.name] ~= nil and opt[s.name] ~= "" then t[s.name] = M.value(s, opt[s.name]) end
  end
  return t
end

-- The recipe's schedule fitted to a script of 'steps' steps: under
-- recipe=olmo (a warmup of 1000 steps and a cosine over 10000, OLMo's)
-- the warmup is 10% of the steps and the cosine reaches its floor at the
-- last one, unless 'options' gives them. Fills 'options' and returns it.
function M.fit_recipe(options, steps)
  if options.recipe ~= "olmo" then return options end
  if options.warmup == nil then options.warmup = math.max(1, math.ceil(steps / 10)) end
  -- the decay must end after the warmup, even for a run of a step or two
  if options.decay_steps == nil then options.decay_steps = math.max(steps, (tonumber(options.warmup) or 0) + 1) end
  return options
end

return M
