/*
** test_optim.c -- the optimizer steps on gradients written by hand, each
** against a double-precision reference computed here: SGD (plain, with
** momentum, Nesterov, weight decay, momentum changed between steps as
** torch.optim.SGD's param_groups allow), Adam's first step, grad_scale before
** the clip, decay_all and the embeddings' rate.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/rng.h"
#include "tap.h"

static const ModelConfig shape = {.vocab = 32, .dim = 16, .layers = 1, .heads = 2, .ctx = 4, .batch = 2};

static Model *make(uint64_t seed) {
  Err err;
  Model *m = model_create(&shape, 1, &err);
  if (!m) {
    diag("model_create: %s", err.msg);
    exit(1);
  }
  model_init(m, seed);
  /* LayerNorm gains and biases away from 1 and 0, so decay shows on them. */
  Rng r;
  rng_seed(&r, seed + 1);
  float *p = model_params(m);
  for (size_t i = 0; i < model_n_floats(m); i++) p[i] += (float)(0.05 * rng_normal(&r));
  return m;
}

/* A random gradient in the arena, kept in 'g' too. */
static void set_grad(Model *m, uint64_t seed, float *g) {
  Rng r;
  rng_seed(&r, seed);
  for (size_t i = 0; i < model_n_floats(m); i++) g[i] = (float)(0.01 * rng_normal(&r));
  memcpy(model_grads(m), g, model_n_floats(m) * sizeof *g);
}

static float *copy_params(Model *m) {
  float *p = malloc(model_n_floats(m) * sizeof *p);
  memcpy(p, model_params(m), model_n_floats(m) * sizeof *p);
  return p;
}

static OptimConfig sgd(float lr, float momentum, int nesterov, float wd) {
  OptimConfig oc = optim_default();
  oc.kind = OPTIM_SGD;
  oc.lr = lr;
  oc.momentum = momentum;
  oc.nesterov = nesterov;
  oc.weight_decay = wd;
  oc.clip = 0;
  return oc;
}

/* p - lr*g as float arithmetic gives it, rounded once (fused) or twice. */
static int sgd_exact(float p0, float lr, float g, float p1) {
  return p1 == p0 - lr * g || p1 == (float)((double)p0 - (double)lr * g);
}

static void test_sgd_plain(void) {
  Model *m = make(1);
  size_t n = model_n_floats(m);
  float *g = malloc(n * sizeof *g), *p0 = copy_params(m);
  set_grad(m, 2, g);
  OptimConfig oc = sgd(0.1f, 0, 0, 0);
  model_update(m, &oc);
  const float *p1 = model_params(m);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += !sgd_exact(p0[i], 0.1f, g[i], p1[i]);
  ok(bad == 0, "SGD: every parameter moves by exactly lr x its gradient (%zu of %zu off)", bad, n);
  free(g);
  free(p0);
  model_free(m);
}

/* Two steps of SGD with momentum against the hand computation. */
static void test_sgd_momentum(int nesterov) {
  Model *m = make(3);
  size_t n = model_n_floats(m);
  float *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2), *p0 = copy_params(m);
  const double lr = 0.05, mu = 0.9;
  OptimConfig oc = sgd((float)lr, (float)mu, nesterov, 0);
  set_grad(m, 4, g1);
  model_update(m, &oc);
  set_grad(m, 5, g2);
  model_update(m, &oc);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double b1 = g1[i], d1 = nesterov ? g1[i] + mu * b1 : b1;
    double b2 = mu * b1 + g2[i], d2 = nesterov ? g2[i] + mu * b2 : b2;
    double want = (double)p0[i] - lr * d1 - lr * d2;
    worst = fmax(worst, fabs(model_params(m)[i] - want) / fmax(1.0, fabs(want)));
  }
  ok(worst < 1e-6, "SGD %s: the second step matches the hand computation (worst %.2g)",
     nesterov ? "Nesterov momentum 0.9" : "momentum 0.9", worst);
  free(g1);
  free(g2);
  free(p0);
  model_free(m);
}

/* Steps with gradients g[0..steps) at momentum mu[k] against torch.optim.SGD,
** which keeps no buffer while momentum is 0: a buffer starts at the first
** gradient stepped with momentum and is kept, untouched, through steps
** without. */
static double momentum_changes_error(const double *mu, int steps) {
  Model *m = make(7);
  size_t n = model_n_floats(m);
  const double lr = 0.05;
  float *g = malloc(n * sizeof *g), *p0 = copy_params(m);
  double *p = malloc(n * sizeof *p), *buf = malloc(n * sizeof *buf);
  for (size_t i = 0; i < n; i++) p[i] = p0[i];
  int have_buf = 0;
  for (int k = 0; k < steps; k++) {
    OptimConfig oc = sgd((float)lr, (float)mu[k], 0, 0);
    set_grad(m, 10 + (uint64_t)k, g);
    model_update(m, &oc);
    for (size_t i = 0; i < n; i++) {
      double d = g[i];
      if (mu[k] != 0) {
        buf[i] = have_buf ? (double)(float)mu[k] * buf[i] + g[i] : g[i];
        d = buf[i];
      }
      p[i] -= lr * d;
    }
    if (mu[k] != 0) have_buf = 1;
  }
  double worst = 0;
  for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(model_params(m)[i] - p[i]) / fmax(1.0, fabs(p[i])));
  free(g);
  free(p0);
  free(p);
  free(buf);
  model_free(m);
  return worst;
}

