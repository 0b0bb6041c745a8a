#!/bin/sh
# test_tokenizer_ui.sh -- the sample panel says when a run's text is decoded
# with a tokenizer its model did not train with: at 80x24 in a private tmux
# server (tests/lib/tmux.sh), a run loaded from a weights-only file (a
# checkpoint's model tensors written back by Python's standard library, as
# docs/interop.md does) shows "(tokenizer not its own)" in the panel's
# title, and a run loaded from the checkpoint itself shows none. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=tokenizer; . "$top_srcdir/tests/lib/tmux.sh"
[ -x "$py" ] || skip_all "no $py to write a weights-only file"

cd "$WORK" || exit 1
cat >make.lua <<'LUA'
local r = lab.run{name = "orig", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}
r:step(2)
assert(r:save("ck.safetensors"))
LUA
$ENV "$TIELAB" --headless make.lua >make.out 2>&1 || bail_out "no checkpoint: $(cat make.out)"
"$py" - <<'PY' || bail_out "Python could not write the weights-only file"
import json, struct
with open("ck.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
meta = header.pop("__metadata__")
out, blobs, offset = {"__metadata__": {"n_head": meta["n_head"]}}, [], 0
for name, t in header.items():
    if name.startswith(("transformer.", "lm_head.")):
        a, b = t["data_offsets"]
        blobs.append(data[a:b])
        out[name] = dict(t, data_offsets=[offset, offset + b - a])
        offset += b - a
head = json.dumps(out).encode()
head += b" " * (-len(head) % 8)
with open("weights.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))
PY
cat >load.lua <<'LUA'
lab.load("ck.safetensors", "ck")
lab.load("weights.safetensors", "w")
LUA

session 80 24
start load.lua
wait_for '●ck tied in.1 │ w tied' 300
check $? "both runs loaded"
key Tab
wait_for '│ ●w tied' 100
check $? "Tab selects the weights-only run"
key n
wait_for 'w writes @1 \(tokenizer not its own\):' 300
check $? "the weights-only run's sample says its tokenizer is not its own"
key Tab
wait_for 'ck writes @3:' 100 && ! screen | grep -q 'ck writes @3 ('
check $? "the checkpoint's run, decoded with its own tokenizer, says nothing of it"
quit_unsaved
check $? "q quits with status 0"
finish
