/*
** test_model.c -- the reference GPT: shapes and sizes, gradients against
** finite differences in every tie mode, the tying identities, the
** optimizer against a scalar reference, live changes of the tie, readout
** and determinism.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/model.h"
#include "core/rng.h"
#include "core/step.h"
#include "tap.h"
#include "tiny_model.h"

/* One training step on a whole batch: the loss, NaN when the step was
** refused; 'gs' may be NULL. */
static float step_on(Model *m, const int32_t *in, const int32_t *tg, float in_scale, float out_scale,
                     const OptimConfig *oc, GradStats *gs) {
  const ModelConfig *c = model_config(m);
  StepPlan plan = {.inputs = in, .targets = tg, .rows = c->batch, .t = c->ctx, .batch_rows = c->batch,
                   .in_scale = in_scale, .out_scale = out_scale, .optim = *oc};
  StepResult res;
  int rc = train_step(m, &plan, &res, NULL);
  if (gs) *gs = res.grad;
  return rc == STEP_OK ? (float)res.loss : NAN;
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - b[i]));
  return m;
}

static double max_abs(const float *a, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i]));
  return m;
}

/* ---- config */

static void test_config(void) {
  ModelConfig c = config_default();
  Err err;
  ok(c.vocab == 1024 && c.dim == 128 && c.layers == 4 && c.heads == 4 && c.ctx == 64 && c.batch == 16 &&
         c.tie_k == 128,
     "config_default is V=1024 d=128 L=4 H=4 T=64 B=16 tied");
  ok(config_validate(&c, &err) == 0, "the default config is valid");
  ModelConfig bad = c;
  bad.heads = 3;
  ok(config_validate(&bad, &err) < 0 && strstr(err.msg, "heads (3) must divide dim (128)"), "heads must divide dim: '%s'",
     err.msg);
  bad = c;
  bad.vocab = 0;
  ok(config_validate(&bad, &err) < 0 && strstr(err.msg, "vocab"), "vocab 0 refused: '%s'", err.msg);
  bad = c;
  bad.tie_k = 129;
  ok(config_validate(&bad, &err) < 0 && strstr(err.msg, "129"), "tie_k past dim refused: '%s'", err.msg);
  bad = c;
  bad.ctx = CONFIG_MAX_CTX + 1;
  ok(config_validate(&bad, &err) < 0 && strstr(err.msg, "ctx"), "ctx past the bound refused: '%s'", err.msg);

  int k = -1;
  char buf[16];
  ok(config_parse_tie("tied", 128, &k, &err) == 0 && k == 128, "parse 'tied'");
  ok(config_parse_tie("untied", 128, &k, &err) == 0 && k == 0, "parse 'untied'");
  ok(config_parse_tie("40", 128, &k, &err) == 0 && k == 40 && !strcmp(config_tie_name(k, 128, buf), "40"),
     "parse and name a partial tie");
  ok(config_parse_tie("129", 128, &k, &err) < 0, "refuse K > dim: '%s'", err.msg);
  ok(config_parse_tie("half", 128, &k, &err) < 0 && strstr(err.msg, "half"), "refuse a word: '%s'", err.msg);
  ok(!strcmp(config_tie_name(128, 128, buf), "tied") && !strcmp(config_tie_name(0, 128, buf), "untied"),
     "tie names");

  /* Parameters: a tied model has V*d fewer than an untied one. */
  ModelConfig u = c;
  u.tie_k = 0;
  size_t d = 128, V = 1024, L = 4, T = 64;
  size_t want = V * d + T * d + L * (12 * d * d + 13 * d) + 2 * d;
  ok(config_param_count(&c) == want && config_param_count(&u) == want + V * d, "param count tied %zu untied %zu",
     config_param_count(&c), config_param_count(&u));
  ok(fabs(config_flops_per_token(&c) - (6.0 * (12.0 * 4 * 128 * 128 + 1024.0 * 128) + 12.0 * 4 * 64 * 128)) < 1,
     "flops per token");
}

/* ---- the tensor table and the arena */

