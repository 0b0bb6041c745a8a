-- stats.lua -- the statistics tielab's scripts report with: mean, sample
-- standard deviation, Student's t quantile and interval, the paired
-- difference of two arms that saw the same batches, a percentile bootstrap
-- with a fixed seed, and the verdict a confidence interval gives on a
-- claimed direction.
--
--   local stats = require "tielab.stats"
--   local d = stats.paired(tied_kl, untied_kl)       -- one value per seed each
--   print(d.mean, d.lo, d.hi, stats.verdict(d.lo, d.hi, "+"))
--
-- The t quantile is computed, not looked up: the t distribution's CDF from
-- the regularized incomplete beta function (its continued fraction, by the
-- modified Lentz method, with log-gamma from Lanczos' series), inverted by
-- bisection to far below 1e-6 for any df > 0. Nothing here touches
-- math.random: the bootstrap has its own generator (splitmix64), so a
-- script's random stream is left as it was and the same seed gives the
-- same interval on every machine.
local stats = {}

local nan = 0 / 0

local function is_finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end

local function check_array(xs, fname)
  if type(xs) ~= "table" then error(fname .. ": expected an array of numbers, got " .. type(xs), 3) end
  for i = 1, #xs do
    if type(xs[i]) ~= "number" then error(string.format("%s: element %d is a %s, not a number", fname, i, type(xs[i])), 3) end
  end
end

function stats.mean(xs)
  check_array(xs, "stats.mean")
  local n = #xs
  if n == 0 then return nan end
  local s = 0
  for i = 1, n do s = s + xs[i] end
  return s / n
end

-- Sample standard deviation (n - 1 in the denominator); NaN below 2 values.
function stats.sd(xs)
  check_array(xs, "stats.sd")
  local n = #xs
  if n < 2 then return nan end
  local m, v = stats.mean(xs), 0
  for i = 1, n do v = v + (xs[i] - m) ^ 2 end
  return math.sqrt(v / (n - 1))
end

-- ------------------------------------------------------------ Student's t

-- log Gamma(x) for x > 0: Lanczos' approximation (g = 7, nine terms),
-- relative error about 1e-15, with the reflection formula below 1/2.
local lanczos = {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
                 -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
                 1.5056327351493116e-7}
local function log_gamma(x)
  if x < 0.5 then return math.log(math.pi / math.abs(math.sin(math.pi * x))) - log_gamma(1 - x) end
  x = x - 1
  local a, t = lanczos[1], x + 7.5
  for i = 2, 9 do a = a + lanczos[i] / (x + i - 1) end
  return 0.5 * math.log(2 * math.pi) + (x + 0.5) * math.log(t) - t + math.log(a)
end

-- The continued fraction of the incomplete beta function (modified Lentz).
local function beta_fraction(a, b, x)
  local tiny, eps = 1e-300, 1e-15
  local qab, qap, qam = a + b, a + 1, a - 1
  local c, d = 1, 1 - qab * x / qap
  if math.abs(d) < tiny then d = tiny end
  d = 1 / d
  local h = d
  for m = 1, 10000 do
    local m2 = 2 * m
    local aa = m * (b - m) * x / ((qam + m2) * (a + m2))
    d = 1 + aa * d
    if math.abs(d) < tiny then d = tiny end
    c = 1 + aa / c
    if math.abs(c) < tiny then c = tiny end
    d = 1 / d
    h = h * d * c
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
    d = 1 + aa * d
    if math.abs(d) < tiny then d = tiny end
    c = 1 + aa / c
    if math.abs(c) < tiny then c = tiny end
    d = 1 / d
    local step = d * c
    h = h * step
    if math.abs(step - 1) < eps then break end
  end
  return h
end

-- The regularized incomplete beta function I_x(a, b); the fraction
-- converges fast below (a+1)/(a+b+2), so above it the symmetry
-- I_x(a, b) = 1 - I_{1-x}(b, a) is used.
local function incomplete_beta(a, b, x)
  if x <= 0 then return 0 end
  if x >= 1 then return 1 end
  local front = math.exp(log_gamma(a + b) - log_gamma(a) - log_gamma(b) + a * math.log(x) + b * math.log(1 - x))
  if x < (a + 1) / (a + b + 2) then return front * beta_fraction(a, b, x) / a end
  return 1 - front * beta_fraction(b, a, 1 - x) / b
end

-- P(T <= t) for Student's t with 'df' degrees of freedom.
function stats.t_cdf(t, df)
  if type(t) ~= "number" or t ~= t then error("stats.t_cdf: t must be a number, got " .. tostring(t), 2) end
  if type(df) ~= "number" or not (df > 0) or df == math.huge then
    error("stats.t_cdf: df must be a positive number, got " .. tostring(df), 2)
  end
  local tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t))
  return t >= 0 and 1 - tail or tail
end

