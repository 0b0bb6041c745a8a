-- test_lua_json.lua -- lab.json: every Lua value with a JSON form goes out
-- and comes back as it was (integers as integers, every finite double to
-- the bit, strings with any bytes of UTF-8, null as lab.json.null); each
-- value without one is refused with a message that says where it is; bad
-- JSON text is refused with its line and column. And lab.executable,
-- lab.cwd and lab.mkdir, which the sweeps' task command lines are made of.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"
local json = lab.json

tap.is(type(json), "table", "lab.json is a table")
tap.is(json.encode{b = 1, a = {1, 2.5, "x"}, c = true, d = json.null}, '{"a":[1,2.5,"x"],"b":1,"c":true,"d":null}',
       "an object's keys come out sorted, compact, each kind as JSON writes it")
tap.is(json.encode(1.0), "1.0", "a float that is a whole number stays a float: 1.0")
tap.is(json.encode(3), "3", "an integer is an integer")
tap.is(json.encode({}), "{}", "an empty table is {}")
tap.is(json.encode("a\"b\\c\n\1"), '"a\\"b\\\\c\\n\\u0001"', "strings are escaped")
tap.is(json.encode({x = {1}}, {indent = 2}), '{\n  "x": [\n    1\n  ]\n}', "indent = 2")

-- Round trips: integers and floats keep their kind and value.
local function same_bits(a, b) return string.pack("<d", a) == string.pack("<d", b) end
local specials = {0.1, 1 / 3, -0.0, 2 ^ -1074, 2.2250738585072014e-308, 1.7976931348623157e308, 1e23, 5e-324,
                  123456.789, -1e-300, 2 ^ 53 + 0.0, 0.30000000000000004}
