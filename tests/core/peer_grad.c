/*
** peer_grad.c -- one training step of tielab against the PyTorch reference's
** dump of the same step (torch_gpt.py grad --dump-grads --step-out), in the
** spirit of llm.c's test_gpt2.c: loss, the two embedding-gradient components,
** every tensor's gradient, the clip norm and the weights after one AdamW
** step, each tensor's largest difference printed.
**
**   peer_grad --resave IN OUT          load weights, write them back (tielab's writer)
**   peer_grad [--label S] --model M --tokens T --grads G --step W1 [--s-in X]
**                                      compare, printing TAP lines
**
** Gradients must agree to 1e-4 relative to the tensor: max|ours - ref| / max|ref|.
** The weights after the step must agree to 1e-6 (1 + |w|), except where the
** reference gradient is so small (0 < |g| <= 1e-4 max|g|) that its sign is
** within the gradient tolerance: Adam's first step moves by lr * sign(g)
** there, so those entries may differ by up to 2 lr and are only counted.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/safetensors.h"
#include "core/weights.h"
#include "tap.h"

#define WTE "transformer.wte.weight"
#define LM_HEAD "lm_head.weight"

static const double grad_rel = 1e-4, loss_abs = 1e-5, weight_abs = 1e-6;

static const char *label = "";

typedef struct Diff {
  double max_diff, max_ref;
} Diff;

static Diff diff(const float *ours, const float *ref, size_t n) {
  Diff d = {0, 0};
  for (size_t i = 0; i < n; i++) {
    d.max_diff = fmax(d.max_diff, fabs((double)ours[i] - ref[i]));
    d.max_ref = fmax(d.max_ref, fabs((double)ref[i]));
  }
  return d;
}

static double rel(Diff d) { return d.max_ref > 0 ? d.max_diff / d.max_ref : d.max_diff; }

static double norm2(const float *x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
  return sqrt(s);
}

/* Tensor 'name' of 'f' as n floats in a new buffer, or NULL with a TAP failure. */
static float *ref_tensor(const StFile *f, const char *what, const char *name, size_t n) {
  const StTensor *t = st_find(f, name);
  float *x = malloc((n ? n : 1) * sizeof(float));
  Err err = {{0}};
  if (!t || st_to_f32(t, x, n, &err) != 0) {
    ok(0, "%s%s has %s (%s)", label, what, name, t ? err.msg : "no such tensor");
    free(x);
    return NULL;
  }
  return x;
}

/* Raw little-endian int32 ids, rows of T+1: inputs and targets [B, T]. */
static int32_t *read_tokens(const char *path, int T, int V, int *B) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long bytes = ftell(fp);
  rewind(fp);
  int32_t *tok = malloc((size_t)bytes + 4);
  size_t n = fread(tok, 4, (size_t)bytes / 4, fp);
  fclose(fp);
  *B = (int)(n / (size_t)(T + 1));
  int good = bytes % 4 == 0 && n % (size_t)(T + 1) == 0 && *B > 0;
  for (size_t i = 0; good && i < n; i++) good = tok[i] >= 0 && tok[i] < V;
  if (!good) {
    free(tok);
    return NULL;
  }
  return tok;
}

static int resave(const char *in, const char *out) {
  Err err = {{0}};
  Model *m = weights_load(in, 1, 1, &err);
  if (!m || weights_save(m, out, &err) != 0) {
    fprintf(stderr, "peer_grad: %s\n", err.msg);
    model_free(m);
    return 1;
  }
  model_free(m);
  return 0;
}

typedef struct Args {
  const char *model, *tokens, *grads, *step;
  float s_in;
} Args;

