/*
** peer_grad.c -- one training step of tielab (train_step) against the
** PyTorch reference's dump of the same step (torch_gpt.py grad --dump-grads
** --step-out), in the spirit of llm.c's test_gpt2.c: loss, the two
** embedding-gradient components, every tensor's gradient, the clip norm and
** the weights after one AdamW step, each tensor's largest difference printed.
** tests/lib/peer_terms.py adds loss terms to the reference's cross-entropy; the
** step then adds their gradients through its hooks, as a script would.
**
**   peer_grad --resave IN OUT          load weights, write them back (tielab's writer)
**   peer_grad [--label S] --model M --tokens T --grads G --step W1 [--s-in X]
**                                      compare, printing TAP lines
**             [--aux-hidden P [--aux-coef C] [--aux-matrix R]]
**                                      with the hidden-state term at residual
**                                      position P: C*0.5*sum(h^2)/(B*T), or
**                                      C*sum(h*R)/(B*T) with R from that file
**             [--reg-align LAMBDA]     with LAMBDA*0.5*||E_in - E_out||^2
**             [--plain G0]             G0: the reference's dump without the
**                                      terms, which E_in's gradient must differ from
**
** Gradients must agree to 1e-4 relative to the tensor, max|ours - ref| / max|ref|,
** and to 1e-5 in norm, ||ours - ref|| / ||ref||.
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
#include "core/step.h"
#include "core/weights.h"
#include "tap.h"

#define WTE "transformer.wte.weight"
#define LM_HEAD "lm_head.weight"

static const double grad_rel = 1e-4, grad_l2 = 1e-5, loss_abs = 1e-5, aux_rel = 1e-5, weight_abs = 1e-6;

static const char *label = "";

typedef struct Diff {
  double max_diff, max_ref;   /* largest |ours - ref| and |ref| */
  double l2_diff, l2_ref;     /* ||ours - ref|| and ||ref|| */
} Diff;

static Diff diff(const float *ours, const float *ref, size_t n) {
  Diff d = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    double e = (double)ours[i] - ref[i];
    d.max_diff = fmax(d.max_diff, fabs(e));
    d.max_ref = fmax(d.max_ref, fabs((double)ref[i]));
    d.l2_diff += e * e;
    d.l2_ref += (double)ref[i] * ref[i];
  }
  d.l2_diff = sqrt(d.l2_diff);
  d.l2_ref = sqrt(d.l2_ref);
  return d;
}

static double rel(Diff d) { return d.max_ref > 0 ? d.max_diff / d.max_ref : d.max_diff; }
static double rel_l2(Diff d) { return d.l2_ref > 0 ? d.l2_diff / d.l2_ref : d.l2_diff; }
static int agrees(Diff d) { return rel(d) <= grad_rel && rel_l2(d) <= grad_l2; }

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
  const char *model, *tokens, *grads, *step, *plain, *matrix;
  float s_in;
  int hidden;          /* residual position of the hidden-state term; -1: none */
  double coef, align;  /* C and LAMBDA */
} Args;

/* What the step's hooks add, and what they saw. */
typedef struct Hooked {
  const Args *a;
  const float *r;          /* R [B*T,d] of the linear term; NULL: the square term */
  double reg;              /* the regulariser's value, as on_grad found it */
  double in_l2, out_l2;    /* ||G_in|| and ||G_out|| as on_grad received them */
  float *grads;            /* the gradient arena as on_grad left it: G_in and G_out apart */
} Hooked;

/* on_hidden: the hidden-state term's gradient at h, C*h/n (or C*R/n), joins
** the loss's there and flows down with it; its value is the step's aux
** loss. 'n' is B*T: one process holds the whole batch here. */
static int add_hidden_term(void *ctx, Model *m, int p, const float *h, float *dh, int n, int d,
                           long step, double *aux, Err *err) {
  Hooked *k = ctx;
  const float *g = k->r ? k->r : h;
  float c = (float)(k->a->coef / n);
  double s = 0;
  (void)m, (void)p, (void)step, (void)err;
  for (size_t i = 0; i < (size_t)n * d; i++) {
    s += (double)h[i] * g[i];
    dh[i] += c * g[i];
  }
  *aux = k->a->coef * (k->r ? s : 0.5 * s) / n;
  return 0;
}

