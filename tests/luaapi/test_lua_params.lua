-- test_lua_params.lua -- a run's data from Lua: its tokenizer both ways,
-- its parameters as lab.matrix copies read and written (with the tie's
-- rule for E_out), the hidden states of a forward, the errors that name
-- what is wrong, and the schedule's series in the history and its export.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local V = 300
local r = lab.run(tap.tiny{name = "tied", vocab = V, seed = 3})
local u = lab.run(tap.tiny{name = "untied", vocab = V, tie = "untied", seed = 3})
local p = lab.run(tap.tiny{name = "partial", vocab = V, tie = "8", seed = 3})

-- how far apart two matrices of one shape are (0: equal)
local function distance(a, b) return (a - b):norm() end

-- ------------------------------------------------------------ the tokenizer

local ids = r:tokenize("abc")
tap.ok(#ids == 3 and math.type(ids[1]) == "integer" and ids[1] == 97, "r:tokenize gives integer ids (bytes here)")
tap.is(r:detokenize(ids), "abc", "r:detokenize gives the text back")
tap.is(r:detokenize(r:tokenize("\0\255x")), "\0\255x", "bytes that are no text round-trip too")
tap.is(#r:tokenize(""), 0, "no text, no ids")
tap.is(r:detokenize{}, "", "no ids, no bytes")
tap.is(r:token(65), "A", "r:token(65) is 'A'")

-- a stretch of the corpus, in which the merges occur
local row = r:batch()[1]
local text = r:detokenize(row)
local again = r:tokenize(text)
tap.is(r:detokenize(again), text, "a stretch of the corpus round-trips (" .. #text .. " bytes)")
tap.ok(#again < #text, #text .. " bytes are " .. #again .. " tokens: the merges apply")
local pieces = {}
for i, id in ipairs(again) do pieces[i] = r:token(id) end
tap.is(table.concat(pieces), text, "the tokens' bytes, one by one, make the text")

tap.raises("token id 300 is outside the tokenizer's ids [0, 300)", "r:token of an id past the tokenizer", r.token, r, V)
tap.raises("token id -1", "r:token of a negative id", r.token, r, -1)
tap.raises("token id", "r:token of a fraction", r.token, r, 1.5)
tap.raises("999 at position 3", "r:detokenize names the bad id and where", r.detokenize, r, {1, 2, 999})
tap.raises("entry 2 is not a token id", "r:detokenize names an entry that is no integer", r.detokenize, r, {1, "x"})
tap.raises("string expected", "r:tokenize needs text", r.tokenize, r)

-- ------------------------------------------------------------ parameters

local names = r:param_names()
tap.is(#names, 29, "29 parameters for two layers")
tap.is(names[1], "transformer.wte.weight", "wte first")
tap.is(names[#names], "lm_head.weight", "lm_head last")
local all_read = true
for _, name in ipairs(names) do all_read = all_read and getmetatable(r:param(name)) ~= nil end
tap.ok(all_read, "every listed name reads")

local e_in, e_out = r:param("E_in"), r:param("E_out")
tap.ok(e_in.rows == V and e_in.cols == 32, "E_in is V x d")
tap.is(distance(e_in, r:param("transformer.wte.weight")), 0, "E_in is transformer.wte.weight")
tap.is(distance(e_in, e_out), 0, "tied: E_out reads the same shared matrix")
tap.ok(distance(u:param("E_in"), u:param("E_out")) > 0, "untied: E_out is its own")
local pin, pout = p:param("E_in"), p:param("E_out")
tap.ok(pin:get(7, 8) == pout:get(7, 8) and pin:get(7, 9) ~= pout:get(7, 9),
       "partly tied: the first 8 columns are shared, the 9th is not")
local lnf = r:param("transformer.ln_f.weight")
tap.ok(lnf.rows == 32 and lnf.cols == 1 and lnf:get(1, 1) == 1, "a 1-D tensor is a column")
e_in:set(1, 1, 5)
tap.ok(r:param("E_in"):get(1, 1) ~= 5, "r:param is a copy: changing it leaves the run alone")

local fc = "transformer.h.1.mlp.c_fc.weight"
local m = r:param(fc)
m:set(3, 4, 0.5)
tap.ok(r:set_param(fc, m) == r, "r:set_param returns the run")
tap.is(r:param(fc):get(3, 4), 0.5, "and the write reads back")

local x = lab.matrix(V, 32, 0.25)
r:set_param("E_out", x)
tap.ok(r:param("E_in"):get(5, 5) == 0.25 and r:param("E_out"):get(9, 30) == 0.25,
       "tied: writing E_out writes the shared matrix")
local before = u:param("E_in")
u:set_param("lm_head.weight", x)
tap.ok(distance(u:param("E_in"), before) == 0 and u:param("E_out"):get(2, 2) == 0.25, "untied: E_in stays")
before = p:param("E_in")
p:set_param("E_out", x)
local after = p:param("E_in")
tap.ok(after:get(4, 8) == 0.25 and after:get(4, 9) == before:get(4, 9),
       "partly tied: E_out's shared columns land in E_in, the rest stays")
p:set_param("E_in", lab.matrix(V, 32, -1))
tap.ok(p:param("E_out"):get(6, 8) == -1 and p:param("E_out"):get(6, 9) == 0.25,
       "partly tied: writing E_in re-mirrors the shared columns into E_out")

tap.raises("'E_in' is 300x32, the matrix given is 3x4", "a wrong shape names both", r.set_param, r, "E_in",
           lab.matrix(3, 4))
local bad = r:param("E_in")
bad:set(2, 3, 0 / 0)
tap.raises("a NaN at (2, 3)", "NaN is refused, naming the entry", r.set_param, r, "E_in", bad)
tap.ok(r:param("E_in"):get(2, 3) == 0.25, "and nothing was written")
tap.raises("no parameter 'nope'", "an unknown name", r.param, r, "nope")
tap.raises("no parameter 'e_in'", "the aliases are spelled E_in and E_out", r.set_param, r, "e_in", x)
tap.raises("tielab.matrix expected", "r:set_param needs a matrix", r.set_param, r, "E_in", {})
local mt = r:step(1)
tap.ok(mt.loss == mt.loss and mt.loss > 0, "the run trains on after the writes (loss " .. mt.loss .. ")")

-- ------------------------------------------------------------ hidden states

local h = u:hidden()
tap.is(#h, 3, "r:hidden gives L+1 matrices")
tap.ok(h[1].rows == 4 * 32 and h[1].cols == 32, "each (B*T) x d")
local rows = u:batch()
local wte, wpe = u:param("E_in"), u:param("transformer.wpe.weight")
local worst = 0
for _, at in ipairs{{1, 1}, {2, 5}, {4, 32}} do
  local i, j = at[1], at[2]
  for c = 1, 32, 7 do
    local want = wte:get(rows[i][j] + 1, c) + wpe:get(j, c)
    worst = math.max(worst, math.abs(h[1]:get((i - 1) * 32 + j, c) - want))
  end
end
tap.ok(worst < 1e-6, "position 0 is wte[token] + wpe[position] (largest difference " .. worst .. ")")
tap.ok(distance(h[1], h[3]) > 0, "the blocks change the stream")
local given = u:hidden(rows)
tap.is(distance(given[3], h[3]), 0, "r:hidden(r:batch()) is r:hidden()")
local small = u:hidden{{1, 2, 3, 4}, {5, 6, 7, 8}}
tap.ok(small[1].rows == 6 and math.abs(small[1]:get(4, 1) - (wte:get(6, 1) + wpe:get(1, 1))) < 1e-6,
       "on given rows: b*t rows, row 2's first token at row t+1")
tap.raises("token ids are integers in [0, 300)", "a token id out of range", u.hidden, u, {{1, 2, 300}})
tap.raises("rows need 2 to 33 token ids", "rows too short", u.hidden, u, {{1}})

-- the next batch is drawn, not used up
local a = lab.run(tap.tiny{name = "a", seed = 9})
local b = lab.run(tap.tiny{name = "b", seed = 9})
a:hidden()
tap.is(a:metrics().step, 0, "r:hidden takes no step")
tap.is(a:step(1).loss, b:step(1).loss, "a step after r:hidden trains on the batch it would have")

-- ------------------------------------------------------------ the schedule's series

local s = lab.run(tap.tiny{name = "sched", seed = 4})
s:step(2)
s:set{in_scale = 2}
s:step(2)
s:set{out_scale = 0.5, lr = 0.002}
s:step(2)
local function values(series)
  local hs = s:history(series)
  return hs and table.concat(hs.values, " ") or "none", hs and table.concat(hs.steps, " ") or "none"
end
local vin, steps = values("in_scale")
tap.is(vin, "1.0 1.0 2.0 2.0 2.0 2.0", "in_scale: one point per step, the change from step 3")
tap.is(steps, "1 2 3 4 5 6", "at steps 1 to 6")
tap.is((values("out_scale")), "1.0 1.0 1.0 1.0 0.5 0.5", "out_scale: one point per step")
local vlr = values("lr")
tap.ok(vlr:match("0%.002 0%.002$") and vlr:match("^0%.001 "), "lr: the rate each step used: " .. vlr)

local path = os.tmpname()
os.remove(path)
assert(s:export(path .. ".csv", {wide = true}))
local f = assert(io.open(path .. ".csv"))
local header = f:read("l")
f:close()
local columns = {}
for name in header:gmatch("[^,]+") do columns[name] = true end
tap.ok(columns.in_scale and columns.out_scale and columns.lr, "the wide export has in_scale, out_scale and lr columns")
assert(s:export(path .. "-long.csv"))
local long = assert(io.open(path .. "-long.csv")):read("a")
local _, n_in = long:gsub("\nin_scale,", "")
tap.is(n_in, 6, "the long export has a bucket of in_scale per step")
for _, suffix in ipairs{".csv", ".events.csv", ".meta.json", "-long.csv", "-long.events.csv", "-long.meta.json"} do
  os.remove(path .. suffix)
end
tap.done()