static void test_sgd_momentum_changes(void) {
  const double from_zero[] = {0, 0, 0.9, 0.9}, through_zero[] = {0.9, 0, 0.9, 0.9};
  double e = momentum_changes_error(from_zero, 4);
  ok(e < 1e-6, "SGD momentum turned on at step 3: the buffer starts at g_3, as torch's (worst %.2g)", e);
  e = momentum_changes_error(through_zero, 4);
  ok(e < 1e-6, "SGD momentum off for a step: the buffer is kept, untouched, as torch's (worst %.2g)", e);
}

/* What one step should give an element: from its weight, its gradient and
** whether its tensor decays. */
typedef double (*Reference)(double p, double g, int decay);

/* One step of 'oc' from fresh weights against 'want', element by element:
** the worst error relative to the weight, and the smallest move. */
static double one_step_error(uint64_t seed, const OptimConfig *oc, Reference want, double *smallest) {
  Model *m = make(seed);
  size_t n = model_n_floats(m);
  float *g = malloc(n * sizeof *g), *p0 = copy_params(m);
  set_grad(m, seed + 1, g);
  model_update(m, oc);
  double worst = 0;
  *smallest = INFINITY;
  for (int t = 0; t < model_tensor_count(m); t++) {
    const TensorInfo *ti = model_tensor(m, t);
    for (size_t j = ti->offset; j < ti->offset + ti->numel; j++) {
      double w = want(p0[j], g[j], ti->decay);
      worst = fmax(worst, fabs(model_params(m)[j] - w) / fmax(1.0, fabs(w)));
      *smallest = fmin(*smallest, fabs((double)model_params(m)[j] - p0[j]));
    }
  }
  free(g);
  free(p0);
  model_free(m);
  return worst;
}

/* SGD with lr 0.1 and weight decay 0.5, added to the gradient on 2-D weights. */
static double sgd_decayed(double p, double g, int decay) { return p - 0.1 * (g + (decay ? 0.5 * p : 0.0)); }

/* Adam's first step, bias-corrected: p - lr * g'/(|g'| + eps) with
** g' = g + wd*p (L2 decay, torch.optim.Adam); lr 1e-3, wd 0.1. */
static double adam_first(double p, double g, int decay) {
  double gp = g + (decay ? 0.1 * p : 0.0);
  return p - 1e-3 * gp / (fabs(gp) + 1e-8);
}

static void test_decay_in_gradient(void) {
  double smallest;
  OptimConfig oc = sgd(0.1f, 0, 0, 0.5f);
  double worst = one_step_error(6, &oc, sgd_decayed, &smallest);
  ok(worst < 1.2e-7, "SGD weight decay: g + wd*p on 2-D weights, none elsewhere (worst %.2g)", worst);
  oc = optim_default();
  oc.kind = OPTIM_ADAM;
  oc.clip = 0;
  /* Float rounding of the weight itself: a few parts in 1e8. */
  worst = one_step_error(8, &oc, adam_first, &smallest);
  ok(worst < 1.2e-7, "Adam's first step matches the double reference with L2 decay (worst %.2g relative)", worst);
  ok(smallest > 0.9 * oc.lr, "and moves every element by about lr (smallest %.3g, lr %.3g)", smallest, oc.lr);
}

/* A fresh model after one step of 'oc' on a gradient times 'scale'. */
static Model *scaled_step(float scale, const OptimConfig *oc) {
  Model *m = make(12);
  float *g = malloc(model_n_floats(m) * sizeof *g);
  set_grad(m, 13, g);
  free(g);
  model_clip_scaled(m, scale, 0);
  model_update(m, oc);
  return m;
}

