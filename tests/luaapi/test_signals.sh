#!/bin/sh
# test_signals.sh -- signals always win in a headless script. SIGINT,
# SIGTERM and SIGHUP each end a script stuck in catastrophic backtracking,
# in table.move over 2^40 slots and in io.open of a FIFO, with status 130
# and its run saved for --resume, the script going no further; a script
# read from a FIFO nobody writes ends too. Where no interrupt reaches (a
# finaliser, which Lua runs with hooks off) the watchdog saves the run and
# ends tielab, and a second signal ends it at once, saying so; two signals
# during a long step wait for it instead. SIGINT ends lab.run while it
# trains the tokenizer of a large corpus, saying so.
tap_name=signals; . "${srcdir:-.}/tests/lib/tap.sh"
export XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
ms() { date +%s%3N; }

# Start a script in the background ($pid) and wait until it printed
# "ready" (into a fresh file, so that an earlier run's output cannot be
# mistaken); the autosave folder starts empty.
start() {
  rm -rf "$tmp/out" "$tmp/err" "$XDG_STATE_HOME"
  "$tielab" --headless "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  i=0
  while [ $i -lt 200 ] && ! grep -q ready "$tmp/out" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}

# ended [TENTHS]: wait until the script ended (15 s unless said): 'rc' its
# status, 'took' the milliseconds since 't0'. One that will not end is
# killed, and the status says so (137).
ended() {
  i=0
  while kill -0 $pid 2>/dev/null && [ $i -lt "${1:-150}" ]; do sleep 0.1; i=$((i + 1)); done
  kill -KILL $pid 2>/dev/null
  wait $pid
  rc=$?
  took=$(($(ms) - t0))
}

# stop SIG: send SIG to the script and wait for its end.
stop() {
  t0=$(ms)
  kill -"$1" $pid
  ended
}

# The run the script made was saved where --resume looks, with its manifest.
saved() { ls "$XDG_STATE_HOME"/tielab/autosave/*/run1-*.safetensors "$XDG_STATE_HOME"/tielab/autosave/*/manifest >/dev/null 2>&1; }
went_on() { grep -q "went on" "$tmp/out"; }

# stuck_script WHAT: a script that makes a run, says ready, then does WHAT.
stuck_script() {
  cat >"$tmp/stuck.lua" <<LUA
local r = lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}
r:step(2)
print("ready") io.stdout:flush()
$1
print("went on")
LUA
}

# ---------------------------------------------------------------- stuck in a C call
mkfifo "$tmp/fifo" || bail_out "cannot make a FIFO in $tmp"
for what in "catastrophic backtracking|string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b')" \
  "table.move over 2^40 slots|table.move({}, 1, 2^40, 2)" \
  "io.open of a FIFO nobody writes|local f = assert(io.open('$tmp/fifo'))"; do
  stuck_script "${what#*|}"
  for sig in INT TERM HUP; do
    start "$tmp/stuck.lua"
    stop $sig
    ok $((rc != 130 || took > 10000)) "${what%%|*}: SIG$sig ends the script with status 130 within 10 s (status $rc, $took ms)"
    saved && ! went_on
    ok $? "${what%%|*}: SIG$sig: the run is saved for --resume, the script went no further ($(tr '\n' ' ' <"$tmp/err"))"
  done
done

# A script that is a FIFO: read once a writer wrote, and until then
# Ctrl-C ends the wait.
rm -rf "$tmp/out" "$tmp/err"
"$tielab" --headless "$tmp/fifo" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 0.5
stop INT
ok $((rc != 130)) "a script read from a FIFO nobody writes: SIGINT ends the wait, status 130 (status $rc)"
grep -q "interrupted while waiting for a writer" "$tmp/err"
ok $? "and says so ($(tr '\n' ' ' <"$tmp/err"))"
"$tielab" --headless "$tmp/fifo" >"$tmp/out" 2>"$tmp/err" &
pid=$!
echo 'print("read from the FIFO")' >"$tmp/fifo"
t0=$(ms)
ended
[ $rc = 0 ] && grep -q "read from the FIFO" "$tmp/out"
ok $? "once a writer writes the script runs (status $rc)"

# ---------------------------------------------------------------- where no interrupt reaches
# Lua runs a finaliser with its hooks off: a loop there hears no interrupt.
finaliser_loop='setmetatable({}, {__gc = function() while true do end end}) collectgarbage()'
stuck_script "$finaliser_loop"
start "$tmp/stuck.lua"
stop TERM
ok $((rc != 130)) "a finaliser that loops: SIGTERM ends tielab all the same, status 130 (status $rc, $took ms)"
saved && ! went_on && grep -q "did not end within 3 s; saved in " "$tmp/err"
ok $? "the watchdog saved the run and said why ($(tr '\n' ' ' <"$tmp/err"))"

start "$tmp/stuck.lua"
t0=$(ms)
kill -INT $pid
sleep 0.3
kill -INT $pid
ended
ok $((rc != 130)) "a second SIGINT ends it, status 130 (status $rc, $took ms)"
saved && grep -q "interrupted again; saved in " "$tmp/err"
ok $? "the second signal is what ended it, the run saved ($(tr '\n' ' ' <"$tmp/err"))"

