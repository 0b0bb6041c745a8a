#!/bin/sh
# test_inspect.sh -- tielab --inspect and lab.open_model on released-model
# folders written outside tielab (tests/lib/make_models.py, the Python
# standard library only): an untied model B in GPT-NeoX's layout, and a
# tied model A in GPT-Neo's whose matrix is B's output matrix with its
# tokens in a shuffled order, stored in bfloat16 across three shards.
# Table 1 must find the construction -- A far more like B's E_out than
# its E_in, well above the random baseline -- with every token paired by
# its string, not its row. Hostile folders are refused, naming the file
# and the problem; --json's last line carries the documented keys; Lua's
# lab.open_model, lab.shared_rows, lab.compare_models and lab.align on
# matrices agree with the command line.
tap_name=inspect; . "${srcdir:-.}/tests/lib/tap.sh"
top=$(cd "${srcdir:-.}" && pwd)
MAKE="$top/tests/lib/make_models.py"
[ -x "$py" ] || skip_all "no $py to write the model folders"
cd "$tmp" || exit 1

V=512 D=32
make_model() { "$py" "$MAKE" "$@" >>make.log 2>&1 || bail_out "make_models.py $*: $(tail -n 3 make.log)"; }
make_model gpt-neox B --vocab $V --dim $D --layers 2 --heads 4 --ctx 64 --untied --dtype f16 --seed 1
make_model gpt-neo A --vocab $V --dim $D --layers 2 --heads 4 --ctx 64 --tied --dtype bf16 --shards 3 \
  --from-head B --shuffle-seed 7 --seed 2
make_model gpt2 G2COPY --vocab 300 --dim 16 --layers 1 --heads 2 --ctx 16 --tied --head-copy
make_model gpt-neox C --vocab $V --dim $D --layers 2 --heads 4 --ctx 64 --untied --dtype f32 --seed 3

# json FILE KEY: KEY's value in the last line of FILE (a JSON object).
json() { tail -n 1 "$1" | "$py" -c "import json,sys; v=json.load(sys.stdin)$2; print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)"; }
# gt A B [MARGIN]: A > B + MARGIN.
gt() { awk -v a="$1" -v b="$2" -v m="${3:-0}" 'BEGIN { exit !(a != "" && b != "" && a + 0 > b + m) }'; }

# ---- one model
"$tielab" --inspect B >one.out 2>one.err
ok $? "--inspect B runs: $(head -n 1 one.err)"
grep -q "family     gpt-neox" one.out
ok $? "the family is named: $(grep family one.out)"
grep -q "embedding  $V x $D, F16" one.out
ok $? "the embedding's shape and type: $(grep embedding one.out)"
grep -q "tied       no: gpt_neox.embed_in.weight (E_in) and embed_out.weight (E_out)" one.out
ok $? "untied, with both tensors' names: $(grep tied one.out | head -n 1)"
grep -q "row norms  mean" one.out
ok $? "the embedding's row norms are measured"
tap_corpus corpus.txt 400
"$tielab" --inspect B --corpus corpus.txt --json >freq.out 2>freq.err
ok $? "--inspect B --corpus runs: $(head -n 1 freq.err)"
n_tok=$(json freq.out '["corpus_tokens"]')
gt "$n_tok" 1000
ok $? "the corpus is tokenized with B's tokenizer ($n_tok tokens)"
rho=$(json freq.out '["spearman_norm_frequency"]')
awk -v r="$rho" 'BEGIN { exit !(r != "" && r >= -1 && r <= 1) }'
ok $? "a rank correlation of norm and frequency ($rho)"

