#!/bin/sh
# test_journal.sh -- tielab --journal FILE and tielab --replay FILE. A
# lab in a private tmux server's pane trains, presses + and t at some
# steps, changes a run from the REPL and quits without saving; replaying
# its journal headless must end with the same final figures bit for bit.
# The same journal with an entry moved to another step must be reported as
# a mismatch, and one whose steps cannot be reached as a divergence (exit 1
# both). A second lab runs a script and presses + while it trains: the
# replay runs the script inline and applies the key at its step. A third
# script branches on lab.wait_key: '.' pressed, the answer flipped in the
# journal, answers that do not match the waits, a wait that times out, and
# a journal of another version. Every wait polls the screen up to a
# deadline. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=journal; . "$top_srcdir/tests/lib/tmux.sh"

# start ARGS...: a new tielab in the pane, working in the work folder (the
# journals and scripts are named from there).
start() { in_pane "clear; cd '$WORK'; $ENV $TIELAB $*"; }
# wait_steps N: until the status line's step is past N.
wait_steps() { wait_step $(($1 + 1)); }
# replay FILE [OPTIONS]: sandboxed, in the work folder (where the lab ran).
# trusted FILE: --trust from another folder: the replay enters the
# recorded lab's own.
replay_in() { (cd "$1" && shift && env OPENBLAS_NUM_THREADS=1 XDG_CACHE_HOME=${XDG_CACHE_HOME:-$WORK/cache} "$TIELAB" --replay "$@") >"$WORK/out" 2>&1; }
replay() { replay_in "$WORK" "$@"; }
trusted() { replay_in / "$1" --trust; }
show_out() { sed 's/^/#   /' "$WORK/out"; }

session 80 24

# ---------------------------------------------------------------- keys and a REPL line
start --journal j.jsonl "$MODEL"
wait_steps 20
check $? "the lab trains while it keeps a journal"
key +
wait_for '●tied tied in×2' 50
check $? "+ doubles the selected run's in_scale"
s=$(step_now)
wait_steps $((s + 20))
key t
wait_for '●tied untied in×2' 50
check $? "t unties the selected run"
s=$(step_now)
wait_steps $((s + 20))
key :
type_line 'lab.runs[2]:set{lr=2e-3}'
wait_for '> lab.runs\[2\]:set' 50
check $? "a REPL line changes the untied run"
s=$(step_now)
wait_steps $((s + 20))
type_line 'lab.run{name = "third", tie = "untied", seed = 7}'
wait_for 'third' 50
check $? "a REPL line adds a third run, which trains with the others from step 0"
s=$(step_now)
wait_steps $((s + 20))
# The + key's function typed, for another run: the same route as the key,
# and the replay takes it as it takes the key.
type_line "ui.in_scale('up', 'third')"
wait_for 'third: in_scale 2 \(\+ - step, 0 resets\)' 50
check $? "ui.in_scale typed in the REPL steps the third run as + does, with the key's line"
s=$(step_now)
wait_steps $((s + 20))
type_line 'for _, r in ipairs(lab.runs) do'
wait_for '^>> ' 50
s=$(step_now)
wait_steps $((s + 20))
type_line 'r:set{out_scale = 0.5} end'
wait_for '>> r:set\{out_scale = 0.5\} end' 50
check $? "an entry of two lines halves every run's out_scale"
s=$(step_now)
wait_steps $((s + 20))
# A step that cannot yield (inside string.gsub) while the journal holds the
# lab for the line: refused, and the screen goes on.
type_line 'print(pcall(string.gsub, "a", "a", function() lab.runs[1]:step(1) end))'
wait_for 'journal holds the lab' 50
check $? "a step that cannot yield during a journaled line is refused with a clear error"
s=$(step_now)
wait_steps $((s + 20))
check $? "the lab goes on training: the screen does not freeze"
type_line 'ui.quit(false)'
wait_dead 100 && [ "$(cat "$WORK/status")" = 0 ]
check $? "the lab quits without saving"

J=$WORK/j.jsonl
head -n 1 "$J" | grep -q '"journal":1,.*"argv":\[.*"--journal","j.jsonl".*"runs":\[{"name":"tied","step":0,"options":{'
check $? "the header holds the command line and every run's options"
grep -q '"kind":"key","step":[0-9]*,"runs":\[\["tied",[0-9]*\],\["untied",[0-9]*\]\],"sel":"tied","lua":"ui\.\(scale(.in_scale., 2)\|in_scale(.up.)\)"' "$J" &&
  grep -q '"lua":"ui.cycle_tie()"' "$J" && grep -q '"kind":"line",.*"lua":"lab.runs\[2\]:set{lr=2e-3}"' "$J" &&
  grep -q '"lua":"for _, r in ipairs(lab.runs) do\\nr:set{out_scale = 0.5} end"' "$J" &&
  grep -q '"kind":"line",.*"lua":"ui.in_scale(.up., .third.)"' "$J"
