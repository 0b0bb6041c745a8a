-- test_lua_misc.lua -- the rest of the module: script arguments, custom
-- series, captions and log lines, the settings table, key bindings, sleep,
-- memory use, and printing through the host.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

-- lab.args
local a = lab.args({"steps=20", "--lr=0.5", "name=x y", "fast", "seeds=1,2"},
                   {steps = 10, lr = 1e-3, name = "a", fast = false, seeds = "1"})
tap.is(a.steps, 20, "a number argument")
tap.is(math.type(a.steps), "integer", "integers stay integers")
tap.is(a.lr, 0.5, "'--key=value' works too")
tap.is(a.name, "x y", "a string argument")
tap.is(a.fast, true, "a bare key sets a boolean")
tap.is(a.seeds, "1,2", "strings are kept as given")
tap.is(lab.args(nil, {steps = 3}).steps, 3, "no arguments: the defaults")
tap.is(lab.args(arg, {}).steps, nil, "the script's own arg table")
local big = lab.args({"steps=1e3", "lr=2"}, {steps = 10, lr = 1e-3})
tap.is(math.type(big.steps), "integer", "an integral 1e3 for an integer default is the integer 1000")
tap.is(big.steps, 1000, "and its value")
tap.is(math.type(big.lr), "integer", "a float default leaves the number as written")

-- lab.progress counts up to its total, never past it nor around
local p = lab.progress(100)
tap.is(p:step(40), 40, "p:step adds to the count")
tap.is(p:step(math.maxinteger), 100, "a count past the total stays at the total")
tap.is(p:step(math.maxinteger), 100, "and does not wrap around")
p:done()

-- custom series
lab.plot("acc", 0.25, 1)
lab.plot("acc", 0.5, 2)
lab.plot("acc", 0.75)
local p = lab.plot("acc")
tap.is(p.n, 3, "lab.plot adds points")
tap.is(p.values[2], 0.5, "with their values")
tap.is(p.steps[3], 2, "a point without a step goes at the last step")
tap.is(lab.plot("none"), nil, "an unknown series is nil")
tap.is(lab.plots()[1], "acc", "lab.plots lists the series")

-- captions and log lines (headless: captions on stdout, log on stderr)
lab.caption("# phase %d", 1)
lab.log("a log line for stderr")
lab.caption()

-- the settings table
local rows = lab.settings()
local by = {}
for _, s in ipairs(rows) do by[s.name] = s end
tap.ok(#rows >= 22, "lab.settings lists every option")
tap.is(by.dim.default, "128", "with defaults")
tap.is(by.dim.type, "integer", "types")
tap.is(by.dim.min, 8, "ranges")
tap.is(by.lr.live, true, "which may change while a run lives")
tap.is(by.vocab.live, false, "and which may not")
tap.ok(#by.tie.help > 0, "and help text")

-- key bindings (headless mode never presses keys, but they are kept)
lab.bind("p", function() end, "pause")
lab.bind("C-t", function() end)
lab.bind("F5", function() end)
tap.is(lab.unbind("p"), true, "lab.unbind removes a binding")
tap.is(lab.unbind("p"), false, "and says when there was none")

-- sleep
local t0 = os.clock()
lab.sleep(0)
lab.sleep(0.01)
tap.ok(true, "lab.sleep returns")

-- memory
local used, cap = lab.mem()
tap.ok(used > 0 and used < cap, "lab.mem: " .. used .. " of " .. cap .. " bytes")

-- output
print("# print goes to stdout")
io.write("# io.write too\n")
tap.ok(io.write("") == io.stdout, "io.write returns the file")

-- determinism of the state
tap.is(math.random(1000000), (function() math.randomseed(0) return math.random(1000000) end)(),
       "math.random starts from seed 0")

tap.done()