/* grad_scale multiplies the gradient before the clip. */
static void test_grad_scale(void) {
  Model *m = make(10);
  size_t n = model_n_floats(m);
  float *g = malloc(n * sizeof *g);
  set_grad(m, 11, g);
  double norm1 = model_clip_scaled(m, 1.0f, 0);
  set_grad(m, 11, g);
  double norm2 = model_clip_scaled(m, 2.0f, 0);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += model_grads(m)[i] != 2.0f * g[i];
  ok(bad == 0 && fabs(norm2 - 2 * norm1) < 1e-12 * norm1, "grad_scale 2, no clip: the gradient doubles (norm %.4g -> %.4g)",
     norm1, norm2);
  set_grad(m, 11, g);
  double pre = model_clip_scaled(m, 2.0f, (float)norm1);
  double after = 0;
  for (size_t i = 0; i < n; i++) after += (double)model_grads(m)[i] * model_grads(m)[i];
  ok(fabs(pre - 2 * norm1) < 1e-9 && fabs(sqrt(after) - norm1) < 1e-5 * norm1,
     "grad_scale 2 then clip to the old norm: scaled before the clip (%.4g -> %.4g)", pre, sqrt(after));

  /* AdamW's first step does not see the scale (up to eps); SGD's doubles. */
  Model *fresh = make(12);
  float *p0 = copy_params(fresh);
  model_free(fresh);
  OptimConfig oc = optim_default(), os = sgd(0.1f, 0, 0, 0);
  oc.clip = 0;
  Model *a = scaled_step(1.0f, &oc), *b = scaled_step(2.0f, &oc);
  size_t flipped = 0;
  for (size_t i = 0; i < n; i++)
    flipped += (model_params(a)[i] - p0[i] > 0) != (model_params(b)[i] - p0[i] > 0);
  ok(flipped == 0, "AdamW's first step with grad_scale 2 keeps every sign (%zu flipped)", flipped);
  Model *c = scaled_step(1.0f, &os), *d = scaled_step(2.0f, &os);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double d1 = (double)model_params(c)[i] - p0[i], d2 = (double)model_params(d)[i] - p0[i];
    worst = fmax(worst, fabs(d2 - 2 * d1) / fmax(1.0, fabs(p0[i])));
  }
  /* Two float roundings of the weight (each half an ulp) and their double. */
  ok(worst < 2.5e-7, "SGD's step doubles with grad_scale 2 (worst %.2g)", worst);
  model_free(a);
  model_free(b);
  model_free(c);
  model_free(d);
  free(p0);
  free(g);
  model_free(m);
}

/* With a zero gradient AdamW moves a weight only by its decay. */
static void test_decay_all(void) {
  const char *ln = "transformer.h.0.ln_1.weight";
  float before[2], after[2];
  for (int all = 0; all < 2; all++) {
    Model *m = make(14);
    const TensorInfo *t = model_find_tensor(m, ln);
    memset(model_grads(m), 0, model_n_floats(m) * sizeof(float));
    before[all] = model_params(m)[t->offset];
    OptimConfig oc = optim_default();
    oc.decay_all = all;
    model_update(m, &oc);
    after[all] = model_params(m)[t->offset];
    model_free(m);
  }
  OptimConfig oc = optim_default();
  ok(after[0] == before[0], "without decay_all a LayerNorm weight is not decayed");
  ok(after[1] == before[1] * (1.0f - oc.lr * oc.weight_decay), "decay_all decays it: %.7f -> %.7f", before[1],
     after[1]);
}

/* emb_lr_scale 0: both embedding matrices stay as they are, the rest moves. */
static void test_emb_lr(void) {
  Model *m = make(15);
  size_t n = model_n_floats(m);
  float *g = malloc(n * sizeof *g), *p0 = copy_params(m);
  set_grad(m, 16, g);
  OptimConfig oc = optim_default();
  oc.emb_lr_scale = 0;
  model_update(m, &oc);
  int emb_still = 1, others_moved = 1;
  for (int t = 0; t < model_tensor_count(m); t++) {
    const TensorInfo *ti = model_tensor(m, t);
    int emb = !strcmp(ti->name, "transformer.wte.weight") || !strcmp(ti->name, "lm_head.weight");
    int moved = memcmp(model_params(m) + ti->offset, p0 + ti->offset, ti->numel * sizeof(float)) != 0;
    if (emb && moved) emb_still = 0;
    if (!emb && !moved) others_moved = 0;
  }
  ok(emb_still, "emb_lr_scale 0 leaves transformer.wte.weight and lm_head.weight untouched");
  ok(others_moved, "while every other tensor moves");
  ok(optim_emb_lr(&oc) == 0.0f && (oc.emb_lr_scale = 0.5f, optim_emb_lr(&oc) == 0.5f * oc.lr),
     "the embeddings' rate is lr x emb_lr_scale");
  free(g);
  free(p0);
  model_free(m);
}

int main(void) {
  test_sgd_plain();
  test_sgd_momentum(0);
  test_sgd_momentum(1);
  test_sgd_momentum_changes();
  test_decay_in_gradient();
  test_grad_scale();
  test_decay_all();
  test_emb_lr();
  return tap_done();
}
