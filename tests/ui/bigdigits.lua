-- bigdigits.lua -- read the big digits on a captured screen back as text,
-- for tests/ui/test_present.sh:
--
--   tielab --headless tests/ui/bigdigits.lua SCREEN.txt ROW
--
-- prints every number drawn in big digits on the three rows from ROW
-- (1-based) of the capture, separated by spaces. Big digits are 3 rows of
-- half blocks; a glyph is a run of columns holding only blocks, one blank
-- column between the glyphs of a number, more between numbers; a column
-- with any other character (a label) ends a number too.
local path, row = arg[1], tonumber(arg[2])
local glyphs = {
  ["█▀█|█ █|▀▀▀"] = "0", ["▀█ | █ |▀▀▀"] = "1", ["▀▀█|█▀▀|▀▀▀"] = "2", ["▀▀█| ▀█|▀▀▀"] = "3",
  ["█ █|▀▀█|  ▀"] = "4", ["█▀▀|▀▀█|▀▀▀"] = "5", ["█▀▀|█▀█|▀▀▀"] = "6", ["▀▀█|  █|  ▀"] = "7",
  ["█▀█|█▀█|▀▀▀"] = "8", ["█▀█|▀▀█|▀▀▀"] = "9", [" | |▀"] = ".", ["   |▀▀▀|   "] = "-",
  ["█ █|▄▀▄|▀ ▀"] = "x",
}
local blocks = {[" "] = true, ["▀"] = true, ["▄"] = true, ["█"] = true}

local lines = {}
for l in io.lines(path) do lines[#lines + 1] = l end
local cells = {}
for k = 0, 2 do
  local r = {}
  for _, c in utf8.codes(lines[row + k] or "") do r[#r + 1] = utf8.char(c) end
  cells[k + 1] = r
end
local width = math.max(#cells[1], #cells[2], #cells[3])

-- Each column: "blank", "dots" or "text".
local function kind(x)
  local any = false
  for k = 1, 3 do
    local c = cells[k][x] or " "
    if not blocks[c] then return "text" end
    if c ~= " " then any = true end
  end
  return any and "dots" or "blank"
end

local numbers, number, glyph, blanks = {}, "", {}, 0
local function end_glyph()
  if #glyph == 0 then return end
  local key = {}
  for k = 1, 3 do
    local s = {}
    for _, x in ipairs(glyph) do s[#s + 1] = cells[k][x] or " " end
    key[k] = table.concat(s)
  end
  number = number .. (glyphs[table.concat(key, "|")] or "?")
  glyph = {}
end
local function end_number()
  end_glyph()
  if number ~= "" then numbers[#numbers + 1] = number end
  number = ""
end
for x = 1, width + 1 do
  local k = x <= width and kind(x) or "text"
  if k == "dots" then
    if blanks > 1 then end_number() end
    glyph[#glyph + 1] = x
    blanks = 0
  elseif k == "blank" then
    end_glyph()
    blanks = blanks + 1
  else
    end_number()
    blanks = 0
  end
end
print(table.concat(numbers, " "))
