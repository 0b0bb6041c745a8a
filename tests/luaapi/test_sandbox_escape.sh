#!/bin/sh
# test_sandbox_escape.sh -- no way around the sandbox, for a script run
# with --sandbox or a journal replayed without --trust. A hostile script
# (tests/luaapi/sandbox_escape.lua) tries every route to a function the sandbox
# did not check: debug.getinfo from an error handler or a load reader
# while a checked call runs, the debug library's other functions, other
# coroutines' stacks, package.loaded, require "debug", bytecode through
# string.dump, a __gc swapped into the metatable of a lab.progress, a run
# or a file handle, package.searchpath as an oracle, FIFOs and /dev/zero,
# and names with a NUL byte; its target, the user's init.lua, must never
# appear. coroutine.close nested in __close handlers stops with an error
# instead of overflowing the C stack; ui.message sends no control
# character to the terminal; a script whose error value's __tostring
# raises stays ended; a bad argument's error object is read only when it
# holds text; only a refusal for memory speaks of --lua-mem; a file
# swapped for a link between the check and the open is not read; a
# script in / or in the home folder makes no file readable; lab.mkdir
# through a link tells nothing of what exists outside; os.getenv hides
# other variables.
# Then hostile journals: a header run or the recorded --corpus naming a
# file outside, script entries naming /dev/zero or a link to it (outside),
# a FIFO (its kind) or a file outside (no size told), the recorded
# --lua-mem against the user's, a header run too big for the cap, a line
# entry of bytecode, one trying the getinfo route and one nesting
# coroutine.close. Each must fail, promptly; every wait has a generous
# deadline.
tap_name=escape; . "${srcdir:-.}/tests/lib/tap.sh"
mkdir -p "$tmp/work" "$tmp/outside" "$tmp/config/tielab" "$tmp/cache" "$tmp/replay-cache"
export XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache"
TARGET=$XDG_CONFIG_HOME/tielab/init.lua
tap_corpus "$tmp/outside/secret.txt" 300
cp "${srcdir:-.}/tests/lib/tap.lua" "${srcdir:-.}/tests/luaapi/sandbox_escape.lua" "$tmp/work/" || bail_out "cannot copy the Lua test"
cd "$tmp/work" || exit 1
mkfifo fifo || bail_out "cannot make a FIFO"
T="timeout 120"   # nothing here takes long: a case that hangs fails instead

# ---------------------------------------------------------------- a hostile script
SECRET_PROBE_TOKEN=xyz TIELAB_SEEN=yes \
  $T "$tielab" --headless --sandbox sandbox_escape.lua "$tmp/outside/secret.txt" "$TARGET" >lua.out 2>lua.err
rc=$?
tap_relay lua.out
ok "$rc" "the hostile script ran to its end under --sandbox (status $rc$(head -c 300 lua.err | tr '\n' ' '))"
ok $([ ! -e "$TARGET" ]; echo $?) "it wrote nothing to the user's init.lua"

# ---------------------------------------------------------------- the C stack
# Lua 5.4.4 runs a closed coroutine's __close handlers on a fresh count of
# C calls: closes nested in them, each after as many C calls as Lua allows,
# would overflow the C stack. They stop with an error, with or without
# --sandbox, and in a journal's line entry.
cat >coclose.lua <<'EOF'
local levels, calls = tonumber(arg and arg[1] or 10000), tonumber(arg and arg[2] or 0)
local function nest(n, f) if n == 0 then return f() end return select(2, pcall(nest, n - 1, f)) end
local coro, err = false, nil
for _ = 1, levels do
  local previous = coro
  coro = coroutine.create(function()
    local cc <close> = setmetatable({}, {__close = function()
      if previous then nest(calls, function() local _, e = pcall(coroutine.close, previous) err = err or e end) end
    end})
    coroutine.yield()
  end)
  coroutine.resume(coro)
end
local ok, e = coroutine.close(coro)
print("closed", ok, tostring(err or e):match("coroutine.close nested too deep"))
EOF
# 60 levels are under the depth bound: only the C stack's budget stops them.
for c in "10000 0" "150 190" "60 190"; do
  for s in --sandbox ""; do
    $T "$tielab" --headless $s --lua-mem 16 coclose.lua $c >co.out 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && grep -q "nested too deep" co.out
    ok $? "coroutine.close nested $c (levels, C calls each) ${s:-without --sandbox} stops with an error (status $rc: $(tail -c 200 co.out | tr '\n' ' '))"
  done
