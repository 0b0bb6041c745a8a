#!/bin/sh
# test_lua_json_mem.sh -- lab.json's memory counts against --lua-mem: JSON that
# jansson's tree or text would blow up (many small values, deep nesting
# written with a wide indent) gets "not enough memory (--lua-mem 32 MiB)"
# under the sandbox, the process's peak stays near the cap, and what was
# charged is given back, so that JSON that fits goes on working.
tap_name=lua-json-mem; . "${srcdir:-.}/tests/lib/tap.sh"
[ -x "$tielab" ] || bail_out "no tielab binary at $tielab"
# Before the cap held, these took 400-700 MiB; under a 1.5 GB address
# space a regression fails here instead of taking the machine's memory.
[ -n "$CAP" ] && CAP="prlimit --as=1500000000 --"
mkdir "$tmp/work"
cd "$tmp/work" || bail_out "no $tmp/work"

# The peak resident size, when the script may read it (not under the sandbox).
cat >peak.lua <<'LUA'
local ok, f = pcall(io.open, "/proc/self/status")   -- refused under the sandbox
f = ok and f
local text = f and f:read("a") or ""
if f then f:close() end
print("peak", text:match("VmHWM:%s*(%d+) kB") or "?")
LUA
# 2,000,000 zeros: a 4 MB text, a tree of about 100 MB.
cat >decode.lua <<'LUA'
local s = "[" .. string.rep("0,", 2000000 - 1) .. "0]"
print(select(2, pcall(lab.json.decode, s)))
s = nil
collectgarbage()
local before = lab.mem()
pcall(lab.json.decode, "[" .. string.rep("0,", 499999) .. "0]")
collectgarbage()
print("given back", lab.mem() - before < 1 << 20)
local ok = true
for _ = 1, 40 do ok = ok and #lab.json.decode("[" .. string.rep("1,", 99999) .. "1]") == 100000 end
print("fits, 40 times", ok)
dofile("peak.lua")
LUA
# 10,000 zeros 990 deep with indent 31: about 300 MB of text.
cat >encode.lua <<'LUA'
local leaf = {}
for i = 1, 10000 do leaf[i] = 0 end
local t = leaf
for _ = 1, 990 do t = {t} end
print(select(2, pcall(lab.json.encode, t, {indent = 31})))
t, leaf = nil, nil
collectgarbage()
print("round trip", lab.json.encode(lab.json.decode('{"a":[1,2.5,"x",null]}')))
dofile("peak.lua")
LUA
echo 'dofile("peak.lua")' >idle.lua

run() { $CAP "$tielab" --headless "$@" 2>&1; }
line() { printf '%s\n' "$1" | grep -m1 "$2"; }

out=$(run --sandbox --lua-mem 32 decode.lua)
[ "$(line "$out" ^lab.json.decode)" = "lab.json.decode: not enough memory (--lua-mem 32 MiB)" ]
ok $? "a decode past the cap, sandboxed: lab.json.decode's error: $(line "$out" ^lab.json.decode)"
[ "$(line "$out" "given back")" = "given back	true" ]
ok $? "a refused decode leaves nothing charged: $(line "$out" "given back")"
[ "$(line "$out" fits)" = "fits, 40 times	true" ]
ok $? "a decode that fits works, again and again: $(line "$out" fits)"

out=$(run --sandbox --lua-mem 32 encode.lua)
[ "$(line "$out" ^lab.json.encode)" = "lab.json.encode: not enough memory (--lua-mem 32 MiB)" ]
ok $? "an encode past the cap, sandboxed: lab.json.encode's error: $(line "$out" ^lab.json.encode)"
[ "$(line "$out" "round trip")" = 'round trip	{"a":[1,2.5,"x",null]}' ]
ok $? "lab.json goes on working after it: $(line "$out" "round trip")"

# The peaks, read by the script itself (so without the sandbox): the cap
# and what the program holds before any script runs, and a little more.
base=$(run --lua-mem 32 idle.lua | sed -n 's/^peak\t//p')
for s in decode encode; do
  peak=$(run --lua-mem 32 $s.lua | sed -n 's/^peak\t//p')
  if [ -n "${ASAN_OPTIONS:-}" ]; then
    skip "resident sizes mean nothing under AddressSanitizer"
    continue
  fi
  case $base$peak in *[!0-9]*|'') ok 1 "$s: no peak read (idle '$base', $s '$peak')"; continue ;; esac
  [ "$peak" -lt $((base + 48 * 1024)) ]
  ok $? "$s: peak $((peak / 1024)) MiB, within 32 MiB and 16 more of the idle $((base / 1024)) MiB"
done
tap_done