static void test_layout(void) {
  ModelConfig c = tiny(5);
  Model *m = make(&c, 1, 1);
  int n = model_tensor_count(m);
  ok(n == 2 + 12 * c.layers + 3, "tensor count %d", n);
  size_t off = 0;
  int contiguous = 1, decay_ok = 1;
  for (int i = 0; i < n; i++) {
    const TensorInfo *t = model_tensor(m, i);
    contiguous &= t->offset == off;
    off += t->numel;
    decay_ok &= t->decay == (t->ndim == 2);
  }
  ok(contiguous && off == model_n_floats(m), "tensors tile the arena (%zu floats)", off);
  ok(decay_ok, "weight decay exactly on the 2-D tensors");
  const TensorInfo *a = model_find_tensor(m, "transformer.h.1.attn.c_attn.weight");
  const TensorInfo *f = model_find_tensor(m, "transformer.h.0.mlp.c_proj.weight");
  ok(a && a->shape[0] == 48 && a->shape[1] == 16 && f && f->shape[0] == 16 && f->shape[1] == 64,
     "nanoGPT names and [out,in] shapes");
  ok(!strcmp(model_tensor(m, 0)->name, "transformer.wte.weight") &&
         !strcmp(model_tensor(m, n - 1)->name, "lm_head.weight") && !model_find_tensor(m, "nope"),
     "wte first, lm_head last");
  ok(config_memory_bytes(&c) == model_allocated_bytes(m), "config_memory_bytes (%zu) is what the model allocated",
     config_memory_bytes(&c));
  ModelConfig big = config_default();
  ok(config_memory_bytes(&big) > 4 * config_param_count(&big) * sizeof(float),
     "memory estimate covers four arenas and activations (%.1f MiB at the default shape)",
     (double)config_memory_bytes(&big) / 1048576.0);

  /* Init: deterministic, nanoGPT's scales, shared columns mirrored. */
  Model *m2 = make(&c, 2, 1), *m3 = make(&c, 1, 2);
  ok(!memcmp(model_params(m), model_params(m2), model_n_floats(m) * sizeof(float)), "init is a function of the seed");
  ok(memcmp(model_params(m), model_params(m3), model_n_floats(m) * sizeof(float)), "another seed, other values");
  ModelConfig cb = config_default();
  cb.tie_k = 0;
  Model *mb = make(&cb, 1, 7);
  const float *p = model_params(mb);
  double s2[2] = {0}, cnt[2] = {0};
  const char *names[2] = {"transformer.h.1.mlp.c_fc.weight", "transformer.h.1.mlp.c_proj.weight"};
  for (int k = 0; k < 2; k++) {
    const TensorInfo *t = model_find_tensor(mb, names[k]);
    for (size_t j = 0; j < t->numel; j++) s2[k] += (double)p[t->offset + j] * p[t->offset + j];
    cnt[k] = (double)t->numel;
  }
  double sd_fc = sqrt(s2[0] / cnt[0]), sd_proj = sqrt(s2[1] / cnt[1]);
  ok(fabs(sd_fc - 0.02) < 0.001 && fabs(sd_proj - 0.02 / sqrt(8.0)) < 0.0005,
     "init std %.4f for c_fc, %.4f for c_proj (0.02 and 0.02/sqrt(2L))", sd_fc, sd_proj);
  const TensorInfo *lw = model_find_tensor(mb, "transformer.ln_f.weight"),
                   *lb = model_find_tensor(mb, "transformer.h.2.attn.c_attn.bias");
  ok(p[lw->offset] == 1.0f && p[lw->offset + 127] == 1.0f && max_abs(p + lb->offset, lb->numel) == 0.0,
     "LayerNorm weights 1, biases 0");
  const float *ein = model_params(m) + model_find_tensor(m, "transformer.wte.weight")->offset;
  const float *eout = model_params(m) + model_find_tensor(m, "lm_head.weight")->offset;
  int mirrored = 1;
  for (int v = 0; v < c.vocab; v++) mirrored &= !memcmp(ein + v * 16, eout + v * 16, 5 * sizeof(float));
  ok(mirrored && memcmp(ein + 5, eout + 5, 11 * sizeof(float)), "E_out's 5 shared columns mirror E_in, the rest its own");
  model_free(mb);
  model_free(m3);
  model_free(m2);
  model_free(m);
}

/* ---- gradients against finite differences */

/* Move tensor i by eps*u; for E_in, E_out's mirrored columns move with it;
** for E_out only its own columns move. */
static void nudge(Model *m, int i, const float *u, float eps) {
  const ModelConfig *c = model_config(m);
  const TensorInfo *t = model_tensor(m, i);
  float *p = model_params(m) + t->offset;
  size_t d = (size_t)c->dim, k = (size_t)c->tie_k;
  int is_in = !strcmp(t->name, "transformer.wte.weight"), is_out = !strcmp(t->name, "lm_head.weight");
  float *eout = model_params(m) + model_find_tensor(m, "lm_head.weight")->offset;
  for (size_t j = 0; j < t->numel; j++) {
    if (is_out && j % d < k) continue;
    p[j] += eps * u[j];
    if (is_in && j % d < k) eout[j] += eps * u[j];
  }
}

