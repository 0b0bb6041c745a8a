#!/bin/sh
# test_hfmodel.sh -- released checkpoints (hfmodel.h) read from small
# models tests/lib/make_models.py writes in each family's layout: the
# family, embedding and head found by name, in a folder and as a bare file;
# float32, float16 and bfloat16, one file and three shards, tied and
# untied, every value read bit for bit; each hostile model refused with a
# message naming its file and its problem; a tensor too large for the
# memory left refused with the estimate; GPT-2's Conv1D weights transposed
# into the reference model's layout.

tap_name=hfmodel; . "${srcdir:-.}/tests/lib/tap.sh"

have python3 || skip_all "python3 is not installed"
probe="${top_builddir:-.}/tests/core/hfprobe"
[ -x "$probe" ] || bail_out "tests/core/hfprobe is not built"
make_models="${srcdir:-.}/tests/lib/make_models.py"

# The models, written by one run of make_models.py (starting Python costs
# more than writing a small model): NAME FAMILY ARGS, one a line.
{
  for fam in gpt2 gpt-neo gpt-neox olmo olmo-original llama qwen2 qwen3 gemma; do
    echo "$fam $fam --seed 3"
    echo "$fam-bare $fam --bare --seed 4"
  done
  for dtype in f32 f16 bf16; do
    for shards in 1 3; do
      echo "llama-$dtype-$shards llama --dtype $dtype --shards $shards --untied --seed 5"
      echo "gpt2-$dtype-$shards gpt2 --dtype $dtype --shards $shards --tied --prefix --seed 6"
    done
  done
  for v in "tied f32 1" "untied bf16 3" "tied f16 3"; do
    set -- $v
    echo "gpt2-ref-$1-$2-$3 gpt2 --$1 --dtype $2 --shards $3 --layers 3 --dim 24 --heads 3 --ctx 20 --seed 9"
  done
  [ -n "$CAP" ] && echo "big llama --zeros --vocab 50000 --dim 1024 --layers 1 --dtype bf16 --tied"
  cat <<'EOF'
olmo-orig-tied olmo-original --tied --shards 3 --dtype bf16
qwen3-tied qwen3 --tied --dtype f16
neox-untied-3 gpt-neox --untied --shards 3
head-copy llama --head-copy --dtype bf16 --shards 3
dup-vocab gpt2 --hostile duplicate-token
dup-json llama --hostile duplicate-token
padded qwen2 --vocab 320 --tok-size 290 --tied
gemma3 gemma --untied --bare
noconfig qwen3 --untied
stranger llama --bare
moved llama --shards 2
other llama --set 'model_type="mamba"'
badvocab llama --set 'vocab_size="300"'
gpt2-relu gpt2 --set 'activation_function="relu"'
gpt2-eps gpt2 --set layer_norm_epsilon=1e-6
gpt2-inner gpt2 --set n_inner=100
neo-as-gpt2 gpt-neo
head-source gpt2 --untied --dtype f16 --seed 11
from-head llama --from-head head-source --shuffle-seed 7
hostile-1 llama --hostile config-says-tied --tied
hostile-2 llama --hostile config-says-tied --untied --shards 3
hostile-3 qwen2 --hostile config-says-untied
hostile-4 gpt2 --hostile config-says-tied
hostile-5 olmo-original --hostile config-says-untied
hostile-6 llama --hostile index-missing-shard
hostile-7 llama --hostile index-escapes
hostile-8 gemma --hostile index-unlisted
hostile-9 gpt-neox --hostile shard-duplicate --untied
hostile-10 llama --hostile shape-disagrees
hostile-11 olmo-original --hostile shape-disagrees
hostile-12 qwen3 --hostile truncated-shard
hostile-13 llama --hostile truncated-shard --shards 3
EOF
} >"$tmp/plan"
python3 "$make_models" --batch "$tmp" <"$tmp/plan" 2>"$tmp/mk.err" ||
  bail_out "make_models.py failed: $(cat "$tmp/mk.err")"

# at NAME: the model NAME is in $dir.
at() { dir=$tmp/$1; }

# field KEY: what hfprobe info said of KEY.
field() { sed -n "s/^$1=//p" "$tmp/info"; }

# json KEY: expected.json's value of KEY (a string, number or boolean).
json() { sed -n "s/^ \"$1\": \"*\([^\",]*\)\"*,*$/\1/p" "$dir/expected.json"; }

# expected: what expected.json says of the model in $dir, as check_model
# prints what hfprobe found.
expected() {
  echo "$(json family) $(json vocab)x$(json dim) $(json dtype) tied=$([ "$(json tied)" = true ] && echo 1 || echo 0) $(json embed) $(json head)"
}

