#!/bin/sh
# test_live.sh -- scripts played in the lab behave as headless: paper.lua in
# a real terminal (tmux) writes the same CSV files byte for byte and prints
# the same table as --headless on the same seed; the table stays on screen
# in the results panel, which scrolls; the script's runs stay in the lab;
# and a scripted talk answers the speaker's keys: '.' moves to the next
# phase, ',' pauses the script and its training, and again resumes it.
# The harness is tests/lib/tmux.sh: a private tmux server, send-keys, and
# capture-pane polled until a deadline. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=live; . "$top_srcdir/tests/lib/tmux.sh"
LUA_DIR=$(cd "$top_srcdir/lua" && pwd)

PAPER_ARGS="steps=30 dim=16 vocab=256 ctx=16 batch=2 layers=1 heads=1 seeds=1 scales=2,5 lens_steps=40 out=paper"

# start DIR ARGS...: a new tielab in the pane, working in DIR.
start() {
  dir=$1
  shift
  in_pane "cd '$dir' && clear; $ENV $TIELAB $*"
}

mkdir -p "$WORK/headless" "$WORK/live"
(cd "$WORK/headless" && $ENV "$TIELAB" --headless "$LUA_DIR/paper.lua" $PAPER_ARGS >stdout 2>stderr)
if [ $? -ne 0 ] || [ ! -s "$WORK/headless/paper_steps.csv" ]; then
  sed 's/^/# /' "$WORK/headless/stderr" | tail -n 5
  bail_out "paper.lua does not run headless, so there is nothing to compare the lab with"
fi

# ---------------------------------------------------------------- headless: nothing waits
cat >"$WORK/phases.lua" <<'EOF'
local t0 = lab.clock()
local one = lab.phase("first %d", 1)
local pressed = lab.wait_key(30)
local two = lab.phase("second")
lab.sleep(0)
print(string.format("phases %d %d, key %s, waited %s", one, two, tostring(pressed), tostring(lab.clock() - t0 > 5)))
EOF
(cd "$WORK" && $ENV "$TIELAB" --headless phases.lua >phases.out 2>&1)
[ $? -eq 0 ] && grep -q '^== first 1 ==$' "$WORK/phases.out" && grep -q '^== second ==$' "$WORK/phases.out" &&
  grep -q '^phases 1 2, key false, waited false$' "$WORK/phases.out"
check $? "headless, lab.phase prints its caption and counts, lab.wait_key returns false at once"

session 100 30

# ---------------------------------------------------------------- paper.lua live = headless
start "$WORK/live" "$LUA_DIR/paper.lua" $PAPER_ARGS
wait_for 'results, lines 1-' 600 && wait_gone ' script *$' 300
check $? "paper.lua in the lab runs to its end and its results panel opens"
screen | grep -q 'tielab paper comparison' && screen | grep -q "the paper's findings"
check $? "the results panel shows the table's head"
same=0
for f in steps summary lens; do
  cmp -s "$WORK/headless/paper_$f.csv" "$WORK/live/paper_$f.csv" || { same=1; echo "# paper_$f.csv differs"; }
done
check $same "the CSV files live and headless are identical byte for byte"
grep -q ',tied,1,' "$WORK/live/paper_steps.csv" && ! grep -q ',tied,0,' "$WORK/live/paper_steps.csv"
check $? "on_step saw step 1 and no step-0 snapshot"
key :
type_line 'local f = assert(io.open("table.txt", "w")) f:write((ui.results())) f:close()'
key Escape
wait_file "$WORK/live/table.txt" 50 && cmp -s "$WORK/headless/stdout" "$WORK/live/table.txt"
check $? "ui.results() is the headless stdout, table and findings alike"
! grep -qiw 'nan' "$WORK/live/table.txt" &&
  grep -Eq '^  early_l2_dominance +[+-][0-9]+\.[0-9]{3} +- +1  inconclusive$' "$WORK/live/table.txt"