/* Directional differences of the loss, one random direction u per tensor,
** against <gradient, u> from backward + combine(1,1): for the embeddings
** that is G_in + G_out on shared columns and G_in or G_out on private
** ones. A five-point stencil keeps the truncation error below float's
** noise; errors are measured against the tensor's gradient norm, the
** size of <g,u> for a random u. */
static void check_gradients(ModelConfig c, int threads, const char *what) {
  int tie_k = c.tie_k;
  Model *m = make(&c, threads, 11);
  perturb(m, 12);
  int32_t *in = malloc(2 * (size_t)c.batch * c.ctx * sizeof(int32_t)), *tg = in + c.batch * c.ctx;
  random_batch(&c, 13, in, tg);
  loss_of(m, in, tg);
  model_backward(m, NULL);
  model_combine(m, 1.0f, 1.0f);
  size_t bytes = model_n_floats(m) * sizeof(float);
  float *g = malloc(bytes), *u = malloc(bytes), *p0 = malloc(bytes);
  memcpy(g, model_grads(m), bytes);
  memcpy(p0, model_params(m), bytes);
  Rng r;
  rng_seed(&r, 14);
  const double tol = 1e-3;
  double worst = 0.0;
  int worst_i = 0, checked = 0;
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *t = model_tensor(m, i);
    int is_out = !strcmp(t->name, "lm_head.weight");
    if (is_out && tie_k == c.dim) continue;   /* no parameter of its own */
    for (size_t j = 0; j < t->numel; j++) u[j] = (float)rng_normal(&r);
    double an = 0.0, norm = 0.0;
    for (size_t j = 0; j < t->numel; j++) {
      if (is_out && j % c.dim < (size_t)tie_k) continue;
      an += (double)g[t->offset + j] * u[j];
      norm += (double)g[t->offset + j] * g[t->offset + j];
    }
    /* Steps of the same length (0.04) in every tensor: long enough to rise
    ** above float noise, short enough for the stencil. */
    float eps = (float)(0.04 / sqrt((double)t->numel));
    double f[4];
    const float steps[4] = {2, 1, -1, -2};
    for (int s = 0; s < 4; s++) {
      nudge(m, i, u, steps[s] * eps);
      f[s] = loss_of(m, in, tg);
      memcpy(model_params(m), p0, bytes);
    }
    double fd = (-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / (12.0 * eps);
    double rel = fabs(fd - an) / fmax(sqrt(norm), 1e-3);
    if (rel > tol) diag("  %-40s <g,u> %9.6f fd %9.6f |g| %.4f err %.1e", t->name, an, fd, sqrt(norm), rel);
    if (rel > worst) worst = rel, worst_i = i;
    checked++;
  }
  diag("%s: %d tensors, worst error %.2e of the gradient norm (%s)", what, checked, worst,
       model_tensor(m, worst_i)->name);
  ok(worst < tol, "%s: every tensor's gradient matches finite differences (worst %.1e)", what, worst);
  free(p0);
  free(u);
  free(g);
  free(in);
  model_free(m);
}

/* model_combine's arithmetic on the two components, with scales. */
static void check_combine(int tie_k) {
  ModelConfig c = tiny(tie_k);
  Model *m = make(&c, 2, 21);
  perturb(m, 22);
  int32_t in[24], tg[24];
  random_batch(&c, 23, in, tg);
  loss_of(m, in, tg);
  model_backward(m, NULL);
  size_t n = model_n_floats(m), d = (size_t)c.dim, k = (size_t)tie_k;
  float *before = malloc(n * sizeof(float));
  memcpy(before, model_grads(m), n * sizeof(float));
  const float s_in = 2.5f, s_out = 0.75f;
  model_combine(m, s_in, s_out);
  const float *after = model_grads(m);
  size_t oi = model_find_tensor(m, "transformer.wte.weight")->offset, oo = model_find_tensor(m, "lm_head.weight")->offset;
  double err = 0.0, zero = 0.0, scale = max_abs(before + oi, c.vocab * d) + max_abs(before + oo, c.vocab * d);
  for (size_t v = 0; v < (size_t)c.vocab; v++)
    for (size_t j = 0; j < d; j++) {
      double gi = before[oi + v * d + j], go = before[oo + v * d + j];
      double want_in = j < k ? s_out * go + s_in * gi : s_in * gi, want_out = j < k ? 0.0 : s_out * go;
      err = fmax(err, fmax(fabs(after[oi + v * d + j] - want_in), fabs(after[oo + v * d + j] - want_out)));
      if (j < k) zero = fmax(zero, fabs(after[oo + v * d + j]));
    }
  size_t rest = oo - model_find_tensor(m, "transformer.wpe.weight")->offset;
  size_t wpe = model_find_tensor(m, "transformer.wpe.weight")->offset;
  ok(err <= 1e-6 * scale && zero == 0.0 && !memcmp(before + wpe, after + wpe, rest * sizeof(float)),
     "tie %d: combine gives s_out*G_out + s_in*G_in on shared columns, scaled components elsewhere (err %.1e)",
     tie_k, err);
  free(before);
  model_free(m);
}

