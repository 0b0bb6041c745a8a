#!/usr/bin/env python3
"""make_models.py -- small random models laid out as released checkpoints.

Writes into OUTDIR what a model folder of FAMILY holds as distributed:
config.json, model.safetensors (or N shards and model.safetensors.index.json)
with the family's tensor names in float32, float16 or bfloat16, and a
tokenizer (vocab.json + merges.txt, or tokenizer.json: byte-level BPE with
GPT-2's byte alphabet, or SentencePiece-style with "\u2581" and <0xNN>
pieces). Pure python3 standard library, so the tests run on any machine.

Beside the model it writes what a test checks the reader against:
  expected.json         family, shape, tying, the embedding's and head's
                        names, the files written
  expected.safetensors  every tensor as float32, holding exactly the values
                        the stored dtype represents (bit for bit)
  embed.f32, head.f32   E_in and E_out, raw little-endian float32 [V, d]

--hostile KIND writes a model that a reader must refuse (see HOSTILE).
make_models.py --batch DIR writes the models listed on stdin, one
"NAME FAMILY ARGS..." a line, into DIR.

--from-head OTHER writes a tied model whose embedding is OTHER's output
matrix with its rows in a shuffled token order, the token strings shuffled
the same way, so pairing the two by token string finds the very matrix.
"""

import argparse
import json
import os
import random
import shlex
import struct
import sys

# ---------------------------------------------------------------- dtypes


def f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bf16_bits(x):
    """The upper 16 bits of float32, rounded to nearest even."""
    b = f32_bits(x)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def from_bits32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


# name: (safetensors dtype, bytes of one value, its float32 value)
DTYPES = {
    "f32": ("F32", lambda x: struct.pack("<f", x), lambda x: struct.unpack("<f", struct.pack("<f", x))[0]),
    "f16": ("F16", lambda x: struct.pack("<H", f16_bits(x)),
            lambda x: struct.unpack("<e", struct.pack("<H", f16_bits(x)))[0]),
    "bf16": ("BF16", lambda x: struct.pack("<H", bf16_bits(x)), lambda x: from_bits32(bf16_bits(x) << 16)),
}

# ---------------------------------------------------------------- families
# Each family: config.json's model_type, the embedding's and head's names,
# the tokenizer kind, and its per-layer tensors as (name, shape in units of
# d, V or 1). "{i}" is the layer.

LLAMA_LAYER = [
    ("model.layers.{i}.input_layernorm.weight", ("d",)),
    ("model.layers.{i}.self_attn.q_proj.weight", ("d", "d")),
    ("model.layers.{i}.self_attn.k_proj.weight", ("d", "d")),
    ("model.layers.{i}.self_attn.v_proj.weight", ("d", "d")),
    ("model.layers.{i}.self_attn.o_proj.weight", ("d", "d")),
    ("model.layers.{i}.post_attention_layernorm.weight", ("d",)),
    ("model.layers.{i}.mlp.gate_proj.weight", ("4d", "d")),
    ("model.layers.{i}.mlp.up_proj.weight", ("4d", "d")),
    ("model.layers.{i}.mlp.down_proj.weight", ("d", "4d")),
]

GPT2_LAYER = [
    ("h.{i}.ln_1.weight", ("d",)), ("h.{i}.ln_1.bias", ("d",)),
    ("h.{i}.attn.c_attn.weight", ("d", "3d")), ("h.{i}.attn.c_attn.bias", ("3d",)),
    ("h.{i}.attn.c_proj.weight", ("d", "d")), ("h.{i}.attn.c_proj.bias", ("d",)),
    ("h.{i}.ln_2.weight", ("d",)), ("h.{i}.ln_2.bias", ("d",)),
    ("h.{i}.mlp.c_fc.weight", ("d", "4d")), ("h.{i}.mlp.c_fc.bias", ("4d",)),
    ("h.{i}.mlp.c_proj.weight", ("4d", "d")), ("h.{i}.mlp.c_proj.bias", ("d",)),
]

