#!/bin/sh
# test_ui.sh -- the interactive lab in a real terminal, the way tmux's own
# regress tests drive tmux: a private server (-L), no configuration file, an
# 80x24 pane running tielab with a tiny model; keys go in with send-keys and
# every step is checked on capture-pane's text. Each wait polls the screen
# until a pattern shows or a deadline passes; nothing sleeps and hopes.
# Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=ui; . "$top_srcdir/tests/lib/tmux.sh"

session 80 24

# ---------------------------------------------------------------- training
start "$MODEL"
wait_for 'RUNNING step [1-9]' 300
check $? "training starts: the status line says RUNNING and counts steps"
screen | grep -q 'tied tied in×1' && screen | grep -q 'untied untied in×1'
check $? "a tied and an untied run side by side, scales at 1"
wait_for '^╭ loss .*tied' 20 && wait_for 'grad out/in' 20 && wait_for 'lens KL bits' 50
check $? "loss, gradient ratio and lens panels are drawn"
colors() { $T capture-pane -e -p -t t | grep -Ec "$(printf '\033')\\[(3[0-7]|9[0-7]|38;5;[0-9]+)m"; }
[ "$(colors)" -gt 0 ]
check $? "series are coloured from the terminal's palette"

key Space
wait_for 'PAUSED step' 30
check $? "space pauses"
s1=$(settled_step); sleep 0.4; s2=$(step_now)
[ -n "$s1" ] && [ "$s1" = "$s2" ]
check $? "paused: the step count stands still ($s1, $s2)"

key t
wait_for '●tied untied in×1' 30
check $? "t: the selected run's tie turns untied on the status line"
key +
wait_for '●tied untied in×2' 30
check $? "+: the selected run's in_scale doubles"
key Tab
wait_for '●untied untied' 30
check $? "tab selects the next run"
key '?'
wait_for 'tielab keys' 30 && screen | grep -q 'ui.toggle()'
check $? "? shows the help with each key's Lua call"
key '?'
wait_gone 'tielab keys' 30
check $? "? again closes the help"
key s
wait_for 'untied: norm vs ln count @[1-9][0-9]* .*E_in r ' 30 && screen | grep -q 'E_out r ' &&
  screen | grep -q 'ln count in training' &&
  ! screen | grep -q '^╭ loss'
check $? "s: the row norm scatter of the selected run replaces the charts"
key s
wait_gone 'norm vs ln count' 30 && wait_for '^╭ loss' 30
check $? "s again: the charts return"

# ---------------------------------------------------------------- the REPL
key :
type_line 'print(6 * 7)'
wait_for '^42 *$' 30
check $? "the REPL prints a Lua result"
type_line "ui.scale('in_scale', 4, 'untied')"
wait_for '●untied untied in×4' 30
check $? "a key's Lua call typed in the REPL does what the key does"
type_line "error('boom')"
wait_for 'boom' 30 && wait_for 'PAUSED' 10
check $? "a Lua error is reported and the lab goes on"
type_line 'for i = 1, 2 do'
type_line 'print("row" .. i) end'
wait_for '^row2' 30
check $? "a statement over two lines runs when complete"
$T send-keys -t t -l 'half typed'
wait_for '^> half typed' 30
key C-c
wait_gone '^> half typed' 30 && wait_for 'PAUSED' 10
check $? "Ctrl-C clears the input line, the lab stays"
key Escape

# ---------------------------------------------------------------- sizes
$T resize-window -t t -x 60 -y 20
wait_for 'needs 80x24, this is 60x20' 30
check $? "60x20: a message instead of the screen"
$T resize-window -t t -x 80 -y 24
wait_for 'PAUSED step' 30 && wait_for '^╭ loss' 30
check $? "back at 80x24 the screen returns"
[ ! -e "$WORK/status" ] && [ -n "$(tielab_pid)" ]
check $? "tielab still runs after keys, errors and resizes"

# ---------------------------------------------------------------- hangup
kill -HUP "$(tielab_pid)"
wait_dead 100
check $? "SIGHUP ends tielab"
[ "$(status)" = 130 ]
check $? "its exit status is 130 ($(status))"
ls "$WORK"/state/tielab/autosave/*/tied-[0-9]*.safetensors "$WORK"/state/tielab/autosave/*/untied-[0-9]*.safetensors >/dev/null 2>&1
check $? "every run was saved in the autosave folder"

