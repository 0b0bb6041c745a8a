#!/bin/sh
# test_hooks_ui.sh -- step hooks in the lab, at 80x24 in a private tmux
# server. The trainer thread steps and a hook is a Lua function: every
# hooked step waits for the Lua thread mid-step. A script's r:step (which
# yields while the trainer works) calls its hooks once a step; then the
# keyboard's free run calls them too (two workers stepping an unhooked run
# beside it), while the REPL reads and changes the
# lab (its calls wait for the lab while the trainer waits for a hook: the
# wait serves the hook, or neither would go on); r:set_param is refused
# while the run trains freely; a hook that raises pauses the run with its
# message; lab.off ends the calls; a paused run's weights are written; q
# quits with status 0; SIGTERM with the trainer parked on a stuck hook saves
# the runs and ends tielab.
# Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=hooks; . "$top_srcdir/tests/lib/tmux.sh"

cat >"$WORK/hooks.lua" <<'LUA'
r = lab.run{name = "hooked", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}
calls, hidden, last = 0, 0, 0
grad_hook = r:on_grad(function(g, step)
  calls = calls + 1
  last = step
  assert(g.E_in:norm() > 0)
end)
hidden_hook = r:on_hidden(1, function(h, dh) hidden = hidden + 1; return 0.25 end)
r:step(30)
lab.workers(2)
beside = lab.run{name = "beside", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, threads = 1}
print(string.format("script: %d grad calls, %d hidden, last %d, aux %.2f", calls, hidden, last, r:metrics().aux_loss))
LUA

session 80 24
start "$WORK/hooks.lua"
wait_for '^script: 30 grad calls, 30 hidden, last 30, aux 0.25' 600
check $? "a script's r:step calls its hooks once a step, on the lab's trainer"

key Space
wait_for 'RUNNING' 50
sleep 1
key :
type_line 'print("free", calls > 30, calls >= r:metrics().step, beside:metrics().step > 0)'
wait_for '^free +true +true +true' 300
check $? "the keyboard's free run calls the hooks too, two workers step a run beside, and the REPL reads the run meanwhile"
type_line 'beside:pause(); print("beside paused")'
wait_for '^beside paused' 100
type_line 'r:set{lr = 0.002}; print("set", r:options().lr)'
wait_for '^set +0.002' 300
check $? "r:set from the REPL while hooked steps run: no deadlock"
type_line 'f = function() end; for i = 1, 500 do local a, b = r:on_hidden(2, f), r:on_hidden(0, f); lab.off(a); lab.off(b) end; print("churn", r:metrics().step > 0)'
wait_for '^churn +true' 600
check $? "hooks added and removed 500 times while the run trains freely: no crash"
type_line 'print("write", pcall(r.set_param, r, "E_in", r:param("E_in")))'
wait_for '^write +false.*is training elsewhere' 300
check $? "r:set_param is refused while the lab runs the run freely"
type_line 'lab.off(grad_hook); lab.off(hidden_hook); n0 = calls'
type_line 'bad = r:on_grad(function() error("hook broke") end)'
wait_for 'hook broke' 300
check $? "a hook that raises during the free run says so"
wait_for 'PAUSED|paused' 100
check $? "and the run stops with its weights kept"
type_line 'print("offed", calls == n0, lab.off(bad))'
wait_for '^offed +true +false' 100
check $? "lab.off ended the calls, and the failed hook was removed"
type_line 'E = r:param("E_in"); E:scale(0.5); r:set_param("E_in", E); print("halved", (r:param("E_in") - E):norm())'
wait_for '^halved +0(\.0)?$' 100
check $? "and with the run paused r:set_param writes"
leave_repl
key q
wait_for 'Save [0-9]+ run' 50
key n
wait_dead 100 && [ "$(status)" = 0 ]
check $? "q quits with status 0"

# A hook stuck where no interrupt reaches (a finaliser that loops), the
# trainer parked on it mid-step, then SIGTERM: the watchdog saves the lab as
# it was before that step and ends tielab.
cat >"$WORK/stuck.lua" <<'LUA'
r = lab.run{name = "stuck", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 2}
r:step(2)
r:on_grad(function()
  print("in the hook")
  setmetatable({}, {__gc = function() while true do end end})
  collectgarbage()
end)
r:step(1)
LUA
EXTRA="XDG_STATE_HOME=$WORK/stuckstate"
start "$WORK/stuck.lua"
EXTRA=
wait_for 'in the hook' 300
kill -TERM "$(tielab_pid)"
wait_dead 200 && [ "$(status)" = 130 ] && find "$WORK/stuckstate" -name 'stuck*.safetensors' | grep -q .
check $? "SIGTERM with the trainer parked on a stuck hook: the runs are saved, status 130 (status $(status))"

finish