check $? "the headline gradient-ratio finding is a number, and with one seed claims no verdict"
# The status line is the one that starts with the step: the legends name the runs too.
wait_for '^ .*step [0-9]+.*tied_s1.*untied_s1' 50
check $? "the script's runs stay in the lab (status line)"
sleep 0.3   # apart from the Escape, or ESC PgDn reads as Alt+PgDn
key NPage
wait_for 'results, lines ([2-9]|[1-9][0-9]+)-' 30
check $? "PgDn scrolls the results panel"
key PPage
wait_for 'results, lines 1-' 30
check $? "PgUp scrolls it back"
key r
wait_gone 'results, lines' 30
check $? "r hides the results panel"
key r
wait_for 'results, lines 1-' 30
check $? "r shows it again"
key q
wait_for 'Save' 30 && key n

# ---------------------------------------------------------------- on_step output is part of the results
cat >"$WORK/watch.lua" <<'EOF'
local r = lab.run{name = "watch", vocab = 256, dim = 16, layers = 1, heads = 1, ctx = 16, batch = 2}
local h = lab.on_step(function(step) print(string.format("cb %d %.9f", step, r:metrics().loss)) end)
r:step(5)
lab.off(h)
print("done", r:metrics().step)
EOF
(cd "$WORK/headless" && $ENV "$TIELAB" --headless "$WORK/watch.lua" >watch.out 2>&1)
wait_dead 100
start "$WORK/live" "$WORK/watch.lua"
wait_for 'results, lines 1-' 300 && wait_gone ' script *$' 100
key :
type_line 'local f = assert(io.open("watch.txt", "w")) f:write((ui.results())) f:close()'
leave_repl
wait_file "$WORK/live/watch.txt" 50 && cmp -s "$WORK/headless/watch.out" "$WORK/live/watch.txt" &&
  [ "$(grep -c '^cb ' "$WORK/live/watch.txt")" = 5 ]
check $? "on_step callbacks see each step's metrics live as headless, and what they print is in the results"
key q
wait_for 'Save' 30 && key n

# ---------------------------------------------------------------- the speaker's keys
cat >"$WORK/talk.lua" <<'EOF'
local stop = false
lab.bind("x", function() stop = true end, "end the training phase")
local r = lab.run{name = "talk", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}
lab.phase("phase one: waiting")
local pressed = lab.wait_key()
lab.phase("phase two: training (key %s)", tostring(pressed))
while not stop do r:step(2) end
lab.phase("phase three: %d steps", r:metrics().step)
lab.wait_key()
lab.phase("the end")
EOF
wait_dead 100
start "$WORK/live" "$WORK/talk.lua"
wait_for 'phase one: waiting' 300
check $? "lab.phase sets the caption"
sleep 0.5
screen | grep -q 'phase one: waiting' && ! screen | grep -q 'phase two'
check $? "lab.wait_key waits for the speaker"
screen | tail -n 1 | grep -q '^\. next phase  phase one: waiting'
check $? "the hint line says that '.' goes on, before the caption"
key .
wait_for 'phase two: training \(key true\)' 50
check $? "'.' ends lab.wait_key (true) and the next phase's caption shows"
! screen | tail -n 1 | grep -q 'next phase'
check $? "and no longer asks for '.' once the script goes on"
moved_from "$(step_now)"
check $? "the script trains"
key ,
wait_for 'script paused' 30
check $? "',' pauses the script: the status line says so"
s1=$(settled_step 1 30); sleep 1; s2=$(step_now)
[ -n "$s1" ] && [ "$s1" = "$s2" ]
check $? "paused: its steps are held ($s1, $s2)"
key :
type_line 'print(pcall(string.gsub, "a", "a", function() lab.step(1) end))'
wait_for 'scripts are paused' 50
check $? "paused: a step that cannot yield (in a C call) is refused, not left to hang the screen"
leave_repl
key ,
wait_gone 'script paused' 30 && moved_from "$s2"
check $? "',' again resumes it: the step count moves ($s2 to $(step_now))"
key x
wait_for 'phase three: [0-9]+ steps' 50
check $? "the script goes on to its next phase"
key .
wait_for 'the end' 50 && wait_gone ' script *$' 50
check $? "'.' ends the last wait; the last caption stays after the script ends"
[ ! -s "$WORK/status" ] && [ -n "$(tielab_pid)" ]
check $? "the lab still runs"
key q
wait_for 'Save' 30 && key n

finish