-- The p-quantile of Student's t: bisection on the CDF, whose bracket is
-- doubled until it holds the answer (t_{0.9995} for df 1 is about 637).
function stats.t_quantile(p, df)
  if type(p) ~= "number" or not (p > 0 and p < 1) then
    error("stats.t_quantile: p must be a number in (0, 1), got " .. tostring(p), 2)
  end
  if type(df) ~= "number" or not (df > 0) or df == math.huge then
    error("stats.t_quantile: df must be a positive number, got " .. tostring(df), 2)
  end
  if p == 0.5 then return 0 end
  if p < 0.5 then return -stats.t_quantile(1 - p, df) end
  local lo, hi = 0, 1
  while stats.t_cdf(hi, df) < p do lo, hi = hi, hi * 2 end
  for _ = 1, 200 do
    local mid = 0.5 * (lo + hi)
    if mid == lo or mid == hi then break end
    if stats.t_cdf(mid, df) < p then lo = mid else hi = mid end
  end
  return 0.5 * (lo + hi)
end

local function check_level(level, fname)
  level = level or 0.95
  if type(level) ~= "number" or not (level > 0 and level < 1) then
    error(fname .. ": level must be a number in (0, 1), got " .. tostring(level), 3)
  end
  return level
end

-- mean, lo, hi: the two-sided t interval for the mean of 'xs' at 'level'
-- (default 0.95). Fewer than 2 values: mean, NaN, NaN.
function stats.t_interval(xs, level)
  check_array(xs, "stats.t_interval")
  level = check_level(level, "stats.t_interval")
  local n, m = #xs, stats.mean(xs)
  if n < 2 then return m, nan, nan end
  local half = stats.t_quantile(1 - (1 - level) / 2, n - 1) * stats.sd(xs) / math.sqrt(n)
  return m, m - half, m + half
end

-- The paired difference a[i] - b[i] (say, one arm minus another on each
-- seed, both trained on that seed's batches): {mean, lo, hi, n, sd,
-- diffs}. A pair where either value is missing or not finite (NaN: not
-- measured) is left out, and n counts the pairs kept.
function stats.paired(a, b, level)
  if type(a) ~= "table" or type(b) ~= "table" then error("stats.paired: expected two arrays", 2) end
  if #a ~= #b then error(string.format("stats.paired: the arrays differ in length (%d and %d)", #a, #b), 2) end
  level = check_level(level, "stats.paired")
  local diffs = {}
  for i = 1, #a do
    if is_finite(a[i]) and is_finite(b[i]) then diffs[#diffs + 1] = a[i] - b[i] end
  end
  local m, lo, hi = stats.t_interval(diffs, level)
  return {mean = m, lo = lo, hi = hi, n = #diffs, sd = stats.sd(diffs), diffs = diffs}
end

-- ------------------------------------------------------------ bootstrap

-- splitmix64 on Lua's 64-bit integers (multiplication wraps, '>>' is a
-- logical shift): a generator of our own, the same everywhere.
local function generator(seed)
  local state = math.tointeger(seed) or error("stats.bootstrap: seed must be an integer, got " .. tostring(seed), 3)
  return function(n)
    state = state + 0x9E3779B97F4A7C15
    local z = state
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    z = z ~ (z >> 31)
    return (z >> 1) % n + 1
  end
end

-- The q-quantile of sorted values, interpolated between order statistics
-- (the usual "type 7" definition).
local function quantile(sorted, q)
  local h = (#sorted - 1) * q + 1
  local i = math.floor(h)
  if i >= #sorted then return sorted[#sorted] end
  return sorted[i] + (h - i) * (sorted[i + 1] - sorted[i])
end

-- lo, hi: the percentile bootstrap interval of fn(sample) (default: the
-- mean) from 'reps' resamples of 'xs' with replacement. opt: reps (1000),
-- level (0.95), seed (1). No values: NaN, NaN.
function stats.bootstrap(xs, fn, opt)
  check_array(xs, "stats.bootstrap")
  fn = fn or stats.mean
  opt = opt or {}
  local reps = opt.reps or 1000
  if math.type(reps) ~= "integer" or reps < 1 then error("stats.bootstrap: reps must be a whole number >= 1", 2) end
  local level = check_level(opt.level, "stats.bootstrap")
  local n = #xs
  if n == 0 then return nan, nan end
  local draw, values, sample = generator(opt.seed or 1), {}, {}
  for r = 1, reps do
    for i = 1, n do sample[i] = xs[draw(n)] end
    values[r] = fn(sample)
  end
  table.sort(values)
  return quantile(values, (1 - level) / 2), quantile(values, 1 - (1 - level) / 2)
end

-- ------------------------------------------------------------ verdicts

local claims = {["+"] = 1, ["-"] = -1}

-- What an interval [lo, hi] of a difference says about a claimed direction
-- ("+": the difference is positive, "-": negative): "held" when it lies
-- wholly on the claimed side of 0, "not held" when wholly on the other,
-- else (or when it is not finite) "inconclusive".
function stats.verdict(lo, hi, direction)
  local sign = claims[direction]
  if not sign then error("stats.verdict: direction must be '+' or '-', got " .. tostring(direction), 2) end
  if not (is_finite(lo) and is_finite(hi)) then return "inconclusive" end
  if sign * lo > 0 and sign * hi > 0 then return "held" end
  if sign * lo < 0 and sign * hi < 0 then return "not held" end
  return "inconclusive"
end

return stats
