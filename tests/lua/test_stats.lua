-- test_stats.lua -- the statistics module the scripts report with
-- (lua/tielab/stats.lua): Student's t quantiles against the textbook
-- table, a t interval worked by hand, the paired difference, the
-- bootstrap's reproducibility, the verdicts, and what happens below two
-- values.
local src = os.getenv("srcdir") or "."
package.path = src .. "/tests/lib/?.lua;" .. src .. "/lua/?.lua;" .. package.path
local tap = require "tap"
local stats = require "tielab.stats"

local function near(got, want, tol, what)
  local good = type(got) == "number" and math.abs(got - want) <= tol
  tap.ok(good, what)
  if not good then tap.diag(string.format("got %.12g, want %.12g (+-%g)", got or 0 / 0, want, tol)) end
end
local function is_nan(x) return x ~= x end

-- t_{0.975} from the table in any statistics textbook (six decimals).
for _, row in ipairs{{1, 12.706205}, {2, 4.302653}, {5, 2.570582}, {10, 2.228139}, {30, 2.042272}} do
  near(stats.t_quantile(0.975, row[1]), row[2], 1e-6, string.format("t_0.975 with df %d is %.6f", row[1], row[2]))
end
near(stats.t_quantile(0.995, 1), 63.656741, 1e-6, "t_0.995 with df 1 (a far tail)")
near(stats.t_quantile(0.95, 3), 2.353363, 1e-6, "t_0.95 with df 3")
near(stats.t_quantile(0.025, 5), -2.570582, 1e-6, "the lower quantile is the upper one negated")
tap.is(stats.t_quantile(0.5, 7), 0, "the median is 0")
near(stats.t_quantile(0.975, 1e6), 1.959966, 1e-5, "large df: the normal quantile 1.959964")
near(stats.t_cdf(stats.t_quantile(0.9, 4), 4), 0.9, 1e-9, "the quantile inverts the CDF")
tap.raises("p must be a number in (0, 1)", "p outside (0, 1) is refused", stats.t_quantile, 1, 3)
tap.raises("df must be a positive number", "df 0 is refused", stats.t_quantile, 0.9, 0)

-- mean and sample sd of 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32,
-- so sd = sqrt(32 / 7).
local xs = {2, 4, 4, 4, 5, 5, 7, 9}
tap.is(stats.mean(xs), 5, "the mean")
near(stats.sd(xs), math.sqrt(32 / 7), 1e-12, "the sample standard deviation divides by n - 1")

-- A t interval by hand: 1, 2, 3, 4, 5 has mean 3, sd sqrt(10/4) = 1.581139,
-- standard error 1.581139 / sqrt(5) = 0.707107; t_0.975 with df 4 is
-- 2.776445, so the half width is 2.776445 * 0.707107 = 1.963243 and the
-- 95% interval is [1.036757, 4.963243].
local m, lo, hi = stats.t_interval({1, 2, 3, 4, 5})
tap.is(m, 3, "the interval's centre is the mean")
near(lo, 1.036757, 1e-6, "the 95% interval's low end, by hand 1.036757")
near(hi, 4.963243, 1e-6, "the 95% interval's high end, by hand 4.963243")
-- At 90%: t_0.95 with df 4 is 2.131847; half width 1.507443.
local _, lo90, hi90 = stats.t_interval({1, 2, 3, 4, 5}, 0.90)
near(hi90 - lo90, 2 * 1.507443, 1e-6, "a 90% interval uses t_0.95")

-- Below two values there is no interval.
local m1, lo1, hi1 = stats.t_interval({4.5})
tap.ok(m1 == 4.5 and is_nan(lo1) and is_nan(hi1), "one value: its mean and NaN bounds")
local m0, lo0, hi0 = stats.t_interval({})
tap.ok(is_nan(m0) and is_nan(lo0) and is_nan(hi0), "no values: NaN throughout")
tap.ok(is_nan(stats.sd({3})), "one value has no sample sd")

