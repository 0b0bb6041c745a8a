#!/bin/sh
# test_lua_peer.sh -- r:evaluate from Lua on a weights file written by the
# PyTorch reference (torch_gpt.py save) against the reference's own 'grad'
# output in float64: the loss, both embedding-gradient components and every
# tensor's gradient norm, tied and untied, and with in_scale 3. Skipped when
# the reference or a python3 with torch is missing (TIELAB_PEER may point at
# torch_gpt.py).
tap_name=luapeer; . "${srcdir:-.}/tests/lib/tap.sh"
peer_wants=torch; . "${srcdir:-.}/tests/lib/peer.sh"

# The reference's JSON becomes a Lua table the script compares with.
to_lua='import json,sys
d=json.load(open(sys.argv[1]))
c=d["embedding_grad_components"]
print("return {loss=%r, grad_in=%r, grad_out=%r, norms={" % (d["loss"], c["grad_from_input_norm"], c["grad_from_output_norm"]))
for k,v in d["grad_norms"].items(): print("  [%r]=%r," % (k, v))
print("}}")'

cat > "$tmp/check.lua" <<'LUA'
local lab = require "tielab"
local model, tokens, want_file, s_in, label, first = arg[1], arg[2], arg[3], tonumber(arg[4]), arg[5], tonumber(arg[6])
local want = dofile(want_file)
local f = assert(io.open(tokens, "rb"))
local bytes = f:read("a")
f:close()
local rows, T = {}, 16
for i = 0, #bytes // 4 - 1 do
  local r = i // (T + 1) + 1
  rows[r] = rows[r] or {}
  rows[r][#rows[r] + 1] = string.unpack("<i4", bytes, 4 * i + 1)
end
local r = assert(lab.load(model, label))
r:set{in_scale = s_in}
local e = r:evaluate(rows)
local n = first
local function check(cond, what)
  print((cond and "ok " or "not ok ") .. n .. " - " .. label .. ": " .. what)
  n = n + 1
end
local function rel(a, b) return math.abs(a - b) / math.max(math.abs(b), 1e-30) end
check(math.abs(e.loss - want.loss) < 1e-5, string.format("loss %.8f vs reference %.8f", e.loss, want.loss))
check(rel(e.grad_in, want.grad_in) < 1e-4, string.format("grad_in %.6g vs %.6g", e.grad_in, want.grad_in))
check(rel(e.grad_out, want.grad_out) < 1e-4, string.format("grad_out %.6g vs %.6g", e.grad_out, want.grad_out))
local worst, worst_name, count = 0, "", 0
for name, v in pairs(want.norms) do
  local got = e.grad_norm[name]
  local d = got and rel(got, v) or math.huge
  if d > worst then worst, worst_name = d, name end
  count = count + 1
end
check(worst < 1e-4, string.format("every tensor's gradient norm (%d) within 1e-4, worst %.2e (%s)", count, worst, worst_name))
LUA

for spec in "tied 1" "untied 1" "tied 3"; do
  set -- $spec
  tie=$1 s=$2
  m=$tmp/$tie.safetensors t=$tmp/$tie.bin
  if [ ! -f "$m" ]; then
    "$py" "$peer" save --vocab 64 --d 32 --layers 2 --heads 4 --ctx 16 --batch 3 --seed 5 --tie "$tie" \
      --model "$m" --tokens "$t" >/dev/null 2>"$tmp/err" || { sed 's/^/# /' "$tmp/err"; bail_out "the reference cannot save a $tie model"; }
  fi
  "$py" "$peer" grad --model "$m" --tokens "$t" --dtype float64 --s-in "$s" > "$tmp/want.json" 2>"$tmp/err" &&
    "$py" -c "$to_lua" "$tmp/want.json" > "$tmp/want.lua" ||
    { sed 's/^/# /' "$tmp/err"; bail_out "the reference cannot take the gradient of the $tie model"; }
  "$tielab" --headless "$tmp/check.lua" "$m" "$t" "$tmp/want.lua" "$s" "$tie-s$s" "$((n + 1))" >"$tmp/out" 2>&1
  st=$?
  cat "$tmp/out"
  n=$((n + $(grep -c -E '^(not )?ok ' "$tmp/out")))
  failed=$((failed + $(grep -c -E '^not ok ' "$tmp/out")))
  [ $st -eq 0 ] || ok 1 "$tie, s_in $s: the check script ended with status $st"
done
tap_done
