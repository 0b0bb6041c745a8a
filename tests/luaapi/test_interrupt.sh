#!/bin/sh
# test_interrupt.sh -- Ctrl-C and runaway scripts in headless mode: SIGINT
# ends a script stuck in a pcall loop promptly with status 130 (the
# interrupt cannot be swallowed), finalisers still run as the state closes,
# SIGTERM ends it the same way, a long training call stops between steps,
# an on_step callback that never returns is stopped and removed, and a
# runaway allocation hits the Lua heap cap as a Lua error that a pcall can
# catch.
tap_name=int; . "${srcdir:-.}/tests/lib/tap.sh"
ms() { date +%s%3N; }

# Start a script in the background and wait until it printed "ready"
# (into a fresh file, so that an earlier run's output cannot be mistaken).
start() {
  rm -f "$tmp/out" "$tmp/err"
  "$tielab" --headless "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  i=0
  while [ $i -lt 200 ] && ! grep -q ready "$tmp/out" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}

cat >"$tmp/spin.lua" <<'LUA'
print("ready") io.stdout:flush()
while true do pcall(function() end) end
LUA

start "$tmp/spin.lua"
t0=$(ms)
kill -INT $pid
wait $pid
rc=$?
t1=$(ms)
ok $((rc != 130)) "SIGINT ends a pcall loop with status 130 (got $rc)"
ok $((t1 - t0 > 5000)) "promptly ($((t1 - t0)) ms; the bound is 5 s, against a hang on a loaded machine)"
grep -q interrupted "$tmp/err"
ok $? "and says 'interrupted' on stderr"

# A finaliser that takes a while runs to its end after SIGINT, as the
# state closes (a second SIGINT would end tielab: test_signals.sh).
cat >"$tmp/slow.lua" <<'LUA'
local keep = setmetatable({}, {__gc = function()
  local t = os.clock()
  while os.clock() - t < 0.3 do end
  io.stderr:write("finalised\n")
end})
print("ready") io.stdout:flush()
while true do pcall(function() end) end
LUA
start "$tmp/slow.lua"
kill -INT $pid
wait $pid
rc=$?
ok $((rc != 130)) "SIGINT with a slow finaliser: status 130 (got $rc)"
grep -q finalised "$tmp/err" && grep -q interrupted "$tmp/err"
ok $? "it ended normally: message printed, finalisers run"

start "$tmp/spin.lua"
kill -TERM $pid
wait $pid
rc=$?
ok $((rc != 130)) "SIGTERM ends it the same way (got $rc)"

cat >"$tmp/train.lua" <<'LUA'
local r = lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, eval_every = 0, lens_every = 0}
print("ready") io.stdout:flush()
while true do pcall(r.step, r, 1000000) end
LUA
start "$tmp/train.lua"
t0=$(ms)
kill -INT $pid
wait $pid
rc=$?
t1=$(ms)
ok $((rc != 130)) "SIGINT stops a long r:step between two steps (got $rc)"
ok $((t1 - t0 > 5000)) "promptly ($((t1 - t0)) ms; the bound is 5 s, against a hang on a loaded machine)"

# An on_step callback that never returns: the signal stops it, removes it
# and ends the script.
cat >"$tmp/hook.lua" <<'LUA'
local r = lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, eval_every = 0, lens_every = 0}
lab.on_step(function() print("ready") io.stdout:flush() while true do end end)
r:step(10)
LUA
for sig in INT TERM; do
  start "$tmp/hook.lua"
  t0=$(ms)
  kill -$sig $pid
  wait $pid
  rc=$?
  t1=$(ms)
  ok $((rc != 130 || t1 - t0 > 5000)) "SIG$sig stops an on_step callback that never returns, status 130 (got $rc, $((t1 - t0)) ms; the bound is 5 s, against a hang on a loaded machine)"
  grep -q "callback removed: interrupted" "$tmp/err"
  ok $? "and says it removed the callback"
done

cat >"$tmp/alloc.lua" <<'LUA'
local t = {}
while true do t[#t + 1] = string.rep("x", 1000) .. #t end
LUA
"$tielab" --headless --lua-mem 32 "$tmp/alloc.lua" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $((rc != 1)) "a runaway allocation ends the script with status 1 (got $rc)"
grep -q "not enough memory" "$tmp/err"
ok $? "with the Lua error 'not enough memory'"

cat >"$tmp/catch.lua" <<'LUA'
local ok, err = pcall(function()
  local t = {}
  while true do t[#t + 1] = string.rep("x", 1000) .. #t end
end)
collectgarbage()
print(ok, err)
LUA
"$tielab" --headless --lua-mem 32 "$tmp/catch.lua" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $((rc != 0)) "a script may catch it and go on (status $rc)"
grep -q "false	not enough memory" "$tmp/out"
ok $? "pcall returned false, 'not enough memory'"

tap_done
