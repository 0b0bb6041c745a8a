#!/usr/bin/python3
"""hf_gpt2_fixture.py -- a tiny GPT-2 model folder as Hugging Face lays one
out, and what tielab must find in it, for tests/lab/test_hf_gpt2.sh.
Python's standard library only.

The folder holds config.json, model.safetensors (float32, the Conv1D
weights stored [in, out] as GPT-2's are) and a byte-level BPE tokenizer:
tokenizer.json, or vocab.json + merges.txt with --pair. Its merges are
learned here from a small text; the ids of the byte tokens are shuffled, so
that a reader that assumes byte b is id b gets them wrong; the last id is
<|endoftext|>.

Written beside the folder:
  FOLDER.params   every parameter under tielab's (nanoGPT's) name, in
                  tielab's layout (Conv1D weights transposed, lm_head the
                  embedding when tied), one line per tensor: name, then
                  each float32 as %.9g
  FOLDER.ids      for each line of --texts: its ids as GPT-2's encoder
                  gives them (its regex, merges by rank), space separated

usage: hf_gpt2_fixture.py FOLDER [--untied] [--prefix] [--pair] [--seed S]
           [--vocab-merges N] [--dim D] [--layers L] [--heads H] [--ctx T]
           [--texts FILE]
"""
import argparse
import json
import os
import random
import re
import struct

# GPT-2's pattern for ASCII text: \\p{L} and \\p{N} are letters and digits there.
PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")

TRAIN = ("the cat sat on the mat. the dog sat on the log. then the cat and the dog "
         "ran to the park, and the other cats watched them there. ") * 8