# check_model LABEL WANT_FAMILY [PATH]: info agrees with what was written,
# and every value reads back bit for bit.
check_model() {
  label=$1 want=$2 path=${3:-$dir}
  if ! "$probe" info "$path" >"$tmp/info" 2>"$tmp/err"; then
    ok 1 "$label: opens ($(cat "$tmp/err"))"
    return
  fi
  got="$(field family) $(field vocab)x$(field dim) $(field dtype) tied=$(field tied) $(field embed) $(field head)"
  exp=$(expected)
  [ "$got" = "$exp" ] && [ "$(field family)" = "$want" ]
  ok $? "$label: $got"
  # tied with no head stored: the head is the embedding; a stored copy keeps its own name
  [ "$(field head_is_embed)" = "$([ "$(field tied)" = 1 ] && [ "$(json head)" = "$(json embed)" ] && echo 1 || echo 0)" ]
  ok $? "$label: the head is the embedding exactly when tied with none stored"
  "$probe" values "$path" "$dir/expected.safetensors" >"$tmp/values" 2>"$tmp/err"
  ok $? "$label: every tensor reads back bit for bit ($(cat "$tmp/values" "$tmp/err"))"
}

# Every family in a folder, with its own tying, and as a bare file (no
# config: the family from the tensor names alone).
for fam in gpt2 gpt-neo gpt-neox olmo olmo-original llama qwen2 qwen3 gemma; do
  at "$fam" && check_model "$fam folder" "$fam"
  at "$fam-bare" && check_model "$fam bare file" "$fam" "$dir/model.safetensors"
done

# Dtypes, shards and tying across the layouts.
for dtype in f32 f16 bf16; do
  for shards in 1 3; do
    at "llama-$dtype-$shards" && check_model "llama $dtype, $shards shard(s), untied" llama
    at "gpt2-$dtype-$shards" && check_model "gpt2 $dtype, $shards shard(s), tied, transformer. prefix" gpt2
  done
done
at olmo-orig-tied && check_model "olmo-original tied (weight_tying)" olmo-original
at qwen3-tied && check_model "qwen3 tied" qwen3
at neox-untied-3 && check_model "gpt-neox untied, 3 shards" gpt-neox
"$probe" info "$dir" | grep -qx 'n_files=3'
ok $? "gpt-neox: three shards read"
# Tied, the head stored as well, the very bytes of the embedding.
at head-copy && check_model "llama tied with a stored copy of the head" llama
[ "$(field n_tensors)" = "$(json n_tensors)" ] && grep -q '"lm_head.weight"' "$dir/model.safetensors.index.json"
ok $? "the copy is among the tensors, and not taken for a head of its own"

# The tokenizer with a duplicate is written as such, for hftok's tests.
python3 - "$tmp/dup-vocab/vocab.json" "$tmp/dup-json/tokenizer.json" <<'EOF'
import json, sys
keys = []
json.load(open(sys.argv[1]), object_pairs_hook=lambda p: keys.append([k for k, _ in p]) or dict(p))
dup_vocab = len(keys[-1]) - len(set(keys[-1]))
keys = []
json.load(open(sys.argv[2]), object_pairs_hook=lambda p: keys.append([k for k, _ in p]) or dict(p))
dup_json = max(len(k) - len(set(k)) for k in keys)
sys.exit(0 if dup_vocab == 1 and dup_json == 1 else 1)
EOF
ok $? "duplicate-token: vocab.json and tokenizer.json each give one string two ids"

# A padded vocabulary: the embedding's rows are config.json's vocab_size,
# more than the tokenizer's tokens.
at padded && check_model "qwen2 with 320 rows for 290 tokens" qwen2

# Gemma 3's multimodal config keeps the language model's sizes and tying
# in text_config, its tensors under language_model.
at gemma3 && python3 - "$dir" <<'EOF'
import json, os, struct, sys
d = sys.argv[1]
path = os.path.join(d, "model.safetensors")
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = dict(("language_model." + k, v) for k, v in json.loads(raw[8:8 + n]).items())
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(path, "wb").write(struct.pack("<Q", len(h)) + h + raw[8 + n:])
json.dump({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "vocab_size": 300, "hidden_size": 16,
           "num_hidden_layers": 2, "num_attention_heads": 2, "tie_word_embeddings": True}},
          open(os.path.join(d, "config.json"), "w"))
