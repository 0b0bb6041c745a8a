#!/bin/sh
# test_hook_signal.sh -- a step hook stuck where no interrupt reaches (a
# finaliser that loops: Lua runs finalisers with hooks off) and then
# SIGTERM: the step is parked before its update, so the watchdog saves the
# runs as they were after the last whole step and ends tielab with status
# 130. Headless. Prints TAP.

tap_name=hook_signal; . "${srcdir:-.}/tests/lib/tap.sh"
tielab="${top_builddir:-.}/tielab"

cat >"$tmp/stuck.lua" <<'LUA'
local r = lab.run{name = "stuck", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 2}
r:step(2)
r:on_grad(function()
  print("in the hook")
  io.stdout:flush()
  setmetatable({}, {__gc = function() while true do end end})
  collectgarbage()
end)
r:step(1)
LUA
XDG_STATE_HOME="$tmp/state" "$tielab" --headless "$tmp/stuck.lua" >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while [ $i -lt 300 ] && ! grep -q "in the hook" "$tmp/out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid
wait $pid
rc=$?
ok $([ $rc -eq 130 ]; echo $?) "SIGTERM with a hook stuck mid-step: tielab ends with status 130 (got $rc)"
grep -q "saved in" "$tmp/err"
ok $? "and says where it saved the runs: $(tail -n 1 "$tmp/err")"
saved=$(find "$tmp/state" -name 'stuck*.safetensors' | head -n 1)
printf 'local r = assert(lab.load(arg[1]))\nprint("step", r:metrics().step)\n' >"$tmp/check.lua"
"$tielab" --headless "$tmp/check.lua" "$saved" 2>&1 | grep -q '^step	2$'
ok $? "the run saved is the one after its last whole step (step 2, the stuck step not taken)"

tap_done
