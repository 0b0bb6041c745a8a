#!/bin/sh
# test_line_quit.sh -- quitting the line REPL (TERM=dumb): Ctrl-D with
# unsaved steps asks, as the screen's 'q' does; any other answer goes on,
# 'n' discards, 'y' saves and says where; with stdin not a terminal the end
# of input saves the runs and says where.
tmux_name=linequit; . "${top_srcdir:-.}/tests/lib/tmux.sh"
session 100 30

# line_lab: a line REPL whose runs have taken a few steps.
line_lab() {
  EXTRA=TERM=dumb
  start "--no-init $MODEL"
  EXTRA=
  wait_for 'line mode' 300 || return 1
  type_line 'lab.step(3) print("stepped " .. lab.runs[1]:metrics().step)'
  wait_for '^stepped [0-9]' 300
}

line_lab
check $? "TERM=dumb: the line REPL trains"
key C-d
wait_for 'save the runs before quitting\? \(y: save, n: discard, else go on\)' 50 && [ ! -e "$WORK/status" ]
check $? "Ctrl-D with unsaved steps asks before quitting"
type_line 'later'
wait_for '^not quitting' 50 && sleep 0.3 && [ ! -e "$WORK/status" ]
check $? "another answer: not quitting"
type_line 'print("still " .. #lab.runs)'
wait_for '^still 2' 50
check $? "the REPL goes on"
key C-d
wait_for 'save the runs before quitting' 50 && type_line n && wait_dead 100
check $? "'n': the lab ends"
[ "$(status)" = 0 ] && ! ls "$WORK"/state/tielab/autosave/*/*.safetensors >/dev/null 2>&1
check $? "'n' discards: status 0, nothing saved"

line_lab
key C-d
wait_for 'save the runs before quitting' 50 && type_line y && wait_dead 100
check $? "'y': the lab ends"
screen | grep -Eq '^saved [a-z0-9_]+ \(step [0-9]+\), [a-z0-9_]+ \(step [0-9]+\) to .*autosave' &&
  [ "$(ls "$WORK"/state/tielab/autosave/*/*.safetensors | wc -l)" -eq 2 ] >/dev/null 2>&1
check $? "'y' saves every run and says where"

rm -rf "$WORK/state"
echo 'lab.step(2)' | env $BASE TERM=dumb "$TIELAB" --no-init $MODEL >"$WORK/out" 2>&1
check $? "stdin not a terminal: the end of input ends the lab"
grep -Eq '^(> )*saved [a-z0-9_]+ \(step [0-9]+\), [a-z0-9_]+ \(step [0-9]+\) to .*autosave' "$WORK/out" &&
  [ "$(ls "$WORK"/state/tielab/autosave/*/*.safetensors | wc -l)" -eq 2 ]
check $? "and saves the runs, saying where"
finish
