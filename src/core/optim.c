/*
** optim.c -- what happens to the gradient after backward: the two
** embedding gradients scaled and folded into the shared columns, the
** global-norm clip, one AdamW step (as torch.optim.AdamW and
** torch.nn.utils.clip_grad_norm_ do them), and changes of the tie.
**
** Shared columns c < tie_k: their gradient and moments live in E_in's
** slot; E_out's copy is not a parameter, so its gradient is zeroed (and
** the clip, summing every entry, counts each parameter once) and its
** values are rewritten from E_in after each step.
*/
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "model_impl.h"

OptimConfig optim_default(void) {
  return (OptimConfig){.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                       .clip = 1.0f};
}

typedef struct OptStage {
  Model *m;
  float in_scale, out_scale, coef;
  AdamStep decay, plain;
} OptStage;

/* ---- combine */

static void combine_rows(void *arg, int r0, int r1, int w) {
  OptStage *s = arg;
  Model *m = s->m;
  size_t d = (size_t)m->cfg.dim, k = (size_t)m->cfg.tie_k;
  float *gin = tensor_ptr(m, m->a.grads, T_WTE), *gout = tensor_ptr(m, m->a.grads, t_lm_head(&m->cfg));
  for (size_t r = (size_t)r0; r < (size_t)r1; r++) {
    float *a = gin + r * d, *b = gout + r * d;
    if (k > 0) {
      kern_axpby(a, b, k, s->out_scale, s->in_scale);   /* s_out*G_out + s_in*G_in */
      memset(b, 0, k * sizeof(float));
    }
    if (s->in_scale != 1.0f) kern_scale(a + k, d - k, s->in_scale);
    if (s->out_scale != 1.0f) kern_scale(b + k, d - k, s->out_scale);
  }
}

void model_combine(Model *m, float in_scale, float out_scale) {
  OptStage s = {.m = m, .in_scale = in_scale, .out_scale = out_scale};
  if (m->cfg.tie_k == 0 && in_scale == 1.0f && out_scale == 1.0f) return;
  pool_for(m->pool, m->cfg.vocab, combine_rows, &s);
}

/* ---- clip */

static int n_chunks(const Model *m) { return (int)((m->n_floats + CHUNK - 1) / CHUNK); }

static void chunk_range(const Model *m, int c, size_t *lo, size_t *hi) {
  *lo = (size_t)c * CHUNK;
  *hi = *lo + CHUNK < m->n_floats ? *lo + CHUNK : m->n_floats;
}

static void sumsq_chunks(void *arg, int c0, int c1, int w) {
  Model *m = ((OptStage *)arg)->m;
  for (int c = c0; c < c1; c++) {
    size_t lo, hi;
    chunk_range(m, c, &lo, &hi);
    m->a.chunk[c] = kern_sumsq(m->a.grads + lo, hi - lo);
  }
}

static void scale_chunks(void *arg, int c0, int c1, int w) {
  OptStage *s = arg;
  for (int c = c0; c < c1; c++) {
    size_t lo, hi;
    chunk_range(s->m, c, &lo, &hi);
    kern_scale(s->m->a.grads + lo, hi - lo, s->coef);
  }
}

double model_clip(Model *m, float max_norm) {
  OptStage s = {.m = m};
  pool_for(m->pool, n_chunks(m), sumsq_chunks, &s);
  double sum = 0.0;
  for (int c = 0; c < n_chunks(m); c++) sum += m->a.chunk[c];   /* in order: reproducible */
  double norm = sqrt(sum);
  double coef = (double)max_norm / (norm + 1e-6);
  if (coef < 1.0) {
    s.coef = (float)coef;
    pool_for(m->pool, n_chunks(m), scale_chunks, &s);
  }
  return norm;
}

/* ---- AdamW */