/* on_grad: the regulariser's gradient, LAMBDA*(E_in - E_out) into G_in and
** its negative into G_out (nothing where E_out mirrors E_in), then a copy
** of every gradient before the step scales, clips and applies them. */
static int add_align_and_keep(void *ctx, Model *m, long step, Err *err) {
  Hooked *k = ctx;
  const TensorInfo *wte = model_find_tensor(m, WTE), *lm = model_find_tensor(m, LM_HEAD);
  const float *ein = model_params(m) + wte->offset, *eout = model_params(m) + lm->offset;
  float *gin = model_grads(m) + wte->offset, *gout = model_grads(m) + lm->offset;
  float lambda = (float)k->a->align;
  double s = 0, in2 = 0, out2 = 0;
  (void)step, (void)err;
  for (size_t i = 0; i < wte->numel; i++) {
    float e = ein[i] - eout[i];
    in2 += (double)gin[i] * gin[i];
    out2 += (double)gout[i] * gout[i];
    s += (double)e * e;
    gin[i] += lambda * e;
    gout[i] -= lambda * e;
  }
  k->reg = 0.5 * k->a->align * s;
  k->in_l2 = sqrt(in2);
  k->out_l2 = sqrt(out2);
  memcpy(k->grads, model_grads(m), model_n_floats(m) * sizeof(float));
  return 0;
}

/* The two unscaled embedding gradients as on_grad left them, and the
** GradStats, which the step takes before on_grad: with a regulariser they
** are the norms of what on_grad received, else the reference's. */
static void check_components(Model *m, const StFile *g, const Hooked *k, const GradStats *gs) {
  const float *grads = k->grads;
  const TensorInfo *wte = model_find_tensor(m, WTE), *lm = model_find_tensor(m, LM_HEAD);
  size_t n = wte->numel;
  float *gin = ref_tensor(g, "dump", "component.grad_from_input", n);
  float *gout = ref_tensor(g, "dump", "component.grad_from_output", n);
  if (gin && gout) {
    Diff di = diff(grads + wte->offset, gin, n);
    Diff dout = diff(grads + lm->offset, gout, n);
    diag("%sG_in  max|diff| %.3e  max|ref| %.3e  norm rel %.2e", label, di.max_diff, di.max_ref, rel_l2(di));
    diag("%sG_out max|diff| %.3e  max|ref| %.3e  norm rel %.2e", label, dout.max_diff, dout.max_ref,
         rel_l2(dout));
    ok(agrees(di), "%sG_in (lookup side) agrees: %.2e relative, %.2e in norm", label, rel(di), rel_l2(di));
    ok(agrees(dout), "%sG_out (logits side) agrees: %.2e relative, %.2e in norm", label, rel(dout),
       rel_l2(dout));
    int own = k->a->align != 0;
    double rin = own ? k->in_l2 : di.l2_ref, rout = own ? k->out_l2 : dout.l2_ref;
    ok(fabs(gs->in_l2 - rin) <= grad_rel * rin && fabs(gs->out_l2 - rout) <= grad_rel * rout,
       "%sgrad_in %.6f (%s %.6f) and grad_out %.6f (%s %.6f)", label, gs->in_l2,
       own ? "before on_grad" : "ref", rin, gs->out_l2, own ? "before on_grad" : "ref", rout);
  }
  free(gin);
  free(gout);
}

/* E_in's gradient as the step's combine makes it of the two slots:
** in_scale * G_in, plus G_out in the columns E_out shares (out_scale 1). */
static float *combined_wte(Model *m, const float *grads, float s_in) {
  const ModelConfig *c = model_config(m);
  const TensorInfo *wte = model_find_tensor(m, WTE), *lm = model_find_tensor(m, LM_HEAD);
  float *g = malloc(wte->numel * sizeof(float));
  for (size_t i = 0; i < wte->numel; i++)
    g[i] = s_in * grads[wte->offset + i] + ((int)(i % c->dim) < c->tie_k ? grads[lm->offset + i] : 0);
  return g;
}

/* The largest relative error seen, and where. */
typedef struct Worst {
  double rel;
  const char *name;
} Worst;

static void note(Worst *w, double rel, const char *name) {
  if (rel >= w->rel) *w = (Worst){rel, name};
}