# The script stops at once, but as the state closes a finaliser loops.
stuck_script "local keep = setmetatable({}, {__gc = function() while true do end end})
while true do end"
start "$tmp/stuck.lua"
stop INT
ok $((rc != 130)) "SIGINT and then a finaliser that loops as the state closes: tielab ends, status 130 (status $rc)"
saved
ok $? "the run is saved"

# ---------------------------------------------------------------- a command
# system(3) ignores SIGINT while its command runs: tielab's os.execute
# keeps hearing it, ends the command and stops the script; its answers are
# Lua's.
cat >"$tmp/exec.lua" <<'LUA'
local a = {os.execute("exit 3")}
local b = {os.execute("kill -9 $$")}
local c = {os.execute("true")}
print(table.concat({tostring(a[1]), a[2], a[3], tostring(b[1]), b[2], b[3], tostring(c[1]), c[2], c[3],
  tostring(os.execute())}, " "))
LUA
"$tielab" --headless "$tmp/exec.lua" >"$tmp/out" 2>&1
grep -qx "nil exit 3 nil signal 9 true exit 0 true" "$tmp/out"
ok $? "os.execute answers as Lua's: status, signal, success, a shell ($(cat "$tmp/out"))"
stuck_script 'os.execute("sleep 60")'
start "$tmp/stuck.lua"
stop INT
ok $((rc != 130 || took > 2000)) "SIGINT during os.execute ends the command and the script, status 130 (status $rc, $took ms)"
saved && ! went_on && grep -q "stuck.lua:4: interrupted; saved in " "$tmp/err"
ok $? "the script stopped where it was, its run saved ($(tr '\n' ' ' <"$tmp/err"))"

stuck_script 'os.execute([[trap "" TERM; while :; do :; done]])'
start "$tmp/stuck.lua"
stop INT
ok $((rc != 130 || took > 4000)) "a command that ignores SIGTERM is killed a second later, status 130 (status $rc, $took ms)"

# ---------------------------------------------------------------- a long step
# Two Ctrl-Cs while a step takes seconds (one thread, a model of 7M
# parameters): the step is waited for, not cut short by the watchdog's
# deadline, then the script stops as usual, its run saved.
cat >"$tmp/long.lua" <<'LUA'
local r = lab.run{vocab = 512, dim = 256, layers = 8, heads = 4, ctx = 256, batch = 16, threads = 1}
local c = os.clock()
r:step(1)
print(string.format("ready: a step takes %.1f s", os.clock() - c)) io.stdout:flush()
r:step(3)
print("went on")
LUA
start "$tmp/long.lua"
i=0
while [ $i -lt 600 ] && ! grep -q ready "$tmp/out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
t0=$(ms)
kill -INT $pid
sleep 0.3
kill -INT $pid
ended 900
# The step must outlast the 1 s the second signal leaves, or nothing waited.
step_ms=$(sed -n 's/^ready: a step takes \([0-9]*\)\.\([0-9]\) s$/\1\200/p' "$tmp/out")
if [ "${step_ms:-0}" -ge 1500 ]; then
  ok $((rc != 130)) "two SIGINTs during a long step: status 130 (status $rc, $took ms; a step takes $step_ms ms)"
  saved && ! went_on && grep -q "long.lua:5: interrupted; saved in " "$tmp/err" && grep -q "waiting for the step or save in progress" "$tmp/err"
  ok $? "the step ended, the script stopped as usual and its run is saved ($(tr '\n' ' ' <"$tmp/err"))"
else
  skip "a step takes ${step_ms:-an unknown number of} ms here, too short to outlast the watchdog's deadline" 2
fi

# ---------------------------------------------------------------- the tokenizer
# 8 MB of random words: a tokenizer of 8192 ids takes seconds to learn
# them (the cache is this test's own, and the words new each time); the
# script learns one tokenizer after another, so that the signal always
# finds one learning.
awk -v seed=$$ 'BEGIN { srand(seed); for (i = 0; i < 100000; i++) { line = ""
  for (w = 0; w < 10; w++) { n = 3 + int(rand() * 10); word = ""
    for (k = 0; k < n; k++) word = word sprintf("%c", 97 + int(rand() * 26)); line = line word " " }
  print line } }' >"$tmp/big.txt"
cat >"$tmp/bpe.lua" <<LUA
print("ready") io.stdout:flush()
for vocab = 8192, 8292 do
  lab.run{name = "v" .. vocab, vocab = vocab, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2, corpus = "$tmp/big.txt"}
end
print("went on")
LUA
start "$tmp/bpe.lua"
sleep 1
stop INT
ok $((rc != 130 || took > 3000)) "SIGINT while lab.run trains a tokenizer ends the script within 3 s (status $rc, $took ms)"
grep -q 'tokenizer: interrupted while' "$tmp/err" && ! went_on
ok $? "it says the tokenizer was interrupted, and the script did not go on ($(tr '\n' ' ' <"$tmp/err"))"

tap_done