check $? "the keys and the REPL line are journaled with every run's step and the selected run"
tail -n 1 "$J" | grep -q '^{"end":true,.*"loss":"-\{0,1\}0x[0-9a-f.]*p[-+][0-9]*",.*"weights":"'
check $? "the final record holds each run's figures as hex floats"

replay "$J"
rc=$?
[ $rc -eq 0 ] && grep -q '^replay: metrics match bit for bit' "$WORK/out" && grep -q '^tied: step [1-9]' "$WORK/out" &&
  grep -q '^untied: step [1-9]' "$WORK/out" && grep -q '^third: step [1-9]' "$WORK/out"
check $? "tielab --replay plays the recorded lab again: the metrics match bit for bit (exit $rc)"
[ $rc -eq 0 ] || show_out
grep -q "^replay: sandboxed in $WORK (not the recorded folder $WORK): --trust replays as recorded\$" "$WORK/out"
check $? "by default the replay says it runs the journal sandboxed, in the current folder"
trusted "$J"
rc=$?
[ $rc -eq 0 ] && grep -q "^replay: trusted, in the recorded folder $WORK\$" "$WORK/out" &&
  grep -q '^replay: metrics match bit for bit' "$WORK/out"
check $? "--trust from another folder replays in the recorded folder and matches (exit $rc)"
[ $rc -eq 0 ] || show_out

# A journal from someone else: a REPL line that runs a shell command, a
# key whose Lua is no key of the lab, a recorded folder of /.
mkdir -p "$WORK/elsewhere"
sed '1s/"cwd":"[^"]*"/"cwd":"\/"/' "$J" |
  sed 's/"lua":"lab.runs\[2\]:set{lr=2e-3}"/"lua":"os.execute([[touch pwned]]) io.open([[\/tmp\/pwned-tielab]], [[w]])"/' \
  >"$WORK/hostile.jsonl"
grep -q 'os.execute' "$WORK/hostile.jsonl" && grep -q '"cwd":"/"' "$WORK/hostile.jsonl"
check $? "a hostile journal: a line entry runs os.execute, its folder is /"
rm -f /tmp/pwned-tielab
replay_in "$WORK/elsewhere" "$WORK/hostile.jsonl"
rc=$?
[ ! -e "$WORK/elsewhere/pwned" ] && [ ! -e /pwned ] && [ ! -e /tmp/pwned-tielab ] &&
  grep -q "^replay: sandboxed in $WORK/elsewhere (not the recorded folder /)" "$WORK/out" &&
  grep -q "os.execute.*nil\|attempt to call" "$WORK/out"
check $? "its replay stays in the current folder, sandboxed: the command does not run, and it says why (exit $rc)"
grep -q "sandboxed in $WORK/elsewhere" "$WORK/out" || show_out
line=$(grep -n '"lua":"ui.cycle_tie()"' "$J" | head -n 1 | cut -d: -f1)
sed "${line}s/\"lua\":\"ui.cycle_tie()\"/\"lua\":\"ui.cycle_tie() io.open([[pwned]], [[w]])\"/" "$J" >"$WORK/elsewhere/key.jsonl"
replay_in "$WORK/elsewhere" key.jsonl
rc=$?
[ $rc -eq 1 ] && [ ! -e "$WORK/elsewhere/pwned" ] &&
  grep -q "^replay refused entry $((line - 2)) (line $line): a key entry whose Lua is no key of the lab: ui.cycle_tie() io.open" "$WORK/out"
check $? "a key entry whose Lua is no key of the lab is refused, not run (exit $rc)"
grep -q "replay refused entry" "$WORK/out" || show_out
replay_in "$WORK/elsewhere" key.jsonl --trust
rc=$?
[ $rc -eq 1 ] && [ ! -e "$WORK/elsewhere/pwned" ] && [ ! -e "$WORK/pwned" ] && grep -q "a key entry whose Lua is no key of the lab" "$WORK/out"
check $? "even with --trust (exit $rc)"

