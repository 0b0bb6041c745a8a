-- sandbox_escape.lua -- tests/luaapi/test_sandbox_escape.sh runs this under
-- `tielab --headless --sandbox`, in a folder of its own, as a hostile
-- script would run: it tries every known way to reach a function the
-- sandbox did not check, or to install a finaliser, and each must fail.
-- arg[1] is a file outside the working directory; arg[2] a file there that
-- the escapes would write (the user's init.lua), so that the shell can
-- check that none did. The folder holds tap.lua and a FIFO, "fifo".
package.path = "./?.lua;" .. package.path
local tap = require "tap"
local outside, target = arg[1], arg[2]

-- Any function a route hands out is tried on the target: if it opens it
-- to write, the route is open (the shell looks for the file).
local function try_write(fn)
  local ok, f = pcall(fn, target, "w")
  if ok and io.type(f) == "file" then f:write("os.exit(3)\n") f:close() return true end
  return false
end

-- ---------------------------------------------------------------- the call stack
-- An error handler runs on top of the failing call: whatever C function
-- the sandbox had on the stack there is within reach of debug.getinfo.
-- (Only C functions are kept: the Lua ones there are the script's own.)
local found = {}
local function grab()
  for level = 1, 30 do
    for _, what in ipairs{"fS", "f", false} do
      local ok, info = pcall(debug.getinfo, level, what or nil)
      if ok and info and info.func and (info.what or debug.getinfo(info.func, "S").what) == "C" then
        found[#found + 1] = info.func
      end
    end
  end
  return "handled"
end
local calls = {
  {"io.open outside", io.open, outside},
  {"io.open with a bad mode", io.open, "x", "zz"},
  {"io.lines outside", io.lines, outside},
  {"io.input outside", io.input, outside},
  {"io.output outside", io.output, outside},
  {"loadfile outside", loadfile, outside},
  {"dofile outside", dofile, outside},
  {"os.remove outside", os.remove, outside},
  {"os.rename outside", os.rename, outside, "x"},
  {"load from a reader that fails", load, function() error("reader") end},
  {"setmetatable with __gc", setmetatable, {}, {__gc = print}},
  {"require of a missing module", require, "no.such.module"},
}
-- Each call fails: it raises, or returns nil and its error (load does).
for _, c in ipairs(calls) do
  local r = table.pack(xpcall(c[2], grab, table.unpack(c, 3)))
  local failed = not r[1] or (r[2] == nil and type(r[3]) == "string")
  tap.ok(failed, c[1] .. ": fails or returns its error (" .. tostring(r[2]) .. ", " .. tostring(r[3]) .. ")")
end
-- load's reader runs inside load: from there too
load(function() grab() return nil end)
tap.is(#found, 0, "no error handler or reader got a function from the stack through debug.getinfo")
for _, fn in ipairs(found) do try_write(fn) end
tap.raises("getinfo takes the options", "debug.getinfo refuses option 'f'", debug.getinfo, 1, "f")
tap.raises("getinfo takes the options", "and option 'L'", debug.getinfo, 1, "L")
tap.is(debug.getinfo(1).func, nil, "its default options hand out no function either")
tap.is(type(debug.getinfo(1, "Sl").currentline), "number", "getinfo(level, 'Sl') still says where code is (tap.lua's blame)")
tap.is(debug.getinfo(print, "S").what, "C", "and what a function given to it is")

-- Each function the sandbox checks is a C function that holds nothing:
-- no original is kept in an upvalue for anything to find.
for _, name in ipairs{"io.open", "io.lines", "io.input", "io.output", "os.remove", "os.rename",
                      "load", "setmetatable", "package.searchpath", "os.getenv"} do
  local lib, key = name:match("^(%a+)%.(%a+)$")
  local fn = lib and _G[lib][key] or _G[name]
  local info = debug.getinfo(fn, "Su")
  tap.ok(info.what == "C" and info.nups == 0, name .. " is a C function with no upvalue (" .. info.what .. ", " .. info.nups .. ")")
end

-- ---------------------------------------------------------------- the debug library
local kept = {}
for k in pairs(debug) do kept[#kept + 1] = k end
table.sort(kept)
tap.is(table.concat(kept, " "), "getinfo traceback", "the debug library keeps getinfo and traceback only")
for _, name in ipairs{"getlocal", "getupvalue", "getmetatable", "getregistry", "getuservalue", "sethook",
                      "setlocal", "setupvalue", "upvaluejoin", "upvalueid", "setmetatable", "gethook"} do
  tap.is(debug[name], nil, "no debug." .. name)
end
tap.is(require("debug"), debug, "require 'debug' gives the same cut table")
tap.is(package.loaded.debug.getlocal, nil, "and so does package.loaded.debug")
tap.ok(type(debug.traceback("x")) == "string", "debug.traceback still works")

-- ---------------------------------------------------------------- coroutines
local co = coroutine.create(function() coroutine.yield() end)
coroutine.resume(co)
tap.raises("getinfo takes the options", "getinfo on another coroutine's stack refuses 'f' too", debug.getinfo, co, 0, "f")
local main = coroutine.running()
local inner = coroutine.wrap(function()
  local ok = pcall(debug.getinfo, main, 1, "f")
  local t = debug.getinfo(main, 1)
  return ok, t and t.func
end)
local ok_main, func_main = inner()
tap.ok(not ok_main and func_main == nil, "nor does a coroutine get the main thread's functions")

-- ---------------------------------------------------------------- package.loaded and the registry
local tried, opened = 0, {}
for lib, t in pairs(package.loaded) do
  if type(t) == "table" and t ~= package.loaded then
    for _, key in ipairs{"open", "lines", "input", "output", "remove", "rename", "loadfile", "dofile", "load",
                         "execute", "popen", "loadlib", "getregistry", "tmpfile"} do
      local fn = rawget(t, key)
      if type(fn) == "function" then
        tried = tried + 1
        if try_write(fn) then opened[#opened + 1] = lib .. "." .. key end
      end
    end
  end
end
tap.ok(tried >= 10, "the sweep of package.loaded tried the file functions it holds (" .. tried .. ")")
tap.is(#opened, 0, "none of them opened the target to write: " .. table.concat(opened, ", "))
tap.is(package.loaded.io.open, io.open, "package.loaded.io is the checked io")
tap.is(package.loaded._G.load, load, "package.loaded._G is the checked globals")
tap.is(package.loaded.os.execute, nil, "package.loaded.os has no execute")
tap.raises("outside the working directory", "package.loaded.io.open refuses outside files", package.loaded.io.open, outside)
tap.is(#package.searchers, 3, "require has three searchers: preload, the script's folder, Lua files")

-- ---------------------------------------------------------------- bytecode
local dumped = string.dump(function() return 1 end)
local f, err = load(dumped)
tap.ok(f == nil and tostring(err):find("binary"), "load refuses a dumped function: " .. tostring(err))
f, err = load(dumped, "=b", "b")
tap.ok(f == nil and tostring(err):find("binary"), "even when asked for mode 'b'")
local pieces = {dumped}
f, err = load(function() return table.remove(pieces) end, "=r", "bt")
tap.ok(f == nil and tostring(err):find("binary"), "or given through a reader")
local w = assert(io.open("chunk.out", "wb"))
w:write(dumped)
w:close()
f, err = loadfile("chunk.out", "b")
tap.ok(f == nil and tostring(err):find("binary"), "loadfile refuses a binary file: " .. tostring(err))
tap.raises("binary", "and so does dofile", dofile, "chunk.out")

-- ---------------------------------------------------------------- finalisers
-- A finaliser runs with hooks off: a loop in one could never be stopped.
-- Each attempt sets one; the flag says whether Lua ever called it.
local ran = {}
local function finaliser(what) return function() ran[#ran + 1] = what end end
local function swap_gc(what, obj)
  local mt = getmetatable(obj)
  tap.ok(type(mt) == "table" and mt.__gc == nil, what .. ": getmetatable gives a copy without __gc")
  pcall(function() mt.__gc = finaliser(what) end)
end
swap_gc("lab.progress", lab.progress(10))
swap_gc("a file handle", io.stdout)
local run = lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}
swap_gc("a run handle", run)
tap.ok(getmetatable(run).__methods.step ~= nil, "a run's metatable still lists its methods")
do
  local p = lab.progress(5)
  local h = assert(io.open("handle.txt", "w"))
  h:close()
  p = nil
  h = nil
end
collectgarbage()
collectgarbage()
tap.is(#ran, 0, "no finaliser swapped in ran: " .. table.concat(ran, ", "))
tap.raises("no __gc in the sandbox", "setmetatable refuses a metatable with __gc", setmetatable, {}, {__gc = print})
tap.raises("protected metatable", "setmetatable keeps Lua's rule for a protected metatable", setmetatable,
           setmetatable({}, {__metatable = "locked"}), {})

-- ---------------------------------------------------------------- files by name
tap.is(package.searchpath("passwd", "/etc/?"), nil, "package.searchpath finds no file outside")
local m1 = select(2, package.searchpath("passwd", "/etc/?"))
local m2 = select(2, package.searchpath("no-such-file", "/etc/?"))
tap.like(m1, "not looked at", "and says it did not look: " .. tostring(m1))
tap.is(m1:gsub("passwd", "X"), m2:gsub("no%-such%-file", "X"), "a file outside that exists reads as one that does not")
-- lab.check_run says what lab.run would of a corpus outside.
local tiny = {vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}
for _, c in ipairs{{"lab.check_run", {corpus = outside, vocab = 256}}, {"lab.check_run(base, extra)", tiny, {corpus = outside}}} do
  local ok, msg = lab.check_run(c[2], c[3])
  tap.ok(ok == nil and tostring(msg):find("is outside the working directory (sandbox)", 1, true),
         c[1] .. " refuses a corpus outside as lab.run does: " .. tostring(msg))
end
tap.raises("is outside the working directory", "as lab.run does", lab.run, tiny, {corpus = outside})

-- lab.mkdir looks at no folder outside before refusing: one there and one
-- missing are refused alike, each by the whole name given.
local function mkdir_refusal(path)
  local ok, msg = pcall(lab.mkdir, path)
  local at = not ok and msg:find("'" .. path .. "' is outside the working directory", 1, true)
  return at and msg:sub(1, at - 1) .. "'X'" .. msg:sub(at + #path + 2) or tostring(msg)
end
local outside_dir = outside:match("^(.*)/[^/]*$")
local there, missing = mkdir_refusal(outside_dir .. "/x/y"), mkdir_refusal(outside_dir .. "/no-such-folder/x/y")
tap.like(there, "'X' is outside", "lab.mkdir refuses a folder outside by the whole name given: " .. there)
tap.is(missing, there, "and refuses one under a missing folder alike")
tap.is(lab.mkdir(outside_dir .. "/../work/mkdir-in/a"), true, "a name that only passes outside on its way in is made")
local made = io.open("mkdir-in/a/f", "w")
tap.ok(made ~= nil, "in the working directory, where its letters say")
if made then made:close() end

tap.is(package.searchpath("fifo", "./?"), "./fifo", "a FIFO inside is found by name (what loads it refuses it)")

for _, c in ipairs{{"io.open", function() return io.open("fifo") end},
                   {"io.open to write", function() return io.open("fifo", "w") end},
                   {"loadfile", function() return loadfile("fifo") end}} do
  local fh, msg = c[2]()
  tap.ok(fh == nil and tostring(msg):find("is a FIFO, not a regular file"), c[1] .. " refuses a FIFO at once: " .. tostring(msg))
end
for _, c in ipairs{{"io.lines", io.lines, "fifo"}, {"io.input", io.input, "fifo"}, {"dofile", dofile, "fifo"}} do
  tap.raises("is a FIFO, not a regular file", c[1] .. " raises on a FIFO at once", c[2], c[3])
end
package.path = "./?;" .. package.path
tap.raises("is a FIFO, not a regular file", "require of a module that is a FIFO raises at once", require, "fifo")
tap.raises("outside the working directory", "io.open('/dev/zero') is refused", io.open, "/dev/zero")

-- Names with a NUL byte: C would cut them at the NUL.
local nul = "made\0after"
local function refuses_nul(what, fn, ...)
  tap.raises("NUL byte", what .. " refuses a name with a NUL byte", fn, ...)
end
refuses_nul("lab.mkdir", lab.mkdir, nul)
refuses_nul("lab.read", lab.read, nul)
refuses_nul("io.open", io.open, nul, "w")
refuses_nul("io.lines", io.lines, nul)
refuses_nul("io.output", io.output, nul)
refuses_nul("os.remove", os.remove, nul)
refuses_nul("os.rename", os.rename, "x", nul)
refuses_nul("loadfile", loadfile, nul)
refuses_nul("dofile", dofile, nul)
refuses_nul("package.searchpath", package.searchpath, "made", "./?\0.lua")
refuses_nul("require", require, nul)
refuses_nul("r:save", run.save, run, nul)
refuses_nul("r:export", run.export, run, nul)
refuses_nul("lab.load", lab.load, nul)
refuses_nul("lab.load's corpus", lab.load, "x.safetensors", {corpus = nul})
refuses_nul("lab.run's corpus", lab.run, {vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2, corpus = nul})
refuses_nul("lab.run's name", lab.run, {vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2, name = nul})
refuses_nul("lab.plot", lab.plot, "a\0b", 1)
refuses_nul("lab.bind", lab.bind, "\0", print)
refuses_nul("lab.unbind", lab.unbind, "x\0")
refuses_nul("r:history", run.history, run, "loss\0x")
tap.is(lab.runs[run.name .. "\0x"], nil, "lab.runs finds no run by a name cut at the NUL")
tap.is(io.open("made"), nil, "and none of them made the file cut at the NUL")
for _, c in ipairs{{"a newline", "a\nb"}, {"a carriage return", "a\rb"}, {"a tab", "a\tb"}, {"ESC", "a\27b"}} do
  tap.raises("holds a control character", "lab.run refuses a name with " .. c[1],
             lab.run, {vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2, name = c[2]})
end

-- The environment: only the variables that say where and how it runs.
tap.is(os.getenv("SECRET_PROBE_TOKEN"), nil, "os.getenv gives no variable but the documented ones")
tap.is(os.getenv("TIELAB_SEEN"), "yes", "and gives TIELAB_* ones")
tap.ok(os.getenv("HOME") ~= nil, "and HOME")
refuses_nul("os.getenv", os.getenv, "HOME\0X")

-- What the routes above would have written.
tap.raises("outside the working directory", "the target stays out of reach", io.open, target, "w")
tap.done()