# ---- Table 1
"$tielab" --inspect A --against B --json --threads 2 >pair.out 2>pair.err
ok $? "--inspect A --against B runs: $(tail -n 1 pair.err)"
grep -q "tied       yes" pair.out
ok $? "A is tied (no head stored)"
shared=$(json pair.out '["shared_tokens"]')
tokens_b=$(json pair.out '["models"][1]["tokens"]')
[ -n "$shared" ] && [ "$shared" = "$tokens_b" ]
ok $? "every token is paired by its string ($shared of $tokens_b)"
lin_in=$(json pair.out '["linear_in"]') lin_out=$(json pair.out '["linear_out"]')
rnd_out=$(json pair.out '["random_linear_out"]')
gt "$lin_out" 0.99
ok $? "A is B's output matrix up to a rotation and bfloat16: linear_out $lin_out"
gt "$lin_out" "$lin_in" 0.3
ok $? "linear_out ($lin_out) far above linear_in ($lin_in)"
gt "$lin_out" "$rnd_out" 0.3
ok $? "linear_out above its random baseline ($rnd_out)"
pro_in=$(json pair.out '["procrustes_in"]') pro_out=$(json pair.out '["procrustes_out"]')
gt "$pro_out" "$pro_in" 0.3
ok $? "Procrustes finds it too ($pro_out against $pro_in)"
knn_out=$(json pair.out '["knn_out"]') knn_in=$(json pair.out '["knn_in"]')
gt "$knn_out" 0.9 && gt "$knn_out" "$knn_in" 0.3
ok $? "the neighbours agree with E_out's ($knn_out), not E_in's ($knn_in)"
cka_out=$(json pair.out '["cka_out"]') cka_in=$(json pair.out '["cka_in"]')
gt "$cka_out" "$cka_in" 0.3
ok $? "CKA too ($cka_out against $cka_in)"
keys=$(tail -n 1 pair.out | "$py" -c '
import json, sys
j = json.load(sys.stdin)
want = ["models", "shared_tokens"] + [p + m + "_" + s for m in ("linear", "procrustes", "knn", "cka")
                                     for s in ("in", "out") for p in ("", "random_")]
missing = [k for k in want if k not in j]
bad = [m for m in j["models"] if set(["family", "vocab", "dim", "dtype", "tied"]) - set(m) or not isinstance(m["tied"], bool)]
print(" ".join(missing) or ("bad models" if bad else "ok"))')
[ "$keys" = ok ]
ok $? "--json's last line has every documented key: $keys"
[ "$(json pair.out '["models"][0]["dtype"]')" = BF16 ] && [ "$(json pair.out '["models"][0]["tied"]')" = true ]
ok $? "A's entry: bfloat16, tied"
grep -q "closer to B's output matrix than to its input matrix on 4 of 4" pair.out
ok $? "the report counts the measures: $(grep closer pair.out)"
"$tielab" --inspect A --against B --json >again.out 2>/dev/null
cmp -s pair.out again.out
ok $? "stdout is the same from run to run (timings go to stderr)"

# An unrelated untied model: nothing to find.
"$tielab" --inspect A --against C --json >unrel.out 2>unrel.err
ok $? "--inspect A --against C runs: $(tail -n 1 unrel.err)"
u_out=$(json unrel.out '["linear_out"]') u_rnd=$(json unrel.out '["random_linear_out"]')
awk -v a="$u_out" -v b="$u_rnd" 'BEGIN { d = a - b; exit !(a != "" && d < 0.1 && d > -0.1) }'
ok $? "an unrelated model scores at its baseline ($u_out against $u_rnd)"

# ---- hostile folders: refused, naming the file and the problem
# A head whose shape is not the embedding's (a bare file: no config to catch it).
mkdir -p mism && "$py" - mism/model.safetensors <<'PY'
import json, struct, sys
head = json.dumps({"gpt_neox.embed_in.weight": {"dtype": "F32", "shape": [64, 4], "data_offsets": [0, 1024]},
                   "embed_out.weight": {"dtype": "F32", "shape": [4, 64], "data_offsets": [1024, 2048]}}).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head + bytes(range(256)) * 8)
PY
"$tielab" --inspect mism/model.safetensors >mism.out 2>mism.err
[ $? -eq 1 ] && grep -q "embed_out.weight is \[4, 64\] but the embedding gpt_neox.embed_in.weight is \[64, 4\]" mism.err
ok $? "a head stored transposed is refused, naming both shapes: $(head -n 1 mism.err)"

refused() {   # refused KIND PATTERN WHAT
  make_model gpt-neo "H-$1" --vocab $V --dim $D --layers 2 --heads 4 --ctx 64 --tied --shards 2 --hostile "$1"
  "$tielab" --inspect "H-$1" >"H-$1.out" 2>"H-$1.err"
  st=$?
  [ $st -eq 1 ] && grep -q "H-$1.*$2" "H-$1.err"
  ok $? "$3 is refused (status $st): $(head -n 1 "H-$1.err")"
}
refused config-says-tied "config.json does not say tie_word_embeddings.*holds a separate lm_head.weight" \
  "a config that says tied beside a separate head"
refused config-says-untied "config.json says tie_word_embeddings=false but no output head is stored" \
  "a config that says untied beside no head"
refused index-missing-shard "index.json: names shard .* which is not in" "a shard index naming a missing file"
refused index-escapes "a path outside the folder" "a shard index naming a file outside the folder"
refused index-unlisted "which does not hold it" "a tensor its shard does not list"
refused shard-duplicate "is in both model-00001" "a tensor held by two shards"
refused shape-disagrees "is \[511, 32\] but config.json says vocab_size=512" "a matrix whose shape disagrees with the config"
refused duplicate-token "duplicate object key" "a tokenizer with one token twice"
refused truncated-shard "beyond the .*-byte buffer" "a truncated shard"
"$tielab" --inspect nowhere >no.out 2>no.err
[ $? -eq 1 ] && grep -q "nowhere" no.err
ok $? "a missing folder is refused: $(head -n 1 no.err)"
"$tielab" --against B >use.out 2>use.err
[ $? -eq 2 ] && grep -q "against" use.err
ok $? "--against without --inspect is a usage error: $(head -n 1 use.err)"
"$tielab" --inspect A --dim 64 >use2.out 2>use2.err
[ $? -eq 2 ]
ok $? "a run setting is refused with --inspect: $(head -n 1 use2.err)"

