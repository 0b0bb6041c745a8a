/*
** optim.c -- what happens to the gradient after backward: the two
** embedding gradients scaled and folded into the shared columns, the
** global-norm clip, one AdamW, Adam or SGD step (as torch.optim.AdamW,
** torch.optim.Adam, torch.optim.SGD and torch.nn.utils.clip_grad_norm_ do
** them), and changes of the tie.
**
** Shared columns c < tie_k: their gradient and moments live in E_in's
** slot; E_out's copy is not a parameter, so its gradient is zeroed (and
** the clip, summing every entry, counts each parameter once) and its
** values are rewritten from E_in after each step.
*/
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/kernels.h"
#include "core/model_impl.h"

const char *const optim_names[] = {[OPTIM_ADAMW] = "adamw", [OPTIM_ADAM] = "adam", [OPTIM_SGD] = "sgd", NULL};

OptimConfig optim_default(void) {
  return (OptimConfig){.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                       .clip = 1.0f, .kind = OPTIM_ADAMW, .grad_scale = 1.0f, .emb_lr_scale = 1.0f};
}

float optim_emb_lr(const OptimConfig *oc) {
  return oc->emb_lr_scale == 1.0f ? oc->lr : (float)((double)oc->lr * oc->emb_lr_scale);
}

/* How one group of tensors steps: the embeddings or the rest, with weight
** decay or without. */
typedef struct StepRule {
  AdamStep adam;
  SgdStep sgd;
} StepRule;

enum { GROUP_OTHER, GROUP_EMB };

typedef struct OptStage {
  Model *m;
  float in_scale, out_scale, coef;
  OptimKind kind;
  StepRule rule[2][2];   /* [GROUP_*][decay] */
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

double model_clip_scaled(Model *m, float grad_scale, float max_norm) {
  OptStage s = {.m = m};
  pool_for(m->pool, n_chunks(m), sumsq_chunks, &s);
  double sum = 0.0;
  for (int c = 0; c < n_chunks(m); c++) sum += m->a.chunk[c];   /* in order: reproducible */
  double norm = sqrt(sum) * grad_scale;
  /* The scale and the clip's factor, multiplied: one pass, none when 1. */
  double coef = grad_scale, clip = max_norm > 0 ? (double)max_norm / (norm + 1e-6) : 1.0;
  if (clip < 1.0) coef *= clip;
  if (coef != 1.0) {
    s.coef = (float)coef;
    pool_for(m->pool, n_chunks(m), scale_chunks, &s);
  }
  return norm;
}

double model_clip(Model *m, float max_norm) { return model_clip_scaled(m, 1.0f, max_norm); }

/* ---- the update */

typedef void (*SpanFn)(Model *m, const StepRule *r, size_t a, size_t b);

static void span_adamw(Model *m, const StepRule *r, size_t a, size_t b) {
  kern_adamw(m->a.params + a, m->a.grads + a, m->a.adam_m + a, m->a.adam_v + a, b - a, &r->adam);
}

static void span_adam(Model *m, const StepRule *r, size_t a, size_t b) {
  kern_adam(m->a.params + a, m->a.grads + a, m->a.adam_m + a, m->a.adam_v + a, b - a, &r->adam);
}

static void span_sgd(Model *m, const StepRule *r, size_t a, size_t b) {
  kern_sgd(m->a.params + a, m->a.grads + a, m->a.adam_m + a, b - a, &r->sgd);
}

static const SpanFn span_fn[] = {[OPTIM_ADAMW] = span_adamw, [OPTIM_ADAM] = span_adam, [OPTIM_SGD] = span_sgd};

static int is_embedding(const ModelConfig *c, int i) { return i == T_WTE || i == t_lm_head(c); }

/* Update arena entries [lo,hi), tensor by tensor (by its group and decay);
** E_out's shared columns are skipped. */
static void update_range(const OptStage *s, size_t lo, size_t hi) {
  Model *m = s->m;
  const ModelConfig *c = &m->cfg;
  SpanFn span = span_fn[s->kind];
  for (int i = 0; i < m->n_tensors; i++) {
    const TensorInfo *t = &m->tensors[i];
    size_t a = lo > t->offset ? lo : t->offset, b = hi < t->offset + t->numel ? hi : t->offset + t->numel;
    if (a >= b) continue;
    const StepRule *st = &s->rule[is_embedding(c, i) ? GROUP_EMB : GROUP_OTHER][t->decay];
    if (i != t_lm_head(c) || c->tie_k == 0) {
      span(m, st, a, b);
      continue;
    }
    size_t d = (size_t)c->dim, k = (size_t)c->tie_k;
    for (size_t r = (a - t->offset) / d; r * d + t->offset < b; r++) {
      size_t x = t->offset + r * d + k, y = t->offset + (r + 1) * d;
      if (x < a) x = a;
      if (y > b) y = b;
      if (x < y) span(m, st, x, y);
    }
  }
}

static void update_chunks(void *arg, int c0, int c1, int w) {
  OptStage *s = arg;
  for (int c = c0; c < c1; c++) {
    size_t lo, hi;
    chunk_range(s->m, c, &lo, &hi);
    update_range(s, lo, hi);
  }
}

/* The rule of a group stepping at rate 'lr', with or without decay. The
** scalars as torch computes them, in double, then used in float. */
static StepRule step_rule(const OptimConfig *oc, float lr, int decay, long t) {
  double bc1 = 1.0 - pow(oc->beta1, (double)t), bc2 = 1.0 - pow(oc->beta2, (double)t);
  double wd = decay ? oc->weight_decay : 0.0;
  StepRule r = {.adam = {.lr = lr, .beta1 = oc->beta1, .beta2 = oc->beta2, .eps = oc->eps,
                         .step_size = (float)(lr / bc1), .bc2_sqrt = (float)sqrt(bc2)},
                .sgd = {.lr = lr, .decay = (float)wd, .momentum = oc->momentum, .nesterov = oc->nesterov,
                        .first = t == 1}};
  /* AdamW shrinks the weight by lr*wd; Adam adds wd*p to the gradient. */
  r.adam.decay = oc->kind == OPTIM_ADAMW ? (float)((double)lr * wd) : (float)wd;
  return r;
}

void model_update(Model *m, const OptimConfig *oc) {
  m->adam_t++;
  float emb_lr = optim_emb_lr(oc);
  OptStage s = {.m = m, .kind = oc->kind};
  for (int decay = 0; decay < 2; decay++) {
    s.rule[GROUP_OTHER][decay] = step_rule(oc, oc->lr, decay || oc->decay_all, m->adam_t);
    s.rule[GROUP_EMB][decay] = step_rule(oc, emb_lr, decay || oc->decay_all, m->adam_t);
  }
  pool_for(m->pool, n_chunks(m), update_chunks, &s);
  model_mirror_shared(m);
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