done
$T "$tielab" --headless coclose.lua 50 20 >co.out 2>&1
grep -q "^closed	true	nil" co.out
ok $? "closes nested 50 deep still work ($(cat co.out))"

# ---------------------------------------------------------------- the terminal
# The line REPL shows ui.message's control characters as print does: a
# script retitles no window and writes no clipboard.
cat >msg.lua <<'EOF'
ui.message("\27]0;title\7\27[31mRED\27[0m")
print("\27[31mprint\27[0m")
ui.quit()
EOF
$T "$tielab" --sandbox --no-init msg.lua </dev/null >msg.out 2>&1
esc=$(printf '\033')
! grep -q "$esc" msg.out && grep -qF '^[]0;title^G^[[31mRED^[[0m' msg.out && grep -qF '^[[31mprint^[[0m' msg.out
ok $? "ui.message in the line REPL escapes control characters as print does ($(grep -F 'RED' msg.out | od -c | head -n 2 | tr -s ' \n' ' '))"

# ---------------------------------------------------------------- a failed script stays ended
# The error value's __tostring raises an object that can be called: the
# script ends all the same, and nothing calls that object.
cat >tostring.lua <<'EOF'
local back = setmetatable({}, {__call = function() print("RESURRECTED") end, __tostring = function() return "back" end})
error(setmetatable({}, {__tostring = function() error(back) end}))
EOF
timeout 30 "$tielab" --sandbox --no-init tostring.lua </dev/null >ts.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && ! grep -q RESURRECTED ts.out && grep -q "__tostring failed" ts.out
ok $? "a script whose error's __tostring raises ends, said so, and never runs again (status $rc: $(grep -v '^tielab line mode' ts.out | head -n 2 | tr '\n' ' '))"

# ---------------------------------------------------------------- a script in /
# The script's own folder is readable under --sandbox, unless it is "/":
# then only the working directory is. (Only where / can be written.)
root_script=/tielab-sandbox-test-$$.lua
if [ -w / ] && echo "print('read', pcall(lab.read, '$tmp/outside/secret.txt'))" >"$root_script"; then
  $T "$tielab" --headless --sandbox "$root_script" >root.out 2>&1
  rc=$?
  rm -f "$root_script"
  [ "$rc" -eq 0 ] && grep -q "^read	false	.*outside the working directory" root.out
  ok $? "a script in / runs, and its folder makes no file outside readable (status $rc: $(head -c 200 root.out))"
else
  skip "/ cannot be written here"
fi
# Nor is a script's folder that is the home folder (~/.ssh would be read),
# or one above it; a folder of its own below it is.
mkdir -p "$tmp/home/.ssh" "$tmp/home/proj" && echo KEY >"$tmp/home/.ssh/id"
echo "print('read', pcall(lab.read, '$tmp/home/.ssh/id'))" >"$tmp/home/fetched.lua"
echo "print('read', pcall(lab.read, '$tmp/home/proj/beside.txt'))" >"$tmp/home/proj/mine.lua"
echo beside >"$tmp/home/proj/beside.txt"
HOME="$tmp/home" $T "$tielab" --headless --sandbox "$tmp/home/fetched.lua" >home.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q "^read	false	.*outside the working directory" home.out && ! grep -q KEY home.out
ok $? "a script saved in the home folder cannot read ~/.ssh through its folder (status $rc: $(head -c 200 home.out))"
HOME="$tmp/home" $T "$tielab" --headless --sandbox "$tmp/home/proj/mine.lua" >home.out 2>&1
grep -q "^read	true	beside" home.out
ok $? "a script in a folder of its own below it reads what is beside it ($(head -c 200 home.out))"
# Nor one that holds the configuration folder where the init file is
# searched: ~/.config when XDG_CONFIG_HOME is unset or relative.
mkdir -p "$tmp/home/.config/tielab" && echo 'CONFIG_KEY = 1' >"$tmp/home/.config/tielab/init.lua"
echo "print('read', pcall(lab.read, '$tmp/home/.config/tielab/init.lua'))" >"$tmp/home/.config/fetched.lua"
for xdg in unset relative; do
  if [ $xdg = unset ]; then
    env -u XDG_CONFIG_HOME HOME="$tmp/home" $T "$tielab" --headless --no-init --sandbox "$tmp/home/.config/fetched.lua" >home.out 2>&1
  else
    XDG_CONFIG_HOME=.config HOME="$tmp/home" $T "$tielab" --headless --no-init --sandbox "$tmp/home/.config/fetched.lua" >home.out 2>&1
  fi
  rc=$?
  [ "$rc" -eq 0 ] && grep -q "^read	false	.*outside the working directory" home.out && ! grep -q CONFIG_KEY home.out
  ok $? "XDG_CONFIG_HOME $xdg: a script saved in ~/.config cannot read the init file through its folder (status $rc: $(head -c 200 home.out))"