def bytes_to_unicode():
    """GPT-2's map from bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()


def words(text):
    return ["".join(B2U[b] for b in w.encode()) for w in PAT.findall(text)]


def learn_merges(text, n):
    """Most frequent adjacent pair, ties by the pair, n times."""
    seqs = [list(w) for w in words(text)]
    merges = []
    for _ in range(n):
        counts = {}
        for s in seqs:
            for a, b in zip(s, s[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        for s in seqs:
            i = 0
            while i < len(s) - 1:
                if (s[i], s[i + 1]) == pair:
                    s[i:i + 2] = [s[i] + s[i + 1]]
                i += 1
    return merges


def bpe(word, ranks):
    parts = list(word)
    while len(parts) > 1:
        pairs = [(ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        rank, i = min(pairs)
        if rank == 1 << 30:
            break
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return parts


def encode(text, vocab, ranks):
    return [vocab[p] for w in words(text) for p in bpe(w, ranks)]


def write_tokenizer(folder, vocab, merges, eot, pair):
    merge_lines = [f"{a} {b}" for a, b in merges]
    if pair:
        with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump({**vocab, "<|endoftext|>": eot}, f, ensure_ascii=False)
        with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "\n".join(merge_lines) + "\n")
        return
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    tok = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": True, "special": True}],
           "normalizer": None, "pre_tokenizer": byte_level, "post_processor": byte_level,
           "decoder": byte_level,
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                     "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                     "vocab": {**vocab, "<|endoftext|>": eot}, "merges": merge_lines}}
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def write_safetensors(path, tensors):
    """tensors: [(name, shape, floats)], float32."""
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, shape, vals in tensors:
        blob = struct.pack(f"<{len(vals)}f", *vals)
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def transpose(vals, rows, cols):
    return [vals[r * cols + c] for c in range(cols) for r in range(rows)]


def model_tensors(a, vocab_size, rng):
    """[(hf name, hf shape, values, tielab name, tielab values)]."""
    d, out = a.dim, []

    def add(hf, shape, tielab, kind, conv=False):
        n = shape[0] * (shape[1] if len(shape) > 1 else 1)
        if kind == "one":
            vals = [f32(1 + rng.gauss(0, 0.1)) for _ in range(n)]
        else:
            vals = [f32(rng.gauss(0, 0.02 if kind == "w" else 0.01)) for _ in range(n)]
        mine = transpose(vals, shape[0], shape[1]) if conv else vals
        out.append((hf, shape, vals, tielab, mine))

    add("wte.weight", (vocab_size, d), "transformer.wte.weight", "w")
    add("wpe.weight", (a.ctx, d), "transformer.wpe.weight", "w")
    for i in range(a.layers):
        h, t = f"h.{i}.", f"transformer.h.{i}."
        add(h + "ln_1.weight", (d,), t + "ln_1.weight", "one")
        add(h + "ln_1.bias", (d,), t + "ln_1.bias", "b")
        add(h + "attn.c_attn.weight", (d, 3 * d), t + "attn.c_attn.weight", "w", True)
        add(h + "attn.c_attn.bias", (3 * d,), t + "attn.c_attn.bias", "b")
        add(h + "attn.c_proj.weight", (d, d), t + "attn.c_proj.weight", "w", True)
        add(h + "attn.c_proj.bias", (d,), t + "attn.c_proj.bias", "b")
        add(h + "ln_2.weight", (d,), t + "ln_2.weight", "one")
        add(h + "ln_2.bias", (d,), t + "ln_2.bias", "b")
        add(h + "mlp.c_fc.weight", (d, 4 * d), t + "mlp.c_fc.weight", "w", True)
        add(h + "mlp.c_fc.bias", (4 * d,), t + "mlp.c_fc.bias", "b")
        add(h + "mlp.c_proj.weight", (4 * d, d), t + "mlp.c_proj.weight", "w", True)
        add(h + "mlp.c_proj.bias", (d,), t + "mlp.c_proj.bias", "b")
    add("ln_f.weight", (d,), "transformer.ln_f.weight", "one")
    add("ln_f.bias", (d,), "transformer.ln_f.bias", "b")
    if a.untied:
        add("lm_head.weight", (vocab_size, d), "lm_head.weight", "w")
    else:   # tied: the head is the embedding, in tielab's layout too
        out.append((None, None, None, "lm_head.weight", out[0][4]))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("folder")
    p.add_argument("--untied", action="store_true")
    p.add_argument("--prefix", action="store_true", help='names under "transformer." (lm_head stays)')
    p.add_argument("--pair", action="store_true", help="vocab.json + merges.txt, not tokenizer.json")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--vocab-merges", type=int, default=40)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--ctx", type=int, default=32)
    p.add_argument("--texts", default=None)
    a = p.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.folder, exist_ok=True)

    merges = learn_merges(TRAIN, a.vocab_merges)
    byte_ids = list(range(256))
    rng.shuffle(byte_ids)
    vocab = {B2U[b]: byte_ids[b] for b in range(256)}
    for i, (x, y) in enumerate(merges):
        if x + y in vocab:   # two merges making one token: a tokenizer a reader must refuse
            raise SystemExit(f"merge {i} ({x} {y}) makes a token the vocabulary has")
        vocab[x + y] = 256 + i
    eot = len(vocab)
    write_tokenizer(a.folder, vocab, merges, eot, a.pair)
    vocab_size = eot + 1

    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": vocab_size,
              "n_embd": a.dim, "n_layer": a.layers, "n_head": a.heads, "n_positions": a.ctx, "n_ctx": a.ctx,
              "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "bos_token_id": eot,
              "eos_token_id": eot, "tie_word_embeddings": not a.untied}
    with open(os.path.join(a.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)

    ts = model_tensors(a, vocab_size, rng)
    stored = [((("transformer." + n) if a.prefix and not n.startswith("lm_head") else n), s, v)
              for n, s, v, _, _ in ts if n]
    write_safetensors(os.path.join(a.folder, "model.safetensors"), stored)
    base = a.folder.rstrip("/")
    with open(base + ".params", "w") as f:
        for _, _, _, name, vals in ts:
            f.write(name + " " + " ".join("%.9g" % v for v in vals) + "\n")
    if a.texts:
        ranks = {m: i for i, m in enumerate(merges)}
        with open(a.texts, encoding="utf-8") as src, open(base + ".ids", "w") as f:
            for line in src.read().split("\n"):
                if line:
                    f.write(" ".join(str(i) for i in encode(line, vocab, ranks)) + "\n")


if __name__ == "__main__":
    main()