FAMILIES = {
    "gpt2": dict(model_type="gpt2", embed="wte.weight", head="lm_head.weight", tok="vocab",
                 extra=[("wpe.weight", ("T", "d")), ("ln_f.weight", ("d",)), ("ln_f.bias", ("d",))],
                 layer=GPT2_LAYER),
    "gpt-neo": dict(model_type="gpt_neo", embed="transformer.wte.weight", head="lm_head.weight", tok="vocab",
                    extra=[("transformer.wpe.weight", ("T", "d")), ("transformer.ln_f.weight", ("d",))],
                    layer=[("transformer.h.{i}.attn.attention.k_proj.weight", ("d", "d")),
                           ("transformer.h.{i}.attn.attention.out_proj.bias", ("d",)),
                           ("transformer.h.{i}.mlp.c_fc.weight", ("4d", "d"))]),
    "gpt-neox": dict(model_type="gpt_neox", embed="gpt_neox.embed_in.weight", head="embed_out.weight",
                     tok="bpe", extra=[("gpt_neox.final_layer_norm.weight", ("d",))],
                     layer=[("gpt_neox.layers.{i}.attention.query_key_value.weight", ("3d", "d")),
                            ("gpt_neox.layers.{i}.mlp.dense_h_to_4h.weight", ("4d", "d"))]),
    "olmo": dict(model_type="olmo2", embed="model.embed_tokens.weight", head="lm_head.weight", tok="bpe",
                 extra=[("model.norm.weight", ("d",))],
                 layer=[("model.layers.{i}.self_attn.q_proj.weight", ("d", "d")),
                        ("model.layers.{i}.self_attn.q_norm.weight", ("d",)),
                        ("model.layers.{i}.post_attention_layernorm.weight", ("d",)),
                        ("model.layers.{i}.post_feedforward_layernorm.weight", ("d",))]),
    "olmo-original": dict(model_type="hf_olmo", embed="model.transformer.wte.weight",
                          head="model.transformer.ff_out.weight", tok="bpe",
                          extra=[], layer=[("model.transformer.blocks.{i}.att_proj.weight", ("3d", "d")),
                                           ("model.transformer.blocks.{i}.ff_out.weight", ("d", "4d"))]),
    "llama": dict(model_type="llama", embed="model.embed_tokens.weight", head="lm_head.weight", tok="bpe",
                  extra=[("model.norm.weight", ("d",))], layer=LLAMA_LAYER),
    "qwen2": dict(model_type="qwen2", embed="model.embed_tokens.weight", head="lm_head.weight", tok="bpe",
                  extra=[("model.norm.weight", ("d",))],
                  layer=LLAMA_LAYER + [("model.layers.{i}.self_attn.q_proj.bias", ("d",))]),
    "qwen3": dict(model_type="qwen3", embed="model.embed_tokens.weight", head="lm_head.weight", tok="bpe",
                  extra=[("model.norm.weight", ("d",))],
                  layer=LLAMA_LAYER + [("model.layers.{i}.self_attn.q_norm.weight", ("d",))]),
    "gemma": dict(model_type="gemma2", embed="model.embed_tokens.weight", head="lm_head.weight", tok="sp",
                  extra=[("model.norm.weight", ("d",))],
                  layer=LLAMA_LAYER + [("model.layers.{i}.pre_feedforward_layernorm.weight", ("d",)),
                                       ("model.layers.{i}.post_feedforward_layernorm.weight", ("d",))]),
}

HOSTILE = [
    "config-says-tied",      # config.json says tied, the file holds a separate head
    "config-says-untied",    # config.json says untied, no head in the file
    "index-missing-shard",   # the index names a shard that is not there
    "index-escapes",         # the index names a shard outside the folder
    "index-unlisted",        # the index maps a tensor to a shard that lacks it
    "shard-duplicate",       # two shards hold one name
    "shape-disagrees",       # the embedding is not [vocab_size, hidden]
    "duplicate-token",       # the tokenizer gives one string two ids
    "truncated-shard",       # a shard cut short
]

# ---------------------------------------------------------------- tokenizers