/* An untied model whose E_out equals E_in has the tied model's loss, and
** G_in + G_out is the tied gradient. */
static void check_tied_equals_untied_sum(void) {
  ModelConfig ct = tiny(16), cu = tiny(0);
  Model *t = make(&ct, 1, 31), *u = make(&cu, 1, 99);
  perturb(t, 32);
  memcpy(model_params(u), model_params(t), model_n_floats(t) * sizeof(float));   /* E_out = E_in too */
  int32_t in[24], tg[24];
  random_batch(&ct, 33, in, tg);
  double lt = loss_of(t, in, tg), lu = loss_of(u, in, tg);
  model_backward(t, NULL);
  model_backward(u, NULL);
  model_combine(t, 1.0f, 1.0f);
  model_combine(u, 1.0f, 1.0f);
  size_t oi = model_find_tensor(t, "transformer.wte.weight")->offset, oo = model_find_tensor(t, "lm_head.weight")->offset;
  size_t vd = (size_t)ct.vocab * ct.dim;
  const float *gt = model_grads(t), *gu = model_grads(u);
  double err = 0.0;
  for (size_t j = 0; j < vd; j++) err = fmax(err, fabs((double)gt[oi + j] - ((double)gu[oi + j] + gu[oo + j])));
  ok(lt == lu, "untied with E_out = E_in: same loss as tied (%.7f)", lt);
  ok(err < 1e-6 * max_abs(gt + oi, vd), "untied G_in + G_out equals the tied gradient (err %.1e)", err);
  ok(!memcmp(gt + vd, gu + vd, (oo - vd) * sizeof(float)), "every other gradient identical");
  model_free(u);
  model_free(t);
}

/* ---- GradStats, clip, AdamW */

static void check_stats_clip_adamw(void) {
  ModelConfig c = tiny(5);
  Model *m = make(&c, 2, 41);
  perturb(m, 42);
  /* Each input token once: the summed and the per-position input
  ** gradients then have the same norms. */
  int32_t in[24], tg[24];
  for (int i = 0; i < 24; i++) in[i] = (i * 5 + 3) % 32, tg[i] = (i * 7) % 32;
  loss_of(m, in, tg);
  GradStats gs;
  model_backward(m, &gs);
  const float *g = model_grads(m);
  size_t oi = model_find_tensor(m, "transformer.wte.weight")->offset, oo = model_find_tensor(m, "lm_head.weight")->offset;
  size_t d = 16;
  double in2 = 0, in1 = 0, out2 = 0, out1 = 0;
  int rows = 0;
  for (size_t v = 0; v < 32; v++) {
    int nz = 0;
    for (size_t j = 0; j < d; j++) {
      double a = g[oi + v * d + j], b = g[oo + v * d + j];
      in2 += a * a, in1 += fabs(a), out2 += b * b, out1 += fabs(b);
      nz |= a != 0.0;
    }
    rows += nz;
  }
  ok(fabs(gs.in_l2 - sqrt(in2)) < 1e-6 * sqrt(in2) && fabs(gs.in_l1 - in1) < 1e-6 * in1, "grad_in L2 %.5f and L1 of G_in",
     gs.in_l2);
  ok(fabs(gs.out_l2 - sqrt(out2)) < 1e-6 * sqrt(out2) && fabs(gs.out_l1 - out1) < 1e-6 * out1,
     "grad_out L2 %.5f and L1 of G_out", gs.out_l2);
  ok(fabs(gs.in_act_l2 - gs.in_l2) < 1e-6 * gs.in_l2 && fabs(gs.in_act_l1 - gs.in_l1) < 1e-6 * gs.in_l1,
     "distinct tokens: the lookup-output gradient has G_in's norms (%.5f)", gs.in_act_l2);
  ok(rows == 24 && fabs(gs.rows_touched - 24.0 / 32.0) < 1e-12, "rows touched %.3f", gs.rows_touched);
  int32_t rep[24];
  for (int i = 0; i < 24; i++) rep[i] = i % 4;   /* four tokens, six times each */
  loss_of(m, rep, tg);
  model_backward(m, &gs);
  ok(fabs(gs.rows_touched - 4.0 / 32.0) < 1e-12 && gs.in_l1 <= gs.in_act_l1 && gs.in_l2 != gs.in_act_l2,
     "repeated tokens: 4 rows touched; summing rows can only shrink the L1 norm (%.4f <= %.4f)", gs.in_l1,
     gs.in_act_l1);

  /* Clip: the norm over every entry once (E_out's shared columns are 0
  ** after combine), scaled down to the limit. */
  model_combine(m, 1.0f, 1.0f);
  size_t n = model_n_floats(m);
  double sum = 0;
  for (size_t j = 0; j < n; j++) sum += (double)g[j] * g[j];
  float *g0 = malloc(n * sizeof(float));
  memcpy(g0, g, n * sizeof(float));
  double norm = model_clip(m, 1e6f);
  ok(fabs(norm - sqrt(sum)) < 1e-6 * norm && !memcmp(g0, g, n * sizeof(float)),
     "clip: norm %.5f, nothing scaled below the limit", norm);
  norm = model_clip(m, 0.01f);
  double after = 0;
  for (size_t j = 0; j < n; j++) after += (double)g[j] * g[j];
  ok(fabs(sqrt(after) - 0.01 * norm / (norm + 1e-6)) < 1e-6, "clip to 0.01: norm after %.6f", sqrt(after));

  /* AdamW: two steps against a scalar double reference of torch's update. */
  OptimConfig oc = optim_default();
  oc.lr = 0.01f;
  float *p0 = malloc(n * sizeof(float)), *m0 = malloc(n * sizeof(float)), *v0 = malloc(n * sizeof(float));
  memcpy(p0, model_params(m), n * sizeof(float));
  memcpy(m0, model_adam_m(m), n * sizeof(float));
  memcpy(v0, model_adam_v(m), n * sizeof(float));
  memcpy(g0, g, n * sizeof(float));
  double worst = 0.0;
  for (int step = 1; step <= 2; step++) {
    model_update(m, &oc);
    for (int i = 0; i < model_tensor_count(m); i++) {
      const TensorInfo *t = model_tensor(m, i);
      int is_out = !strcmp(t->name, "lm_head.weight");
      for (size_t j = 0; j < t->numel; j++) {
        size_t x = t->offset + j;
        if (is_out && j % d < 5) continue;
        double gg = g0[x], pp = p0[x] * (1.0 - (t->decay ? (double)oc.lr * oc.weight_decay : 0.0));
        m0[x] = (float)(0.9 * m0[x] + 0.1 * gg);
        v0[x] = (float)(0.95 * v0[x] + 0.05 * gg * gg);
        double mh = m0[x] / (1 - pow(0.9, step)), vh = v0[x] / (1 - pow(0.95, step));
        p0[x] = (float)(pp - oc.lr * mh / (sqrt(vh) + 1e-8));
        worst = fmax(worst, fabs(p0[x] - model_params(m)[x]));
      }
    }
  }
  ok(worst < 1e-6, "AdamW (decay on 2-D weights, bias corrections) matches the reference (err %.1e)", worst);
  int mirrored = 1;
  const float *P = model_params(m);
  for (size_t v = 0; v < 32; v++) mirrored &= !memcmp(P + oi + v * d, P + oo + v * d, 5 * sizeof(float));
  ok(mirrored && model_adam_t(m) == 2, "shared columns re-mirrored after the step");
  free(p0);
  free(m0);
  free(v0);
  free(g0);
  model_free(m);
}

