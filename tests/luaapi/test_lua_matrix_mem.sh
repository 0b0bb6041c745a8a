#!/bin/sh
# test_lua_matrix_mem.sh -- lab.matrix under --sandbox and --lua-mem: the
# whole of test_lua_matrix.lua passes in the sandbox; a matrix's numbers
# count against the heap cap, so a matrix past what is left of it is
# refused before it is made, with its shape and its size, and so is the
# workspace of a decomposition, sandboxed or not; a matrix past what the
# process can get from the machine is refused too; the script goes on.
tap_name=lua-matrix-mem; . "${srcdir:-.}/tests/lib/tap.sh"
[ -x "$tielab" ] || bail_out "no tielab binary at $tielab"
mkdir -p "$tmp/work/tests/lib"
cp "${srcdir:-.}/tests/lib/tap.lua" "$tmp/work/tests/lib/"
cp "${srcdir:-.}/tests/luaapi/test_lua_matrix.lua" "$tmp/work/"
cd "$tmp/work" || bail_out "no $tmp/work"

# The Lua test in the sandbox, its checks relayed with the sandbox named.
$CAP "$tielab" --headless --sandbox test_lua_matrix.lua >sbx.out 2>&1
status=$?
sed -E 's/^((not )?ok [0-9]+ - )/\1--sandbox: /' sbx.out >sbx.tap
tap_relay sbx.tap
[ "$status" -eq 0 ] && grep -q '^1\.\.[0-9]' sbx.out
ok $? "test_lua_matrix.lua ran to its end under --sandbox (status $status; $(grep -v '^\(not \)\{0,1\}ok ' sbx.out | head -c 300))"

cat >mem.lua <<'LUA'
print("big", select(2, pcall(lab.matrix, 4096, 4096)))   -- 64 MiB
local kept = {}
for i = 1, 10 do                                          -- 5.5 MiB each
  local made, m = pcall(lab.matrix, 1200, 1200, i)
  if not made then print("refused", m) break end
  kept[i] = m
end
print("kept", #kept)
kept = nil
collectgarbage()
local m = lab.matrix(1500, 1500, 1)                       -- 8.6 MiB
print("svd", select(2, pcall(m.svd, m)))
m = nil
collectgarbage()
print("goes on", lab.matrix(1000, 1000, 2):sum())
LUA
# line OUTPUT WORD: the first line of OUTPUT that starts with WORD.
line() { printf '%s\n' "$1" | grep -m1 "^$2"; }

for mode in "" --sandbox; do
  out=$($CAP "$tielab" --headless $mode --lua-mem 16 mem.lua 2>&1)
  label="--lua-mem 16${mode:+ $mode}"
  line "$out" big | grep -q "lab.matrix: a 4096x4096 matrix needs 64.0 MiB, more than the 1[0-9.]* MiB left of the Lua heap (--lua-mem 16 MiB)$"
  ok $? "$label: a 4096x4096 matrix is refused before it is made: $(line "$out" big)"
  [ "$(line "$out" kept)" = "kept	2" ] && line "$out" refused | grep -q "a 1200x1200 matrix needs 5.5 MiB, more than"
  ok $? "$label: the numbers count, so the third 1200x1200 is refused: $(line "$out" kept); $(line "$out" refused)"
  line "$out" svd | grep -q "m:svd: a 1500x1500 matrix needs 8.6 MiB, more than the .* (--lua-mem 16 MiB)$"
  ok $? "$label: so does what m:svd makes: $(line "$out" svd)"
  [ "$(line "$out" "goes on")" = "goes on	2000000.0" ]
  ok $? "$label: and the script goes on: $(line "$out" "goes on")"
done

# Past the machine: 8 GB of numbers under a 2 GB address space, with the
# heap's cap far above it (16 GiB).
if [ -n "${ASAN_OPTIONS:-}" ] || ! have prlimit; then
  skip "needs prlimit, and no AddressSanitizer (its shadow memory takes the address space)"
else
  echo 'print("huge", select(2, pcall(lab.matrix, 46000, 46000))) print("after", lab.matrix(2, 2, 1):sum())' >machine.lua
  out=$(prlimit --as=2000000000 -- "$tielab" --headless --lua-mem 16384 machine.lua 2>&1)
  line "$out" huge | grep -q "lab.matrix: a 46000x46000 matrix needs 7.9 GiB, more than the .* this process can still allocate (limit: .*)$" &&
    [ "$(line "$out" after)" = "after	4.0" ]
  ok $? "a matrix past what the process can get is refused, and the script goes on: $(line "$out" huge)"
fi
tap_done