# ---- memory: the estimate, before anything is read. A sparse file
# whose header says 50000 x 2048 float32 (400 MB) costs no disk.
mkdir big && "$py" - big <<'PY'
import json, struct, sys
n = 50000 * 2048 * 4
head = json.dumps({"gpt_neox.embed_in.weight": {"dtype": "F32", "shape": [50000, 2048], "data_offsets": [0, n]},
                   "embed_out.weight": {"dtype": "F32", "shape": [50000, 2048], "data_offsets": [n, 2 * n]}}).encode()
with open(sys.argv[1] + "/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head)
    f.truncate(8 + len(head) + 2 * n)
    f.seek(8 + len(head) + n)   # a head that differs from the embedding: untied
    f.write(struct.pack("<f", 1.0))
with open(sys.argv[1] + "/config.json", "w") as f:
    json.dump({"model_type": "gpt_neox", "vocab_size": 50000, "hidden_size": 2048, "tie_word_embeddings": False}, f)
PY
if have prlimit && [ -z "${ASAN_OPTIONS:-}" ]; then
  prlimit --as=350000000 -- "$tielab" --inspect big >mem.out 2>mem.err
  st=$?
  [ $st -eq 1 ] && grep -q "needs 390.6 MiB, more than the .* MiB this process can still allocate" mem.err
  ok $? "under a 350 MB cap a 400 MB matrix is refused with the estimate (status $st): $(tail -n 1 mem.err)"
else
  skip "prlimit is not there, or AddressSanitizer reserves the address space"
fi

# ---- Lua: the same numbers
cat >lua.lua <<'LUA'
package.path = (os.getenv("srcdir") or ".") .. "/tests/lib/?.lua;" .. package.path
local tap = require "tap"
local a, b = lab.open_model("A"), lab.open_model("B")
tap.is(a.family, "gpt-neo", "a.family")
tap.ok(a.tied == true and b.tied == false, "a tied, b untied")
tap.is(a.dtype, "BF16", "a.dtype")
tap.ok(a.E_in.rows == a.vocab and a.E_in.cols == a.dim, "a.E_in is [vocab, dim]")
tap.ok(rawequal(a.E_in, a.E_out), "a tied model's E_in and E_out are one matrix")
local id = b:id(" the") or b:id("the") or 300
tap.is(b:id(b:token(id)), id, "m:id(m:token(id)) == id")
local x, b_in, b_out, ids = lab.shared_rows(a, b)
tap.is(x.rows, #ids.a, "shared_rows: one row per shared token")
tap.is(a:token(ids.a[5]), b:token(ids.b[5]), "a paired row stands for the same token in both")
local s = lab.align(b_out, x)
local t = lab.compare_models(a, b)
tap.ok(math.abs(s.linear - t.linear_out) < 1e-9, "lab.align on the shared rows gives compare_models' linear_out")
tap.ok(t.linear_out > t.linear_in + 0.3, "compare_models finds the construction")
io.write(string.format("LUA %.12f %.12f %d\n", t.linear_in, t.linear_out, t.shared_tokens))
local ok, err = pcall(lab.align, x, lab.matrix(3, 3))
tap.ok(not ok and tostring(err):find("3 x 3"), "lab.align on mismatched shapes names them: " .. tostring(err))
local g = assert(lab.load("G2COPY"))
tap.ok(#g:param_names() > 0, "a tied GPT-2 folder that also stores lm_head.weight loads as a run")
tap.done()
LUA
srcdir=$top "$tielab" --headless lua.lua >lua.out 2>lua.err
st=$?
tap_relay lua.out
[ $st -eq 0 ]
ok $? "the Lua checks pass: $(tail -n 2 lua.err)"
lua_line=$(grep '^LUA ' lua.out)
cli_line=$(printf 'LUA %.12f %.12f %d' "$lin_in" "$lin_out" "$shared")
[ "$lua_line" = "$cli_line" ]
ok $? "Lua and the command line give the same Table 1 ($lua_line)"
# A folder inside the working directory whose files link outside it.
out=$(mktemp -d "${TMPDIR:-/tmp}/tielab-outside.XXXXXX")
echo SECRETPASSWORD >"$out/secret"
cp -r B SB && rm SB/tokenizer.json && ln -s "$out/secret" SB/tokenizer.json
cp -r G2COPY SG && mv SG/model.safetensors "$out/" && ln -s "$out/model.safetensors" SG/model.safetensors
mkdir -p SD/sub && cp -r B/* SD/ && rm -r SD/sub && ln -s "$out" SD/sub
for probe in 'lab.open_model("SB")' 'lab.load("SG")' 'lab.open_model("SD")'; do
  echo "$probe" >sb.lua
  "$tielab" --headless --sandbox sb.lua >sb.out 2>sb.err
  st=$?
  [ $st -ne 0 ] && grep -q "outside the folders this script may read (sandbox)" sb.err && ! grep -q SECRET sb.err
  ok $? "sandboxed, $probe is refused before any linked file is read: $(head -n 1 sb.err)"
done
rm -rf "$out"
echo 'lab.open_model("/etc")' >sb.lua
"$tielab" --headless --sandbox sb.lua >sb.out 2>sb.err
[ $? -ne 0 ] && grep -q "sandbox" sb.err
ok $? "a sandboxed script cannot open a model outside its folders: $(head -n 1 sb.err)"
tap_done
