#!/bin/sh
# test_balance.sh -- balance.lua's rules, recomputed from the balance_steps.csv
# it writes for a tiny model: clip_code's grad_scale from the previous five
# recorded (scaled) lookup-output norms and this step's |G_out|, clip_doc's
# out_scale from its running average, steer's in_scale from its controller;
# the tied arm left alone; every arm on the same steps and batches.
tap_name=balance; . "${srcdir:-.}/tests/lib/tap.sh"
top="$(cd "${srcdir:-.}" && pwd)"
tiny="vocab=256 dim=32 layers=2 heads=2 ctx=32 batch=4"
steps=25
(cd "$tmp" && "$tielab" --headless "$top/lua/balance.lua" steps=$steps seeds=3,4 out=b $tiny \
  fraction=1 memory=10 code_fraction=0.1 code_window=5 target=1 gain=0.5) >"$tmp/out" 2>"$tmp/err"
ok $? "balance.lua runs tiny over two seeds"
sed 's/^/# /' "$tmp/err" | tail -5
grep -q "applied ratio" "$tmp/out"
ok $? "it prints its table"

steps_csv="$tmp/b_steps.csv"
[ "$(head -n 1 "$steps_csv")" = \
  "seed,arm,step,loss,lr,grad_in,grad_in_act,grad_out,in_scale,out_scale,grad_scale,applied_ratio" ]
ok $? "balance_steps.csv has the steps header"
[ "$(head -n 1 "$tmp/b_summary.csv")" = \
  "arm,applied_ratio,in_scale,out_scale,grad_scale,val_ppl,linear_in,linear_out,procrustes_in,procrustes_out" ]
ok $? "balance_summary.csv has the summary header"
[ "$(cut -d, -f1 "$tmp/b_summary.csv" | tail -n +2 | tr '\n' ' ')" = "tied steer clip_doc clip_code untied " ] &&
  grep -q '^untied,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,,,,$' "$tmp/b_summary.csv"
ok $? "the summary has one row per arm, and no alignment for the partner itself"

# Each check prints what differs and exits 1. The CSV holds 6 significant
# digits (%.6g), so each number carries up to 5e-6 of relative error; the
# clip_code check combines four of them, hence a tolerance of 2.5e-5.
check() {   # check DESCRIPTION AWK-PROGRAM
  awk -F, "$2" "$steps_csv" >"$tmp/why" 2>&1
  ok $? "$1"
  sed 's/^/# /' "$tmp/why" | head -5
}
rel='function rel(a, b) { return (a == b) ? 0 : (a - b < 0 ? b - a : a - b) / (b < 0 ? -b : b) }'

check "every arm has every step of every seed, in order" '
  NR > 1 { n[$1 "," $2]++; if ($3 != n[$1 "," $2]) { print $1, $2, "step", $3, "out of order"; bad = 1 } }
  END { for (k in n) if (n[k] != '$steps') { print k, n[k], "steps"; bad = 1 }; exit bad }'

check "step 1: the tied arms start alike on the same batch (loss, |G_out|, |grad_in_act| equal)" '
  NR > 1 && $3 == 1 && $2 != "untied" {
    if ($1 in loss) { if ($4 != loss[$1] || $8 != gout[$1] || $7 != gin[$1]) { print $2, "differs"; bad = 1 } }
    else { loss[$1] = $4; gout[$1] = $8; gin[$1] = $7 }
  } END { exit bad }'

check "tied: every scale is 1 throughout" '
  NR > 1 && $2 == "tied" && ($9 != 1 || $10 != 1 || $11 != 1) { print "step", $3, $9, $10, $11; bad = 1 }
  END { exit bad }'

check "clip_code: grad_scale = min(1, 0.1 x mean of the last 5 recorded grad_in_act x grad_scale / grad_out)" "$rel"'
  NR > 1 && $2 == "clip_code" {
    s = $1
    if ($3 == 1) n[s] = 0
    want = 1
    if (n[s] > 0) {
      first = (n[s] > 5) ? n[s] - 5 : 0
      sum = 0
      for (i = first; i < n[s]; i++) sum += hist[s, i]
      threshold = 0.1 * sum / (n[s] - first)
      if ($8 > threshold) want = threshold / $8
    }
    if (rel($11, want) > 2.5e-5) { print "seed", s, "step", $3, "grad_scale", $11, "want", want; bad = 1 }
    if ($3 > 1 && want < 1) clipped++
    hist[s, n[s]++] = $7 * $11
    if ($9 != 1 || $10 != 1) { print "step", $3, "in_scale/out_scale not 1"; bad = 1 }
  }
  END { if (!clipped) { print "the rule never clipped"; bad = 1 }; exit bad }'

check "clip_code: the applied ratio does not see grad_scale (out_scale|G_out| / in_scale|G_in|)" "$rel"'
  NR > 1 && $2 == "clip_code" && rel($12, $10 * $8 / ($9 * $6)) > 2.5e-5 { print "step", $3, $12; bad = 1 }
  END { exit bad }'

# A controller that sets one scale after each step for the next: the scale
# in column COLUMN starts at 1 and equals what UPDATE (awk, setting
# next_scale[s] from this step's row) gave on the step before.
controller() {   # controller DESCRIPTION ARM COLUMN UPDATE
  check "$1" "$rel"'
  NR > 1 && $2 == "'"$2"'" {
    s = $1
    want = ($3 == 1) ? 1 : next_scale[s]
    if (rel($'"$3"', want) > 2.5e-5) { print "seed", s, "step", $3, "scale", $'"$3"', "want", want; bad = 1 }
    '"$4"'
  }
  END { exit bad }'
}
controller "clip_doc: out_scale = min(1, avg|G_in| / |G_out|) of the step before, avg with weight 1/10" \
  clip_doc 10 'avg[s] = ($3 == 1) ? $6 : 0.9 * avg[s] + 0.1 * $6
    next_scale[s] = (avg[s] / $8 < 1) ? avg[s] / $8 : 1
    if ($9 != 1 || $11 != 1) { print "step", $3, "in_scale/grad_scale not 1"; bad = 1 }'
controller "steer: in_scale = in_scale x (applied ratio / 1)^0.5 of the step before, in [0.01, 1000]" \
  steer 9 'k = $9 * sqrt($12)
    next_scale[s] = (k < 0.01) ? 0.01 : (k > 1000 ? 1000 : k)'
tap_done