# The + entry moved 5 steps earlier: the same actions at another step.
line=$(grep -n '"lua":"ui\.\(scale\|in_scale\)(' "$J" | head -n 1 | cut -d: -f1)
plus=$(sed -n "${line}s/.*\"step\":\([0-9]*\),.*/\1/p" "$J")
sed "${line}s/\([[,:]\)$plus\([],]\)/\1$((plus - 5))\2/g" "$J" >"$WORK/moved.jsonl"
! cmp -s "$J" "$WORK/moved.jsonl" && grep -q "\"step\":$((plus - 5))," "$WORK/moved.jsonl"
check $? "a tampered journal: the + entry moved from step $plus to $((plus - 5))"
replay "$WORK/moved.jsonl"
rc=$?
[ $rc -eq 1 ] && grep -q '^replay: metrics differ' "$WORK/out" && grep -q 'differs: .*loss' "$WORK/out"
check $? "its replay reports the figures that differ, exit 1 (exit $rc)"
[ $rc -eq 1 ] || show_out

# The REPL line's entry recorded before the t key's: steps that go back.
line=$(grep -n '"kind":"line"' "$J" | head -n 1 | cut -d: -f1)
sed "${line}s/\"runs\":\[\[\"tied\",[0-9]*\]/\"runs\":[[\"tied\",1]/" "$J" >"$WORK/back.jsonl"
replay "$WORK/back.jsonl"
rc=$?
[ $rc -eq 1 ] && grep -q "^replay diverged at entry $((line - 2)) (line $line): run tied at step [0-9]*, recorded 1\$" "$WORK/out"
check $? "steps that cannot be reached: the replay says where it diverged, exit 1 (exit $rc)"
[ $rc -eq 1 ] || show_out

# Runs that started from checkpoints (--resume), and a file that is no journal.
sed '1s/"step":0,"options"/"step":5,"options"/' "$J" >"$WORK/resumed.jsonl"
replay "$WORK/resumed.jsonl"
rc=$?
[ $rc -eq 1 ] && grep -q 'run tied started at step 5 (a checkpoint): it cannot be replayed' "$WORK/out"
check $? "a lab of checkpointed runs is refused, exit 1 (exit $rc)"
echo 'not a journal' >"$WORK/bad.jsonl"
replay "$WORK/bad.jsonl"
rc=$?
[ $rc -eq 1 ] && grep -q "^tielab: $WORK/bad.jsonl:1: " "$WORK/out"
check $? "a file that is no journal is refused with its line, exit 1 (exit $rc)"
{ head -n 1 "$J" | sed 's/"runs":\[.*\]}$/"runs":[]}/'; echo '{"end":true,"step":0,"runs":[]}'; } >"$WORK/none.jsonl"
replay "$WORK/none.jsonl"
rc=$?
[ $rc -eq 1 ] && grep -q '^replay: nothing to compare: the lab ended with no runs (0 entries replayed)$' "$WORK/out" &&
  ! grep -q 'match' "$WORK/out"
check $? "a lab that ended with no runs: nothing to compare, exit 1 (exit $rc)"
[ $rc -eq 1 ] || show_out

# ---------------------------------------------------------------- bytes that are not UTF-8
# A folder named with the byte 0xff and a REPL line with one: kept
# losslessly (as hex), and replayed.
D="$WORK/$(printf 'd\377')"
mkdir -p "$D"
in_pane "clear; cd '$D'; $ENV $TIELAB --journal '$WORK/u.jsonl' $MODEL"
wait_steps 10
key :
type_line 'print("running", ui.running())'
wait_for '^running[[:space:]]*true' 50
check $? "the lab trains from the start: ui.running() is true"
type_line "$(printf 'lab.runs[1]:set{lr = 3e-3} -- \377')"
wait_for '> lab.runs\[1\]:set' 50
s=$(step_now)
wait_steps $((s + 10))
# paused, n and + at once: + may come before n's step is taken
type_line 'ui.running(false)'
wait_for 'PAUSED step' 50
key Escape
wait_for ': or Enter to type Lua' 50   # else the Esc and the n are read together as Alt+n
key n +
wait_for '●tied tied in×2' 50
check $? "n and + pressed at once while paused"
key :
type_line 'ui.quit(false)'
wait_dead 100 && [ "$(cat "$WORK/status")" = 0 ]
check $? "a lab in a folder named with the byte 0xff keeps a journal and quits"
head -n 1 "$WORK/u.jsonl" | grep -q '"cwd":{"hex":"[0-9a-f]*64ff"}' &&
  grep -q '"kind":"line",.*"lua":{"hex":"[0-9a-f]*ff"}' "$WORK/u.jsonl"
