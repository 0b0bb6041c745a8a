#!/bin/sh
# test_sweep_settings.sh -- sweep.lua takes every run setting: recipe=olmo
# after the script and --recipe olmo (and --dim) before it are carried
# into every task line, DIR/sweep.json's grid and the report's header; a
# numeric setting given as a list is an axis; a folder trained with other
# settings (another recipe, a setting given on tielab's command line only)
# is refused, naming the difference; the per-run settings are not taken.
tap_name=sweep_settings; . "${srcdir:-.}/tests/lib/tap.sh"
script=$(cd "${srcdir:-.}/lua" && pwd)/sweep.lua
cd "$tmp" || exit 1
G="vocab=256 heads=1 layers=1 ctx=8 batch=2 steps=4 seeds=1 scales=1,2"
sweep() { "$tielab" --headless "$@"; }

# ---- recipe=olmo after the script
sweep "$script" $G dim=16 recipe=olmo out=after tasks >after.txt 2>after.err
ok $? "recipe=olmo is accepted ($(head -n 1 after.err))"
[ "$(grep -c ' recipe=olmo ' after.txt)" -eq 2 ] && grep -q '"recipe": "olmo"' after/sweep.json
ok $? "it is in both task lines and sweep.json's grid"

# ---- --recipe olmo --dim 16 before the script
sweep --recipe olmo --dim 16 "$script" $G out=before tasks >before.txt 2>before.err
ok $? "--recipe olmo --dim 16 before the script: tasks"
[ "$(grep -c -- ' --recipe=olmo .* dim=16 .* recipe=olmo ' before.txt)" -eq 2 ] &&
  grep -q '"recipe": "olmo"' before/sweep.json && grep -q '"dim": "16"' before/sweep.json
ok $? "each task line and sweep.json carry the recipe and dim=16 given before the script"
sh -c "$(sed -n 1p before.txt)" >/dev/null 2>task0.err && [ -s before/task-0.json ]
ok $? "a task line runs its task in that folder"
sweep --recipe olmo --dim 16 "$script" $G out=before >report.out 2>report.err
ok $? "the rest run here and the report is printed"
sed -n 2p report.out | grep -qx 'recipe olmo' && grep -q '^V=256 d=16 L=1 H=1 T=8 B=2: mean+-sd' report.out
ok $? "the header names the recipe; the groups the dim given before the script: $(sed -n 2p report.out)"

# ---- other settings in the same folder: refused, naming the difference
sweep "$script" $G dim=16 out=before merge >none.out 2>none.err
[ $? -eq 2 ] && grep -q 'recipe recorded olmo, given (none)' none.err
ok $? "the folder refuses a call without the recipe: $(cat none.err)"
sweep --recipe olmo --lr 0.003 --dim 16 "$script" $G out=before merge >lr.out 2>lr.err
[ $? -eq 2 ] && grep -q 'lr recorded (none), given 0.003' lr.err
ok $? "and one with --lr given on tielab's command line: $(cat lr.err)"
sweep "$script" $G dim=16 out=plain tasks >/dev/null 2>&1 &&
  sweep --recipe olmo "$script" $G dim=16 out=plain tasks >/dev/null 2>plain.err
[ $? -eq 2 ] && grep -q 'recipe recorded (none), given olmo' plain.err
ok $? "a folder trained without a recipe refuses --recipe olmo: $(cat plain.err)"
ppl() { sed -n 's/.*"val_ppl":\([^,}]*\).*/\1/p' "$1"; }
sweep "$script" $G dim=16 out=plain task=0 >/dev/null 2>&1 &&
  [ -n "$(ppl plain/task-0.json)" ] && [ -n "$(ppl before/task-0.json)" ] &&
  [ "$(ppl plain/task-0.json)" != "$(ppl before/task-0.json)" ]
ok $? "the recipe given before the script trains the task: val_ppl $(ppl before/task-0.json) with it, $(ppl plain/task-0.json) without"

# ---- settings as values and axes
sweep "$script" $G dim=16 recipe=olmo lr=1e-3,3e-3 eps=1e-6 out= >axis.out 2>axis.err
ok $? "lr=1e-3,3e-3 is an axis, eps=1e-6 a fixed setting"
sed -n 2p axis.out | grep -qx 'recipe olmo, lr 0.001,0.003, eps 1e-06' &&
  grep -q '^V=256 d=16 L=1 H=1 T=8 B=2 lr=0.001: mean+-sd' axis.out &&
  grep -q '^V=256 d=16 L=1 H=1 T=8 B=2 lr=0.003: mean+-sd' axis.out && grep -q '^4 of 4 tasks$' axis.out
ok $? "the header lists them; the report has a group per lr: $(sed -n 2p axis.out)"
sweep "$script" $G dim=16 warmup=1.5 out= tasks >/dev/null 2>bad.err
[ $? -eq 2 ] && grep -q "argument 'warmup' must be a whole number, got '1.5'" bad.err
ok $? "a setting of the wrong type is refused: $(cat bad.err)"
sweep "$script" $G dim=16 tie=untied out= >/dev/null 2>tie.err
[ $? -eq 2 ] && grep -q "unknown argument 'tie'" tie.err && sweep "$script" $G seed=3 out= >/dev/null 2>seed.err
[ $? -eq 2 ] && grep -q "unknown argument 'seed'" seed.err
ok $? "tie= and seed=, which each run sets itself, are not taken"
tap_done
