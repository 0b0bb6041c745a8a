#!/bin/sh
# test_interop.sh -- docs/interop.md as its reader runs it: every Python
# block of the document (tests/lib/doc_blocks.py) against a checkpoint
# tielab wrote, each block's output compared with what tielab computes from
# the same file: the metadata and tensor names, the tokenizer's decoding
# (a piece of the corpus) and encoding (r:tokenize's ids), the loss of the
# PyTorch forward (r:evaluate's); and the files the document writes from
# Python, read back by lab.load: the same loss, the tie, and r:tokenizer
# saying the tokenizer is not the model's own (or the corpus's, named).
# Blocks needing torch (or nanoGPT, NANOGPT naming its folder) skip where
# that is missing; the standard-library blocks need only python3.
tap_name=interop; . "${srcdir:-.}/tests/lib/tap.sh"
top=$(cd "${srcdir:-.}" && pwd)
DOC=$top/docs/interop.md
BLOCKS=$top/tests/lib/doc_blocks.py
[ -x "$py" ] || skip_all "no $py to run the document's Python"
cd "$tmp" || exit 1
i=0
while [ $i -lt 300 ]; do
  echo "line $i: the quick brown fox jumps over the lazy dog, then $((i * 7 % 13)) more."
  i=$((i + 1))
done >corpus.txt
TEXT='line 7: the quick brown fox jumps over the lazy dog'

# lua NAME: the script on stdin, run headless; its output in NAME.out.
lua() {
  cat >"$1.lua"
  $CAP "$tielab" --headless "$1.lua" >"$1.out" 2>&1
}
# field NAME KEY: the rest of the line of NAME.out that starts with KEY.
field() { sed -n "s/^$2 //p" "$1.out" 2>/dev/null | head -n 1; }
# close A B: two losses within 1e-4 (float32 sums in another order).
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 1e-4 && d > -1e-4) }'; }

# The document's own Lua, then what tielab says of the file it wrote.
{
  awk '/^```lua$/ { on = 1; next } /^```$/ && on { exit } on' "$DOC"
  cat <<LUA
local ids = r:tokenize("$TEXT")
print("encoded [" .. table.concat(ids, ", ") .. "]")
local row = {}
for k = 1, 9 do row[k] = ids[k] end
print("row " .. table.concat(row, ", "))
print(string.format("loss %.6f", r:evaluate{row}.loss))
print(string.format("exact %.17g", r:evaluate{row}.loss))
print("tokenizer " .. r:tokenizer().text)
LUA
} | lua save
ok $? "the document's Lua writes tied.safetensors: $(grep -i 'error' save.out | head -n 1)"
[ -s tied.safetensors ] || bail_out "no checkpoint to read: $(cat save.out)"

mkdir out
"$py" "$BLOCKS" "$DOC" out >blocks.txt 2>blocks.err
ok $? "tests/lib/doc_blocks.py runs the document's blocks: $(tail -n 1 blocks.err)"
[ "$(wc -l <blocks.txt)" -eq 8 ]
ok $? "the document has its 8 Python blocks: $(tr '\n' ';' <blocks.txt)"
# ran N: block N ran and ended well; 1 when it could not run (a need unmet).
ran() {
  st=$(sed -n "s/^$1 ran \([0-9]*\) .*/\1/p" blocks.txt)
  [ -n "$st" ] || return 2
  [ "$st" = 0 ] || { echo "# block $1: $(tail -n 2 "out/$1.err" | tr '\n' ' ')"; return 1; }
}
# check_block N WHAT TEST...: WHAT passes when block N ran and TEST holds;
# a skip naming the unmet need when it could not run.
check_block() {
  b=$1 what=$2
  shift 2
  ran "$b"
  case $? in
    2) skip "block $b needs $(sed -n "s/^$b unmet //p" blocks.txt)" ;;
    1) ok 1 "$what" ;;
    *) "$@"; ok $? "$what" ;;
  esac
}

check_block 1 "reading the file: the format and the shape from the metadata ($(head -n 2 out/1.out | tr '\n' ' '))" \
  grep -qx 'format tielab-checkpoint step 5' out/1.out
grep -qx 'shape 300 16 1 2 8 tied' out/1.out
ok $? "the shape under nanoGPT's keys and the tie"
check_block 2 "the model's tensors, F32, nanoGPT's names and shapes, no lm_head.weight when tied" \
  sh -c "grep -qx 'transformer.wte.weight F32 \[300, 16\]' out/2.out &&
         grep -qx 'transformer.h.0.attn.c_attn.weight F32 \[48, 16\]' out/2.out &&
         grep -qx 'transformer.h.0.mlp.c_proj.weight F32 \[16, 64\]' out/2.out &&
         grep -qx 'False tied' out/2.out && [ \$(grep -c '^transformer\.\|^lm_head\.' out/2.out) -eq 16 ]"
