#!/bin/sh
# test_resume_ui.sh -- the lab's screen and a folder still being written: a
# lab of five runs in a tmux pane, ended by SIGHUP (as 'tmux kill-session'
# ends it) with a --resume started at once, gives every run back, round
# after round; a save cut short, and a checkpoint cut short, are named on
# the message line and on stderr, and the lab then ends with status 1.
# Each wait polls up to a deadline. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=resume_ui; . "$top_srcdir/tests/lib/tmux.sh"

session 80 24

# ---------------------------------------------------------------- the race
round=1
while [ $round -le 3 ]; do
  state=$WORK/race$round
  EXTRA="XDG_STATE_HOME=$state"
  start "$MODEL"
  wait_for 'RUNNING step [1-9]' 300
  key :
  type_line 'for i = 1, 3 do lab.run{name = "extra" .. i, seed = i} end print("lab of " .. #lab.runs .. " runs")'
  wait_for '^lab of 5 runs' 100
  ready=$?
  lab=$(tielab_pid)
  kill -HUP "$lab"
  env XDG_STATE_HOME="$state" TERM=dumb timeout 60 "$TIELAB" --resume $MODEL </dev/null >"$WORK/out" 2>"$WORK/err"
  wait_dead 100
  all=0
  for r in tied untied extra1 extra2 extra3; do
    grep -Eq "^resumed (.*, )?$r \(step [0-9]+\)" "$WORK/out" || all=1
  done
  [ $ready = 0 ] && [ $all = 0 ] && ! grep -q "not found\|older than" "$WORK/out"
  r=$?
  check $r "round $round: SIGHUP to a lab of five runs and --resume at once: all five come back"
  [ $r = 0 ] || awk '{ print "#   " $0 }' "$WORK/out" "$WORK/err" | head -10
  round=$((round + 1))
done

# ---------------------------------------------------------------- a save cut short
# The folder of a lab that died after one of its two checkpoints: the
# checkpoints of the last round's lab (its folder ends in its pid), the
# manifest it wrote, one checkpoint removed and its writer's marker put back
# with a pid that no longer exists.
from=$(ls -d "$WORK"/race3/tielab/autosave/*-"$lab")
dir=$WORK/cut/tielab/autosave/20200101-000000-1
mkdir -p "$dir"
grep -E ' (tied|untied)$' "$from/manifest" >"$dir/manifest"
cp "$from"/tied-*.safetensors "$dir/"
sh -c 'echo $$' >"$dir/.writer"
gone=$(cat "$dir/.writer")
lost=$(sed -n 's/^\([0-9]*\) untied-.* untied$/\1/p' "$dir/manifest")
EXTRA="XDG_STATE_HOME=$WORK/cut"
start --resume "$MODEL" "2>'$WORK/err'"
wait_for "^not found: untied \(step $lost\) \(process $gone ended" 300
check $? "the message line says which run was not found, and why"
screen | tr -d '\n' | grep -Eq "resumed tied \(step [0-9]+\) from" && screen | tr -d '\n' | grep -Fq "$dir"
check $? "and which came back, from where"
key q
wait_for 'Save [0-9]+ run' 30 && key n
wait_dead 100
grep -q "^tielab: not found: untied (step $lost) (process $gone ended before its save was complete); resumed tied" "$WORK/err"
check $? "stderr says it too"
[ "$(status)" = 1 ]
check $? "and the lab, opened with part of its save, ends with status 1 ($(status))"

# ---------------------------------------------------------------- a damaged checkpoint
# The same two runs, the untied one's checkpoint cut short: the tied one
# comes back, the untied one is named with why.
dir=$WORK/damaged/tielab/autosave/20200101-000000-1
mkdir -p "$dir"
cp "$WORK/cut/tielab/autosave/20200101-000000-1/manifest" "$from"/tied-*.safetensors "$dir/"
cut=$(cd "$from" && ls untied-*.safetensors)
head -c 1000 "$from/$cut" >"$dir/$cut"
EXTRA="XDG_STATE_HOME=$WORK/damaged"
start --resume "$MODEL" "2>'$WORK/err'"
wait_for "^cannot reopen $cut \(untied, step $lost\): header length" 300
check $? "the message line names the damaged checkpoint, its run and why"
key q
wait_for 'Save [0-9]+ run' 30 && key n
wait_dead 100
grep -q "^tielab: cannot reopen $cut (untied, step $lost): header length [0-9]* is past the end of the file (1000 bytes); resumed tied" "$WORK/err"
check $? "stderr says it too, with the run that came back"

finish