/* ---- shapes, readout, determinism */

static void check_shapes_and_readout(void) {
  ModelConfig c = tiny(16);
  Model *m = make(&c, 2, 51);
  perturb(m, 52);
  int32_t in[24], tg[24];
  random_batch(&c, 53, in, tg);
  size_t V = 32, d = 16;
  model_forward(m, in, NULL, 3, 8);
  float *full = malloc(24 * V * sizeof(float)), *lo = malloc(24 * V * sizeof(float));
  memcpy(full, model_logits(m), 24 * V * sizeof(float));
  /* b=2, t=5: the same first five positions of the first two rows (causal). */
  int32_t small[10];
  for (int b = 0; b < 2; b++) memcpy(small + b * 5, in + b * 8, 5 * sizeof(int32_t));
  model_forward(m, small, NULL, 2, 5);
  double err = 0.0;
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < 5; t++)
      err = fmax(err, max_abs_diff(model_logits(m) + (b * 5 + t) * V, full + (b * 8 + t) * V, V));
  ok(err < 1e-5, "a forward on b=2 t=5 gives the logits of the full batch's prefix (err %.1e)", err);
  ok(isnan(model_forward(m, in, tg, 4, 8)) && isnan(model_forward(m, in, tg, 3, 9)), "b > B or t > T refused");
  int32_t badtok[24];
  memcpy(badtok, in, sizeof badtok);
  badtok[7] = 32;
  ok(isnan(model_forward(m, badtok, tg, 3, 8)), "a token id out of range refused");

  /* Readout of the last residual is the model's own output, bit for bit. */
  model_forward(m, in, NULL, 3, 8);
  memcpy(full, model_logits(m), 24 * V * sizeof(float));
  float *scratch = malloc(2 * 24 * d * sizeof(float));
  model_readout(m, model_residual(m, 2), 24, lo, scratch);
  ok(!memcmp(lo, full, 24 * V * sizeof(float)), "readout(residual L) equals the logits exactly");
  ok(!memcmp(scratch, model_lnf_out(m), 24 * d * sizeof(float)), "and its ln_f output equals the model's");
  {
    /* The same with several row blocks on two threads, and on a prefix. */
    ModelConfig bc = tiny(16);
    bc.batch = 8, bc.ctx = 24;
    Model *mb = make(&bc, 2, 55);
    int32_t bin[192], btg[192];
    random_batch(&bc, 56, bin, btg);
    model_forward(mb, bin, NULL, 8, 24);
    float *lg = malloc(192 * V * sizeof(float)), *sc = malloc(2 * 192 * d * sizeof(float));
    model_readout(mb, model_residual(mb, 2), 192, lg, sc);
    ok(!memcmp(lg, model_logits(mb), 192 * V * sizeof(float)), "readout(residual L) exact at 192 rows, 2 threads");
    model_readout(mb, model_residual(mb, 2), 100, lg, sc);
    diag("readout of the first 100 rows: largest difference %.1e", max_abs_diff(lg, model_logits(mb), 100 * V));
    free(sc);
    free(lg);
    model_free(mb);
  }

  /* Readout backward against finite differences of <R, readout(h)>. */
  float h[24 * 16], dh[24 * 16], u[24 * 16], R[24 * 32];
  memcpy(h, model_residual(m, 1), sizeof h);
  Rng r;
  rng_seed(&r, 54);
  for (int i = 0; i < 24 * 32; i++) R[i] = (float)rng_normal(&r);
  for (int i = 0; i < 24 * 16; i++) u[i] = (float)rng_normal(&r);
  model_readout_backward(m, h, R, 24, dh, scratch);
  double an = 0.0, f[4];
  const float steps[4] = {2e-2f, 1e-2f, -1e-2f, -2e-2f};
  for (int i = 0; i < 24 * 16; i++) an += (double)dh[i] * u[i];
  for (int s = 0; s < 4; s++) {
    float hp[24 * 16];
    for (int i = 0; i < 24 * 16; i++) hp[i] = h[i] + steps[s] * u[i];
    model_readout(m, hp, 24, lo, scratch);
    f[s] = 0.0;
    for (int i = 0; i < 24 * 32; i++) f[s] += (double)R[i] * lo[i];
  }
  double fd = (-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / 12e-2;
  ok(fabs(fd - an) < 1e-3 * fabs(an), "readout backward matches finite differences (%.5f vs %.5f)", an, fd);
  free(scratch);
  free(lo);
  free(full);
  model_free(m);
}

