-- tielab.script -- what the shipped scripts share: a list of numbers from a
-- key=value argument ("1,2,3"), and the CSV files that out=PREFIX writes.
--
--   local script = require "tielab.script"
--   local seeds = script.numbers(opt.seeds)
--   local f = script.csv(opt.out, "steps", "seed,arm,step,loss")   -- nil when out=
local M = {}

-- "1, 2,5" -> {1, 2, 5}; a word that is not a number is an error naming it.
function M.numbers(text)
  local t = {}
  for x in tostring(text):gmatch("[^,%s]+") do t[#t + 1] = assert(tonumber(x), "not a number: " .. x) end
  return t
end

-- PREFIX_NAME.csv opened for writing with its header line, or nil when the
-- prefix is empty (out= writes no files).
function M.csv(prefix, name, header)
  if prefix == "" then return nil end
  local f = assert(io.open(prefix .. "_" .. name .. ".csv", "w"))
  f:write(header, "\n")
  return f
end

return M
