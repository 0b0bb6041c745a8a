#!/usr/bin/python3
"""peer_hf_gpt2.py -- the PyTorch reference's loss on a GPT-2 model folder as
Hugging Face lays it out, for tests/lab/test_hf_gpt2.sh.

The reference model (torch_gpt.py, which TIELAB_PEER names) is not part of
tielab; this file imports it and uses its model and safetensors reader
unchanged. What it adds is reading GPT-2's layout on its own, apart from
tielab's reader: config.json for the shape and the tie, model.safetensors
or the shards its index names, tensor names with or without the
"transformer." prefix, Conv1D weights ([in, out]) transposed
into the reference's nn.Linear ([out, in]), and the head from lm_head.weight
or, tied, the embedding. It prints the mean cross-entropy of the rows given
(raw little-endian int32, ROWS x (T+1)) as %.17g, in float64.

usage: peer_hf_gpt2.py TORCH_GPT FOLDER TOKENS ROWS
"""
import importlib.util
import json
import os
import sys

# One thread, passive waits: set before torch loads (torch_gpt.py's own rule).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def load_reference(path):
    spec = importlib.util.spec_from_file_location("torch_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def stored_tensors(tg, folder):
    """Every tensor of model.safetensors, or of the shards its index names."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return tg.st_load(os.path.join(folder, "model.safetensors"))[0]
    with open(index) as f:
        shards = sorted(set(json.load(f)["weight_map"].values()))
    out = {}
    for shard in shards:
        out.update(tg.st_load(os.path.join(folder, shard))[0])
    return out


def gpt2_tensors(tg, folder):
    """The folder's tensors under the reference's names, Conv1D transposed."""
    stored = stored_tensors(tg, folder)
    out = {}
    for name, a in stored.items():
        if name.endswith(".attn.bias") or name.endswith(".attn.masked_bias"):
            continue   # GPT-2's causal mask buffers: not parameters
        plain = name[len("transformer."):] if name.startswith("transformer.") else name
        key = plain if plain.startswith("lm_head.") else "transformer." + plain
        out[key] = a.T.copy() if plain.endswith(CONV1D) else a
    return out


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    torch_gpt, folder, tokens, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    tg = load_reference(torch_gpt)
    torch = tg.torch
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    ts = gpt2_tensors(tg, folder)
    tied = "lm_head.weight" not in ts
    if tied != cfg.get("tie_word_embeddings", True):
        sys.exit("config.json's tie_word_embeddings disagrees with the tensors")
    model = tg.GPT(cfg["vocab_size"], cfg["n_embd"], cfg["n_layer"], cfg["n_head"], cfg["n_positions"],
                   "tied" if tied else "untied")
    params = model.param_dict()
    if set(params) != set(ts):
        sys.exit(f"names differ: missing {sorted(set(params) - set(ts))}, extra {sorted(set(ts) - set(params))}")
    with torch.no_grad():
        for k, p in params.items():
            if tuple(p.shape) != tuple(ts[k].shape):
                sys.exit(f"{k}: file {ts[k].shape}, model {tuple(p.shape)}")
            p.copy_(torch.from_numpy(ts[k].astype("float32")))
    model = model.to(torch.float64)
    x = torch.from_numpy(tg.load_tokens(tokens, batch=rows))
    with torch.no_grad():
        _, loss = model(x[:, :-1], x[:, 1:])
    print("%.17g" % loss.item())


if __name__ == "__main__":
    main()