/* The two unscaled embedding gradients right after backward. */
static void check_components(Model *m, const StFile *g, const GradStats *gs) {
  const TensorInfo *wte = model_find_tensor(m, WTE), *lm = model_find_tensor(m, LM_HEAD);
  size_t n = wte->numel;
  float *gin = ref_tensor(g, "dump", "component.grad_from_input", n);
  float *gout = ref_tensor(g, "dump", "component.grad_from_output", n);
  if (gin && gout) {
    Diff di = diff(model_grads(m) + wte->offset, gin, n);
    Diff dout = diff(model_grads(m) + lm->offset, gout, n);
    diag("%sG_in  max|diff| %.3e  max|ref| %.3e", label, di.max_diff, di.max_ref);
    diag("%sG_out max|diff| %.3e  max|ref| %.3e", label, dout.max_diff, dout.max_ref);
    ok(rel(di) <= grad_rel, "%sG_in (lookup side) agrees: %.2e relative", label, rel(di));
    ok(rel(dout) <= grad_rel, "%sG_out (logits side) agrees: %.2e relative", label, rel(dout));
    double rin = norm2(gin, n), rout = norm2(gout, n);
    ok(fabs(gs->in_l2 - rin) <= grad_rel * rin && fabs(gs->out_l2 - rout) <= grad_rel * rout,
       "%sgrad_in %.6f (ref %.6f) and grad_out %.6f (ref %.6f)", label, gs->in_l2, rin,
       gs->out_l2, rout);
  }
  free(gin);
  free(gout);
}

/* Every gradient after the scales are applied. */
static void check_grads(Model *m, const StFile *g) {
  const ModelConfig *c = model_config(m);
  int tied = c->tie_k == c->dim, all = 1, count = 0;
  double worst = 0;
  const char *worst_name = "";
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *ti = model_tensor(m, i);
    if (tied && strcmp(ti->name, LM_HEAD) == 0) continue;   /* one matrix: wte holds it */
    float *ref = ref_tensor(g, "dump", ti->name, ti->numel);
    if (!ref) return;
    Diff d = diff(model_grads(m) + ti->offset, ref, ti->numel);
    diag("%sgrad %-36s max|diff| %.3e  max|ref| %.3e  rel %.2e", label, ti->name, d.max_diff,
         d.max_ref, rel(d));
    all &= rel(d) <= grad_rel;
    if (rel(d) >= worst) {
      worst = rel(d);
      worst_name = ti->name;
    }
    count++;
    free(ref);
  }
  int extra = g->n - count - 2;   /* the two component.* tensors */
  ok(all && extra == 0, "%sall %d gradients agree (max|diff|/max|ref| <= %g; worst %.2e in %s)%s",
     label, count, grad_rel, worst, worst_name, extra ? ": the dump has other tensors" : "");
}

/* Parameters after clip + one AdamW step; 'g' holds the pre-clip gradients. */
static void check_step(Model *m, const StFile *g, const StFile *w1) {
  const ModelConfig *c = model_config(m);
  int tied = c->tie_k == c->dim, all = 1, count = 0;
  long sensitive = 0, moved = 0;   /* near-zero gradients; of those, entries beyond tolerance */
  double worst = 0;
  const char *worst_name = "";
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *ti = model_tensor(m, i);
    if (tied && strcmp(ti->name, LM_HEAD) == 0) continue;
    float *ref = ref_tensor(w1, "step", ti->name, ti->numel);
    float *gr = ref_tensor(g, "dump", ti->name, ti->numel);
    if (!ref || !gr) {
      free(ref);
      free(gr);
      return;
    }
    const float *w = model_params(m) + ti->offset;
    double gmax = diff(gr, gr, ti->numel).max_ref, dmax = 0;
    for (size_t k = 0; k < ti->numel; k++) {
      double dk = fabs((double)w[k] - ref[k]);
      int close = dk <= weight_abs * (1 + fabs(ref[k]));
      if (gr[k] != 0 && fabs(gr[k]) <= grad_rel * gmax) {
        sensitive++;
        moved += !close;
        all &= dk <= 2.01e-3;   /* at most the two opposite first steps, lr each */
      } else {
        dmax = fmax(dmax, dk);
        all &= close;
      }
    }
    diag("%sstep %-36s max|diff| %.3e", label, ti->name, dmax);
    if (dmax >= worst) {
      worst = dmax;
      worst_name = ti->name;
    }
    count++;
    free(ref);
    free(gr);
  }
  ok(all && w1->n == count, "%sall %d tensors agree after one AdamW step (worst %.2e in %s; "
     "%ld entries with a near-zero gradient, %ld of them beyond %g)", label, count, worst,
     worst_name, sensitive, moved, weight_abs);
  if (tied) {
    const TensorInfo *wte = model_find_tensor(m, WTE), *lm = model_find_tensor(m, LM_HEAD);
    ok(memcmp(model_params(m) + wte->offset, model_params(m) + lm->offset,
              wte->numel * sizeof(float)) == 0,
       "%sE_out still mirrors E_in after the step", label);
  }
}