/* Every gradient after the scales are applied. */
static void check_grads(Model *m, const StFile *g, const float *grads, float s_in) {
  const ModelConfig *c = model_config(m);
  int tied = c->tie_k == c->dim, all = 1, count = 0;
  Worst worst = {0, ""}, worst_l2 = {0, ""};
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *ti = model_tensor(m, i);
    if (tied && strcmp(ti->name, LM_HEAD) == 0) continue;   /* one matrix: wte holds it */
    float *ref = ref_tensor(g, "dump", ti->name, ti->numel);
    if (!ref) return;
    float *wte = strcmp(ti->name, WTE) == 0 ? combined_wte(m, grads, s_in) : NULL;
    Diff d = diff(wte ? wte : grads + ti->offset, ref, ti->numel);
    diag("%sgrad %-36s max|diff| %.3e  max|ref| %.3e  rel %.2e  norm rel %.2e", label, ti->name,
         d.max_diff, d.max_ref, rel(d), rel_l2(d));
    all &= agrees(d);
    note(&worst, rel(d), ti->name);
    note(&worst_l2, rel_l2(d), ti->name);
    count++;
    free(ref);
    free(wte);
  }
  int extra = g->n - count - 2;   /* the two component.* tensors */
  ok(all && extra == 0, "%sall %d gradients agree (max|diff|/max|ref| <= %g: worst %.2e in %s; "
     "||diff||/||ref|| <= %g: worst %.2e in %s)%s", label, count, grad_rel, worst.rel, worst.name,
     grad_l2, worst_l2.rel, worst_l2.name, extra ? ": the dump has other tensors" : "");
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

/* A term's value against the reference's, from its dump's metadata. */
static void check_value(const char *what, double ours, const StFile *g, const char *key) {
  double ref = meta_num(g, key);
  ok(fabs(ours - ref) <= aux_rel * fabs(ref), "%s%s %.10g agrees with the reference's %.10g to %g "
     "relative", label, what, ours, ref, aux_rel);
}

/* The terms are no no-op: E_in's gradient with them is far from the
** reference's without them, which the one with them matched. */
static void check_changed(Model *m, const float *grads, const StFile *plain) {
  const TensorInfo *wte = model_find_tensor(m, WTE);
  float *g0 = ref_tensor(plain, "plain dump", "component.grad_from_input", wte->numel);
  if (!g0) return;
  double change = rel_l2(diff(grads + wte->offset, g0, wte->numel));
  ok(change > 100 * grad_l2, "%sthe terms move G_in by %.2e of its norm without them", label, change);
  free(g0);
}

/* Read a reference file, or fail a check saying why. */
static int read_ref(StFile *f, const char *path) {
  Err err = {{0}};
  if (st_read(f, path, &err) == 0) return 0;
  ok(0, "%sread %s: %s", label, path, err.msg);
  return -1;
}

/* The reference's files of one case. */
typedef struct Refs {
  StFile grads, step, plain, matrix;
} Refs;

static int read_refs(const Args *a, Refs *f) {
  int bad = read_ref(&f->grads, a->grads) || read_ref(&f->step, a->step) ||
            (a->plain && read_ref(&f->plain, a->plain)) || (a->matrix && read_ref(&f->matrix, a->matrix));
  return bad ? -1 : 0;
}

static void free_refs(Refs *f) {
  st_free(&f->grads);
  st_free(&f->step);
  st_free(&f->plain);
  st_free(&f->matrix);
}

/* One train_step of 'm' on 'tok' (B rows of T+1 ids), with the hooks that
** add the terms 'a' asks for. on_grad always runs, to keep the gradients
** the step goes on to scale and clip; on_hidden only for a hidden-state term. */
static int run_step(Model *m, const Args *a, Hooked *k, const int32_t *tok, int B, StepResult *res,
                    Err *err) {
  int T = model_config(m)->ctx;
  int32_t *in = malloc((size_t)B * T * sizeof *in), *tg = malloc((size_t)B * T * sizeof *tg);
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      in[b * T + t] = tok[b * (T + 1) + t];
      tg[b * T + t] = tok[b * (T + 1) + t + 1];
    }
  StepHooks hooks = {.ctx = k, .on_grad = add_align_and_keep};
  if (a->hidden >= 0) {
    hooks.hidden_positions = (uint64_t)1 << a->hidden;
    hooks.on_hidden = add_hidden_term;
  }
  StepPlan plan = {.inputs = in, .targets = tg, .rows = B, .t = T, .batch_rows = B,
                   .in_scale = a->s_in, .out_scale = 1.0f, .optim = optim_default(), .step = 1,
                   .hooks = &hooks};
  int rc = train_step(m, &plan, res, err);
  free(in);
  free(tg);
  return rc;
}

