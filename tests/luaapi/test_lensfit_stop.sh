#!/bin/sh
# test_lensfit_stop.sh -- Ctrl-C during r:fit_lens in headless mode: the fit
# stops at the next lens step with an error that says so (a pcall around
# it cannot swallow it), and the script ends with status 130.
tap_name=lensfit; . "${srcdir:-.}/tests/lib/tap.sh"

# Start 'tielab --headless' on a script that fits for ever (around a pcall
# when $1 is "pcall"), and send SIGINT once the fit runs.
fit_and_stop() {
  cat >"$tmp/fit.lua" <<LUA
local r = lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, eval_every = 0, lens_every = 0}
r:step(2)
io.stderr:write("ready\\n") io.stderr:flush()
local fit = function() return r:fit_lens{steps = 1000000, tol = 1e-12, patience = 1000000} end
if "$1" == "pcall" then while true do pcall(fit) end else fit() end
LUA
  rm -f "$tmp/err"
  "$tielab" --headless "$tmp/fit.lua" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  i=0
  while [ $i -lt 400 ] && ! grep -q ready "$tmp/err" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
  sleep 0.5
  kill -INT $pid
  wait $pid
  rc=$?
}

fit_and_stop plain
ok $((rc != 130)) "SIGINT ends a script inside r:fit_lens with status 130 (got $rc)"
grep -q "r:fit_lens: interrupted at lens step" "$tmp/err"
ok $? "the error says the fit was interrupted and at which lens step"
grep -q "the weights and the fitted lens are as before" "$tmp/err"
ok $? "and that the weights and the fitted lens are as before"

fit_and_stop pcall
ok $((rc != 130)) "a pcall around the fit cannot swallow the interrupt (status $rc)"
grep -q "interrupted" "$tmp/err"
ok $? "it says 'interrupted'"
tap_done