/* Save and restore everything a step changes. */
typedef struct Snapshot {
  float *p, *m, *v;
  long t;
} Snapshot;

static void snap(Model *m, Snapshot *s, int restore) {
  size_t n = model_n_floats(m) * sizeof(float);
  if (!restore) {
    s->p = malloc(n), s->m = malloc(n), s->v = malloc(n);
    memcpy(s->p, model_params(m), n), memcpy(s->m, model_adam_m(m), n), memcpy(s->v, model_adam_v(m), n);
    s->t = model_adam_t(m);
  } else {
    memcpy(model_params(m), s->p, n), memcpy(model_adam_m(m), s->m, n), memcpy(model_adam_v(m), s->v, n);
    model_set_adam_t(m, s->t);
  }
}

static size_t check_determinism(int threads, float **out) {
  ModelConfig c = tiny(5);
  c.batch = 8;   /* several row blocks, so that threads share the work */
  c.ctx = 24;
  Model *m = make(&c, threads, 61);
  int32_t in[192], tg[192];
  random_batch(&c, 62, in, tg);
  OptimConfig oc = optim_default();
  step_on(m, in, tg, 2.0f, 1.0f, &oc, NULL);
  Snapshot s;
  snap(m, &s, 0);
  size_t n = model_n_floats(m);
  GradStats g1, g2;
  float l1 = step_on(m, in, tg, 2.0f, 1.0f, &oc, &g1);
  float *p1 = malloc(n * sizeof(float));
  memcpy(p1, model_params(m), n * sizeof(float));
  snap(m, &s, 1);
  float l2 = step_on(m, in, tg, 2.0f, 1.0f, &oc, &g2);
  ok(l1 == l2 && !memcmp(p1, model_params(m), n * sizeof(float)) && !memcmp(&g1, &g2, sizeof g1),
     "threads=%d: the same step from the same state is bit-identical", threads);
  *out = p1;
  free(s.p), free(s.m), free(s.v);
  model_free(m);
  return n;
}

/* ---- tie modes over training */

