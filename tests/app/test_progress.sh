#!/bin/sh
# test_progress.sh -- the progress line of long work and Ctrl-C in a
# headless script. On a terminal (a pty from script(1), a tmux pane) the
# line has the count and total, the percent, the elapsed time and the ETA,
# is redrawn by its timer while a step takes long, fits the terminal's
# width (the pane's, else $COLUMNS) and is cleared at the end; stderr to a
# file gets plain lines instead (a total as large as 2^62 too), and the
# built-in loop's rows stay as they were. SIGINT and SIGTERM end a
# training script with status 130, its run saved in the autosave folder,
# in one line with no traceback; --compare paper (paper.lua) saves its runs too.
tap_name=progress; . "${srcdir:-.}/tests/lib/tap.sh"
export XDG_STATE_HOME="$tmp/state"
MODEL="vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, eval_every = 0, lens_every = 0"

# pty COMMAND: COMMAND on a terminal of no size (so that $COLUMNS counts),
# its output (stdout and stderr, as a terminal shows them) in $tmp/pty.
pty() {
  script -qefc "stty cols 0 rows 0 2>/dev/null; $1" /dev/null >"$tmp/pty" 2>&1
}
# The pieces the line was drawn in, one a line (CR and the erase taken out).
drawn() { tr '\r' '\n' <"$tmp/pty" | sed 's/\x1b\[K//g' | grep -v '^$'; }

# A step that takes 2.6 s: the timer must redraw the elapsed time meanwhile.
cat >"$tmp/slow.lua" <<'LUA'
local p = lab.progress(3)
p:step(1, "first")
lab.sleep(2.6)
p:step(1, "second " .. string.rep("x", 150) .. "END")
lab.sleep(0.3)
p:step(1)
p:done()
print("finished")
LUA
if have script; then
  COLUMNS=60 pty "'$tielab' --headless '$tmp/slow.lua'"
  ok $? "a script with lab.progress runs on a terminal"
  drawn | grep -Eq '^0/3 +0% +elapsed 0:00 +ETA -'
  ok $? "the line is drawn at the start: count/total, percent, elapsed, ETA"
  [ "$(drawn | grep -Ec '^1/3 +33% +elapsed 0:0[12] +ETA [0-9]+:[0-9]{2} +first')" -ge 2 ]
  ok $? "while one step takes 2.6 s the timer redraws the line (elapsed 0:01, 0:02)"
  drawn | grep -q '^2/3 .*second x' && ! drawn | grep -q 'END'
  ok $? "a long label is cut"
  [ "$(drawn | awk 'length($0) > 59' | grep -vc finished)" -eq 0 ]
  ok $? "COLUMNS=60: no drawn line is wider than 59 columns"
  [ "$(drawn | tail -n 1)" = finished ] && grep -q "$(printf '\r\033')\\[Kfinished" "$tmp/pty"
  ok $? "the line is cleared before the script's output and at the end"
else
  skip "the progress line on a terminal: no script(1) to give it one" 6
fi

# Not a terminal: plain lines, one at each tenth.
cat >"$tmp/count.lua" <<LUA
local r = lab.run{$MODEL}
local p = lab.progress(40)
lab.on_step(function() p:step(1, "counting") end)
r:step(40)
p:done()
LUA
"$tielab" --headless "$tmp/count.lua" >"$tmp/out" 2>"$tmp/err"
ok $? "the same script with stderr to a file"
[ "$(grep -Ec '^tielab: [0-9]+/40 +[0-9]+% +elapsed [0-9:]+ +ETA [0-9:]+ +counting$' "$tmp/err")" -eq 10 ] &&
  ! grep -q "$(printf '\r')" "$tmp/err"
ok $? "plain lines, one at each tenth, no carriage return"

# A count near the largest integer: each tenth is computed without
# overflowing (ten times 2^62 is no long integer; UBSan says so too).
cat >"$tmp/huge.lua" <<'LUA'
local p = lab.progress(2^62)
p:step(2^61, "half")
p:step(2^61, "all")
p:done()
LUA
"$tielab" --headless "$tmp/huge.lua" >"$tmp/out" 2>"$tmp/err"
ok $? "lab.progress(2^62) runs to its end"
grep -q '^tielab: 2305843009213693952/4611686018427387904  *50% .* half$' "$tmp/err" &&
  grep -q '^tielab: 4611686018427387904/4611686018427387904  *100% .* all$' "$tmp/err"
ok $? "its plain lines say 50% at 2^61 and 100% at 2^62"

# The built-in loop: a line on a terminal, its rows as before elsewhere.
if have script; then
  pty "'$tielab' --headless --vocab 256 --dim 32 --layers 2 --heads 2 --ctx 32 --batch 4 --steps 30 --print-every 10 2>&1"
  drawn | grep -Eq '^[0-9]+/30 +[0-9]+% +elapsed [0-9:]+ +ETA [0-9:-]+ +run1 loss' &&
    [ "$(drawn | grep -Ec '^ +(10|20|30) +[0-9.]+ ')" -eq 3 ]
  ok $? "the built-in loop: a progress line on a terminal, and its three rows"
else
  skip "the built-in loop on a terminal: no script(1) to give it one"
