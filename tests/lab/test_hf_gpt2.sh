#!/bin/sh
# test_hf_gpt2.sh -- GPT-2 model folders as Hugging Face lays them out,
# loaded as runs: two tiny models written by tests/lib/make_models.py (one
# tied, names bare, float32, tokenizer.json; one untied, names under
# "transformer.", bfloat16 in two shards, vocab.json + merges.txt), each
# checked for its parameters bit for bit against what was written (Conv1D
# weights transposed), its tokenizer's ids against GPT-2's encoder
# (tests/lib/hf_gpt2_expect.py works both out apart from tielab), its loss
# on given rows against the PyTorch reference reading the same folder
# (skipped without it), r:step refused without a corpus, the round trip
# through r:save, a corpus run that fine-tunes (in_scale, untying, a hook, a
# lens fit) and resumes from its checkpoint exactly, and the memory refusal
# with the estimate.
tap_name=hf_gpt2; . "${srcdir:-.}/tests/lib/tap.sh"
lib="$(cd "${srcdir:-.}" && pwd)/tests/lib"
peer_hf=$lib/peer_hf_gpt2.py
peer_wants=path; . "$lib/peer.sh"
[ -x "$py" ] || skip_all "no $py to write the model folders"
cd "$tmp" || exit 1

printf '%s\n' "the cat sat on the mat." "Hello, world! the dog ran 42 times." \
  "  two spaces, then the others' cats: they'll watch them there." >texts.txt
"$py" "$lib/make_models.py" gpt2 tied --tokenizer bpe --seed 1 >/dev/null &&
  "$py" "$lib/make_models.py" gpt2 untied --untied --prefix --tokenizer vocab --dtype bf16 --shards 2 \
    --seed 2 >/dev/null &&
  "$py" "$lib/hf_gpt2_expect.py" tied texts.txt && "$py" "$lib/hf_gpt2_expect.py" untied texts.txt
ok $? "two GPT-2 folders written (tied: float32, tokenizer.json; untied: bfloat16 in shards, vocab.json + merges.txt)"
vocab=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["vocab_size"])' tied/config.json)

# Rows of ids to evaluate, as a Lua table and as raw int32 for the reference.
"$py" - "$vocab" <<'EOF' >rows.lua
import random, struct, sys
r = random.Random(7)
rows = [[r.randrange(int(sys.argv[1])) for _ in range(17)] for _ in range(2)]
open("rows.bin", "wb").write(struct.pack("<%di" % 34, *sum(rows, [])))
print("return {" + ", ".join("{" + ", ".join(map(str, x)) + "}" for x in rows) + "}")
EOF

run() {   # run NAME: NAME.lua's output in NAME.out
  $CAP "$tielab" --headless "$1.lua" >"$1.out" 2>&1
}