done

# lab.mkdir through a link in the working directory to a folder outside:
# refused alike whether the folders on the way exist there or not.
mkdir -p "$tmp/outside/there" && ln -s "$tmp/outside" to-outside
cat >mk.lua <<'EOF'
for _, p in ipairs{"to-outside/there", "to-outside/there/x", "to-outside/nowhere/x"} do print((select(2, pcall(lab.mkdir, p)))) end
EOF
$T "$tielab" --headless --sandbox mk.lua >mk.out 2>&1
[ "$(grep -c "is outside the working directory (sandbox)" mk.out)" = 3 ] && [ ! -e "$tmp/outside/there/x" ] && [ ! -e "$tmp/outside/nowhere" ]
ok $? "lab.mkdir through a link to a folder outside is refused alike, whether the folder there exists or not ($(tr '\n' ' ' <mk.out))"
rm -f to-outside

# ---------------------------------------------------------------- a link swapped in
# The sandbox checks a name, then opens it: a file swapped for a link to
# a file outside in between is refused at the open (no link followed),
# for lab.read and loadfile as for io.open. A second process swaps 'swap'
# back and forth for as long as the script tries.
mkdir race && echo 'return "SECRET"' >"$tmp/outside/secret.lua"
cat >race/race.lua <<'EOF'
local leaked, tries, links, t0 = 0, 0, 0, os.clock()
while os.clock() - t0 < 2 do
  local ok, s = pcall(lab.read, "swap")
  local _, f = pcall(loadfile, "swap")
  local ok2, v = pcall(type(f) == "function" and f or error)
  if (ok and s and s:find("SECRET")) or (ok2 and v == "SECRET") then leaked = leaked + 1 end
  -- the swapper at work: a link met (outside, or at the open)
  if not ok and tostring(s):find("outside") or tostring(s):find("symbolic link") then links = links + 1 end
  tries = tries + 1
end
print("tries", tries, "leaked", leaked, "links", links)
EOF
if have "$py"; then
$py - race "$tmp/outside/secret.lua" 6 <<'EOF' &
import os, sys, time
os.chdir(sys.argv[1])
end = time.time() + float(sys.argv[3])
while time.time() < end and not os.path.exists("done"):
    with open("p.tmp", "w") as f: f.write('return "plain"\n')
    os.replace("p.tmp", "swap")
    if os.path.lexists("l.tmp"): os.remove("l.tmp")
    os.symlink(sys.argv[2], "l.tmp")
    os.replace("l.tmp", "swap")
EOF
swapper=$!
sleep 0.2
if kill -0 $swapper 2>/dev/null; then
  (cd race && $T "$tielab" --headless --sandbox race.lua >../race.out 2>&1)
  touch race/done
  wait $swapper
  grep -q "^tries	[1-9][0-9]*	leaked	0	links	[1-9]" race.out
  ok $? "a file swapped for a link outside between the check and the open is never read ($(head -c 200 race.out))"
else
  touch race/done
  wait $swapper
  ok 1 "the process that swaps a file for a link did not start"
fi
else
  skip "python3 is not installed: nothing swaps the file"
fi

