-- test_lua_matrix.lua -- lab.matrix: each method against answers worked
-- out by hand (products, transposes, norms, means, cosines), the SVD of
-- random tall, wide and square matrices put back together, least squares
-- against the normal equations solved here, the operators, and the
-- refusals: shapes that differ (both named), indices outside 1..n, bad
-- sizes, and matrices too large for the heap or for any matrix, after
-- which the script goes on. test_lua_matrix_mem.sh runs it again under
-- --sandbox.
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"

local M = lab.matrix

-- The largest difference between matrix 'm' and the rows of 't'; math.huge
-- when the shapes differ.
local function maxdiff(m, t)
  if m.rows ~= #t or m.cols ~= #t[1] then return math.huge end
  local d = 0
  for i = 1, m.rows do
    for j = 1, m.cols do d = math.max(d, math.abs(m:get(i, j) - t[i][j])) end
  end
  return d
end

local function near(m, t, tol, what)
  local d = maxdiff(m, t)
  if not tap.ok(d <= (tol or 0), what) then tap.diag("largest difference " .. d .. " in " .. tostring(m)) end
end

local function random(rows, cols)
  local m = M(rows, cols)
  for i = 1, rows do
    for j = 1, cols do m:set(i, j, math.random() * 2 - 1) end
  end
  return m
end

local function identity(n)
  local m = M(n, n)
  for i = 1, n do m:set(i, i, 1) end
  return m
end

local function f32(x) return (string.unpack("f", string.pack("f", x))) end

-- ------------------------------------------------------------ making matrices

local z = M(2, 3)
tap.is(z.rows .. "x" .. z.cols, "2x3", "lab.matrix(2, 3): its fields rows and cols")
near(z, {{0, 0, 0}, {0, 0, 0}}, 0, "zeros unless told")
near(M(2, 2, 7.5), {{7.5, 7.5}, {7.5, 7.5}}, 0, "lab.matrix(2, 2, 7.5): filled with the value")
local a = M{{1, 2}, {3, 4}, {5, 6}}
tap.is(a.rows * 10 + a.cols, 32, "lab.matrix{rows}: 3 rows of 2")
tap.is(a:get(3, 2), 6.0, "m:get(3, 2), 1-based")
tap.is(tostring(M{{1, 2}, {3, 4}}), "matrix 2x2 [1 2; 3 4]", "tostring shows the shape and the numbers")
tap.is(tostring(M(5, 6)), "matrix 5x6 [0 0 0 0 ...; 0 0 0 0 ...; 0 0 0 0 ...; ...]", "and the corner of a larger one")
tap.is(a.nothing, nil, "an unknown field is nil")

for _, case in ipairs{
  {"rows must be a whole number from 1", M, 0, 3},
  {"rows must be a whole number from 1", M, -1, 3},
  {"cols must be a whole number from 1", M, 3, 2.5},
  {"rows must be a whole number from 1", M, "a", 2},
  {"no rows", M, {}},
  {"row 1 is empty", M, {{}}},
  {"ragged rows: row 2 has length 1, row 1 has length 2", M, {{1, 2}, {3}}},
  {"row 2, column 1 is a string, not a number", M, {{1}, {"x"}}},
  {"row 2 is a number, not a table of numbers", M, {{1}, 2}},
} do
  tap.raises("lab.matrix: " .. case[1], "refused: " .. case[1], table.unpack(case, 2))
end

-- ------------------------------------------------------------ access and copies

local m = M{{1, 2, 3}, {4, 5, 6}}
tap.ok(rawequal(m:set(2, 3, 9), m), "m:set returns m")
tap.is(m:get(2, 3), 9.0, "m:set(2, 3, 9) lands at (2, 3)")
for _, case in ipairs{
  {"m:get: row 0 is outside 1..2", m.get, m, 0, 1},
  {"m:get: row 3 is outside 1..2", m.get, m, 3, 1},
  {"m:get: column 4 is outside 1..3", m.get, m, 1, 4},
  {"m:set: column 0 is outside 1..3", m.set, m, 1, 0, 5},
  {"m:row: row 3 is outside 1..2", m.row, m, 3},
} do
  tap.raises(case[1], "bounds: " .. case[1], table.unpack(case, 2))
