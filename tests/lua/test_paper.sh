#!/bin/sh
# test_paper.sh -- lua/paper.lua on a tiny model with two seeds, headless:
# its CSV files have exactly the columns the plots read, one verdict row
# per finding with a finite 95% interval, n = 2 and a verdict of the three
# words; and the statistics are checked against the data, not trusted: the
# means of verdict rows are recomputed here from the per-step CSV (the
# early gradient ratio of each seed), the lens CSV (each seed's fitted KL)
# and the descriptive rows, and each interval from its differences with
# t_0.975(1) = 12.706205.
tap_name=paper; . "${srcdir:-.}/tests/lib/tap.sh"
lua_dir=$(cd "${srcdir:-.}/lua" && pwd)
# lr=0.01 over the olmo recipe: the tiny model learns something in 30 steps.
ARGS="steps=30 dim=16 vocab=256 ctx=16 batch=2 layers=2 heads=1 seeds=1,2 scales=2,5 lens_steps=40 lens_tokens=64 lr=0.01 out=tiny"

cd "$tmp" || exit 1
"$tielab" --headless "$lua_dir/paper.lua" $ARGS >stdout 2>stderr
ok $? "paper.lua runs tiny with two seeds ($(tail -n 3 stderr | tr '\n' ' '))"

cat >check.lua <<'EOF'
-- The cells of a CSV line, a quoted cell ("a, ""b""") unquoted.
local function split(line)
  local t, i = {}, 1
  while i <= #line + 1 do
    if line:sub(i, i) == '"' then
      local cell, j = {}, i + 1
      while true do
        local q = line:find('"', j, true)
        cell[#cell + 1] = line:sub(j, q - 1)
        if line:sub(q + 1, q + 1) == '"' then cell[#cell + 1], j = '"', q + 2 else i = q + 2; break end
      end
      t[#t + 1] = table.concat(cell)
    else
      local c = line:find(",", i, true) or #line + 1
      t[#t + 1] = line:sub(i, c - 1)
      i = c + 1
    end
  end
  return t
end
local function read(name)
  local f = assert(io.open(name))
  local header = f:read("l")
  local rows = {}
  for line in f:lines() do
    local r, cols = {}, split(line)
    for i, k in ipairs(split(header)) do r[k] = cols[i] end
    r._ncols = #cols
    rows[#rows + 1] = r
  end
  f:close()
  return header, rows
end
local failed = 0
local function ok(cond, what)
  print((cond and "ok - " or "not ok - ") .. what)
  if not cond then failed = failed + 1 end
end
-- The CSVs hold 6 significant digits, so what is recomputed from them
-- agrees to within 'tol', an absolute tolerance the caller derives from the
-- magnitudes involved.
local function close(a, b, tol, what)
  local good = a and b and math.abs(a - b) <= tol
  ok(good, string.format("%s (%s vs %s, within %.2g)", what, tostring(a), tostring(b), tol))
end
local function mean(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return s / #xs
end

local sh, steps = read("tiny_steps.csv")
local lh, lens = read("tiny_lens.csv")
local uh, summary = read("tiny_summary.csv")
ok(sh == "seed,arm,step,loss,lr,warmup,grad_ratio,grad_ratio_act,grad_ratio_l1,grad_ratio_act_l1",
   "the steps CSV has exactly its columns: " .. sh)
ok(lh == "seed,arm,position,lens,kl,ce,entropy,acc,converged", "the lens CSV has exactly its columns: " .. lh)
ok(uh == "finding,measure,arm,mean,ci_low,ci_high,n,verdict,reason", "the summary CSV has exactly its columns: " .. uh)
local ragged = 0
for _, set in ipairs{{steps, 10}, {lens, 9}, {summary, 9}} do
  for _, r in ipairs(set[1]) do if r._ncols ~= set[2] then ragged = ragged + 1 end end
end
ok(ragged == 0, "every row has as many cells as its header")

-- Verdict rows: one per finding, finite interval, n = 2, three words.
local verdicts, desc = {}, {}
local words = {held = true, ["not held"] = true, inconclusive = true}
local dup, bad = 0, {}
for _, r in ipairs(summary) do
  if r.finding ~= "" then
    if verdicts[r.finding] then dup = dup + 1 end
    verdicts[r.finding] = r
    local lo, hi = tonumber(r.ci_low), tonumber(r.ci_high)
    if not (lo and hi and lo == lo and hi == hi and lo <= hi) then bad[#bad + 1] = r.finding .. " interval" end
    if r.n ~= "2" then bad[#bad + 1] = r.finding .. " n=" .. r.n end
    if not words[r.verdict] then bad[#bad + 1] = r.finding .. " verdict '" .. r.verdict .. "'" end
    -- Its reason: the window it read, then why.
    if not (r.reason:match("^steps %d") or r.reason:match("^at step 30") or r.reason:match("^fitted lens, positions"))
       or not r.reason:find("; ", 1, true) then
      bad[#bad + 1] = r.finding .. " reason '" .. r.reason .. "'"
    end
    -- The verdict follows from the interval and the claimed direction.
    if lo and hi and r.finding ~= "lens_kl_early" then
      local want = (lo > 0 and hi > 0) and "held" or ((lo < 0 and hi < 0) and "not held" or "inconclusive")
      if r.finding == "l1_crossover" then
        want = (lo < 0 and hi < 0) and "held" or ((lo > 0 and hi > 0) and "not held" or "inconclusive")
      end
      if want ~= r.verdict then bad[#bad + 1] = r.finding .. " verdict " .. r.verdict .. " for its interval" end
    end
  else
    desc[r.measure .. "/" .. r.arm] = r
    if r.verdict ~= "" then bad[#bad + 1] = "descriptive " .. r.measure .. " has a verdict" end
  end
end
ok(dup == 0, "one verdict row per finding")
for _, id in ipairs{"align_toward_output", "early_l2_dominance", "l1_crossover", "lens_kl_early",
                    "scaling_moves_toward_in", "scaling_costs_ppl", "untied_ratio_spikes"} do
  ok(verdicts[id] ~= nil, "a verdict row for " .. id)
end
ok(#bad == 0, "finite intervals, n = 2, verdicts of the three words, as their intervals say: " .. table.concat(bad, "; "))
for _, m in ipairs{"val_ppl", "ratio_act_early", "ratio_early", "ratio_act_l1_late", "linear_in", "linear_out",
                   "procrustes_in", "procrustes_out", "linear_in_base", "procrustes_out_base", "knn_in", "knn_out",
                   "cka_in", "cka_out", "drift_in", "drift_out", "normfreq_in", "normfreq_out", "kl.0", "kl.1", "kl.2"} do
  ok(desc[m .. "/tied"] and desc[m .. "/tied"].n == "2", "a descriptive row for " .. m .. " of tied over 2 seeds")
end

-- The t interval of two differences d1, d2: mean -+ t_0.975(1) * sd / sqrt(2).
local function interval(diffs)
  local m = mean(diffs)
  local sd = math.sqrt(((diffs[1] - m) ^ 2 + (diffs[2] - m) ^ 2) / 1)
  local h = 12.706205 * sd / math.sqrt(2)
  return m, m - h, m + h
end
-- Each input is rounded to 6 digits (an error up to 5e-7 of 'scale', its
-- largest magnitude), and the half width multiplies that by about
-- t_0.975(1) = 12.7: 1e-4 * scale bounds it.
local function check_finding(id, diffs, scale)
  local v = verdicts[id]
  if not v then return ok(false, id .. " is there to check") end
  local m, lo, hi = interval(diffs)
  local tol = 1e-4 * scale + 1e-12
  close(tonumber(v.mean), m, tol, id .. ": mean of the per-seed differences")
  close(tonumber(v.ci_low), lo, tol, id .. ": low end from those differences")
  close(tonumber(v.ci_high), hi, tol, id .. ": high end from those differences")
end

-- early_l2_dominance from the steps CSV: per seed, log of the tied arm's
-- mean grad_ratio_act over the first 10% of the steps (1-3), which is also
-- the warmup here; l1_crossover: of its mean grad_ratio_act_l1 over the
-- last 10% (28-30).
local function window_sums(arm, column, first, last)
  local sums = {}
  for _, r in ipairs(steps) do
    local step = tonumber(r.step)
    if r.arm == arm and step >= first and step <= last then
      local s = sums[r.seed] or {0, 0}
      s[1], s[2] = s[1] + tonumber(r[column]), s[2] + 1
      sums[r.seed] = s
    end
  end
  return sums
end
local sums = window_sums("tied", "grad_ratio_act", 1, 3)
ok(sums["1"] and sums["2"] and sums["1"][2] == 3, "the early window is 10% of 30 steps: 3 steps per seed")
local warm = 0
for _, r in ipairs(steps) do if r.step == "1" and r.warmup ~= "3" then warm = warm + 1 end end
ok(warm == 0, "the olmo recipe's warmup is 10% of the steps, the early window")
local late = window_sums("tied", "grad_ratio_act_l1", 28, 30)
ok(late["1"] and late["2"] and late["1"][2] == 3, "the late window is the last 10%: steps 28-30")
if late["1"] and late["2"] then
  check_finding("l1_crossover", {math.log(late["1"][1] / late["1"][2]), math.log(late["2"][1] / late["2"][2])}, 1)
end
-- The olmo recipe as the script sets it, with the lr given: 0.01 ramped
-- over the warmup from a tenth of it (OLMo's start), down to the preset's
-- floor, a tenth of it, at the last step (decay_steps = steps).
local lr = {}
for _, r in ipairs(steps) do if r.seed == "1" and r.arm == "tied" then lr[tonumber(r.step)] = tonumber(r.lr) end end
close(lr[1], 0.001 + 0.009 / 3, 1e-8, "step 1 of the warmup: a third of the way from a tenth of the rate to all of it")
close(lr[3], 0.01, 1e-8, "the warmup's last step at the full rate")
close(lr[30], 0.001, 1e-12, "the last step at the preset's floor, a tenth of the rate")
if sums["1"] and sums["2"] then
  -- The log of a ratio rounded to 6 digits is off by up to 5e-7: scale 1.
  check_finding("early_l2_dominance", {math.log(sums["1"][1] / sums["1"][2]), math.log(sums["2"][1] / sums["2"][2])}, 1)
end

-- lens_kl_early from the lens CSV: fitted KL at position 1 (L = 2), tied - untied.
local kl, at_top, marks = {}, true, 0
for _, r in ipairs(lens) do
  if (r.lens == "fitted") ~= (r.converged == "true" or r.converged == "false") then marks = marks + 1 end
  if r.lens == "fitted" then
    kl[r.seed .. "/" .. r.arm .. "/" .. r.position] = tonumber(r.kl)
    if r.position == "2" and tonumber(r.kl) ~= 0 then at_top = false end
  end
end
ok(at_top, "the fitted lens's KL at the last position is 0")
ok(marks == 0, "every fitted row says whether its fit converged, no online row does")
local count = {}
for _, r in ipairs(lens) do count[r.lens] = (count[r.lens] or 0) + 1 end
-- 2 seeds x 3 positions: of every arm (5) online, of tied, untied and untied_shared fitted.
ok(count.online == 2 * 5 * 3 and count.fitted == 2 * 3 * 3,
   string.format("fitted lens rows and, labelled online, the online lens's: %s fitted, %s online",
                 tostring(count.fitted), tostring(count.online)))
local kls = {kl["1/tied/1"], kl["1/untied/1"], kl["2/tied/1"], kl["2/untied/1"]}
-- (a least-squares start can fit a tiny model's position 1 to within
-- rounding: a KL of 0 is a measurement, not a gap)
ok(#kls == 4 and math.min(table.unpack(kls)) >= 0, "the fitted KL at position 1 is measured, and not below 0: " ..
   table.concat(kls, " "))
if #kls == 4 then
  check_finding("lens_kl_early", {kls[1] - kls[2], kls[3] - kls[4]}, math.max(table.unpack(kls)))
end

-- Differences of descriptive means: the mean of paired differences is the
-- difference of the means.
local function dmean(measure, arm) return tonumber(desc[measure .. "/" .. arm] and desc[measure .. "/" .. arm].mean) end
local function difference(id, what, am, aa, bm, ba)
  local x, y = dmean(am, aa), dmean(bm, ba)
  local v = tonumber(verdicts[id] and verdicts[id].mean)
  if not (x and y and v) then return ok(false, id .. ": its rows are there") end
  -- Six significant digits are off by up to half a unit in the sixth:
  -- 5e-6 of each value at worst (a leading 1).
  close(v, x - y, 5e-6 * (math.abs(x) + math.abs(y) + math.abs(v)) + 1e-12, id .. ": " .. what)
end
difference("align_toward_output", "linear_out - linear_in of the descriptive rows", "linear_out", "tied", "linear_in", "tied")
difference("scaling_costs_ppl", "val_ppl tied_x5 - tied", "val_ppl", "tied_x5", "val_ppl", "tied")
difference("scaling_moves_toward_in", "procrustes_in tied_x5 - tied", "procrustes_in", "tied_x5", "procrustes_in", "tied")
os.exit(failed == 0)
EOF
"$tielab" --headless check.lua >check.out 2>&1
status=$?
while IFS= read -r line; do
  case $line in
    "ok - "*) ok 0 "${line#ok - }" ;;
    "not ok - "*) ok 1 "${line#not ok - }" ;;
    *) echo "# $line" ;;
  esac
done <check.out
[ $status -eq 0 ]
ok $? "the CSV checks ran to their end"

grep -q '^  early_l2_dominance ' stdout &&
  grep -q '^windows: early steps 1-3, the first 10%; late steps 28-30, the last 10%$' stdout && ! grep -qiw nan stdout
ok $? "the table leads with the findings, names the windows, and shows no nan"
grep -A4 '^  l1_crossover ' stdout | grep -q '^      why: steps 28-30, the last 10%: tied ratio_act_l1_late '
ok $? "each verdict says why: l1_crossover names its window and value"
grep -A6 '^  lens_kl_early ' stdout | tr '\n' ' ' | grep -q 'L=2 is too shallow'
ok $? "the lens finding says the model is too shallow for an early half"
awk 'length($0) > 80 { bad = 1 } END { exit bad }' stdout
ok $? "the table fits 80 columns"
grep -Eq '^    tied +[0-9]+/[0-9]+, [0-9]/2 converged, 64 a step$' stdout
ok $? "lens_tokens=64: every fit takes 64 positions a lens step, and the table says so"
grep -Eq "^seed 1: tied's lens: [0-9]+ lens steps, [0-9]+\.[0-9] s, (converged|NOT CONVERGED \((diverged|max_steps)\))$" stderr
ok $? "each fit's steps, time and outcome are logged on stderr"
mkdir none && cd none &&
  "$tielab" --headless "$lua_dir/paper.lua" $ARGS recipe= lr=1e-3 decay_all=false out= >../const.out 2>&1 &&
  grep -q 'early steps 1-3, the first 10%' ../const.out && grep -q '^recipe (none): lr 0.001, warmup 0, constant$' ../const.out &&
  [ -z "$(ls)" ]
ok $? "recipe= lr=1e-3 decay_all=false: the constant rate, the first 10% as the early window; out= writes nothing"
tap_done