# ---------------------------------------------------------------- a bad argument's error
# lab.args raises an error object holding its message; one whose message
# a script replaced with a number is no bad argument, but any error.
cat >usage.lua <<'EOF'
local _, e = pcall(lab.args, {"nope=1"}, {steps = 1})
e[1] = 12345
error(e)
EOF
$T "$tielab" --headless --sandbox usage.lua >usage.out 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "error object is a table value" usage.out && ! grep -qx "tielab: 12345" usage.out
ok $? "a usage error whose message is a number is reported as an error object, not as a bad argument (status $rc: $(head -n 1 usage.out))"

# ---------------------------------------------------------------- the budget's note
# A sandboxed script's runs count against --lua-mem: a refusal says so
# when it was for memory, and only then.
cat >budget.lua <<'EOF'
local tiny = {vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}
print("fifo", select(2, pcall(lab.run, tiny, {corpus = "fifo"})))
print("big", select(2, pcall(lab.run, tiny, {vocab = 4096, dim = 256, layers = 4, heads = 4, ctx = 64, batch = 16})))
EOF
$T "$tielab" --headless --sandbox --lua-mem 16 budget.lua >budget.out 2>&1
grep "^fifo" budget.out | grep -q "is a FIFO, not a regular file" && ! grep "^fifo" budget.out | grep -q "lua-mem"
ok $? "a corpus that is a FIFO is refused without a word on --lua-mem ($(grep '^fifo' budget.out))"
grep "^big" budget.out | grep -q "more than the .* it may have (a sandboxed script's runs count against --lua-mem)"
ok $? "a run too big for the cap is refused with it ($(grep '^big' budget.out))"

# ---------------------------------------------------------------- hostile journals
V=$("$tielab" --version | awk '{ print $2 }')
RUN='"vocab":"256","dim":"16","layers":"1","heads":"2","ctx":"8","batch":"2"'
# journal FILE ARGV RUNS ENTRY...: a journal without a final record.
journal() {
  f=$1 argv=$2 runs=$3
  shift 3
  {
    echo "{\"journal\":1,\"tielab\":\"$V\",\"argv\":[\"tielab\"$argv],\"cwd\":\"/nowhere\",\"runs\":[$runs]}"
    for e in "$@"; do echo "$e"; done
  } >"$f"
}
line_entry() { echo "{\"kind\":\"line\",\"step\":0,\"runs\":$1,\"sel\":\"\",\"lua\":\"$2\"}"; }
script_entry() { echo "{\"kind\":\"script\",\"step\":0,\"runs\":[],\"sel\":\"\",\"path\":\"$1\",\"args\":[],\"size\":7,\"fnv1a64\":\"0123456789abcdef\"}"; }
# (with a cache of their own: what a replay tokenizes shows there)
replay() { XDG_CACHE_HOME="$tmp/replay-cache" $T "$tielab" --replay "$@" >rp.out 2>&1; }

journal corpus.jsonl "" "{\"name\":\"r\",\"step\":0,\"options\":{\"name\":\"r\",$RUN,\"corpus\":\"$tmp/outside/secret.txt\"}}" \
  "$(line_entry '[["r",0]]' "lab.runs.r:save('stolen.safetensors') print('ENTRY RAN')")"
replay corpus.jsonl
rc=$?
[ "$rc" -eq 1 ] && grep -q "corpus.jsonl:1: run r's corpus: '$tmp/outside/secret.txt' is outside the working directory (sandbox)" rp.out
ok $? "a header run whose corpus is outside is refused (status $rc: $(grep tielab: rp.out))"
[ ! -e stolen.safetensors ] && ! grep -q "ENTRY RAN" rp.out && [ -z "$(find "$tmp/replay-cache" -type f)" ]
ok $? "before anything runs: no entry ran, nothing was saved, the outside text was never tokenized"

journal default.jsonl ",\"--corpus\",\"$tmp/outside/secret.txt\"" "" \
  "$(line_entry '[]' "lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}:save('stolen.safetensors')")"
replay default.jsonl
rc=$?
[ "$rc" -eq 1 ] && grep -q "the recorded --corpus: '$tmp/outside/secret.txt' is outside the working directory" rp.out &&
  [ ! -e stolen.safetensors ]
ok $? "a recorded --corpus outside, which lab.run{} would start from, is refused (status $rc)"

