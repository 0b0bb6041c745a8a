#!/bin/sh
# test_interventions.sh -- the scripts of lua/interventions/ run tiny (two
# seeds, a few steps) and each prints its table: every arm's row, each
# finding with its interval and verdict, and a 'finding' line a program
# reads; aux_recon's term reaches the metrics as aux_loss, and the learned
# balance's schedule is its run's in_scale series. Prints TAP.

tap_name=interventions; . "${srcdir:-.}/tests/lib/tap.sh"
tielab="${top_builddir:-.}/tielab"
dir="${top_srcdir:-.}/lua/interventions"
tiny="steps=6 seeds=1,2 vocab=256 dim=32 layers=2 heads=2 ctx=16 batch=2"

# run NAME ARMS...: the script runs, and its table names the tied baseline
# and each arm, with a 'finding ARM_bias' and 'finding ARM_ppl' line each.
run() {
  name=$1
  shift
  "$tielab" --headless "$dir/$name.lua" $tiny >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  ok $rc "$name.lua runs to its end (status $rc$( [ $rc -ne 0 ] && printf ': %s' "$(tail -n 1 "$tmp/$name.err")"))"
  grep -q "^  tied " "$tmp/$name.out"
  ok $? "$name.lua: the table has the tied baseline's row"
  for arm in "$@"; do
    grep -Eq "^finding ${arm}_bias measure=bias diff=[-+][0-9.e+-]+ n=2 verdict=(held|not_held|inconclusive)\$" "$tmp/$name.out" &&
      grep -Eq "^finding ${arm}_ppl measure=ppl diff=[-+][0-9.e+-]+ n=2 verdict=(held|not_held|inconclusive)\$" "$tmp/$name.out"
    ok $? "$name.lua: arm $arm is compared with the baseline over two seeds, with a verdict"
  done
}

run align_reg untied pull push pull_vs_untied push_vs_untied
run aux_recon recon
run untie_late untie
run balance_schedule balance
run emb_warmup warmup

# The term and the schedule, seen from a run of the scripts' own kind.
cat >"$tmp/seen.lua" <<'LUA'
local r = lab.run{name = "s", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 2}
r:on_hidden(1, function(h, dh) return 0.125 end)
for k = 1, 3 do r:set{in_scale = k}; r:step(1) end
local h = r:history("in_scale")
print("aux", r:metrics().aux_loss, "in_scale", h.values[1], h.values[2], h.values[3])
LUA
"$tielab" --headless "$tmp/seen.lua" >"$tmp/seen.out" 2>"$tmp/seen.err"
grep -Eq '^aux	0.125	in_scale	1(\.0)?	2(\.0)?	3(\.0)?$' "$tmp/seen.out"
ok $? "a term an on_hidden hook returns is aux_loss, and a per-step in_scale is its series: $(cat "$tmp/seen.out" "$tmp/seen.err" | tr '\n\t' '  ')"

tap_done
