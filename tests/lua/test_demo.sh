#!/bin/sh
# test_demo.sh -- lua/demo.lua's claims are paper.lua's findings on the
# demo's own runs: each "finding" line it prints is decided again here with
# tielab.findings from the numbers in it (the difference, the verdict of
# one seed), and the words the demo put on screen for it, in its "this
# seed" line and its captions, must be the ones the finding's definition
# gives for that difference. Each claim's caption names both arms'
# values (its arm and its control, or the two sides compared), those the
# finding is computed from; the alignment claim is measured before the
# matrix is first untied, and the runs train on paper.lua's recipe.
tap_name=demo; . "${srcdir:-.}/tests/lib/tap.sh"
lua_dir=$(cd "${srcdir:-.}/lua" && pwd)

cd "$tmp" || exit 1
"$tielab" --headless "$lua_dir/demo.lua" pace=0 steps=20 dim=32 vocab=256 layers=2 heads=2 ctx=16 batch=4 \
  >out 2>err
ok $? "demo.lua runs tiny headless ($(tail -n 2 err | tr '\n' ' '))"

cat >check.lua <<'LUA'
package.path = arg[1] .. "/?.lua;" .. package.path
local findings = require "tielab.findings"
local lines = {}
for l in io.lines("out") do lines[#lines + 1] = l end
local failed, seen_ids = 0, {}
local function ok(cond, what)
  print((cond and "ok - " or "not ok - ") .. what)
  if not cond then failed = failed + 1 end
end
local function has(pattern)
  for _, l in ipairs(lines) do if l:find(pattern, 1, true) then return l end end
end
for i, l in ipairs(lines) do
  local id, x, y, diff, n, verdict = l:match("^  finding (%S+) measure=%S+ x=(%S+) y=(%S+) diff=(%S+) n=(%d+) verdict=(%S+)$")
  if id then
    seen_ids[id] = true
    local f = findings.get(id, {scaled = "tied_x5"})
    local values = {[f.x[1]] = {[f.x[2]] = tonumber(x)}}
    if f.y then values[f.y[1]] = values[f.y[1]] or {}; values[f.y[1]][f.y[2]] = tonumber(y) end
    local r = findings.one_seed(f, values)
    ok(math.abs(r.diff - tonumber(diff)) <= 1e-5 * math.max(1, math.abs(r.diff)),
       string.format("%s: the difference %s is x - y as the finding defines it (%.6g)", id, diff, r.diff))
    ok(r.verdict:gsub(" ", "_") == verdict and tonumber(n) == 1,
       string.format("%s: one seed's verdict is %s, as the shared rule gives (%s)", id, verdict, r.verdict))
    local word = findings.seen(f, r.diff)
    ok(lines[i - 1]:find("this seed: " .. word .. " (", 1, true) ~= nil,
       string.format("%s: the demo says '%s' (%s)", id, word, lines[i - 1]))
  end
end
for _, id in ipairs{"early_l2_dominance", "untied_ratio_spikes", "align_toward_output", "scaling_moves_toward_in"} do
  ok(seen_ids[id], "demo.lua reports " .. id)
end

-- The captions: the last one, the in_scale claim, and the alignment's.
local function finding_of(id)
  local l = has("  finding " .. id .. " ")
  local x, y = l:match("x=(%S+) y=(%S+)")
  return findings.get(id, {scaled = "tied_x5"}), tonumber(x), tonumber(y)
end
local f, x, y = finding_of("scaling_moves_toward_in")
local last = lines[#lines]
ok(last:match("^== This seed, x5 at steps %d+%-%d+: ") and last:find(": " .. findings.seen(f, x - y) .. " (", 1, true),
   "the last caption says what the finding's definition gives: " .. last)
-- x and y are the procrustes alignments the demo printed for the x5 run
-- (tied) and its control, at the same step, against the same untied run.
local function procrustes_in(name)
  local v
  for _, l in ipairs(lines) do v = l:match("^  " .. name .. " vs untied: .* procrustes E_in ([%d.]+)") or v end
  return tonumber(v)
end
ok(math.abs(procrustes_in("tied") - x) < 6e-4 and math.abs(procrustes_in("control") - y) < 6e-4,
   string.format("x5 (%g) and control (%g) are the alignments printed for tied and control", x, y))
local other = findings.seen(f, y - x)
ok(not last:find(other, 1, true), "and not the opposite ('" .. other .. "')")
f, x, y = finding_of("align_toward_output")
ok(has("== This seed: tied matrix " .. findings.seen(f, x - y) .. " (") ~= nil,
   "the alignment caption says " .. findings.seen(f, x - y))
-- The ratio caption quotes the early window's means the findings use.
local e = select(2, finding_of("early_l2_dominance"))
local ue = select(2, finding_of("untied_ratio_spikes"))
local want = string.format(": tied %s, untied %s", findings.ratio_text(math.exp(e)), findings.ratio_text(math.exp(ue)))
ok(has("== This seed, out/in steps 1-") and has("== This seed, out/in steps 1-"):find(want, 1, true),
   "the ratio caption's factors are the early window's means" .. want)
-- Each claim's control beside it: the late window of both runs, the two
-- linear maps, and the control's procrustes alignment.
local ul = select(3, finding_of("untied_ratio_spikes"))
ok(has("== This seed, out/in steps 1-"):find(string.format("; %%d+%%-%%d+: [^,]+, %s ==$",
   (findings.ratio_text(math.exp(ul)):gsub("%.", "%%."))) ) ~= nil,
   "the ratio caption's late untied factor is the window mean untied_ratio_spikes reads (" .. findings.ratio_text(math.exp(ul)) .. ")")
f, x, y = finding_of("align_toward_output")
ok(has(string.format("(linear cos %.2f vs %.2f) ==", x, y)) ~= nil,
   string.format("the alignment caption names both sides, E_out %.2f and E_in %.2f", x, y))
f, x, y = finding_of("scaling_moves_toward_in")
ok(last:find(string.format("(procrustes to E_in %.3f vs control %.3f, ", x, y), 1, true) ~= nil,
   string.format("the last caption names the x5 arm (%.3f) and its control (%.3f)", x, y))
-- align_toward_output is read on a matrix tied from its init, as in
-- paper.lua: before the first untie.
local measured, untie
for i, l in ipairs(lines) do
  if l:find("finding align_toward_output ", 1, true) then measured = i end
  if l:find("== Untied live", 1, true) then untie = i end
end
ok(measured and untie and measured < untie, "align_toward_output is measured before the matrix is first untied")
ok(has("  recipe olmo: lr 0.0003, warmup 2, cosine to step 20") ~= nil,
   "the runs train on paper.lua's recipe, warmup the early window: " .. tostring(has("  recipe ")))
os.exit(failed == 0 and 0 or 1)
LUA
"$tielab" --headless check.lua "$lua_dir" >check.out 2>&1
status=$?
tap_relay check.out
[ $status -eq 0 ] || sed 's/^/# /' out
tap_done