# /dev/zero, and a link to it in the folder, are refused by the file rule
# (outside, links resolved) before their kind is looked at; the FIFO in
# the folder is the case that reaches the check of a file's kind.
ln -s /dev/zero zero-link
for p in /dev/zero zero-link fifo "$tmp/outside/secret.txt" "$tmp/outside/missing.txt"; do
  journal script.jsonl "" "" "$(script_entry "$p")"
  replay script.jsonl
  rc=$?
  case $p in
    fifo) want="is a FIFO, not a regular file" ;;
    *) want="the script: '$p' is outside the working directory (sandbox)" ;;
  esac
  [ "$rc" -eq 1 ] && grep -qF "$want" rp.out && ! grep -q "bytes" rp.out
  ok $? "a script entry naming $p is refused at once, telling no size (status $rc: $(grep -v '^replay: \(sandboxed\|the Lua\)' rp.out | head -n 1))"
  cp rp.out "script-$(basename "$p").out"
done
sed "s|secret.txt|X|" script-secret.txt.out >a.out
sed "s|missing.txt|X|" script-missing.txt.out >b.out
cmp -s a.out b.out
ok $? "an outside file that exists and one that does not are refused alike (no oracle)"

cap_entry=$(line_entry '[]' "print('cap', select(2, lab.mem()) >> 20)")
journal mem.jsonl ',"--lua-mem","1048576"' "" "$cap_entry"
replay mem.jsonl
grep -qx "cap	1024" rp.out
ok $? "a journal's --lua-mem 1048576 does not lift the cap: the default 1024 MiB holds ($(grep '^cap' rp.out))"
replay mem.jsonl --lua-mem 64
rc=$?
grep -qx "cap	64" rp.out && grep -q "may take 64 MiB" rp.out
ok $? "--lua-mem is taken with --replay, and the lower cap wins (status $rc: $(grep '^cap' rp.out))"
journal low.jsonl ',"--lua-mem","32"' "" "$cap_entry"
replay low.jsonl --lua-mem 512
grep -qx "cap	32" rp.out
ok $? "a journal's own lower cap still holds ($(grep '^cap' rp.out))"
journal big.jsonl "" '{"name":"big","step":0,"options":{"name":"big","vocab":"4096","dim":"256","layers":"4","heads":"4","ctx":"64","batch":"16"}}'
replay big.jsonl --lua-mem 16
rc=$?
[ "$rc" -eq 1 ] && grep -q "run big: run 'big' needs about .* MiB, more than the .* MiB it may have (a sandboxed script's runs count against --lua-mem)" rp.out
ok $? "a header run counts against the cap as a sandboxed script's runs do (status $rc: $(grep tielab: rp.out))"

# A line entry of bytecode (its text in hex): a REPL entry is text only.
journal binary.jsonl "" "" '{"kind":"line","step":0,"runs":[],"sel":"","lua":{"hex":"1b4c756154"}}'
replay binary.jsonl
grep -q "attempt to load a binary chunk (mode is 't')" rp.out
ok $? "a line entry that is a binary chunk is refused as one ($(grep binary rp.out | head -n 1))"

# The reported escape, as a journal's line entry: the unchecked io.open
# taken from the stack by an error handler, then init.lua written.
grab="local f; xpcall(io.open, function() for l = 1, 9 do local ok, i = pcall(debug.getinfo, l, 'f') if ok and i and i.func then f = f or i.func end end end, '/etc/passwd') local w = f and f('$TARGET', 'w') if w then w:write('os.execute(1)') w:close() end print('GOT', f)"
journal grab.jsonl "" "" "$(line_entry '[]' "$grab")"
replay grab.jsonl
grep -qx "GOT	nil" rp.out && [ ! -e "$TARGET" ]
ok $? "a line entry's error handler gets no unchecked io.open, and init.lua stays unwritten ($(grep '^GOT' rp.out))"
# The same closes nested 10000 deep, as a line entry.
journal coclose.jsonl "" "" "$(line_entry '[]' "$(sed 's/\\/\\\\/g; s/"/\\"/g' coclose.lua | tr '\n' ' ')")"
replay coclose.jsonl
rc=$?
grep -q "nested too deep" rp.out
ok $? "a line entry nesting coroutine.close 10000 deep stops with an error (status $rc: $(tail -c 200 rp.out | tr '\n' ' '))"
tap_done