/* The step's loss, terms, gradients, clip norm and weights against the reference's. */
static void check_result(Model *m, const Args *a, const Refs *f, const Hooked *k, const StepResult *res) {
  double ref_loss = meta_num(&f->grads, "loss");
  diag("%sloss %.8f  reference %.8f  diff %.2e", label, res->loss, ref_loss, fabs(res->loss - ref_loss));
  ok(fabs(res->loss - ref_loss) <= loss_abs, "%sloss agrees to %g", label, loss_abs);
  if (a->hidden >= 0) check_value("aux loss", res->aux_loss, &f->grads, "aux_loss");
  if (a->align != 0) check_value("regulariser", k->reg, &f->grads, "reg_loss");
  check_components(m, &f->grads, k, &res->grad);
  check_grads(m, &f->grads, k->grads, a->s_in);
  if (a->plain) check_changed(m, k->grads, &f->plain);
  double ref_norm = meta_num(&f->step, "grad_norm_preclip");
  ok(fabs(res->grad.total_norm - ref_norm) <= grad_rel * ref_norm, "%sgradient norm before the "
     "clip %.6f (reference %.6f)", label, res->grad.total_norm, ref_norm);
  check_step(m, &f->grads, &f->step);
}

static int compare(const Args *a) {
  Err err = {{0}};
  StFile f;
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
  Refs refs = {0};
  float *r = NULL;
  if (read_refs(a, &refs) != 0 ||
      (a->matrix && !(r = ref_tensor(&refs.matrix, "matrix", "aux.r", (size_t)B * cfg.ctx * cfg.dim))))
    return 2;
  Hooked k = {.a = a, .r = r, .grads = malloc(model_n_floats(m) * sizeof(float))};
  StepResult res;
  int rc = run_step(m, a, &k, tok, B, &res, &err);
  ok(rc == STEP_OK, "%sthe step completes (%d%s%s)", label, rc, rc ? ": " : "", rc ? err.msg : "");
  if (rc == STEP_OK) check_result(m, a, &refs, &k, &res);
  free_refs(&refs);
  model_free(m);
  free(k.grads);
  free(r);
  free(tok);
  return tap_failed ? 1 : 0;
}

int main(int argc, char **argv) {
  Args a = {.s_in = 1.0f, .hidden = -1, .coef = 1.0};
  if (argc == 4 && strcmp(argv[1], "--resave") == 0) return resave(argv[2], argv[3]);
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--label") == 0) label = v;
    else if (strcmp(k, "--model") == 0) a.model = v;
    else if (strcmp(k, "--tokens") == 0) a.tokens = v;
    else if (strcmp(k, "--grads") == 0) a.grads = v;
    else if (strcmp(k, "--step") == 0) a.step = v;
    else if (strcmp(k, "--s-in") == 0) a.s_in = strtof(v, NULL);
    else if (strcmp(k, "--aux-hidden") == 0) a.hidden = atoi(v);
    else if (strcmp(k, "--aux-coef") == 0) a.coef = strtod(v, NULL);
    else if (strcmp(k, "--aux-matrix") == 0) a.matrix = v;
    else if (strcmp(k, "--reg-align") == 0) a.align = strtod(v, NULL);
    else if (strcmp(k, "--plain") == 0) a.plain = v;
    else {
      fprintf(stderr, "peer_grad: unknown option %s\n", k);
      return 2;
    }
  }
  if (!a.model || !a.tokens || !a.grads || !a.step || a.hidden > 63) {
    fprintf(stderr, "usage: peer_grad [--label S] --model M --tokens T "
                    "--grads G --step W1 [--s-in X]\n"
                    "       [--aux-hidden P [--aux-coef C] [--aux-matrix R]] [--reg-align LAMBDA] "
                    "[--plain G0]\n       peer_grad --resave IN OUT\n");
    return 2;
  }
  return compare(&a);
}
