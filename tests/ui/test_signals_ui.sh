#!/bin/sh
# test_signals_ui.sh -- signals always win in the lab (a tmux pane, as
# tests/lib/tmux.sh drives it). Ctrl-C stops a script stuck in catastrophic
# backtracking, in table.move over 2^40 slots or in io.open of a FIFO, and
# the lab goes on; 'tmux kill-session' (a hangup) then ends a lab whose REPL
# entry is stuck, its run saved. Where no interrupt reaches (a finaliser,
# which Lua runs with hooks off), one Ctrl-C leaves the lab be, a second
# ends it with status 130, its run saved and the terminal (its modes,
# stderr) given back; a hangup ends such a lab too, and so does SIGTERM
# when the finaliser loops only as the lab closes, after its save. Each wait polls up to
# a deadline. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=signals_ui; . "$top_srcdir/tests/lib/tmux.sh"

RUN='lab.run{name = "a", vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}'
EXTRA="XDG_STATE_HOME=$WORK/state"

# While a script is in a long C call the screen stands still (the UI
# thread runs it): a script says it got there in a file, $WORK/ready.
READY="io.open('$WORK/ready', 'w'):write('x'):close()"
# script FILE WHAT: a script that makes run "a", says so, then does WHAT.
script() {
  printf '%s\n%s\n%s\nprint("went " .. "on")\n' "$RUN" "$READY" "$2" >"$1"
}
# start_stuck ARGS...: tielab started, once its script got to where it is stuck.
start_stuck() {
  rm -f "$WORK/ready"
  start "$@"
  wait_file "$WORK/ready" 300
}
# Run "a" was saved in the autosave folder (which 'fresh' empties).
fresh() { rm -rf "$WORK/state"; }
saved() { ls "$WORK"/state/tielab/autosave/*/a-[0-9]*.safetensors >/dev/null 2>&1; }
# gone PID [TENTHS]: until process PID has ended (15 s unless said).
gone() {
  i=0
  while kill -0 "$1" 2>/dev/null && [ $i -lt "${2:-150}" ]; do sleep 0.1; i=$((i + 1)); done
  ! kill -0 "$1" 2>/dev/null
}

# ---------------------------------------------------------------- Ctrl-C stops the script
session 100 30
mkfifo "$WORK/fifo" || bail_out "cannot make a FIFO in $WORK"
for what in "catastrophic backtracking|string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b')" \
  "table.move over 2^40 slots|table.move({}, 1, 2^40, 2)" \
  "io.open of a FIFO nobody writes|local f = assert(io.open('$WORK/fifo'))"; do
  script "$WORK/stuck.lua" "${what#*|}"
  start_stuck "$WORK/stuck.lua"
  sleep 0.3
  key C-c
  wait_for 'stuck\.lua:3: .*(interrupted|Interrupted)' 100 && ! screen | grep -q '^went on' &&
    [ ! -e "$WORK/status" ] && [ -n "$(tielab_pid)" ]
  check $? "${what%%|*}: Ctrl-C stops the script, the lab goes on"
  key q
  wait_for 'Save [0-9]+ run' 30 && key n
  wait_dead 100
done

# ---------------------------------------------------------------- a hangup
fresh
start "$MODEL"
wait_for 'RUNNING step [1-9]' 300
rm -f "$WORK/ready"
key :
type_line "$RUN $READY table.move({}, 1, 2^40, 2) print('went ' .. 'on')"
wait_file "$WORK/ready" 100
lab=$(tielab_pid)
$T kill-session -t t
gone "$lab"
check $? "tmux kill-session ends a lab whose REPL entry is stuck in table.move"
saved && ls "$WORK"/state/tielab/autosave/*/tied-[0-9]*.safetensors >/dev/null 2>&1
check $? "its runs are saved, the one the entry made among them"

# ---------------------------------------------------------------- where no interrupt reaches
# A REPL entry whose finaliser loops, in a lab on the screen; the pane
# keeps the terminal's modes as tielab left them, in stty.after.
finaliser_loop='setmetatable({}, {__gc = function() while true do end end}) collectgarbage()'
$T kill-server 2>/dev/null
session 100 30
fresh
rm -f "$WORK/ready"
in_pane "clear; $ENV $EXTRA $TIELAB $MODEL; s=\$?; stty -a >'$WORK/stty.after'; (exit \$s)"
wait_for 'RUNNING step [1-9]' 300
key :
type_line "$RUN $READY $finaliser_loop"
wait_file "$WORK/ready" 100
sleep 0.3
key C-c
sleep 4   # past the watchdog's 3 s: a lone Ctrl-C sets no deadline
[ ! -e "$WORK/status" ] && [ -n "$(tielab_pid)" ]
check $? "a finaliser that loops: one Ctrl-C leaves the lab be"
key C-c
wait_dead 150 && [ "$(status)" = 130 ]
check $? "a second Ctrl-C ends the lab, status 130 ($(status))"
saved
check $? "its run is saved"
wait_for 'interrupted again; saved in ' 30
check $? "the pane says why: stderr, which a file holds under the screen, is given back"
grep -q ' icanon ' "$WORK/stty.after" && grep -q ' echo ' "$WORK/stty.after"
check $? "and so are the terminal's modes (canonical input, echo)"

# SIGTERM to a lab whose REPL left a finaliser that loops: the lab saves
# its runs and ends, hangs as Lua closes, and the watchdog ends it with the
# lab's own status, saving nothing again.
$T kill-server 2>/dev/null
session 100 30
fresh
start "$MODEL"
wait_for 'RUNNING step [1-9]' 300
key :
type_line "keep = setmetatable({}, {__gc = function() while true do end end})"
sleep 0.5
lab=$(tielab_pid)
kill -TERM "$lab"
gone "$lab" && wait_dead 50 && [ "$(status)" = 130 ]
check $? "SIGTERM, then a finaliser that loops as Lua closes: the lab ends all the same, status 130 ($(status))"
saved_once() { [ "$(ls "$WORK"/state/tielab/autosave/*/tied-[0-9]*.safetensors 2>/dev/null | wc -l)" = 1 ]; }
saved_once && wait_for 'the runs were saved; ended as tielab did not end within 3 s' 30
check $? "its runs were saved once, by the lab, and the pane says why it ended"

# A script whose finaliser loops, ended by a hangup.
script "$WORK/gc.lua" "$finaliser_loop"
$T kill-server 2>/dev/null
session 100 30
fresh
start_stuck "$WORK/gc.lua"
lab=$(tielab_pid)
$T kill-session -t t
gone "$lab"
check $? "a finaliser that loops: tmux kill-session ends the lab all the same"
saved
check $? "its run is saved"

finish