# What a run shows of itself: P lines (every parameter, %.9g), T lines (the
# ids of each line of texts.txt), and the rest tagged.
cat >show.lua <<'EOF'
local function show(r)
  for _, name in ipairs(r:param_names()) do
    local m, t = r:param(name), {name}
    for i = 1, m.rows do for j = 1, m.cols do t[#t + 1] = string.format("%.9g", m:get(i, j)) end end
    print("P " .. table.concat(t, " "))
  end
  for line in io.lines("texts.txt") do
    local ids = r:tokenize(line)
    print("T " .. table.concat(ids, " "))
    assert(r:detokenize(ids) == line, "detokenize gives the text back")
  end
  local t = r:tokenizer()
  print("K", t.kind, t.source, t.ids, t.own)
  print(string.format("E %.17g", r:evaluate(dofile("rows.lua")).loss))
end
return show
EOF

for m in tied untied; do
  cat >"$m.lua" <<EOF
local show = dofile("show.lua")
print("D", assert(lab.load("$m", "plain")):options().batch)
local r = assert(lab.load("$m", {batch = 2}))
print("N", r.name)
show(r)
local h = r:hidden({dofile("rows.lua")[1]})
print("H", #h, h[1].rows, h[1].cols)
if io.open("$m/model.safetensors") then   -- one file, not shards
  local f = assert(lab.load("$m/model.safetensors", {batch = 2, name = "file"}))
  print(string.format("F %s %.17g", f:tokenizer().kind, f:evaluate(dofile("rows.lua")).loss))
  f:remove()
end
print("S", pcall(r.step, r, 1))
print("S2", pcall(r.evaluate_val, r))
print("S3", pcall(r.fit_lens, r, {steps = 2}))
print("X", type(r:sample{n = 12, seed = 3}))
assert(r:save("$m.ckpt.safetensors"))
EOF
  run "$m"
  ok $? "$m: lab.load of the folder, r:param, r:tokenize, r:evaluate, r:hidden, r:save: $(grep -i 'error\|traceback' "$m.out" | head -n 1)"
  grep -q "^N	$m\$" "$m.out"
  ok $? "$m: the run is named after the folder"
  if [ -f "$m/model.safetensors" ]; then
    [ "$(grep '^F ' "$m.out")" = "F pretrained $(grep '^E ' "$m.out" | cut -c3-)" ]
    ok $? "$m: its model.safetensors beside config.json loads as the folder does"
  fi
  grep -q "^D	1\$" "$m.out"
  ok $? "$m: its batch is 1 unless one is given"
  grep '^P ' "$m.out" | cut -c3- | cmp -s - "$m.params"
  ok $? "$m: every parameter is what the folder holds, bit for bit, Conv1D weights transposed ($(grep -c '^P ' "$m.out") tensors)"
  grep '^T ' "$m.out" | cut -c3- | cmp -s - "$m.ids"
  ok $? "$m: r:tokenize gives the ids GPT-2's encoder gives with this vocabulary ($(head -n 1 "$m.ids"))"
  grep -q "^K	pretrained	.*$m/[a-z]*\.json	$vocab	true\$" "$m.out"
  ok $? "$m: r:tokenizer() says it is the model's own: $(grep '^K' "$m.out")"
  grep -q "^H	3	16	16\$" "$m.out"
  ok $? "$m: r:hidden gives the residual stream at the 3 positions of 2 layers"
  grep "^S	" "$m.out" | grep -q "false.*needs a corpus to train.*lab.load(path, {corpus = FILE})"
  ok $? "$m: r:step refuses without a corpus, saying how to give one: $(grep '^S	' "$m.out" | cut -c1-120)"
  grep "^S2" "$m.out" | grep -q "false.*needs a corpus to measure its validation loss" &&
    grep "^S3" "$m.out" | grep -q "false.*needs a corpus to fit its lens on"
  ok $? "$m: so do r:evaluate_val and r:fit_lens"
  grep -q "^X	string" "$m.out"
  ok $? "$m: r:sample writes text"
  if [ -f "$peer" ] && "$py" -c "import torch" >/dev/null 2>&1; then
    want=$("$py" "$peer_hf" "$peer" "$m" rows.bin 2 2>peer.err)
    got=$(grep '^E ' "$m.out" | cut -c3-)
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b != "" && d <= 1e-5 * b) }'
    ok $? "$m: r:evaluate's loss $got is the PyTorch reference's $want on the same folder (1e-5 relative) $(tail -n 1 peer.err)"
  else
    skip "$m: no PyTorch reference at $peer, or $py cannot import torch"
  fi

  # The checkpoint holds the tokenizer: the same run comes back.
  cat >"$m-back.lua" <<EOF
local r = assert(lab.load("$m.ckpt.safetensors", "back"))
dofile("show.lua")(r)
EOF
  run "$m-back"
  ok $? "$m: its checkpoint loads: $(grep -i 'error\|traceback' "$m-back.out" | head -n 1)"
  for tag in P T E; do
    [ "$(grep "^$tag " "$m.out")" = "$(grep "^$tag " "$m-back.out")" ]
    ok $? "$m: the checkpoint gives back the same $(case $tag in P) echo parameters ;; T) echo ids ;; E) echo loss ;; esac)"
  done
  grep -q "^K	pretrained	.*$m/[a-z]*\.json	$vocab	true\$" "$m-back.out"
  ok $? "$m: and the same tokenizer, still the model's own: $(grep '^K' "$m-back.out")"
done

# A checkpoint's tokenizer is read as warily as the rest: a file name that
# is none of a tokenizer's, or its files without the metadata saying whose.
rewrite() {   # rewrite IN OUT PYTHON: the header's JSON 'h' changed by PYTHON
  "$py" - "$1" "$2" "$3" <<'EOF'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
exec(sys.argv[3])
b = json.dumps(h).encode()
b += b" " * (-len(b) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(b)) + b + raw[8 + n:])
EOF
}
rewrite tied.ckpt.safetensors evil.safetensors \
  'h["tokenizer.file.../evil.json"] = h.pop("tokenizer.file.tokenizer.json")'
