#!/bin/sh
# test_sandbox_paths.sh -- what the sandbox opens is what it checked: no
# write or read through a symbolic link that leads outside the working
# directory (a dangling one included, which an open for writing would
# follow to create its target), no os.setlocale; and nothing a script
# prints or raises reaches a terminal as a control sequence.
tap_name=sbp; . "${srcdir:-.}/tests/lib/tap.sh"
mkdir "$tmp/work" "$tmp/outside"
cd "$tmp/work" || exit 1
echo secret >"$tmp/outside/secret.txt"
ln -s "$tmp/outside/created.txt" dangling          # points at nothing yet
ln -s "$tmp/outside/secret.txt" to-secret
ln -s "$tmp/work/inside.txt" to-inside             # dangling, but inside
echo fine >inside-real.txt
ln -s inside-real.txt to-real                      # a link that stays inside

sandboxed() {
  printf '%s\n' "$1" >case.lua
  "$tielab" --headless --sandbox case.lua >out 2>err
}

sandboxed 'local f, e = io.open("dangling", "w") if f then f:write("x") f:close() end'
rc=$?
ok $([ ! -e "$tmp/outside/created.txt" ]; echo $?) "io.open(w) through a dangling link creates nothing outside"
ok $((rc == 0)) "and is an error (status $rc)"
grep -q "'dangling' is a symbolic link to nothing (sandbox)" err
ok $? "which says why: $(head -c 200 err | head -1)"

# A number is a file name too.
ln -s "$tmp/outside/created.txt" 1
sandboxed 'local f = io.open(1, "w") if f then f:write("x") f:close() end'
rc=$?
ok $([ "$rc" -ne 0 ] && [ ! -e "$tmp/outside/created.txt" ]; echo $?) "io.open(1, 'w') is checked like io.open('1', 'w')"
for fn in 'io.output(1)' 'io.lines(1)' 'loadfile(1)' 'os.remove(1)'; do
  sandboxed "$fn"
  rc=$?
  ok $([ "$rc" -ne 0 ] && [ -L 1 ] && grep -q "symbolic link to nothing" err; echo $?) "$fn: a number names a file, and is checked"
done
rm -f 1

for fn in 'io.output("dangling")' 'io.open("dangling", "a")' 'io.open("dangling", "r+")' \
          'lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}:save("dangling")' \
          'lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}:export("dangling")'; do
  sandboxed "$fn"
  rc=$?
  ok $([ "$rc" -ne 0 ] && [ ! -e "$tmp/outside/created.txt" ]; echo $?) "$fn: refused, nothing created outside"
done
rm -f "$tmp/outside/created.txt"

for fn in 'io.open("to-secret"):read("a")' 'io.lines("to-secret")()' 'io.input("to-secret")' \
          'dofile("to-secret")' 'loadfile("to-secret")' 'lab.load("to-secret")'; do
  sandboxed "print($fn)"
  rc=$?
  ok $([ "$rc" -ne 0 ] && ! grep -q secret out && grep -q "outside the working directory" err; echo $?) \
    "$fn: no reading through a link that leads outside"
done

sandboxed 'local f = assert(io.open("to-real", "a")) f:write("more\n") f:close()
print(io.open("to-real"):read("a"))
for l in io.lines("to-real") do io.write("[", l, "]") end print()'
rc=$?
ok $rc "a link that stays inside reads and writes (status $rc)"
grep -q "^\[fine\]\[more\]$" out
ok $? "through to its target"
ok $([ -L to-real ]; echo $?) "and stays a link"
# Refused as well: what a dangling link names is not resolved, so it is
# not known to stay inside.
sandboxed 'local f = assert(io.open("to-inside", "w")) f:write("y") f:close()'
rc=$?
ok $((rc == 0)) "a dangling link is refused even when it names a file inside (status $rc)"
sandboxed 'print(io.open("no-such-file"))'
grep -q "^nil	no-such-file: No such file or directory" out
ok $? "a missing file is named as the script named it: $(cat out)"