-- Paired differences: a - b = 1, 2, 3 (mean 2, sd 1; half width
-- t_0.975(2) / sqrt(3) = 4.302653 / 1.732051 = 2.484138).
local d = stats.paired({11, 22, 33}, {10, 20, 30})
tap.is(d.n, 3, "paired: n pairs")
tap.is(d.mean, 2, "paired: the mean difference")
near(d.sd, 1, 1e-12, "paired: the sd of the differences")
near(d.lo, 2 - 2.484138, 1e-6, "paired: low end by hand")
near(d.hi, 2 + 2.484138, 1e-6, "paired: high end by hand")
tap.is(table.concat(d.diffs, ","), "1,2,3", "paired: the differences themselves")
local dn = stats.paired({1, 0 / 0, 3}, {0, 1, 1})
tap.is(dn.n, 2, "paired: a pair with a value not measured (NaN) is left out")
tap.is(table.concat(dn.diffs, ","), "1,2", "paired: and the others kept in order")
local d1 = stats.paired({1}, {0})
tap.ok(d1.n == 1 and d1.mean == 1 and is_nan(d1.lo) and is_nan(d1.hi), "paired: one seed gives no interval")
tap.raises("differ in length", "paired: arrays of different lengths are refused", stats.paired, {1, 2}, {1})

-- The bootstrap: the same seed gives the same interval, another seed
-- (almost surely) another, and the interval lies within the data's range.
local data = {3.1, 2.7, 4.4, 3.9, 2.2, 5.0, 3.3, 4.1, 2.9, 3.6}
local b1lo, b1hi = stats.bootstrap(data, nil, {reps = 500, seed = 7})
local b2lo, b2hi = stats.bootstrap(data, nil, {reps = 500, seed = 7})
local b3lo, b3hi = stats.bootstrap(data, nil, {reps = 500, seed = 8})
tap.ok(b1lo == b2lo and b1hi == b2hi, "bootstrap: the same seed gives the same interval")
tap.ok(b1lo ~= b3lo or b1hi ~= b3hi, "bootstrap: another seed another")
tap.ok(b1lo > 2.2 and b1hi < 5.0 and b1lo < stats.mean(data) and stats.mean(data) < b1hi,
       string.format("bootstrap: the mean's interval [%.3f, %.3f] holds the mean, inside the data", b1lo, b1hi))
math.randomseed(123)
local before = math.random()
math.randomseed(123)
stats.bootstrap(data, nil, {reps = 50})
tap.is(math.random(), before, "bootstrap: math.random's stream is left alone")
local clo, chi = stats.bootstrap({5, 5, 5}, nil, {seed = 1})
tap.ok(clo == 5 and chi == 5, "bootstrap: constant data, a point interval")
local mlo, mhi = stats.bootstrap(data, function(s)
  table.sort(s)
  return s[#s]
end, {reps = 200, seed = 2})
tap.ok(mhi == 5.0 and mlo <= mhi, "bootstrap: any statistic (the maximum)")
tap.ok(is_nan((stats.bootstrap({}, nil, {}))), "bootstrap: no values, NaN")

-- Verdicts in all three cases, both directions.
tap.is(stats.verdict(0.1, 0.5, "+"), "held", "an interval above 0 holds a '+' claim")
tap.is(stats.verdict(-0.5, -0.1, "+"), "not held", "an interval below 0 refutes it")
tap.is(stats.verdict(-0.1, 0.5, "+"), "inconclusive", "an interval across 0 is inconclusive")
tap.is(stats.verdict(-0.5, -0.1, "-"), "held", "an interval below 0 holds a '-' claim")
tap.is(stats.verdict(0.1, 0.5, "-"), "not held", "an interval above 0 refutes a '-' claim")
tap.is(stats.verdict(0 / 0, 0 / 0, "+"), "inconclusive", "no interval (n < 2) is inconclusive")
tap.raises("direction must be", "a direction other than + or - is refused", stats.verdict, 0, 1, ">")
-- End to end: n < 2 seeds can never hold a claim.
local one = stats.paired({2}, {1})
tap.is(stats.verdict(one.lo, one.hi, "+"), "inconclusive", "one seed is never enough for a verdict")

tap.done()