check $? "the folder and the REPL line are journaled byte for byte, as hex"
trusted "$WORK/u.jsonl"
rc=$?
[ $rc -eq 0 ] && grep -q "^replay: trusted, in the recorded folder $D\$" "$WORK/out" &&
  grep -q '^replay: metrics match bit for bit' "$WORK/out" && grep -q '^running[[:space:]]*true' "$WORK/out"
check $? "its replay enters the folder, runs the lines (ui.running() true), applies n and + and matches bit for bit (exit $rc)"
[ $rc -eq 0 ] || show_out

# ---------------------------------------------------------------- a script
cat >"$WORK/train.lua" <<'EOF'
local a = lab.run{name = "a", vocab = 256, dim = 16, layers = 1, heads = 1, ctx = 16, batch = 2, seed = 3}
for i = 1, 300 do a:step(2) end
print("trained", a:metrics().step)
EOF
start --journal s.jsonl train.lua
wait_steps 40
key +
wait_for '●a tied in×2' 50
check $? "+ while a script trains"
wait_for 'trained 600' 600
key :
type_line 'ui.quit(false)'
wait_dead 100
check $? "the script ends and the lab quits"
grep -q '"kind":"script",.*"path":"train.lua","args":\[\],"size":[0-9]*,"fnv1a64":"[0-9a-f]\{16\}"' "$WORK/s.jsonl"
check $? "the script's start is journaled with its size and hash"
replay "$WORK/s.jsonl"
rc=$?
[ $rc -eq 0 ] && grep -q '^trained[[:space:]]*600' "$WORK/out" && grep -q '^replay: metrics match bit for bit' "$WORK/out"
check $? "its replay runs the script inline, applies + at its step, and matches bit for bit (exit $rc)"
[ $rc -eq 0 ] || show_out
echo '-- changed' >>"$WORK/train.lua"
replay "$WORK/s.jsonl"
rc=$?
[ $rc -eq 1 ] && grep -q 'train.lua changed since it was recorded' "$WORK/out"
check $? "a script changed since it was recorded is refused (exit $rc)"

# A lab that ends while its script still trains.
cat >"$WORK/long.lua" <<'EOF'
local a = lab.run{name = "a", vocab = 256, dim = 16, layers = 1, heads = 1, ctx = 16, batch = 2, seed = 4}
for i = 1, 1000000 do a:step(1) end
EOF
start --journal l.jsonl long.lua
wait_steps 50
key :
type_line 'ui.quit(false)'
wait_dead 100
check $? "the lab quits while its script trains"
replay "$WORK/l.jsonl"
rc=$?
[ $rc -eq 0 ] && grep -q 'the lab ended while a script trained' "$WORK/out" &&
  grep -q '^replay: metrics match bit for bit' "$WORK/out"
check $? "its replay stops the script at the final steps and matches bit for bit (exit $rc)"
[ $rc -eq 0 ] || show_out

# ---------------------------------------------------------------- lab.wait_key's answers
# A script whose path turns on the speaker: '.' during its wait sets
# in_scale, a wait that times out does not; its binding x, which cannot
# wait (false at once), sets lr. Every answer is journaled, and the replay
# hands the recorded ones to the script's lab.wait_key calls in order.
cat >"$WORK/wait.lua" <<'EOF2'
local a = lab.run{name = "a", vocab = 256, dim = 16, layers = 1, heads = 1, ctx = 16, batch = 2, seed = 5}
lab.bind("x", function() if not lab.wait_key(5) then a:set{lr = 2e-3} end print("bound", a:options().lr) end, "x")
a:step(20)
lab.phase("waiting for the speaker")
local pressed = lab.wait_key(tonumber(arg[1]))
if pressed then a:set{in_scale = 5} end
a:step(20)
print("answer", pressed, a:metrics().step, a:options().in_scale)
EOF2
start --journal w.jsonl wait.lua 600
wait_for 'waiting for the speaker' 300
key x
wait_for '^bound[[:space:]]*0.002' 100
key .
wait_for '^answer[[:space:]]*true[[:space:]]*40[[:space:]]*5' 300
live=$?
key :
type_line 'ui.quit(false)'
wait_dead 100
W=$WORK/w.jsonl
[ $live -eq 0 ] && grep -q '"kind":"wait","step":20,"runs":\[\["a",20\]\],"sel":"[a-z]*","answer":true}$' "$W"
check $? "'.' ends the script's lab.wait_key (true, in_scale set): the answer is journaled with every run's step where the wait ended"
grep -A 1 '"kind":"binding","step":20,' "$W" | grep -q '"kind":"wait","step":20,.*"answer":false}$'
check $? "the binding's answer (false at once: it cannot wait) is journaled right after the binding's entry"
replay "$W"
rc=$?
[ $rc -eq 0 ] && grep -q '^bound[[:space:]]*0.002' "$WORK/out" && grep -q '^answer[[:space:]]*true[[:space:]]*40[[:space:]]*5' "$WORK/out" &&
  grep -q '^replay: metrics match bit for bit' "$WORK/out" && ! grep -q 'was recorded by tielab' "$WORK/out"