EOF
"$probe" info "$dir" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "config.json says tie_word_embeddings=true but model.safetensors holds a separate language_model.lm_head.weight" "$tmp/err"
ok $? "gemma3: text_config's tying checked: $(cat "$tmp/err")"
sed -i 's/"tie_word_embeddings": true/"tie_word_embeddings": false/' "$dir/config.json"
"$probe" info "$dir" >"$tmp/info" 2>"$tmp/err"
[ "$(field family) $(field model_type) $(field vocab) $(field layers) $(field tied) $(field config_tied) $(field embed)" = \
  "gemma gemma3 300 2 0 0 language_model.model.embed_tokens.weight" ]
ok $? "gemma3: text_config's sizes read: $(tr '\n' ' ' <"$tmp/info") $(cat "$tmp/err")"

# A folder with no config.json: the names say what the model is.
at noconfig && rm "$dir/config.json" && check_model "qwen3 folder without config.json" qwen3

# A file whose names are no family's.
at stranger && sed -i 's/model\.embed_tokens\.weight/model.embed_tokenz.weight/' "$dir/model.safetensors"
"$probe" info "$dir/model.safetensors" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "model.safetensors: no tensor is the embedding of any family read (gpt-neo, gpt2, " "$tmp/err"
ok $? "no family's embedding: $(cat "$tmp/err")"

# Hostile models: each refused, the message naming the file and the problem.
# refuse NAME PATTERN: hfprobe info fails and says PATTERN.
refuse() {
  at "$1"
  what=$(sed -n "s/^$1 \([^ ]*\) --hostile \(.*\)/\2 (\1)/p" "$tmp/plan")
  if "$probe" info "$dir" >/dev/null 2>"$tmp/err"; then
    ok 1 "$what: refused"
  else
    grep -q -- "$2" "$tmp/err"
    ok $? "$what: $(head -n 1 "$tmp/err")"
  fi
}
refuse hostile-1 ": config.json says tie_word_embeddings=true but model.safetensors holds a separate lm_head.weight \[300, 16\]"
refuse hostile-2 "config.json says tie_word_embeddings=true but model-00001-of-00003.safetensors holds a separate lm_head.weight"
refuse hostile-3 "config.json says tie_word_embeddings=false but no output head is stored (none of lm_head.weight): only model.embed_tokens.weight \[300, 16\]"
refuse hostile-4 "config.json does not say tie_word_embeddings, which for gpt2 means true, but model.safetensors holds a separate lm_head.weight"
refuse hostile-5 "config.json says weight_tying=false but no output head"
refuse hostile-6 "model.safetensors.index.json: names shard 'model-00002-of-00002.safetensors' (for '.*'), which is not in "
refuse hostile-7 "model.safetensors.index.json: tensor '.*' is mapped to '../model-00001-of-00002.safetensors', a path outside the folder"
refuse hostile-8 "model.safetensors.index.json: maps tensor 'model.not_stored.weight' to 'model-00001-of-00002.safetensors', which does not hold it"
refuse hostile-9 ": tensor 'embed_out.weight' is in both model-00001-of-00002.safetensors and model-00002-of-00002.safetensors"
refuse hostile-10 "/model.safetensors: model.embed_tokens.weight is \[299, 16\] but config.json says vocab_size=300"
refuse hostile-11 "model.transformer.wte.weight is \[299, 16\] but config.json says embedding_size=300"
refuse hostile-12 "/model.safetensors: .*beyond the .*-byte buffer"
refuse hostile-13 "/model-00003-of-00003.safetensors: "

# A shard holding a tensor the index maps to another shard.
at moved && python3 - "$dir/model.safetensors.index.json" <<'EOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["weight_map"]["lm_head.weight"] = "model-00002-of-00002.safetensors" if d["weight_map"]["lm_head.weight"].startswith("model-00001") else "model-00001-of-00002.safetensors"
json.dump(d, open(p, "w"))
EOF
"$probe" info "$dir" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "safetensors: holds tensor 'lm_head.weight', which model.safetensors.index.json maps to 'model-0000" "$tmp/err"
ok $? "index mapping a tensor to the wrong shard: $(cat "$tmp/err")"

# A model type outside the table is refused, listing the families read.
at other
"$probe" info "$dir" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "config.json: model_type 'mamba' is none of the families read (.*gpt2.*qwen3" "$tmp/err"
ok $? "unknown model_type: $(cat "$tmp/err")"

# A size that is not a number.
at badvocab
"$probe" info "$dir" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "badvocab: config.json: vocab_size is not a positive integer" "$tmp/err"
ok $? "vocab_size a string: $(cat "$tmp/err")"

# A folder without safetensors weights.
mkdir "$tmp/empty" && echo '{"model_type": "gpt2"}' >"$tmp/empty/config.json"
"$probe" info "$tmp/empty" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "empty: neither model.safetensors nor model.safetensors.index.json" "$tmp/err"
ok $? "no weights: $(cat "$tmp/err")"