/* Update arena entries [lo,hi), tensor by tensor (decay or not); E_out's
** shared columns are skipped. */
static void adamw_range(const OptStage *s, size_t lo, size_t hi) {
  Model *m = s->m;
  const ModelConfig *c = &m->cfg;
  float *p = m->a.params, *g = m->a.grads, *mm = m->a.adam_m, *v = m->a.adam_v;
  for (int i = 0; i < m->n_tensors; i++) {
    const TensorInfo *t = &m->tensors[i];
    size_t a = lo > t->offset ? lo : t->offset, b = hi < t->offset + t->numel ? hi : t->offset + t->numel;
    if (a >= b) continue;
    const AdamStep *st = t->decay ? &s->decay : &s->plain;
    if (i != t_lm_head(c) || c->tie_k == 0) {
      kern_adamw(p + a, g + a, mm + a, v + a, b - a, st);
      continue;
    }
    size_t d = (size_t)c->dim, k = (size_t)c->tie_k;
    for (size_t r = (a - t->offset) / d; r * d + t->offset < b; r++) {
      size_t x = t->offset + r * d + k, y = t->offset + (r + 1) * d;
      if (x < a) x = a;
      if (y > b) y = b;
      if (x < y) kern_adamw(p + x, g + x, mm + x, v + x, y - x, st);
    }
  }
}

static void adamw_chunks(void *arg, int c0, int c1, int w) {
  OptStage *s = arg;
  for (int c = c0; c < c1; c++) {
    size_t lo, hi;
    chunk_range(s->m, c, &lo, &hi);
    adamw_range(s, lo, hi);
  }
}

void model_adamw(Model *m, const OptimConfig *oc) {
  m->adam_t++;
  /* The scalars as torch computes them, in double, then used in float. */
  double bc1 = 1.0 - pow(oc->beta1, (double)m->adam_t), bc2 = 1.0 - pow(oc->beta2, (double)m->adam_t);
  AdamStep st = {.lr = oc->lr, .beta1 = oc->beta1, .beta2 = oc->beta2, .eps = oc->eps,
                 .step_size = (float)(oc->lr / bc1), .bc2_sqrt = (float)sqrt(bc2)};
  OptStage s = {.m = m, .decay = st, .plain = st};
  s.decay.decay = (float)((double)oc->lr * oc->weight_decay);
  s.plain.decay = 0.0f;
  pool_for(m->pool, n_chunks(m), adamw_chunks, &s);
  model_mirror_shared(m);
}

float model_train_step(Model *m, const int32_t *inputs, const int32_t *targets, float in_scale,
                       float out_scale, const OptimConfig *oc, GradStats *gs) {
  const ModelConfig *c = &m->cfg;
  float loss = model_forward(m, inputs, targets, c->batch, c->ctx);
  if (!isfinite(loss)) return loss;   /* nothing updated */
  model_backward(m, gs);
  model_combine(m, in_scale, out_scale);
  double norm = model_clip(m, oc->clip);
  if (gs) gs->total_norm = norm;
  if (!isfinite(norm)) return NAN;    /* a non-finite gradient is never applied */
  model_adamw(m, oc);
  return loss;
}

/* ---- tying */

int model_set_tie(Model *m, int new_k, TieMerge merge, Err *err) {
  ModelConfig *c = &m->cfg;
  if (new_k < 0 || new_k > c->dim)
    return err_set(err, "tie: shared columns (%d) must be between 0 and dim (%d)", new_k, c->dim);
  size_t d = (size_t)c->dim, old = (size_t)c->tie_k, k = (size_t)new_k;
  float *arenas[3] = {m->a.params, m->a.adam_m, m->a.adam_v};
  for (int a = 0; a < 3; a++) {
    float *ein = tensor_ptr(m, arenas[a], T_WTE), *eout = tensor_ptr(m, arenas[a], t_lm_head(c));
    for (size_t r = 0; r < (size_t)c->vocab; r++) {
      float *x = ein + r * d, *y = eout + r * d;
      /* Columns that stop being shared: E_out gets its own copy. */
      for (size_t j = k; j < old; j++) y[j] = x[j];
      /* Columns that become shared: one value survives, in E_in. */
      for (size_t j = old; j < k; j++) {
        if (merge == TIE_KEEP_OUT) x[j] = y[j];
        else if (merge == TIE_MEAN) x[j] = 0.5f * (x[j] + y[j]);
        y[j] = x[j];
      }
    }
  }
  c->tie_k = new_k;
  return 0;
}
