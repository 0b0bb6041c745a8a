#!/usr/bin/python3
"""peer_terms.py -- the PyTorch reference's training step with the loss terms
a script adds through tielab's step hooks, for tests/core/test_peer_hooks.sh.

The reference model (torch_gpt.py, which TIELAB_PEER names) is not part of
tielab; this file imports it and uses its model, safetensors reader and
writer and optimizer unchanged. What it adds, in float64 by default:

  hidden-state term at residual position P (0: the embeddings' sum, k: after
  block k, L: before ln_f), n = B*T:
      sq   C * 0.5 * sum(h^2) / n
      lin  C * sum(h * R) / n      R [n, d] ~ N(0, 1) from --aux-seed, rounded
                                   to float32 and written to --aux-matrix
  alignment regulariser (untied only):
      LAMBDA * 0.5 * ||E_in - E_out||^2

The loss minimised is cross-entropy + terms. The dump (--dump-grads) holds
every gradient, the two embedding-gradient components as a hook sees them
(the regulariser's share included), and in its metadata the cross-entropy
('loss'), 'aux_loss' and 'reg_loss'; --step-out holds the weights after the
clip at 1.0 and one AdamW step, as torch_gpt.py grad writes them.

usage: peer_terms.py TORCH_GPT --model M --tokens T --aux-hidden P
           [--aux-kind sq|lin] [--aux-seed S] [--aux-coef C] [--aux-matrix R]
           [--reg-align LAMBDA] [--dtype float32|float64]
           --dump-grads G --step-out W1
"""
import argparse
import importlib.util
import os
import sys

# One thread, passive waits: set before torch loads (torch_gpt.py's own rule).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def load_reference(path):
    spec = importlib.util.spec_from_file_location("torch_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def residual_forward(tg, model, x, pos):
    """The reference's forward, keeping the residual stream at 'pos'."""
    t = model.transformer
    B, T = x.shape
    h = tg.EmbeddingLookup.apply(t.wte.weight, x, model.s_in, model.stats) + t.wpe.weight[:T]
    kept = h if pos == 0 else None
    for i, blk in enumerate(t.h):
        h = blk(h)
        if i + 1 == pos:
            kept = h
    if kept is None:
        raise SystemExit(f"--aux-hidden {pos}: the model has positions 0..{len(t.h)}")
    h = t.ln_f(h)
    logits = tg.LMHead.apply(h.reshape(B * T, -1), model.head_weight(), model.stats)
    return logits, kept


def hidden_term(torch, a, h, n, dtype):
    """The hidden-state term's value, and R for the linear kind."""
    if a.aux_kind == "sq":
        return a.aux_coef * 0.5 * (h * h).sum() / n, None
    gen = torch.Generator().manual_seed(a.aux_seed)
    r = torch.randn(h.shape, generator=gen, dtype=torch.float32).to(dtype)
    return a.aux_coef * (h * r).sum() / n, r


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reference", help="torch_gpt.py")
    p.add_argument("--model", required=True)
    p.add_argument("--tokens", required=True)
    p.add_argument("--aux-hidden", type=int, required=True)
    p.add_argument("--aux-kind", choices=["sq", "lin"], default="sq")
    p.add_argument("--aux-seed", type=int, default=7)
    p.add_argument("--aux-coef", type=float, default=1.0)
    p.add_argument("--aux-matrix", default=None, help="where R is written (lin)")
    p.add_argument("--reg-align", type=float, default=0.0)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    p.add_argument("--dump-grads", required=True)
    p.add_argument("--step-out", required=True)
    a = p.parse_args()

    tg = load_reference(a.reference)
    torch = tg.torch
    torch.set_num_threads(1)
    dtype = torch.float64 if a.dtype == "float64" else torch.float32
    model, _ = tg.build_from_safetensors(a.model, dtype=dtype)
    if a.reg_align and model.tied:
        raise SystemExit("--reg-align needs an untied model")
    tok = tg.load_tokens(a.tokens, ctx=model.cfg["ctx"])
    x = torch.from_numpy(tok[:, :-1].copy())
    y = torch.from_numpy(tok[:, 1:].copy())
    n = x.shape[0] * x.shape[1]

    model.stats.keep = True
    logits, h = residual_forward(tg, model, x, a.aux_hidden)
    ce = tg.F.cross_entropy(logits, y.reshape(-1))
    aux, r = hidden_term(torch, a, h, n, dtype)
    reg = torch.zeros((), dtype=dtype)
    if a.reg_align:
        e = model.transformer.wte.weight - model.lm_head.weight
        reg = a.reg_align * 0.5 * (e * e).sum()
    (ce + aux + reg).backward()

    params = model.param_dict()
    g_in, g_out = model.stats.g_in_t, model.stats.g_out_t
    if a.reg_align:
        with torch.no_grad():
            e = model.transformer.wte.weight - model.lm_head.weight
            g_in = g_in + a.reg_align * e
            g_out = g_out - a.reg_align * e
    dump = {k: q.grad.detach().to(torch.float32).numpy() for k, q in params.items()}
    dump["component.grad_from_input"] = g_in.to(torch.float32).numpy()
    dump["component.grad_from_output"] = g_out.to(torch.float32).numpy()
    tg.st_save(a.dump_grads, dump, {"loss": repr(float(ce)), "aux_loss": repr(float(aux)),
                                    "reg_loss": repr(float(reg)), "s_in": repr(model.s_in),
                                    "tie": model.cfg["tie"], "dtype": a.dtype})
    if r is not None:
        if not a.aux_matrix:
            raise SystemExit("--aux-kind lin needs --aux-matrix, where R is written")
        tg.st_save(a.aux_matrix, {"aux.r": r.to(torch.float32).numpy()}, {"seed": str(a.aux_seed)})

    clip = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    tg.make_optimizer(model).step()
    weights = {k: q.detach().to(torch.float32).numpy() for k, q in params.items()}
    tg.st_save(a.step_out, weights, {"after": "1 AdamW step, clip 1.0",
                                     "grad_norm_preclip": repr(float(clip))})
    return 0


if __name__ == "__main__":
    sys.exit(main())