/* A sequence a small model learns fast: a fixed random permutation walk. */
static void toy_batch(const ModelConfig *c, int step, int32_t *in, int32_t *tg) {
  for (int b = 0; b < c->batch; b++) {
    int x = (step * 7 + b * 3) % c->vocab;
    for (int t = 0; t < c->ctx; t++) {
      int y = (x * 5 + 3) % c->vocab;
      in[b * c->ctx + t] = x;
      tg[b * c->ctx + t] = y;
      x = y;
    }
  }
}

/* Two runs from the same seeds, 'a' retied to 'retie' columns (E_in kept)
** right after init when retie >= 0, train identically. */
static void check_same_runs(const char *a, const char *b, int retie) {
  ModelConfig ca = tiny(0), cb = tiny(0);
  Err err;
  config_parse_tie(a, 16, &ca.tie_k, &err);
  config_parse_tie(b, 16, &cb.tie_k, &err);
  Model *ma = make(&ca, 1, 71), *mb = make(&cb, 1, 71);
  if (retie >= 0) model_set_tie(ma, retie, TIE_KEEP_IN, &err);
  OptimConfig oc = optim_default();
  int same = 1;
  for (int s = 0; s < 4; s++) {
    int32_t in[24], tg[24];
    toy_batch(&ca, s, in, tg);
    same &= step_on(ma, in, tg, 1.5f, 1.0f, &oc, NULL) == step_on(mb, in, tg, 1.5f, 1.0f, &oc, NULL);
  }
  same &= !memcmp(model_params(ma), model_params(mb), model_n_floats(ma) * sizeof(float));
  ok(same, "tie '%s'%s and '%s' train identically", a, retie >= 0 ? " retied at init" : "", b);
  model_free(mb);
  model_free(ma);
}

/* model_set_tie's rules on values and moments, column by column. */
static void check_set_tie(void) {
  ModelConfig c = tiny(0);
  Model *m = make(&c, 1, 91);
  Rng r;
  rng_seed(&r, 92);
  float *arenas[3] = {model_params(m), model_adam_m(m), model_adam_v(m)};
  size_t oi = model_find_tensor(m, "transformer.wte.weight")->offset, oo = model_find_tensor(m, "lm_head.weight")->offset;
  size_t vd = 32 * 16, bytes = vd * sizeof(float);
  for (int a = 1; a < 3; a++)
    for (size_t j = 0; j < model_n_floats(m); j++) arenas[a][j] = (float)fabs(rng_normal(&r));
  float *in0[3], *out0[3];
  for (int a = 0; a < 3; a++) {
    in0[a] = malloc(bytes), out0[a] = malloc(bytes);
    memcpy(in0[a], arenas[a] + oi, bytes), memcpy(out0[a], arenas[a] + oo, bytes);
  }
  Err err;
  int good = model_set_tie(m, 6, TIE_MEAN, &err) == 0;
  for (int a = 0; a < 3; a++)
    for (size_t j = 0; j < vd; j++) {
      float want_in = j % 16 < 6 ? 0.5f * (in0[a][j] + out0[a][j]) : in0[a][j];
      float want_out = j % 16 < 6 ? want_in : out0[a][j];
      good &= arenas[a][oi + j] == want_in && arenas[a][oo + j] == want_out;
    }
  ok(good, "tie 0 -> 6 (mean): shared columns take the mean of values and moments, the rest unchanged");
  for (int a = 0; a < 3; a++) memcpy(in0[a], arenas[a] + oi, bytes), memcpy(out0[a], arenas[a] + oo, bytes);
  /* Make E_out's unshared columns differ, then untie to 3 and tie to 8 keeping E_out. */
  for (int a = 0; a < 3; a++)
    for (size_t j = 0; j < vd; j++)
      if (j % 16 >= 6) arenas[a][oo + j] = out0[a][j] = out0[a][j] + 1.0f;
  good = model_set_tie(m, 3, TIE_KEEP_IN, &err) == 0 && model_set_tie(m, 8, TIE_KEEP_OUT, &err) == 0;
  for (int a = 0; a < 3; a++)
    for (size_t j = 0; j < vd; j++) {
      size_t col = j % 16;
      /* cols 0..2 stayed shared; 3..5 were copied out then back; 6..7 take E_out's. */
      float want = col < 6 ? in0[a][j] : col < 8 ? out0[a][j] : in0[a][j];
      float want_out = col < 8 ? want : out0[a][j];
      good &= arenas[a][oi + j] == want && arenas[a][oo + j] == want_out;
    }
  ok(good && model_config(m)->tie_k == 8, "untie to 3 then tie to 8 (out): copies out, then E_out's columns survive");
  for (int a = 0; a < 3; a++) free(in0[a]), free(out0[a]);
  model_free(m);
}

/* Training on the toy sequence; 'noise' is the largest step-to-step change
** of the loss over the last five steps of a 'train' call. */
typedef struct Toy {
  Model *m;
  OptimConfig oc;
  int step;
  float first, last, noise;
} Toy;