rewrite tied.ckpt.safetensors nokind.safetensors 'del h["__metadata__"]["tokenizer.kind"]'
cat >hostile.lua <<'EOF'
print("Y", lab.load("evil.safetensors"))
print("Z", lab.load("nokind.safetensors"))
EOF
run hostile
grep "^Y" hostile.out | grep -q "nil.*evil.safetensors: .*a tokenizer file named '../evil.json', expected tokenizer.json"
ok $? "a checkpoint naming a tokenizer file outside the three is refused: $(grep '^Y' hostile.out | cut -c1-160)"
grep "^Z" hostile.out | grep -q "nil.*nokind.safetensors: tensor 'tokenizer.file.tokenizer.json' without metadata 'tokenizer.kind'"
ok $? "and one holding the files without saying their kind: $(grep '^Z' hostile.out | cut -c1-160)"

# A corpus read with the model's tokenizer: batches, validation, a lens
# fit, fine-tuning with in_scale, untying and a hook, and a resume.
i=0
while [ $i -lt 120 ]; do
  echo "the cat sat on the mat $i times. then the dog ran to the park, and the other cats watched them there."
  i=$((i + 1))
done >corpus.txt
cat >hook.lua <<'EOF'
return function(r)
  r:on_hidden(1, function(h, dh) dh:add(h, 0.01 / h.rows); return 0.005 * h:dot(h) / h.rows end)
end
EOF
cat >corpus.lua <<'EOF'
local r = assert(lab.load("tied", {corpus = "corpus.txt", batch = 2, name = "c"}))
print("B", #r:batch(), #r:batch()[1])
local ids = r:tokenize("the cat sat on the mat 0 times.")
local row = r:batch(1)[1]
print("V", r:metrics().val_loss == r:metrics().val_loss)
print("F", r:fit_lens{steps = 3} ~= nil)
dofile("hook.lua")(r)
r:set{in_scale = 2}
local m = r:step(2)
print("A", m.step, m.loss == m.loss, m.aux_loss == m.aux_loss)
r:set{tie = "untied"}
r:step(1)
assert(r:save("c.ckpt.safetensors"))
print(string.format("L %.17g", r:step(1).loss))
print("K", r:tokenizer().kind)
EOF
run corpus
ok $? "a corpus run: $(grep -i 'error\|traceback' corpus.out | head -n 1)"
grep -q "^B	2	33\$" corpus.out
ok $? "r:batch gives batch 2 rows of the model's ctx+1 ids"
grep -q "^V	true" corpus.out
ok $? "its validation loss is measured on the corpus's held-out split"
grep -q "^F	true" corpus.out
ok $? "r:fit_lens fits on the corpus"
grep -q "^A	2	true	true" corpus.out
ok $? "it fine-tunes with in_scale 2 and a hook: $(grep '^A' corpus.out)"
cat >resume.lua <<'EOF'
local r = assert(lab.load("c.ckpt.safetensors"))
dofile("hook.lua")(r)
print(string.format("L %.17g", r:step(1).loss))
print("K", r:tokenizer().kind, r:options().tie)
EOF
run resume
ok $? "its checkpoint resumes: $(grep -i 'error\|traceback' resume.out | head -n 1)"
[ -n "$(grep '^L' corpus.out)" ] && [ "$(grep '^L' corpus.out)" = "$(grep '^L' resume.out)" ]
ok $? "and takes the next step exactly as the run did: $(grep '^L' resume.out)"
grep -q "^K	pretrained	untied" resume.out
ok $? "untied, with the model's tokenizer"

mv corpus.txt gone.txt
cat >gone.lua <<'EOF'
local r = assert(lab.load("c.ckpt.safetensors"))
print("G", r:tokenizer().kind, r:evaluate_val().loss > 0, pcall(r.step, r, 1))
EOF
run gone
grep -q "^G	pretrained	true	false	.*corpus.txt' was not found" gone.out
ok $? "with its corpus gone it validates on the held-out tokens it keeps, and refuses to train: $(grep '^G' gone.out | cut -c1-100)"

# Memory: the estimate is refused before anything is allocated.
cat >big.lua <<'EOF'
local r, err = lab.load("tied", {batch = 4096})
print("M", r, err)
EOF
if have prlimit && [ -z "${ASAN_OPTIONS:-}" ]; then
  prlimit --as=600000000 -- "$tielab" --headless big.lua >big.out 2>&1
  grep "^M" big.out | grep -q "nil	tied: run 'tied' needs [0-9.]* [MG]iB, more than the [0-9.]* [MG]iB this process can still allocate (limit: RLIMIT_AS); .*batch"
  ok $? "a batch that does not fit is refused with the estimate: $(grep '^M' big.out | cut -c1-200)"
else
  skip "prlimit is not there, or AddressSanitizer reserves the address space"
fi
tap_done