check_block 3 "decoding the held-out tokens gives a piece of the corpus: $(head -n 1 out/3.out | cut -c1-60 | tr -d '\\')" \
  "$py" -c "import ast, sys; line = open('out/3.out').readline(); s = ast.literal_eval(line.split(' ', 1)[1]); \
sys.exit(not (len(s) > 20 and s in open('corpus.txt').read()))"
check_block 4 "encoding as r:tokenize does: $(field out/4 encoded | cut -c1-60)" \
  test "$(grep '^encoded' out/4.out)" = "$(grep '^encoded' save.out)"
check_block 5 "the PyTorch forward's loss is r:evaluate's ($(field out/5 loss) against $(field save loss))" \
  close "$(field out/5 loss)" "$(field save loss)"
check_block 6 "nanoGPT's loss is r:evaluate's ($(field out/6 'nanogpt loss') against $(field save loss))" \
  close "$(field out/6 'nanogpt loss')" "$(field save loss)"

row=$(field save row)
check_block 7 "the standard library writes from_python.safetensors" test -s from_python.safetensors
lua back <<LUA
local r = assert(lab.load("from_python.safetensors"))
print(string.format("exact %.17g", r:evaluate{{$row}}.loss))
print("tie " .. r:metrics().tie)
local t = r:tokenizer()
print("kind " .. t.kind)
print("own " .. tostring(t.own))
print("tokenizer " .. t.text)
local c = assert(lab.load("from_python.safetensors", {corpus = "corpus.txt", name = "with_corpus"}))
print("corpus_tokenizer " .. c:tokenizer().text)
print("corpus_kind " .. c:tokenizer().kind)
print("corpus_encoded [" .. table.concat(c:tokenize("$TEXT"), ", ") .. "]")
print("sample " .. #c:sample{n = 5})
LUA
ok $? "lab.load reads it: $(grep -i 'error' back.out | head -n 1)"
[ "$(field back exact)" = "$(field save exact)" ] && [ "$(field back tie)" = tied ]
ok $? "the same model: r:evaluate's loss bit for bit ($(field back exact)), tied"
[ "$(field back kind)" = synthetic ] && [ "$(field back own)" = false ] &&
  field back tokenizer | grep -q "^learned from the synthetic language, [0-9]* ids (not the model's own: its file held none)$"
ok $? "r:tokenizer says its tokenizer is not the model's own: $(field back tokenizer)"
field save tokenizer | grep -q "^learned from .*corpus.txt, [0-9]* ids$"
ok $? "a run trained here names its corpus: $(field save tokenizer)"
[ "$(field back corpus_kind)" = text ] &&
  field back corpus_tokenizer | grep -q "^learned from corpus.txt, [0-9]* ids (not the model's own" &&
  [ "$(sed -n 's/^corpus_encoded //p' back.out)" = "$(field save encoded)" ]
ok $? "with {corpus = FILE} the tokenizer is learned from it, the very one the model had: $(field back corpus_tokenizer)"

# Without n_head, the error the document quotes.
"$py" - <<'PY'
import json, struct
with open("from_python.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
header["__metadata__"] = {}
head = json.dumps(header).encode()
head += b" " * (-len(head) % 8)
with open("no_heads.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head + data)
PY
lua noheads <<'LUA'
print("load", lab.load("no_heads.safetensors"))
LUA
grep -q "^load	nil	.*no_heads.safetensors: no n_head in the metadata: the number of heads cannot be inferred" noheads.out
ok $? "without n_head: $(cut -c1-150 noheads.out)"

check_block 8 "PyTorch writes an untied model (its loss $(field out/8 'untied loss'))" test -s from_torch.safetensors
if ran 8; then
  lua torch <<LUA
local r = assert(lab.load("from_torch.safetensors"))
print("tie " .. r:metrics().tie)
print(string.format("loss %.6f", r:evaluate{{$row}}.loss))
LUA
  [ "$(field torch tie)" = untied ] && close "$(field torch loss)" "$(field out/8 'untied loss')"
  ok $? "lab.load reads it untied, with the loss PyTorch computed ($(field torch loss))"
else
  skip "block 8 did not run"
fi

# A checkpoint whose corpus is gone decodes with the tokenizer it stores.
mv corpus.txt gone.txt
lua moved <<'LUA'
local r = assert(lab.load("tied.safetensors"))
print("tokenizer " .. r:tokenizer().text)
print("kind " .. r:tokenizer().kind .. " " .. tostring(r:tokenizer().own))
LUA
[ "$(field moved kind)" = "checkpoint true" ] &&
  field moved tokenizer | grep -q "^stored in the checkpoint tied.safetensors, [0-9]* ids$"
ok $? "a checkpoint loaded without its corpus says its tokenizer is the one it stores: $(field moved tokenizer)"
tap_done
