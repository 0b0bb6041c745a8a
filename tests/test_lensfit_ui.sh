#!/bin/sh
# test_lensfit_ui.sh -- the fitted lens on screen, at 80x24 in a private
# tmux server: the lens panel names the online lens, a fit typed in the
# REPL adds its note to the panel, and Ctrl-C during a long fit stops it
# with an error that says so while the lab goes on. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=lensfit; . "$top_srcdir/tests/tmux.sh"

session 80 24
start "$MODEL"
wait_for 'RUNNING step [1-9]' 300 && wait_for 'tuned lens \(online\) acc' 100
check $? "the lens panel says the tuned lens is the online one"
key Space
wait_for 'PAUSED step' 30
key :
type_line 'f = lab.runs.tied:fit_lens{steps = 20, tokens_per_step = 64}; print("fitted", f.steps)'
wait_for '^fitted [0-9]' 100 && wait_for 'fitted @[0-9]+: r:metrics\(\)\.fitted_lens' 30
check $? "after a fit the lens panel notes the fitted lens"
type_line 'lab.runs.tied:fit_lens{steps = 1000000, tol = 1e-12}'
sleep 1
key C-c
wait_for 'r:fit_lens: interrupted at lens step' 100
check $? "Ctrl-C in the REPL stops a long fit with a clear error"
type_line 'print("still", lab.runs.tied:metrics().fitted_lens.steps == f.steps)'
wait_for '^still true' 30
check $? "the lab goes on and the fitted lens is as before"
finish