fi
"$tielab" --headless --vocab 256 --dim 32 --layers 2 --heads 2 --ctx 32 --batch 4 --steps 30 --print-every 10 \
  >"$tmp/out" 2>"$tmp/err" &&
  [ ! -s "$tmp/err" ] && [ "$(grep -Ec '^ +(10|20|30) +[0-9.]+ ' "$tmp/out")" -eq 3 ]
ok $? "the built-in loop not on a terminal: its rows, nothing on stderr"

# A pane 200 columns wide: the whole line shows, wider than 80.
if have tmux; then
  cat >"$tmp/wide.lua" <<'LUA'
local p = lab.progress(4)
p:step(1, "wide " .. string.rep("y", 140) .. "END")
lab.sleep(30)
LUA
  # pane_line NAME COLS SCRIPT [ENV]: the progress line SCRIPT draws in a
  # pane COLS wide ('line'). A tmux server of its own for each: a new
  # session on a server still shutting down could fail and leave nothing
  # to capture.
  pane_line() {
    T="tmux -L tielab-progress-$$-$1 -f /dev/null"
    $T new-session -d -s p -x "$2" -y 8 "env -u COLUMNS ${4:-} XDG_STATE_HOME='$tmp/state' '$tielab' --headless '$3'"
    i=0 line=
    while [ $i -lt 300 ]; do
      line=$($T capture-pane -p -t p 2>/dev/null | grep '1/4')
      [ -n "$line" ] && break
      sleep 0.1
      i=$((i + 1))
    done
    $T kill-server 2>/dev/null
  }
  for cols in 200 60; do
    pane_line "$cols" "$cols" "$tmp/wide.lua"
    len=$(printf '%s' "$line" | awk '{ print length($0) }')
    if [ $cols -eq 200 ]; then
      printf '%s' "$line" | grep -Eq '^1/4 +25% +elapsed [0-9:]+ +ETA [0-9:]+ +wide y+END$' && [ "$len" -gt 80 ]
      ok $? "a pane 200 wide shows the whole line ($len columns)"
    else
      printf '%s' "$line" | grep -q '^1/4 .*wide y' && [ "$len" -le 59 ]
      ok $? "a pane 60 wide: the line is cut to 59 columns ($len)"
    fi
  done
  # Wide characters take two columns each: a label of them is cut to the
  # pane's width in columns, never in the middle of a character.
  cat >"$tmp/cjk.lua" <<'LUA'
local p = lab.progress(4)
p:step(1, "wide " .. string.rep("\u{8868}", 60) .. "END")
lab.sleep(30)
LUA
  pane_line cjk 60 "$tmp/cjk.lua" LC_ALL=C.UTF-8
  cols=$(printf '%s' "$line" | sed 's/ *$//' | LC_ALL=C.UTF-8 wc -L)   # columns: a wide character counts two
  printf '%s' "$line" | grep -q '^1/4 .*wide' && [ -n "$cols" ] && [ "$cols" -le 59 ] && [ "$cols" -ge 57 ]
  ok $? "a pane 60 wide: a label of wide characters is cut to 59 columns or just under (${cols:-?} columns)"
else
  skip "the progress line in a pane: tmux is not installed" 3
fi

# Ctrl-C (and SIGTERM) in a training script: saved, 130, one line.
cat >"$tmp/train.lua" <<LUA
local r = lab.run{$MODEL}
r:step(2)
print("ready") io.stdout:flush()
r:step(100000000)
LUA
for sig in INT TERM; do
  rm -rf "$XDG_STATE_HOME" "$tmp/out" "$tmp/err"
  "$tielab" --headless "$tmp/train.lua" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  i=0
  while [ $i -lt 200 ] && ! grep -q ready "$tmp/out" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
  kill -$sig $pid
  wait $pid
  rc=$?
  ok $((rc != 130)) "SIG$sig in a training script: status 130 (got $rc)"
  ls "$XDG_STATE_HOME"/tielab/autosave/*/run1*.safetensors >/dev/null 2>&1 &&
    [ -s "$(ls -d "$XDG_STATE_HOME"/tielab/autosave/* | head -n 1)/manifest" ]
  ok $? "SIG$sig: the run is saved in the autosave folder, with its manifest"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^tielab: .*interrupted; saved in .* (tielab --resume reopens it)$' "$tmp/err" &&
    ! grep -qi traceback "$tmp/err"
  ok $? "SIG$sig: one line on stderr saying where, no traceback"
done

# --compare paper (paper.lua), interrupted while its first seed's six arms
# train, saves them as well (its CSV files go to a folder of their own).
rm -rf "$XDG_STATE_HOME" "$tmp/err"
mkdir -p "$tmp/paper"
(cd "$tmp/paper" && exec "$tielab" --headless --compare paper --vocab 256 --dim 32 --layers 2 --heads 2 --ctx 32 \
  --batch 4 --steps 100000000) >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while [ $i -lt 400 ] && ! grep -q '^seed 1: training 6 runs' "$tmp/err" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
sleep 0.3
kill -INT $pid
wait $pid
rc=$?
ok $((rc != 130)) "SIGINT in --compare paper: status 130 (got $rc)"
[ "$(ls "$XDG_STATE_HOME"/tielab/autosave/*/*.safetensors 2>/dev/null | wc -l)" -eq 6 ] &&
  grep -q '^tielab: .*paper.lua:[0-9]*: interrupted; saved in ' "$tmp/err"
ok $? "its six runs are saved, and it says where"

tap_done