start --resume
wait_for '●tied untied in×2' 300 && screen | grep -q 'untied untied in×4'
check $? "--resume brings both runs back with their tie and scales"
wait_for 'RUNNING' 30
key Space
wait_for 'PAUSED' 30
s1=$(settled_step)
key :
type_line 'lab.on_step(function(s) print("onstep " .. s) end)'
key Escape
wait_for ': or Enter to type Lua' 50   # out of the REPL, or ESC n reads as Alt+n
key n
moved_from "$s1" 50
[ "$(step_now)" = $((s1 + 1)) ]
check $? "n: one more step ($s1 to $(step_now))"
wait_for "^onstep $((s1 + 1)) *\$" 30
check $? "on_step gets the lab-wide step, which goes on after --resume"
key q
wait_for 'Save [0-9]+ run' 30
check $? "q asks to save runs with unsaved steps"
key n
wait_dead 100 && [ "$(status)" = 0 ]
check $? "n quits without saving, exit status 0"

# ---------------------------------------------------------------- other terminals
EXTRA=TERM=dumb
start "$MODEL"
EXTRA=
wait_for 'line mode' 300
type_line 'print(ui.status())'
wait_for '^paused, 2 runs|^running, 2 runs' 50
check $? "TERM=dumb: a line REPL with the same lab"
# steps not saved yet, whatever the lab was doing, so that quitting asks
type_line 'ui.step(2)'
i=0
while [ $i -lt 30 ]; do
  type_line 'print(ui.status())'
  wait_for 'step [1-9]' 10 && break
  i=$((i + 1))
done
key C-d
wait_for 'save the runs before quitting' 50 && type_line n && wait_dead 100
check $? "TERM=dumb: Ctrl-D asks, and 'n' ends it"

EXTRA="LANG=C NO_COLOR=1"
start "$MODEL"
EXTRA=
wait_for 'RUNNING step [1-9]' 300 && screen | grep -q 'tied tied in\*1'
check $? "LANG=C: ASCII glyphs"
[ "$(colors)" -eq 0 ]
check $? "NO_COLOR: not one colour"
screen | LC_ALL=C grep -q "$(printf '[\200-\377]')"
[ $? -ne 0 ]
check $? "LANG=C: not one byte outside ASCII on the screen"
key q
wait_for 'Save' 30 && key n
wait_dead 100
check $? "LANG=C: q then n quits"

# ---------------------------------------------------------------- a runaway on_step callback
rm -rf "$WORK/state/tielab/autosave"
start "$MODEL"
wait_for 'RUNNING step [1-9]' 300
key :
type_line 'lab.on_step(function() while true do end end)'
sleep 0.5
key C-c
wait_for 'callback removed: interrupted' 50 && [ ! -e "$WORK/status" ]
check $? "Ctrl-C stops an on_step callback that never returns, and removes it"
s1=$(step_now)
moved_from "$s1" 50
check $? "training and the screen go on ($s1 to $(step_now))"
type_line 'lab.on_step(function() while true do end end)'
sleep 0.5
kill -TERM "$(tielab_pid)"
wait_dead 100 && [ "$(status)" = 130 ]
check $? "SIGTERM ends a lab stuck in an on_step callback, status 130 ($(status))"
ls "$WORK"/state/tielab/autosave/*/tied-[0-9]*.safetensors >/dev/null 2>&1
check $? "and saves every run first"

# ---------------------------------------------------------------- a runaway script
echo 'local n = 0 while true do n = n + 1 end' >"$WORK/spin.lua"
start "$WORK/spin.lua"
wait_for ' script *$' 300
check $? "a script that never yields runs (the status line says so)"
key '?'
wait_for 'tielab keys' 50
check $? "the screen still answers keys while it spins"
key '?'
wait_gone 'tielab keys' 30
key C-c
wait_for 'script stopped' 50 && wait_gone ' script *$' 30 && [ ! -e "$WORK/status" ]
check $? "Ctrl-C stops the script, never the lab"
key q
wait_dead 100 && [ "$(status)" = 0 ]
check $? "with no unsaved runs, q quits at once"

# ---------------------------------------------------------------- the demo script
demo=$top_srcdir/lua/demo.lua
if [ -f "$demo" ]; then
  start "$demo pace=0.2 steps=10 vocab=256 dim=32 layers=2 heads=2 ctx=32 batch=4"
  wait_for 'RUNNING|PAUSED' 300 && wait_gone ' script *$' 600
  check $? "lua/demo.lua runs to its end"
  ! screen | grep -Eq 'traceback|error' && [ ! -e "$WORK/status" ]
  check $? "lua/demo.lua: no error on screen, tielab still runs"
  # its last claim with its control beside it: the x5 arm and control
  # charted together, each one's figure named
  screen | grep -q 'procrustes E_in: x5.*procrustes E_in: control' && screen | grep -Eq ' x5 .* control '
  check $? "lua/demo.lua ends on the x5 arm and its control, charted and in figures side by side"
else
  fail "lua/demo.lua, which the source tree ships, is not there"
fi

finish
