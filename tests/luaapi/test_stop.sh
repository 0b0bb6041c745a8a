#!/bin/sh
# test_stop.sh -- an os.exit and an interrupt end a headless script however
# the script wraps them: inside an on_step callback, under pcall, xpcall,
# coroutine.wrap, coroutine.resume and coroutine.close. The script gets no
# chance to go on and write files; the status is the one given to os.exit,
# or 130 for an interrupt.
tap_name=stop; . "${srcdir:-.}/tests/lib/tap.sh"
cd "$tmp" || exit 1

# Each script ends with what a script that went on would do.
went_on='local f = io.open("went-on", "w") f:write("yes") f:close() print("went on")'
tiny='lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}'

# exit_case NAME STATUS BODY: BODY must end the script with STATUS.
exit_case() {
  rm -f went-on
  printf '%s\n%s\n' "$3" "$went_on" >case.lua
  "$tielab" --headless case.lua >out 2>err
  rc=$?
  ok $((rc != $2)) "$1: status $2 (got $rc)"
  ok $([ ! -e went-on ] && ! grep -q "went on" out; echo $?) "$1: the script does not go on"
}

exit_case "os.exit in an on_step callback" 7 "local r = $tiny
lab.on_step(function(s) if s == 3 then os.exit(7) end end)
r:step(10)"
grep -q "callback removed after an error" err
ok $((! $?)) "the callback's os.exit is not reported as an error"
exit_case "os.exit under pcall" 3 "print(pcall(os.exit, 3))"
exit_case "os.exit under xpcall with a handler" 4 "print(xpcall(os.exit, function(e) return e end, 4))"
exit_case "os.exit in a coroutine.wrap under pcall" 5 "print(pcall(coroutine.wrap(function() os.exit(5) end)))"
exit_case "os.exit in a coroutine.resume" 6 "print(coroutine.resume(coroutine.create(function() os.exit(6) end)))"
exit_case "os.exit in a to-be-closed variable's close" 8 "
local co = coroutine.create(function()
  local x <close> = setmetatable({}, {__close = function() os.exit(8) end})
  coroutine.yield()
end)
coroutine.resume(co)
print(coroutine.close(co))"
exit_case "os.exit(false)" 1 "pcall(os.exit, false)"
exit_case "os.exit under xpcall whose handler replaces the error" 3 \
  "print(xpcall(function() os.exit(3) end, function() return 'handled' end))"
exit_case "os.exit with a __close that raises on the way out" 4 "do
  local t <close> = setmetatable({}, {__close = function() error('boom') end})
  os.exit(4)
end"
exit_case "os.exit in a coroutine.wrap whose __close raises" 5 "print(pcall(coroutine.wrap(function()
  local t <close> = setmetatable({}, {__close = function() error('boom') end})
  os.exit(5)
end)))"
exit_case "os.exit in load's reader" 6 "print(load(function() os.exit(6) end))"
exit_case "os.exit in a finaliser (errors there are only warnings)" 8 \
  "setmetatable({}, {__gc = function() os.exit(8) end}) collectgarbage() collectgarbage()"
exit_case "os.exit in an on_step callback under pcall of r:step" 9 "local r = $tiny
lab.on_step(function() os.exit(9) end)
print(pcall(r.step, r, 5))"

# intr_case NAME BODY: BODY spins in some wrapper until SIGINT.
intr_case() {
  rm -f went-on
  printf 'print("ready") io.stdout:flush()\nlocal t0 = lab.clock()\n%s\n%s\n' "$2" "$went_on" >case.lua
  "$tielab" --headless case.lua >out 2>err &
  pid=$!
  i=0
  while [ $i -lt 200 ] && ! grep -q ready out 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
  sleep 0.2
  kill -INT $pid
  wait $pid
  rc=$?
  ok $((rc != 130)) "$1: status 130 (got $rc)"
  ok $([ ! -e went-on ] && ! grep -q "went on" out; echo $?) "$1: the script does not go on"
}

spin='function() local x = 0 for i = 1, 1e12 do x = x + i end end'
# Each loop stops by itself after 5 s, so a swallowed interrupt shows as
# a script that goes on rather than as a hang.
intr_case "Ctrl-C in pcall(coroutine.wrap(f))" \
  "while lab.clock() - t0 < 5 do pcall(coroutine.wrap($spin)) end"
intr_case "Ctrl-C in coroutine.resume" \
  "while lab.clock() - t0 < 5 do coroutine.resume(coroutine.create($spin)) end"
intr_case "Ctrl-C in xpcall" \
  "while lab.clock() - t0 < 5 do xpcall($spin, function(e) return e end) end"
intr_case "Ctrl-C in a coroutine's pcall in a coroutine" \
  "while lab.clock() - t0 < 5 do coroutine.resume(coroutine.create(function() pcall(coroutine.wrap($spin)) end)) end"
intr_case "Ctrl-C in an on_step callback under pcall" \
  "local r = $tiny
lab.on_step(function() local x = 0 for i = 1, 1e12 do x = x + i end end)
while lab.clock() - t0 < 5 do pcall(r.step, r, 1) end"

# A pcall of an ordinary error still returns false and the message.
printf '%s\n' 'local ok, e = pcall(error, "plain")' 'print(ok, e)' 'print(coroutine.resume(coroutine.create(function() error("in co") end)))' >case.lua
"$tielab" --headless case.lua >out 2>err
rc=$?
ok $((rc != 0)) "ordinary errors: pcall and resume still catch them (status $rc)"
grep -q "^false	plain$" out && grep -q "^false	.*in co$" out
ok $? "and return false and the message"

tap_done
