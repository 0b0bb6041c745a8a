#!/usr/bin/python3
"""hf_gpt2_expect.py -- what tielab must find in a GPT-2 folder that
tests/lib/make_models.py wrote, worked out apart from tielab, for
tests/lab/test_hf_gpt2.sh. Python's standard library only.

Writes beside the folder:
  FOLDER.params   every parameter under tielab's (nanoGPT's) name, in its
                  layout, from the folder's expected.safetensors (the values
                  the stored dtype holds, as float32): Conv1D weights
                  ([in, out]) transposed, lm_head the embedding when tied;
                  one line per tensor, its name then each value as %.9g
  FOLDER.ids      for each line of TEXTS: its ids as GPT-2's encoder gives
                  them (its pattern, for ASCII text; merges by rank), with
                  the folder's vocabulary and merges

usage: hf_gpt2_expect.py FOLDER TEXTS
"""
import json
import os
import re
import struct
import sys

sys.dont_write_bytecode = True   # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import bytes_to_unicode  # noqa: E402  GPT-2's byte alphabet, as the folder was written

# GPT-2's pattern for ASCII text: \\p{L} and \\p{N} are letters and digits there.
PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
BLOCK = ("ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
         "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight",
         "mlp.c_proj.bias")


def read_safetensors(path):
    """name -> (shape, float32 values); F32 only (expected.safetensors)."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        s, e = t["data_offsets"]
        assert t["dtype"] == "F32", name
        out[name] = (t["shape"], struct.unpack("<%df" % ((e - s) // 4), raw[8 + n + s:8 + n + e]))
    return out


def transpose(vals, rows, cols):
    return [vals[r * cols + c] for c in range(cols) for r in range(rows)]


def tielab_params(folder):
    """(name, values) in tielab's order and layout."""
    ts = read_safetensors(os.path.join(folder, "expected.safetensors"))
    prefix = "transformer." if "transformer.wte.weight" in ts else ""
    layers = json.load(open(os.path.join(folder, "config.json")))["n_layer"]

    def get(name):
        shape, vals = ts[prefix + name]
        return transpose(vals, shape[0], shape[1]) if name.endswith(CONV1D) else vals
    out = [("transformer.wte.weight", get("wte.weight")), ("transformer.wpe.weight", get("wpe.weight"))]
    for i in range(layers):
        out += [("transformer.h.%d.%s" % (i, p), get("h.%d.%s" % (i, p))) for p in BLOCK]
    out += [("transformer.ln_f.weight", get("ln_f.weight")), ("transformer.ln_f.bias", get("ln_f.bias"))]
    out.append(("lm_head.weight", ts["lm_head.weight"][1] if "lm_head.weight" in ts else out[0][1]))
    return out


def tokenizer(folder):
    """(vocab: token string -> id, merges in rank order)."""
    path = os.path.join(folder, "tokenizer.json")
    if os.path.exists(path):
        model = json.load(open(path, encoding="utf-8"))["model"]
        vocab, lines = model["vocab"], model["merges"]
    else:
        vocab = json.load(open(os.path.join(folder, "vocab.json"), encoding="utf-8"))
        lines = open(os.path.join(folder, "merges.txt"), encoding="utf-8").read().split("\n")[1:]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in lines if m]
    return vocab, merges


def bpe(word, ranks):
    parts = list(word)
    while len(parts) > 1:
        rank, i = min((ranks.get(p, 1 << 30), i) for i, p in enumerate(zip(parts, parts[1:])))
        if rank == 1 << 30:
            break
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return parts


def encode(text, vocab, ranks, b2u):
    words = ("".join(b2u[b] for b in w.encode()) for w in PAT.findall(text))
    return [vocab[p] for w in words for p in bpe(w, ranks)]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    folder, texts = sys.argv[1].rstrip("/"), sys.argv[2]
    with open(folder + ".params", "w") as f:
        for name, vals in tielab_params(folder):
            f.write(name + " " + " ".join("%.9g" % v for v in vals) + "\n")
    vocab, merges = tokenizer(folder)
    ranks = {m: i for i, m in enumerate(merges)}
    b2u = bytes_to_unicode()
    with open(texts, encoding="utf-8") as src, open(folder + ".ids", "w") as f:
        for line in src.read().split("\n"):
            if line:
                f.write(" ".join(str(i) for i in encode(line, vocab, ranks, b2u)) + "\n")


if __name__ == "__main__":
    main()