static void train(Toy *toy, int n) {
  const ModelConfig *c = model_config(toy->m);
  int32_t in[24], tg[24];
  float prev = NAN;
  toy->noise = 0.0f;
  for (int i = 0; i < n; i++, toy->step++) {
    toy_batch(c, toy->step % 4, in, tg);
    toy->last = step_on(toy->m, in, tg, 1.0f, 1.0f, &toy->oc, NULL);
    if (toy->step == 0) toy->first = toy->last;
    if (i >= n - 5 && !isnan(prev)) toy->noise = fmaxf(toy->noise, fabsf(toy->last - prev));
    prev = toy->last;
  }
}

static void check_live_toggles(void) {
  ModelConfig c = tiny(16);
  Toy toy = {.m = make(&c, 2, 81), .oc = optim_default()};
  Model *m = toy.m;
  toy.oc.lr = 3e-3f;
  train(&toy, 40);
  ok(toy.last < toy.first - 0.5f, "the toy sequence is learned: loss %.3f -> %.3f", toy.first, toy.last);
  struct {
    int k;
    TieMerge merge;
    const char *what;
  } toggles[] = {
    {0, TIE_KEEP_IN, "tied -> untied"},
    {16, TIE_MEAN, "untied -> tied (mean)"},
    {6, TIE_KEEP_IN, "tied -> K=6"},
    {16, TIE_KEEP_OUT, "K=6 -> tied (out)"},
  };
  int32_t in[24], tg[24];
  for (size_t i = 0; i < sizeof toggles / sizeof toggles[0]; i++) {
    train(&toy, 12);
    toy_batch(&c, toy.step % 4, in, tg);
    float before = model_forward(m, in, tg, c.batch, c.ctx);
    /* Untying and partly untying change no value: the loss stays exactly. */
    int exact = toggles[i].k < model_config(m)->tie_k;
    Err err;
    int rc = model_set_tie(m, toggles[i].k, toggles[i].merge, &err);
    float after = model_forward(m, in, tg, c.batch, c.ctx);
    ok(rc == 0 && model_config(m)->tie_k == toggles[i].k &&
           (exact ? after == before : fabsf(after - before) <= toy.noise),
       "%s: loss %.4f -> %.4f, %s the step-to-step noise %.4f", toggles[i].what, before, after,
       exact ? "unchanged, under" : "within", toy.noise);
    if (toggles[i].k == 0) {
      /* E_out has a copy of the shared values and moments. */
      size_t oi = model_find_tensor(m, "transformer.wte.weight")->offset;
      size_t oo = model_find_tensor(m, "lm_head.weight")->offset, vd = 32 * 16;
      ok(!memcmp(model_adam_m(m) + oi, model_adam_m(m) + oo, vd * sizeof(float)) &&
             !memcmp(model_adam_v(m) + oi, model_adam_v(m) + oo, vd * sizeof(float)) &&
             !memcmp(model_params(m) + oi, model_params(m) + oo, vd * sizeof(float)),
         "untying copies the shared matrix and its moments into E_out");
    }
  }
  train(&toy, 12);
  ok(toy.last < toy.first - 0.5f && isfinite(toy.last), "training goes on after the toggles: loss %.3f", toy.last);
  Err err;
  ok(model_set_tie(m, 17, TIE_MEAN, &err) < 0 && strstr(err.msg, "17"), "a bad K refused: '%s'", err.msg);
  model_free(m);
}

int main(void) {
  test_config();
  test_layout();
  check_gradients(tiny(0), 1, "untied");
  check_gradients(tiny(16), 1, "tied");
  check_gradients(tiny(5), 1, "partial K=5");
  /* Longer rows: several attention blocks, several row blocks, two threads. */
  ModelConfig lc = {.vocab = 40, .dim = 24, .layers = 1, .heads = 3, .ctx = 70, .batch = 2, .tie_k = 7};
  check_gradients(lc, 2, "K=7, T=70, two threads");
  check_combine(16);
  check_combine(0);
  check_combine(5);
  check_tied_equals_untied_sum();
  check_stats_clip_adamw();
  check_shapes_and_readout();
  float *p1, *p2;
  size_t n = check_determinism(1, &p1), same = 0;
  check_determinism(2, &p2);
  for (size_t i = 0; i < n; i++) same += p1[i] == p2[i];
  diag("threads=1 and threads=2 agree on %zu of %zu weights after two steps", same, n);
  free(p1);
  free(p2);
  check_same_runs("0", "untied", -1);
  check_same_runs("16", "tied", -1);
  check_same_runs("5", "tied", 16);   /* E_in's init does not depend on the tie */
  check_set_tie();
  check_live_toggles();
  return tap_done();
}
