#!/bin/sh
# test_lensfit_ui.sh -- the fitted lens on screen, at 80x24 in a private
# tmux server. A script's fit runs on the trainer thread: the status line
# shows its progress, which moves, the keys work meanwhile, the script goes
# on with the result, ',' holds the script (not the fit that started), and
# q during a fit saves and quits with status 0. In the REPL: the lens panel
# names the online lens, a typed fit adds its note to the panel, keys act
# during a fit (the fitted run refuses a tie change and its removal), and Ctrl-C
# during a long fit stops it with an error that says so while the lab goes
# on. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=lensfit; . "$top_srcdir/tests/lib/tmux.sh"

# The fit's number on the status line ("fitting lens fit 12/200": 12).
fit_now() { screen | sed -n '1s/.*fitting lens fit \([0-9]*\)\/.*/\1/p'; }

# A fit of 200 lens steps of 4096 positions each that never converge (a
# tolerance no step meets, a patience beyond its limit): its end is fixed,
# so is what it prints, and it lasts long enough (some seconds where one
# step takes 50 ms) for the help, Escape and 'l' to arrive while it runs
# on a machine several times faster too. The second, of 120 such steps, is
# long enough for ',' to arrive while it runs.
cat >"$WORK/fit.lua" <<'LUA'
local r = lab.run{name = "fit", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4,
                  lens_every = 5}
r:step(20)
print("fitting")
local f = r:fit_lens{steps = 200, tokens_per_step = 4096, tol = 1e-12, patience = 1000000}
print("fit done", f.steps, #f.curve, r:metrics().fitted_lens.steps)
r:step(3)
print("after", r:metrics().step)
local g = r:fit_lens{steps = 120, tokens_per_step = 4096, tol = 1e-12, patience = 1000000}
print("second fit done", g.steps)
r:fit_lens{steps = 100000, tokens_per_step = 4096, tol = 1e-12, patience = 1000000}
print("third fit done")
LUA

session 80 24
start "$WORK/fit.lua"
wait_for 'fitting lens fit [0-9]+/200' 300
check $? "the status line shows the fit's progress"
a=$(fit_now)
i=0
while [ "$(fit_now)" = "$a" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
b=$(fit_now)
[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]
check $? "and it moves ($a to $b of 200)"
key '?'
wait_for 'tielab keys' 50
check $? "while the fit runs, '?' opens the help"
key Escape
wait_gone 'tielab keys' 50 && key l && wait_for 'logit lens' 50
c=$(fit_now)
[ -n "$c" ] && [ "$c" -lt 200 ]
check $? "and 'l' shows the logit lens, the fit still running ($c of 200)"
key l
wait_for '^fit done 200 +[0-9]+ +200' 1200
check $? "the script goes on with the fit's result"
wait_for '^after 23' 100
check $? "and trains on after it"

wait_for 'fitting lens fit [0-9]+/120' 300
key ,
wait_for 'script paused' 50 && [ -n "$(fit_now)" ] && ! screen | grep -q '^second fit done'
check $? "',' during the second fit pauses the script ($(fit_now) of 120 when paused)"
# The fit's end is its line leaving the status line; a machine under load
# may take long, so the wait is long and its outcome part of the check.
wait_gone 'fitting lens fit' 1200 && sleep 0.5 && ! screen | grep -q '^second fit done'
check $? "the fit that started ends, the paused script waits"
key ,
wait_for '^second fit done 120' 300
check $? "',' again: the script goes on"

wait_for 'fitting lens fit [0-9]+/100000' 300
rm -rf "$WORK/state"
key q
wait_for 'Save [0-9]+ run' 50
key y
wait_dead 100 && [ "$(status)" = 0 ]
check $? "q during a fit saves and quits, exit status 0 ($(status))"
find "$WORK/state" -type f 2>/dev/null | grep -q .
check $? "the runs were saved"

start "$MODEL"
wait_for 'RUNNING step [1-9]' 300 && wait_for 'lens KL bits.*online @[0-9]' 100
check $? "the lens panel says the tuned lens is the online one"
key Space
wait_for 'PAUSED step' 30
key :
type_line 'f = lab.runs.tied:fit_lens{steps = 20, tokens_per_step = 64}; print("fitted", f.steps)'
wait_for '^fitted [0-9]' 100 && wait_for 'fitted @[0-9]+' 30
check $? "after a fit the lens panel notes the fitted lens"
type_line 'ui.lens("fitted")'
wait_for '╭ lens.* fitted.* !NOT CONVERGED' 30
check $? "the fitted lens of a fit stopped by its 20-step limit is marked not converged on screen"
type_line 'ui.lens("tuned")'
wait_for 'lens KL bits.*online @[0-9]' 30
! screen | grep -Eq '(●|!)(setting|change)'
check $? "a fit is no change of training: no event marker for it in the charts' legends"
type_line 'ui.running(true); lab.runs.tied:fit_lens{steps = 1000000, tol = 1e-12, patience = 1000000}'
wait_for 'RUNNING step [0-9]+ fitting lens tied [0-9]+/1000000' 100
check $? "a fit typed in the REPL shows its progress"
! screen | sed -n 1p | grep -q 'tok/s'
check $? "and no throughput meanwhile: training waits for the fit"
key Escape
wait_for '^space run/pause' 50   # out of the REPL before the next key (else it reads as Alt-+)
key +
# the status line is short while a fit's progress takes room: "●tied T×2"
wait_for '●tied (tied in|T)×2' 50 && wait_for 'fitting lens tied [0-9]+/1000000' 10
check $? "during the fit '+' changes the fitted run's in_scale at once: the lab is lent between lens steps"
key t
wait_for "run 'tied' is fitting its lens: it cannot change its tie" 50
check $? "'t' on the run in its fit is refused with a message that says why"
key 0
wait_for '●tied (tied in×1|T│)' 50
key :
type_line 'print(pcall(lab.runs.tied.remove, lab.runs.tied))'
wait_for "false r:remove: run 'tied' is fitting its lens" 50
check $? "removing the run in its fit is refused"
key C-c
wait_for 'r:fit_lens: interrupted at lens step' 100
check $? "Ctrl-C in the REPL stops a long fit with a clear error"
wait_gone 'fitting lens' 100
type_line 'print("still", lab.runs.tied:metrics().fitted_lens.steps == f.steps)'
wait_for '^still true' 30
check $? "the lab goes on and the fitted lens is as before"
finish