# Memory: a 50000 x 1024 embedding (bfloat16, all zeros, a sparse file) is
# 195.3 MiB as float32. Under an address-space cap that leaves less, reading
# it is refused with the estimate, the headroom and the limit; with room,
# it is read.
if [ -z "$CAP" ]; then
  skip "prlimit is not available (or AddressSanitizer is on)"
  skip "prlimit is not available (or AddressSanitizer is on)"
else
  at big
  OPENBLAS_NUM_THREADS=1 timeout 60 prlimit --as=200000000 -- "$probe" read "$dir" model.embed_tokens.weight \
    >/dev/null 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q "reading model.embed_tokens.weight as float32 needs 195.3 MiB, more than the .* MiB this process can still allocate (limit: RLIMIT_AS)" "$tmp/err"
  ok $? "refused under a 200 MB cap: $(cat "$tmp/err")"
  OPENBLAS_NUM_THREADS=1 timeout 60 prlimit --as=1500000000 -- "$probe" read "$dir" model.embed_tokens.weight \
    >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 0 ] && grep -qx "read=51200000" "$tmp/out"
  ok $? "read under a 1.5 GB cap ($(cat "$tmp/out" "$tmp/err"))"
fi

# GPT-2 into the reference model: every tensor where nanoGPT keeps it,
# the four Conv1D weights of each block transposed, the head from lm_head
# or, tied, from wte.
for v in "tied f32 1" "untied bf16 3" "tied f16 3"; do
  set -- $v
  at "gpt2-ref-$1-$2-$3"
  tie_k=$([ "$1" = tied ] && echo 24 || echo 0)
  "$probe" gpt2 "$dir" "$dir/expected.safetensors" >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 0 ] && [ "$(tr '\n' ' ' <"$tmp/out")" = "tensors=41 transposed=12 tie_k=$tie_k " ]
  ok $? "gpt2 $1 $2 $3 shard(s) into the reference layout: $(cat "$tmp/out" "$tmp/err" | tr '\n' ' ')"
done

# GPT-2 configs the reference model cannot compute are refused.
gpt2_refuses() {
  at "$1"
  "$probe" gpt2 "$dir" "$dir/expected.safetensors" >/dev/null 2>"$tmp/err"
  [ $? -ne 0 ] && grep -q "$2" "$tmp/err"
  ok $? "gpt2 with $(sed -n "s/^$1 gpt2 --set //p" "$tmp/plan") refused: $(cat "$tmp/err")"
}
gpt2_refuses gpt2-relu 'config.json: activation_function is "relu", which cannot be read as the reference model'
gpt2_refuses gpt2-eps "config.json: layer_norm_epsilon is 1e-06, which cannot be read as the reference model: its LayerNorm's epsilon is 1e-5"
gpt2_refuses gpt2-inner "n_inner is 100"
at neo-as-gpt2 && "$probe" gpt2 "$dir" "$dir/expected.safetensors" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "a gpt-neo model, not GPT-2" "$tmp/err"
ok $? "a GPT-Neo folder is not read as GPT-2: $(cat "$tmp/err")"

# The Table 1 fixture: a tied model whose embedding is another model's head
# with its rows shuffled, the token strings shuffled alike; paired by token
# string, the two matrices are the same.
at head-source && src=$dir && at from-head && check_model "--from-head model" llama
python3 - "$src" "$dir" <<'EOF'
import json, struct, sys
def load(d, f):
    e = json.load(open(d + "/expected.json"))
    raw = open(d + "/" + f, "rb").read()
    return e["dim"], [raw[i:i + 4 * e["dim"]] for i in range(0, len(raw), 4 * e["dim"])]
def tokens(d):
    for name, get in (("tokenizer.json", lambda j: j["model"]["vocab"]), ("vocab.json", lambda j: j)):
        try:
            return dict((i, t) for t, i in get(json.load(open(d + "/" + name))).items())
        except FileNotFoundError:
            pass
a, b = sys.argv[1], sys.argv[2]
_, head = load(a, "head.f32")
_, emb = load(b, "embed.f32")
ta, tb = tokens(a), tokens(b)
by_string = dict((t, head[i]) for i, t in ta.items())
moved = sum(1 for i in tb if tb[i] != ta[i])
same = all(emb[i] == by_string[tb[i]] for i in tb)
sys.exit(0 if same and moved > len(tb) // 2 else 1)
EOF
ok $? "--from-head: rows paired by token string are the other model's head, in another order"

tap_done