check $? "its replay takes the recorded answers, the same branches, and matches bit for bit (exit $rc)"
[ $rc -eq 0 ] || show_out
sed 's/"answer":true}$/"answer":false}/' "$W" >"$WORK/flipped.jsonl"
rc=unflipped
grep -q '"kind":"wait",.*"answer":false}$' "$WORK/flipped.jsonl" && { replay "$WORK/flipped.jsonl"; rc=$?; }
[ "$rc" = 1 ] && grep -q '^answer[[:space:]]*false' "$WORK/out" && grep -q '^replay: metrics differ' "$WORK/out"
check $? "the same journal with the answer flipped takes the other branch: a mismatch (exit $rc)"
[ "$rc" = 1 ] || show_out

# The answers and the script's waits that do not agree: diverged, at the entry.
# diverges FILE PATTERN WHAT: its replay ends with a divergence matching PATTERN, exit 1.
diverges() {
  replay "$1"
  rc=$?
  [ $rc -eq 1 ] && grep -q "$2" "$WORK/out"
  check $? "$3 (exit $rc)"
  grep -q "$2" "$WORK/out" || show_out
}
line=$(grep -n '"kind":"wait",.*"answer":true}$' "$W" | cut -d: -f1)
sed "${line}d" "$W" >"$WORK/nowait.jsonl"
diverges "$WORK/nowait.jsonl" \
  "^replay diverged at entry $((line - 2)) (line $line): the script asks lab.wait_key at step 20, where the journal has no answer: its next entry is a " \
  "a script that asks a wait the journal has no answer for diverges, at that entry"
sed "${line}p" "$W" >"$WORK/twowaits.jsonl"
diverges "$WORK/twowaits.jsonl" \
  "^replay diverged at entry $((line - 1)) (line $((line + 1))): the recorded answer of lab.wait_key (true, at step 20) was never asked for: run a at step 21, recorded 20\$" \
  "an answer the script never asks for diverges, at its entry"
sed "${line}s/\([[,:]\)20\([],]\)/\125\2/g" "$W" >"$WORK/later.jsonl"
diverges "$WORK/later.jsonl" \
  "^replay diverged at entry $((line - 2)) (line $line): the script asks lab.wait_key at step 20, its recorded answer (true) came at step 25, and the lab was not training\$" \
  "a wait asked at other steps than recorded diverges, at its entry"

# A journal of another version: a warning, and the figures decide.
sed '1s/"tielab":"[^"]*"/"tielab":"0.0.1-old"/' "$W" >"$WORK/old.jsonl"
replay "$WORK/old.jsonl"
rc=$?
[ $rc -eq 0 ] && grep -q "^replay: warning: $WORK/old.jsonl was recorded by tielab 0.0.1-old, this is tielab [^ ]*: settings' defaults or presets (recipe=olmo, ...) may have changed\$" "$WORK/out" &&
  grep -q '^replay: metrics match bit for bit' "$WORK/out"
check $? "a journal of another tielab replays with a warning naming its version, and the figures decide (exit $rc)"
[ $rc -eq 0 ] || show_out

# No key: the wait times out (false), is journaled so, and replays.
start --journal t.jsonl wait.lua 1
wait_for '^answer[[:space:]]*false[[:space:]]*40[[:space:]]*1' 300
live=$?
key :
type_line 'ui.quit(false)'
wait_dead 100
[ $live -eq 0 ] && grep -q '"kind":"wait","step":20,"runs":\[\["a",20\]\],"sel":"[a-z]*","answer":false}$' "$WORK/t.jsonl"
journaled=$?
check $journaled "with no key the wait times out (false, in_scale kept), and the answer is journaled so"
rc=unjournaled
[ $journaled -eq 0 ] && { replay "$WORK/t.jsonl"; rc=$?; }
[ "$rc" = 0 ] && grep -q '^answer[[:space:]]*false[[:space:]]*40[[:space:]]*1' "$WORK/out" &&
  grep -q '^replay: metrics match bit for bit' "$WORK/out"
check $? "its replay takes the recorded answer and matches bit for bit (exit $rc)"
[ "$rc" = 0 ] || show_out

finish