static double meta_num(const StFile *f, const char *key) {
  const char *s = st_meta(f, key);
  return s ? strtod(s, NULL) : NAN;
}

static int compare(const Args *a) {
  Err err = {{0}};
  StFile f, g, w1;
  ModelConfig cfg;
  if (st_read(&f, a->model, &err) != 0 || weights_config(&f, 1, &cfg, &err) != 0) {
    ok(0, "%sread %s: %s", label, a->model, err.msg);
    return 2;
  }
  st_free(&f);
  int B;
  int32_t *tok = read_tokens(a->tokens, cfg.ctx, cfg.vocab, &B);
  Model *m = tok ? weights_load(a->model, 1, B, &err) : NULL;
  if (!tok || !m) {
    ok(0, "%sload: %s", label, tok ? err.msg : "bad token file");
    return 2;
  }
  if (st_read(&g, a->grads, &err) != 0 || st_read(&w1, a->step, &err) != 0) {
    ok(0, "%sread the reference dumps: %s", label, err.msg);
    return 2;
  }
  int T = cfg.ctx;
  int32_t *in = malloc((size_t)B * T * sizeof *in), *tg = malloc((size_t)B * T * sizeof *tg);
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      in[b * T + t] = tok[b * (T + 1) + t];
      tg[b * T + t] = tok[b * (T + 1) + t + 1];
    }

  GradStats gs;
  float loss = model_forward(m, in, tg, B, T);
  double ref_loss = meta_num(&g, "loss");
  diag("%sloss %.8f  reference %.8f  diff %.2e", label, loss, ref_loss, fabs(loss - ref_loss));
  ok(fabs(loss - ref_loss) <= loss_abs, "%sloss agrees to %g", label, loss_abs);
  model_backward(m, &gs);
  check_components(m, &g, &gs);
  model_combine(m, a->s_in, 1.0f);
  check_grads(m, &g);

  OptimConfig oc = optim_default();
  double norm = model_clip(m, oc.clip), ref_norm = meta_num(&w1, "grad_norm_preclip");
  ok(fabs(norm - ref_norm) <= grad_rel * ref_norm, "%sgradient norm before the clip %.6f "
     "(reference %.6f)", label, norm, ref_norm);
  model_update(m, &oc);
  check_step(m, &g, &w1);

  st_free(&g);
  st_free(&w1);
  model_free(m);
  free(tok);
  free(in);
  free(tg);
  return tap_failed ? 1 : 0;
}

int main(int argc, char **argv) {
  Args a = {.s_in = 1.0f};
  if (argc == 4 && strcmp(argv[1], "--resave") == 0) return resave(argv[2], argv[3]);
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--label") == 0) label = v;
    else if (strcmp(k, "--model") == 0) a.model = v;
    else if (strcmp(k, "--tokens") == 0) a.tokens = v;
    else if (strcmp(k, "--grads") == 0) a.grads = v;
    else if (strcmp(k, "--step") == 0) a.step = v;
    else if (strcmp(k, "--s-in") == 0) a.s_in = strtof(v, NULL);
    else {
      fprintf(stderr, "peer_grad: unknown option %s\n", k);
      return 2;
    }
  }
  if (!a.model || !a.tokens || !a.grads || !a.step) {
    fprintf(stderr, "usage: peer_grad [--label S] --model M --tokens T "
                    "--grads G --step W1 [--s-in X]\n       peer_grad --resave IN OUT\n");
    return 2;
  }
  return compare(&a);
}