# lab.mkdir makes folders inside only, each checked before it is made.
mkdir "$tmp/outside/dir"
ln -s "$tmp/outside/dir" to-dir
for path in "$tmp/outside/made" to-dir/made dangling/made "../outside/made"; do
  sandboxed "print(lab.mkdir('$path'))"
  rc=$?
  ok $([ "$rc" -ne 0 ] && [ ! -e "$tmp/outside/made" ] && [ ! -e "$tmp/outside/dir/made" ] &&
       grep -q "lab.mkdir: .*(sandbox)" err; echo $?) "lab.mkdir('$path') is refused, nothing made outside"
done
sandboxed 'print(lab.mkdir("new/deeper/still"), lab.mkdir("new/deeper"))'
ok $([ $? -eq 0 ] && [ -d new/deeper/still ] && grep -qx "true	true" out; echo $?) "lab.mkdir makes folders inside, parents too"

# The runs a sandboxed script makes count against --lua-mem with its heap.
printf '%s\n' 'local r = {} for i = 1, 50 do local ok, e = pcall(lab.run, {vocab = 1024, dim = 128, layers = 2, heads = 4, ctx = 64, batch = 16})' \
  'if not ok then print(i, e) break end r[i] = e end' 'local used, cap, runs = lab.mem() print("runs", runs, cap)' >case.lua
"$tielab" --headless --sandbox --lua-mem 200 case.lua >out 2>err
grep -q "more than the [0-9.]* [KMG]iB it may have (a sandboxed script's runs count against --lua-mem)" out
ok $? "runs beyond --lua-mem are refused: $(head -1 out)"
awk '$1 == "runs" { exit !($2 > 0 && $2 <= $3) }' out
ok $? "and lab.mem() counts them under the cap: $(grep '^runs' out)"
printf '%s\n' 'local r = lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}' \
  'assert(r:save("small.safetensors"))' >case.lua
"$tielab" --headless case.lua || bail_out "cannot save a small run"
printf '%s\n' 'print(lab.load("small.safetensors"))' >case.lua
"$tielab" --headless --sandbox --lua-mem 1 case.lua >out 2>err
grep -q "^nil	.*needs about [1-9][0-9.]* MiB, more than the [1-9][0-9.]* KiB it may have$" out
ok $? "lab.load past --lua-mem gives both numbers in units that show them: $(cat out)"

sandboxed 'setmetatable({}, {__gc = function() while true do end end}) collectgarbage()'
rc=$?
ok $([ "$rc" -eq 1 ] && grep -q "no __gc in the sandbox" err; echo $?) "no finalisers in the sandbox (one that loops could not be interrupted)"
sandboxed 'local t = setmetatable({}, {__index = function() return 1 end}) assert(t.x == 1)'
ok $? "other metatables still work"

sandboxed 'print(os.setlocale)'
grep -qx nil out
ok $? "no os.setlocale in the sandbox"
printf '%s\n' 'print(type(os.setlocale))' >case.lua
"$tielab" --headless case.lua >out 2>err
grep -qx function out
ok $? "but there is outside it"

# Control characters: escaped in error text always, in output on a terminal.
esc=$(printf '\033')
printf '%s\n' 'print("a\27]0;title\7b")' 'error("bad \27[2J\27[31mred\194\155 thing\255")' >case.lua
"$tielab" --headless case.lua >out 2>err
grep -q "$esc" err
ok $((! $?)) "no ESC byte in an error message"
grep -q 'bad ^\[\[2J^\[\[31mred\\x9b thing\\xff' err
ok $? "controls shown as ^X, C1 and invalid bytes as \\xNN: $(head -1 err)"
grep -q "$esc" out
ok $? "output to a pipe is passed as it is"
if have script; then
  script -qec "'$tielab' --headless case.lua" /dev/null >tty.out 2>&1
  grep -q "$esc" tty.out
  ok $((! $?)) "output to a terminal has no ESC byte either"
  grep -qF 'a^[]0;title^Gb' tty.out
  ok $? "and shows the controls"
else
  skip "output to a terminal: no script(1) to give it one" 2
fi
# A corpus whose name carries an escape: the message shows it escaped.
printf '%s\n' "lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2, corpus = 'x\\27[2Jy.txt'}" >case.lua
"$tielab" --headless case.lua >out 2>err
grep -q "$esc" err
ok $((! $?)) "a file name from a script is escaped in the error naming it: $(head -1 err)"

tap_done