def bytes_to_unicode():
    """GPT-2's map from the 256 bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def grow_merges(rng, tokens, pool, n):
    """'n' merges of two tokens of 'pool' (strings) into new tokens, added to
    'tokens' and 'pool' as they are made, so later merges build on them. The
    right side is mostly one of the first pieces, so that tokens grow a
    character at a time and a large vocabulary is quick to make."""
    merges = []
    have = set(tokens)
    base = pool[:]
    while len(merges) < n:
        a = rng.choice(pool)
        b = rng.choice(pool if rng.random() < 0.3 else base)
        if len(a) + len(b) > 16 or a + b in have:
            continue
        merges.append((a, b))
        tokens.append(a + b)
        pool.append(a + b)
        have.add(a + b)
    return merges


def byte_level_vocab(rng, size):
    """Token strings by id (256 bytes, merges, <|endoftext|>) and the merges."""
    if size < 257:
        sys.exit("make_models.py: a byte-level tokenizer needs a vocabulary of at least 257")
    alphabet = bytes_to_unicode()
    tokens = [alphabet[b] for b in range(256)]
    letters = [alphabet[b] for b in b" etaoinshrdlu"]
    merges = grow_merges(rng, tokens, letters, size - 257)
    tokens.append("<|endoftext|>")
    return tokens, merges, [size - 1]


def sentencepiece_vocab(rng, size):
    """Token strings by id: specials, the 256 <0xNN> pieces, "\u2581"-pieces."""
    specials = ["<pad>", "<eos>", "<bos>", "<unk>"]
    base = ["\u2581"] + list("etaoinshrdlu")
    if size < len(specials) + 256 + len(base):
        sys.exit("make_models.py: a SentencePiece-style tokenizer needs a vocabulary of at least %d"
                 % (len(specials) + 256 + len(base)))
    tokens = specials + ["<0x%02X>" % b for b in range(256)] + base
    merges = grow_merges(rng, tokens, base[:], size - len(tokens))
    return tokens, merges, list(range(len(specials)))


def vocab_json_text(tokens, duplicate):
    """A JSON object string -> id; 'duplicate' gives one string a second id."""
    items = [(t, i) for i, t in enumerate(tokens)]
    if duplicate:
        items.append((tokens[len(tokens) // 2], len(tokens)))
    return "{" + ", ".join("%s: %d" % (json.dumps(t, ensure_ascii=False), i) for t, i in items) + "}"


def write_tokenizer(out, kind, tokens, merges, special, duplicate):
    if kind == "vocab":
        with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
            f.write(vocab_json_text(tokens, duplicate))
        with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            for a, b in merges:
                f.write("%s %s\n" % (a, b))
        return ["vocab.json", "merges.txt"]
    added = [{"id": i, "content": tokens[i], "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i in special]
    if kind == "bpe":
        pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        normalizer, decoder = None, {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                     "use_regex": True}
    else:
        pre = None
        normalizer = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
        decoder = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}]}
    model = {"type": "BPE", "dropout": None, "unk_token": None if kind == "bpe" else "<unk>",
             "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": kind != "bpe",
             "byte_fallback": kind != "bpe", "vocab": "@VOCAB@", "merges": ["%s %s" % m for m in merges]}
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
           "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": None, "decoder": decoder,
           "model": model}
    text = json.dumps(doc, ensure_ascii=False, indent=1)
    text = text.replace('"@VOCAB@"', vocab_json_text(tokens, duplicate))
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(text)
    return ["tokenizer.json"]


def read_tokens(folder):
    """Token strings by id from a folder this script wrote."""
    for name, get in (("tokenizer.json", lambda d: d["model"]["vocab"]), ("vocab.json", lambda d: d)):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                vocab = get(json.load(f))
            tokens = [None] * len(vocab)
            for t, i in vocab.items():
                tokens[i] = t
            return tokens
    sys.exit("make_models.py: no tokenizer in %s" % folder)


def read_merges(folder):
    path = os.path.join(folder, "merges.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return [tuple(line.rstrip("\n").split(" ", 1)) for line in f if not line.startswith("#version")]
    with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
        return [tuple(m.split(" ", 1)) for m in json.load(f)["model"]["merges"]]


# ---------------------------------------------------------------- safetensors


def write_safetensors(path, tensors, cut=0):
    """tensors: list of (name, dtype name, shape, bytes, or a count of zero
    bytes, left as a hole in a sparse file); 'cut' bytes cut off the end."""
    header, pos = {}, 0
    tensors = sorted(tensors, key=lambda t: t[0])
    size = lambda data: data if isinstance(data, int) else len(data)
    for name, dt, shape, data in tensors:
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [pos, pos + size(data)]}
        pos += size(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for t in tensors:
            if isinstance(t[3], int):
                f.seek(t[3], os.SEEK_CUR)
            else:
                f.write(t[3])
        f.truncate(8 + len(h) + pos - cut)


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------- the model


def dims(spec, a):
    table = {"d": a.dim, "3d": 3 * a.dim, "4d": 4 * a.dim, "T": a.ctx, "V": a.vocab}
    return tuple(table[s] for s in spec)


def model_tensors(fam, a, rng):
    """Name -> (shape, values as a flat list of floats); the embedding first."""
    names = [(fam["embed"], ("V", "d"))] + fam["extra"]
    names += [(n.format(i=i), s) for i in range(a.layers) for n, s in fam["layer"]]
    if a.prefix:   # GPT-2 files written from GPT2LMHeadModel's state dict
        names = [("transformer." + n, s) for n, s in names]
    out = {}
    for name, spec in names:
        shape = dims(spec, a)
        out[name] = (shape, numel(shape) if a.zeros else [rng.gauss(0.0, 0.5) for _ in range(numel(shape))])
    return out


def quantize(values, dtype):
    if isinstance(values, int):   # --zeros: a count of zeros
        return values * len(DTYPES[dtype][1](0.0)), None
    pack, as_f32 = DTYPES[dtype][1], DTYPES[dtype][2]
    return b"".join(pack(x) for x in values), [as_f32(x) for x in values]


def config_for(family, fam, a, tied):
    V, d, L, H, T = a.vocab, a.dim, a.layers, a.heads, a.ctx
    if family in ("gpt2", "gpt-neo"):
        c = {"model_type": fam["model_type"], "vocab_size": V, "n_embd": d, "n_layer": L, "n_head": H,
             "n_positions": T, "n_ctx": T, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
             "architectures": ["GPT2LMHeadModel" if family == "gpt2" else "GPTNeoForCausalLM"]}
        if family == "gpt-neo":
            c.update(hidden_size=d, num_layers=L, num_heads=H, max_position_embeddings=T)
            del c["n_embd"], c["n_layer"], c["n_head"], c["n_positions"], c["n_ctx"]
        if not tied:   # these configs leave it out when tied, as the released ones do
            c["tie_word_embeddings"] = False
        return c
    if family == "olmo-original":
        return {"model_type": "hf_olmo", "vocab_size": V, "embedding_size": V, "d_model": d, "n_layers": L,
                "n_heads": H, "max_sequence_length": T, "weight_tying": tied}
    c = {"model_type": fam["model_type"], "vocab_size": V, "hidden_size": d, "num_hidden_layers": L,
         "num_attention_heads": H, "max_position_embeddings": T, "tie_word_embeddings": tied,
         "torch_dtype": {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[a.dtype]}
    return c


def split_shards(names, n):
    """'names' (sorted) into 'n' non-empty consecutive groups."""
    n = max(1, min(n, len(names)))
    size = -(-len(names) // n)
    return [names[i:i + size] for i in range(0, len(names), size)]


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def write_f32(path, values):
    with open(path, "wb") as f:
        f.write(struct.pack("<%df" % len(values), *values))


def load_other_head(folder):
    with open(os.path.join(folder, "expected.json"), encoding="utf-8") as f:
        exp = json.load(f)
    with open(os.path.join(folder, "head.f32"), "rb") as f:
        raw = f.read()
    V, d = exp["vocab"], exp["dim"]
    flat = list(struct.unpack("<%df" % (V * d), raw))
    return exp, [flat[r * d:(r + 1) * d] for r in range(V)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("family", choices=sorted(FAMILIES))
    p.add_argument("outdir")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    p.add_argument("--shards", type=int, default=1)
    p.add_argument("--vocab", type=int, default=300)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--ctx", type=int, default=32)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--tied", dest="tied", action="store_true", default=None)
    g.add_argument("--untied", dest="tied", action="store_false")
    p.add_argument("--tok-size", type=int, help="tokens in the tokenizer, fewer than --vocab to pad the embedding")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--prefix", action="store_true", help="gpt2: names with the 'transformer.' prefix")
    p.add_argument("--tokenizer", choices=["vocab", "bpe", "sp"], help="the family's own by default")
    p.add_argument("--bare", action="store_true", help="write model.safetensors only: no config, no tokenizer")
    p.add_argument("--hostile", choices=HOSTILE)
    p.add_argument("--head-copy", action="store_true",
                   help="tied, but the head stored too, the very bytes of the embedding (as older files have it)")
    p.add_argument("--zeros", action="store_true",
                   help="every value 0, written as holes of a sparse file: large models at no cost")
    p.add_argument("--from-head", metavar="OTHERDIR")
    p.add_argument("--shuffle-seed", type=int, default=0)
    p.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                   help="config.json's KEY set to the JSON value (a model a reader must refuse, say)")
    a = p.parse_args(argv)
    if a.prefix and a.family != "gpt2":
        p.error("--prefix is for gpt2")

    fam = FAMILIES[a.family]
    rng = random.Random(a.seed)
    hostile = a.hostile or ""
    tied = a.tied if a.tied is not None else a.family in ("gpt2", "gpt-neo", "gemma")
    tok_kind = a.tokenizer or fam["tok"]

    if a.from_head:
        other, rows = load_other_head(a.from_head)
        a.vocab, a.dim = other["vocab"], other["dim"]
        old_tokens, merges = read_tokens(a.from_head), read_merges(a.from_head)
        order = list(range(len(old_tokens)))
        random.Random(a.shuffle_seed).shuffle(order)   # new id i is old id order[i]
        tokens = [old_tokens[order[i]] for i in range(len(old_tokens))]
        order += range(len(old_tokens), a.vocab)       # padding rows stay where they are
        special = [i for i, t in enumerate(tokens) if t.startswith("<") and t.endswith(">") and
                   not t.startswith("<0x")]
        tied = True
    else:
        size = a.tok_size or a.vocab
        if size > a.vocab:
            p.error("--tok-size may not exceed --vocab")
        tokens, merges, special = (sentencepiece_vocab if tok_kind == "sp" else byte_level_vocab)(rng, size)

    tensors = model_tensors(fam, a, rng)
    if a.zeros and (a.from_head or hostile == "shape-disagrees"):
        p.error("--zeros goes with neither --from-head nor --hostile shape-disagrees")
    if a.zeros and not tied:   # allowed for a caller that writes the values after (scripts/bench_inspect)
        print("make_models.py: an all-zero untied model reads as tied until its values are written", file=sys.stderr)
    if a.from_head:
        tensors[next(iter(tensors))] = ((a.vocab, a.dim), [x for i in range(a.vocab) for x in rows[order[i]]])
    embed_name = next(iter(tensors))
    head_name = fam["head"]
    if a.head_copy:
        tied = True
        tensors[head_name] = tensors[embed_name]
    if not tied:
        tensors[head_name] = ((a.vocab, a.dim), a.vocab * a.dim if a.zeros else
                              [rng.gauss(0.0, 0.5) for _ in range(a.vocab * a.dim)])

    # What the file holds, against what config.json will say.
    config_tied = tied
    if hostile == "config-says-tied":
        if tied:
            tensors[head_name] = ((a.vocab, a.dim), [rng.gauss(0.0, 0.5) for _ in range(a.vocab * a.dim)])
        tied, config_tied = False, True
    elif hostile == "config-says-untied":
        tensors.pop(head_name, None)
        tied, config_tied = True, False

    os.makedirs(a.outdir, exist_ok=True)
    stored, expected = [], []
    for name in sorted(tensors):
        shape, values = tensors[name]
        data, as_f32 = quantize(values, a.dtype)
        stored.append((name, DTYPES[a.dtype][0], shape, data))
        if not a.zeros:
            expected.append((name, "F32", shape, struct.pack("<%df" % len(as_f32), *as_f32)))
    if a.family == "gpt2":   # the causal mask buffers older GPT-2 files carry
        for i in range(a.layers):
            mask = [1.0 if c <= r else 0.0 for r in range(a.ctx) for c in range(a.ctx)]
            name = ("transformer." if a.prefix else "") + "h.%d.attn.bias" % i
            stored.append((name, "F32", (1, 1, a.ctx, a.ctx), struct.pack("<%df" % len(mask), *mask)))
    if hostile == "shape-disagrees":
        name, dt, shape, data = stored[[s[0] for s in stored].index(embed_name)]
        cut = DTYPES[a.dtype][1](0.0) * a.dim
        stored[[s[0] for s in stored].index(embed_name)] = (name, dt, (shape[0] - 1, shape[1]), data[len(cut):])

    files = write_weights(a, stored, hostile)
    if not a.bare:
        config = config_for(a.family, fam, a, config_tied)
        for kv in a.set:
            key, _, value = kv.partition("=")
            config[key] = json.loads(value)
        write_json(os.path.join(a.outdir, "config.json"), config)
        files += ["config.json"]
        files += write_tokenizer(a.outdir, tok_kind, tokens, merges, special, hostile == "duplicate-token")

    summary = {
        "family": a.family, "model_type": "" if a.bare else fam["model_type"],
        "vocab": a.vocab, "dim": a.dim, "layers": a.layers, "heads": a.heads, "ctx": a.ctx,
        "dtype": DTYPES[a.dtype][0], "tied": tied, "embed": embed_name, "head": embed_name if tied and not a.head_copy else head_name,
        "n_tensors": len(stored), "files": files, "hostile": hostile, "tokens": len(tokens),
        "from_head": a.from_head or "", "shuffle_seed": a.shuffle_seed}
    write_json(os.path.join(a.outdir, "expected.json"), summary)
    if a.zeros:
        return
    values = dict((n, t) for n, t in ((e[0], e) for e in expected))
    embed_f32 = struct.unpack("<%df" % (a.vocab * a.dim), values[embed_name][3]) \
        if values[embed_name][2] == (a.vocab, a.dim) else ()
    head_f32 = struct.unpack("<%df" % (a.vocab * a.dim), values[head_name][3]) if head_name in values \
        and not tied else embed_f32
    write_f32(os.path.join(a.outdir, "embed.f32"), embed_f32)
    write_f32(os.path.join(a.outdir, "head.f32"), head_f32)
    write_safetensors(os.path.join(a.outdir, "expected.safetensors"), expected)


def write_weights(a, stored, hostile):
    """model.safetensors, or shards and their index; returns the names."""
    if a.shards <= 1 and not hostile.startswith(("index-", "shard-")):
        write_safetensors(os.path.join(a.outdir, "model.safetensors"), stored,
                          5 if hostile == "truncated-shard" else 0)
        return ["model.safetensors"]
    groups = split_shards(sorted(s[0] for s in stored), max(a.shards, 2))
    by_name = dict((s[0], s) for s in stored)
    n = len(groups)
    weight_map, files = {}, []
    for k, names in enumerate(groups):
        shard = "model-%05d-of-%05d.safetensors" % (k + 1, n)
        held = [by_name[x] for x in names]
        if hostile == "shard-duplicate" and k == n - 1:
            held.append(by_name[groups[0][0]])
        if not (hostile == "index-missing-shard" and k == n - 1):
            write_safetensors(os.path.join(a.outdir, shard), held,
                              5 if hostile == "truncated-shard" and k == n - 1 else 0)
            files.append(shard)
        for x in names:
            weight_map[x] = shard
    if hostile == "index-escapes":
        weight_map[groups[0][0]] = "../" + weight_map[groups[0][0]]
    if hostile == "index-unlisted":
        weight_map["model.not_stored.weight"] = "model-00001-of-%05d.safetensors" % n
    total = sum(s[3] if isinstance(s[3], int) else len(s[3]) for s in stored)
    write_json(os.path.join(a.outdir, "model.safetensors.index.json"),
               {"metadata": {"total_size": total}, "weight_map": weight_map})
    return files + ["model.safetensors.index.json"]


def batch(folder):
    """Models listed on stdin, one "NAME FAMILY ARGS..." a line, written into
    'folder' (relative paths in ARGS are taken from there too): one Python
    start for many models."""
    os.chdir(folder)
    for line in sys.stdin:
        words = shlex.split(line, comments=True)
        if words:
            main([words[1], words[0]] + words[2:])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        batch(sys.argv[2])
    else:
        main()