local bad = {}
for _, x in ipairs(specials) do
  local y = json.decode(json.encode(x))
  if math.type(y) ~= "float" or not same_bits(x, y) then bad[#bad + 1] = string.format("%.17g", x) end
end
-- and 2000 doubles drawn from every bit pattern (NaN and infinities left out)
math.randomseed(7)
local drawn = 0
while drawn < 2000 do
  local x = string.unpack("<d", string.pack("<i8", math.random(math.mininteger, math.maxinteger)))
  if x == x and x ~= math.huge and x ~= -math.huge then
    drawn = drawn + 1
    local y = json.decode(json.encode({v = x})).v
    if math.type(y) ~= "float" or not same_bits(x, y) then bad[#bad + 1] = string.format("%.17g", x) end
  end
end
tap.is(table.concat(bad, " "), "", "every finite double comes back to the bit, a float (-0.0 too)")
for _, k in ipairs{0, -1, math.maxinteger, math.mininteger, 2 ^ 53 | 1} do
  local y = json.decode(json.encode(k))
  if math.type(y) ~= "integer" or y ~= k then bad[#bad + 1] = tostring(k) end
end
tap.is(table.concat(bad, " "), "", "integers come back as integers, the extremes too")

local t = json.decode('{"a": [1, 2.0, null, "s\\u00e9\\u0000z"], "b": {"c": false}, "e": []}')
tap.ok(math.type(t.a[1]) == "integer" and math.type(t.a[2]) == "float", "decode: 1 is an integer, 2.0 a float")
tap.ok(t.a[3] == json.null and #t.a == 4, "null is lab.json.null, holding its place in an array")
tap.is(t.a[4], "s\195\169\0z", "\\u escapes become UTF-8, NUL included")
tap.ok(t.b.c == false and type(t.e) == "table" and next(t.e) == nil, "false and an empty array")
tap.is(json.decode("42"), 42, "a bare number is JSON text too")
local deep = {}
local node = deep
for _ = 1, 200 do node.x = {}; node = node.x end
tap.ok(json.decode(json.encode(deep)).x.x.x ~= nil, "200 levels of nesting go out and back")

-- Refusals, each saying what and where.
local cyclic = {}
cyclic.me = {up = cyclic}
local refusals = {
  {function() return json.encode(0 / 0) end, "NaN has no JSON form"},
  {function() return json.encode({runs = {{loss = 1 / 0}}}) end, "an infinity has no JSON form (at runs[1].loss)"},
  {function() return json.encode({x = -1 / 0}) end, "an infinity has no JSON form (at x)"},
  {function() return json.encode(cyclic) end, "a table that contains itself (at me.up)"},
  {function() return json.encode({1, nil, 3}) end, "an array with holes"},
  {function() return json.encode({1, two = 2}) end, "a table with both string keys and array indices"},
  {function() return json.encode({[true] = 1}) end, "a table key that is neither a string nor an array index"},
  {function() return json.encode({[1.5] = 1}) end, "a table key that is neither a string nor an array index"},
  {function() return json.encode({f = print}) end, "a function has no JSON form (at f)"},
  {function() return json.encode({lab.run(tap.tiny{name = "j"})}) end, "a userdata has no JSON form (at [1])"},
  {function() return json.encode("\255") end, "a string that is not UTF-8"},
  {function() return json.encode({["a\0b"] = 1}) end, "a key with a NUL byte"},
  {function() return json.encode({["\255"] = 1}) end, "a key that is not UTF-8"},
  {function() return json.encode({}, {indnet = 1}) end, "unknown option 'indnet' (known: indent)"},
  {function() return json.encode({}, {indent = 40}) end, "'indent' must be a whole number 0..31"},
  {function() return json.decode("{") end, "lab.json.decode: line 1, column 1:"},
  {function() return json.decode('{"a": 1,\n "b": tru}') end, "lab.json.decode: line 2,"},
  {function() return json.decode('{"a": 1, "a": 2}') end, "duplicate object key"},
  {function() return json.decode("") end, "lab.json.decode:"},
  {function() return json.decode("[1] x") end, "end of file expected"},
  {function() return json.decode("123456789012345678901234567890") end, "too big"},
  {function() return json.decode({}) end, "string expected"},
}
for _, c in ipairs(refusals) do tap.raises(c[2], "refused: " .. c[2], c[1]) end
local ok_deep = pcall(function()
  local d = {}
  local p = d
  for _ = 1, 1200 do p[1] = {}; p = p[1] end
  return json.encode(d)
end)
tap.ok(not ok_deep, "tables nested past 1000 are refused (no C stack overflow)")

-- What a task's command line is made of.
tap.ok(lab.executable:sub(1, 1) == "/", "lab.executable is absolute: " .. lab.executable)
local f = io.open(lab.executable, "rb")
tap.is(f and f:read(4), "\127ELF", "and is the binary")
if f then f:close() end
tap.ok(lab.cwd:sub(1, 1) == "/" and not lab.cwd:find("/%.%.?/") and not lab.cwd:find("/$") or lab.cwd == "/",
       "lab.cwd is absolute and plain: " .. lab.cwd)
local dir = os.getenv("TMPDIR") or "/tmp"
local base = string.format("%s/tielab-json-%d-%d", dir, os.time(), math.floor(lab.clock() * 1e6) % 1000000)
tap.is(lab.mkdir(base .. "/a/b/"), true, "lab.mkdir makes a folder and its parents")
tap.is(lab.mkdir(base .. "/a"), true, "a folder already there is no error")
local g = assert(io.open(base .. "/a/file", "w"))
g:close()
local none, msg = lab.mkdir(base .. "/a/file/c")
tap.ok(none == nil and msg:find("Not a directory", 1, true), "a file in the way: nil and why: " .. tostring(msg))
none, msg = lab.mkdir(base .. "/a/file")
tap.ok(none == nil and msg:find("Not a directory", 1, true), "a file where the folder would be, too")
tap.raises("the path must be", "an empty path is refused", lab.mkdir, "")
os.remove(base .. "/a/file")
os.remove(base .. "/a/b")
os.remove(base .. "/a")
os.remove(base)
tap.done()