end

local c = m:copy()
c:set(1, 1, 100)
tap.is(m:get(1, 1), 1.0, "m:copy() is a matrix of its own")
near(m:t(), {{1, 4}, {2, 5}, {3, 9}}, 0, "m:t(): the transpose, a new matrix")
local r2 = m:row(2)
near(r2, {{4, 5, 9}}, 0, "m:row(2): a 1 x cols copy")
r2:set(1, 1, 0)
tap.is(m:get(2, 1), 4.0, "which changes nothing in m")
local t = m:totable()
tap.is(#t .. " " .. #t[1] .. " " .. t[2][3], "2 3 9.0", "m:totable(): a list of row lists")

-- ------------------------------------------------------------ in place

local s = M{{1, 2}, {3, 4}}
tap.ok(rawequal(s:scale(2), s), "m:scale returns m")
near(s, {{2, 4}, {6, 8}}, 0, "m:scale(2) in place")
tap.ok(rawequal(s:add(M{{1, 1}, {1, 1}}), s), "m:add returns m")
near(s, {{3, 5}, {7, 9}}, 0, "m:add(n): m += n")
s:add(M{{1, 0}, {0, 1}}, -3)
near(s, {{0, 5}, {7, 6}}, 0, "m:add(n, -3): m += -3 n")
s:add(s)
near(s, {{0, 10}, {14, 12}}, 0, "m:add(m) doubles m")

-- ------------------------------------------------------------ products and numbers

local p = M{{1, 2, 3}, {4, 5, 6}}
local q = M{{7, 8}, {9, 10}, {11, 12}}
near(p:mul(q), {{58, 64}, {139, 154}}, 0, "m:mul(n): 2x3 times 3x2, by hand")
near(q:mul(p), {{39, 54, 69}, {49, 68, 87}, {59, 82, 105}}, 0, "and 3x2 times 2x3")
near(p:hadamard(M{{2, 0, 1}, {1, -1, 0.5}}), {{2, 0, 3}, {4, -5, 3}}, 0, "m:hadamard(n): elementwise")
tap.is(p:dot(M{{1, 1, 1}, {2, 2, 2}}), 36.0, "m:dot(n): 1+2+3 + 2(4+5+6)")
tap.is(M{{3, 4}}:norm(), 5.0, "m:norm(): Frobenius by default")
tap.is(M{{3, 4}}:norm("fro"), 5.0, "m:norm('fro')")
tap.is(M{{1, -2}, {3, -4}}:norm("l1"), 10.0, "m:norm('l1'): the sum of absolute values")
tap.raises("invalid option 'max'", "m:norm of another kind is an error", p.norm, p, "max")
near(M{{3, 4}, {0, 0}, {1, 0}}:row_norms(), {{5}, {0}, {1}}, 0, "m:row_norms(): rows x 1")
tap.is(p:sum(), 21.0, "m:sum()")
local means = M{{1, 2}, {3, 4}, {5, 9}}
near(means:mean_rows(), {{3, 5}}, 0, "m:mean_rows(): 1 x cols")
near(means:center(), {{-2, -3}, {0, -1}, {2, 4}}, 0, "m:center(): each row minus the mean row")
near(M{{1, 0}, {1, 1}, {0, 0}, {1, 0}}:cosine_rows(M{{0, 1}, {2, 2}, {1, 1}, {-3, 0}}), {{0}, {1}, {0}, {-1}}, 1e-7,
     "m:cosine_rows(n): 0 for orthogonal rows or a zero row, 1 and -1 for parallel ones")

-- Sums of many floats are taken in double: 100000 times float 0.1.
local long = M(1, 100000, 0.1)
local want = 100000 * f32(0.1)
tap.ok(math.abs(long:sum() - want) < 1e-6, "m:sum() in double: " .. long:sum() .. " for " .. want)
tap.ok(math.abs(long:dot(M(1, 100000, 1)) - want) < 1e-6, "m:dot(n) in double")

-- ------------------------------------------------------------ operators

local x, y = M{{1, 2}, {3, 4}}, M{{10, 20}, {30, 40}}
near(x + y, {{11, 22}, {33, 44}}, 0, "m + n")
near(y - x, {{9, 18}, {27, 36}}, 0, "m - n")
near(x * y, {{70, 100}, {150, 220}}, 0, "m * n: the product")
near(2 * x, {{2, 4}, {6, 8}}, 0, "2 * m: a scaled copy")
near(x * 0.5, {{0.5, 1}, {1.5, 2}}, 0, "m * 0.5")
near(-x, {{-1, -2}, {-3, -4}}, 0, "-m")
near(x, {{1, 2}, {3, 4}}, 0, "and the operands are left as they were")
tap.raises("m + n: both sides must be matrices, not a number", "m + 1 is refused", function() return x + 1 end)
tap.raises("m * n: a matrix times a matrix or a number, not a string", "m * 'x' is refused",
           function() return x * "x" end)

-- ------------------------------------------------------------ shapes, both named

local m34, m43, m52 = M(3, 4), M(4, 3), M(5, 2)
for _, case in ipairs{
  {"m:add: shapes differ (3x4 and 4x3)", m34.add, m34, m43},
  {"m:mul: 3x4 times 5x2: inner sizes differ", m34.mul, m34, m52},
  {"m:hadamard: shapes differ (3x4 and 4x3)", m34.hadamard, m34, m43},
  {"m:dot: shapes differ (3x4 and 4x3)", m34.dot, m34, m43},
  {"m:cosine_rows: shapes differ (3x4 and 4x3)", m34.cosine_rows, m34, m43},
  {"m:lstsq: 3x4 and 5x2: b needs as many rows as m", m34.lstsq, m34, m52},
  {"m + n: shapes differ (3x4 and 4x3)", function() return m34 + m43 end},
  {"m - n: shapes differ (3x4 and 4x3)", function() return m34 - m43 end},
  {"m * n: 3x4 times 5x2: inner sizes differ", function() return m34 * m52 end},
} do
  tap.raises(case[1], case[1], table.unpack(case, 2))
end

-- ------------------------------------------------------------ the SVD

math.randomseed(3)
for _, shape in ipairs{{7, 4}, {4, 7}, {6, 6}, {1, 5}} do
  local rows, cols = shape[1], shape[2]
  local k = math.min(rows, cols)
  local A = random(rows, cols)
  local U, S, V = A:svd()
  local name = rows .. "x" .. cols
  tap.is(string.format("%dx%d %dx%d %dx%d", U.rows, U.cols, S.rows, S.cols, V.rows, V.cols),
         string.format("%dx%d %dx1 %dx%d", rows, k, k, cols, k), name .. ": U, S, V have the thin shapes")
  local D = M(k, k)
  local sorted = true
  for i = 1, k do
    D:set(i, i, S:get(i, 1))
    sorted = sorted and S:get(i, 1) >= 0 and (i == 1 or S:get(i, 1) <= S:get(i - 1, 1))
  end
  tap.ok(sorted, name .. ": S is non-negative and descending: " .. tostring(S))
  near(U * D * V:t(), A:totable(), 1e-5, name .. ": U diag(S) V^T gives the matrix back")
  near(U:t() * U, identity(k):totable(), 1e-5, name .. ": U^T U = I")
  near(V:t() * V, identity(k):totable(), 1e-5, name .. ": V^T V = I")
end
local U, S = M{{3, 0}, {0, -4}}:svd()
near(S, {{4}, {3}}, 1e-6, "the singular values of diag(3, -4) are 4 and 3")
tap.raises("m:svd: m holds a NaN at (2, 1)", "a NaN is refused by name, before LAPACK sees it",
           function() return M{{1, 2}, {0 / 0, 1}}:svd() end)
tap.raises("m:svd: m holds an infinity at (1, 2)", "and an infinity", function() return M{{1, math.huge}}:svd() end)

-- ------------------------------------------------------------ least squares

near(M{{2, 1}, {1, 3}}:lstsq(M{{3}, {5}}), {{0.8}, {1.4}}, 1e-6, "m:lstsq(b): 2x + y = 3, x + 3y = 5")
-- A line c0 + c1 t through (t, y) points: the normal equations
-- [n, St; St, Stt] [c0; c1] = [Sy; Sty], solved by Cramer's rule.
local function line_fit(ts, ys)
  local n, st, stt, sy, sty = #ts, 0, 0, 0, 0
  for i = 1, n do
    st, stt, sy, sty = st + ts[i], stt + ts[i] ^ 2, sy + ys[i], sty + ts[i] * ys[i]
  end
  local det = n * stt - st * st
  return (stt * sy - st * sty) / det, (n * sty - st * sy) / det
end
local ts, y1, y2 = {0, 1, 2, 3}, {1, 2, 2, 4}, {0, 1, 4, 9}
local design = M{{1, 0}, {1, 1}, {1, 2}, {1, 3}}
local c0, c1 = line_fit(ts, y1)
tap.ok(math.abs(c0 - 0.9) < 1e-12 and math.abs(c1 - 0.9) < 1e-12, "the normal equations give 0.9 + 0.9 t")
near(design:lstsq(M{{1}, {2}, {2}, {4}}), {{c0}, {c1}}, 1e-5, "m:lstsq(b) of 4 points: the least-squares line")
local d0, d1 = line_fit(ts, y2)
local both = design:lstsq(M{{1, 0}, {2, 1}, {2, 4}, {4, 9}})
tap.is(both.rows .. "x" .. both.cols, "2x2", "two right-hand sides: x is cols(m) x cols(b)")
near(both, {{c0, d0}, {c1, d1}}, 1e-5, "each column the fit of its own")
near(M{{1, 2, 3}}:lstsq(M{{14}}), {{1}, {2}, {3}}, 1e-5, "an underdetermined system: the solution of least norm")
tap.raises("m:lstsq: b holds a NaN at (1, 1)", "a NaN in b is refused", design.lstsq, design, M(4, 1, 0 / 0))

-- ------------------------------------------------------------ too large

local okay, err = pcall(M, 1e6, 1e6)
tap.ok(not okay and err:find("1000000x1000000", 1, true) and err:find("TiB", 1, true),
       "lab.matrix(1e6, 1e6) is refused, naming the shape and the bytes: " .. tostring(err))
tap.raises("a 50000x50000 matrix would hold 2500000000 numbers", "more numbers than a matrix may hold", M, 50000, 50000)
local _, cap = lab.mem()
if cap > 0 and cap < 3 << 30 then
  tap.raises("a 30000x30000 matrix needs 3.4 GiB, more than the", "a matrix past --lua-mem is refused", M, 30000, 30000)
else
  tap.skip("the heap has no cap under 3 GiB")
end
near(M(2, 2, 1) + M(2, 2, 1), {{2, 2}, {2, 2}}, 0, "and the script goes on")

-- ------------------------------------------------------------ the metatable

local meta = getmetatable(M(1, 1))
local names = {}
for k in pairs(meta.__methods) do names[#names + 1] = k end
table.sort(names)
tap.is(table.concat(names, " "), "add center copy cosine_rows dot get hadamard lstsq mean_rows mul norm row "
       .. "row_norms scale set sum svd t totable", "the methods, listed in __methods")
tap.is(table.concat(meta.__fields, " "), "rows cols", "the fields, in __fields")

tap.done()
