/*
** model.c -- the reference GPT as data: the table of its parameters in
** nanoGPT's names, the one allocation that holds every buffer of a model,
** its init, and what the rest of the program reads of it. What it computes
** (forward and backward) is in model_pass.c, what happens to the gradient
** afterwards (combine, clip, AdamW, tying changes) in optim.c; the three
** share the layout in model_impl.h.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg.h"
#include "core/model_impl.h"
#include "core/rng.h"

/* ---- the parameter table */

enum { INIT_NORMAL, INIT_PROJ, INIT_ZERO, INIT_ONE };

/* One tensor of a block: name after "transformer.h.{i}.", shape in units
** of d (cols 0: a vector), init. */
static const struct {
  const char *name;
  int rows, cols, init;
} layer_table[LAYER_TENSORS] = {
  [LN1_W] = {"ln_1.weight", 1, 0, INIT_ONE},
  [LN1_B] = {"ln_1.bias", 1, 0, INIT_ZERO},
  [QKV_W] = {"attn.c_attn.weight", 3, 1, INIT_NORMAL},
  [QKV_B] = {"attn.c_attn.bias", 3, 0, INIT_ZERO},
  [PROJ_W] = {"attn.c_proj.weight", 1, 1, INIT_PROJ},
  [PROJ_B] = {"attn.c_proj.bias", 1, 0, INIT_ZERO},
  [LN2_W] = {"ln_2.weight", 1, 0, INIT_ONE},
  [LN2_B] = {"ln_2.bias", 1, 0, INIT_ZERO},
  [FC_W] = {"mlp.c_fc.weight", 4, 1, INIT_NORMAL},
  [FC_B] = {"mlp.c_fc.bias", 4, 0, INIT_ZERO},
  [FCPROJ_W] = {"mlp.c_proj.weight", 1, 4, INIT_PROJ},
  [FCPROJ_B] = {"mlp.c_proj.bias", 1, 0, INIT_ZERO},
};

static size_t add_tensor(TensorInfo *t, size_t offset, const char *name, int rows, int cols) {
  snprintf(t->name, sizeof t->name, "%s", name);
  t->ndim = cols > 0 ? 2 : 1;
  t->shape[0] = rows;
  t->shape[1] = cols > 0 ? cols : 0;
  t->offset = offset;
  t->numel = (size_t)rows * (size_t)(cols > 0 ? cols : 1);
  t->decay = t->ndim == 2;
  return offset + t->numel;
}

/* Fill the table in arena order; returns the arena size in floats. */
static size_t build_tensors(const ModelConfig *c, TensorInfo *ts) {
  int d = c->dim;
  size_t off = 0;
  char name[64];
  off = add_tensor(&ts[T_WTE], off, "transformer.wte.weight", c->vocab, d);
  off = add_tensor(&ts[T_WPE], off, "transformer.wpe.weight", c->ctx, d);
  for (int l = 0; l < c->layers; l++)
    for (int f = 0; f < LAYER_TENSORS; f++) {
      snprintf(name, sizeof name, "transformer.h.%d.%s", l, layer_table[f].name);
      off = add_tensor(&ts[T_LAYER0 + l * LAYER_TENSORS + f], off, name, layer_table[f].rows * d,
                       layer_table[f].cols * d);
    }
  off = add_tensor(&ts[t_lnf_w(c)], off, "transformer.ln_f.weight", d, 0);
  off = add_tensor(&ts[t_lnf_w(c) + 1], off, "transformer.ln_f.bias", d, 0);
  off = add_tensor(&ts[t_lm_head(c)], off, "lm_head.weight", c->vocab, d);
  return off;
}

/* ---- buffers */

static void *carve(char *base, size_t *off, size_t bytes) {
  void *p = base ? base + *off : NULL;
  *off += (bytes + 63) & ~(size_t)63;
  return p;
}

/* Point every buffer into 'base' (or only count, base NULL); returns bytes. */
static size_t layout(const ModelConfig *c, size_t n_floats, Buffers *a, char *base) {
  size_t B = c->batch, T = c->ctx, d = c->dim, V = c->vocab, L = c->layers, H = c->heads;
  size_t N = B * T, F = sizeof(float), nb = (N + ROWS - 1) / ROWS;
  size_t off = 0;
  size_t arena = ((n_floats * F + 63) & ~(size_t)63);
  a->params = carve(base, &off, arena);
  a->grads = carve(base, &off, arena);
  a->adam_m = carve(base, &off, arena);
  a->adam_v = carve(base, &off, arena);
  a->resid = carve(base, &off, (L + 1) * N * d * F);
  a->ln1 = carve(base, &off, L * N * d * F);
  a->ln1_mean = carve(base, &off, L * N * F);
  a->ln1_rstd = carve(base, &off, L * N * F);
  a->qkv = carve(base, &off, L * N * 3 * d * F);
  a->att = carve(base, &off, L * B * H * T * T * F);
  a->atty = carve(base, &off, L * N * d * F);
  a->resid_mid = carve(base, &off, L * N * d * F);
  a->ln2 = carve(base, &off, L * N * d * F);
  a->ln2_mean = carve(base, &off, L * N * F);
  a->ln2_rstd = carve(base, &off, L * N * F);
  a->gelu_grad = carve(base, &off, L * N * 4 * d * F);
  a->gelu = carve(base, &off, L * N * 4 * d * F);
  a->lnf = carve(base, &off, N * d * F);
  a->lnf_mean = carve(base, &off, N * F);
  a->lnf_rstd = carve(base, &off, N * F);
  a->probs = carve(base, &off, N * V * F);
  a->dlogits = carve(base, &off, N * V * F);
  a->dresid = carve(base, &off, N * d * F);
  a->dln = carve(base, &off, N * d * F);
  a->datty = carve(base, &off, N * d * F);
  a->dqkv = carve(base, &off, N * 3 * d * F);
  a->datt = carve(base, &off, B * H * T * T * F);
  a->dfch = carve(base, &off, N * 4 * d * F);
  a->ln_part = carve(base, &off, nb * 2 * d * F);
  a->ones = carve(base, &off, N * F);
  a->row_loss = carve(base, &off, N * sizeof(double));
  a->stat = carve(base, &off, 3 * (2 * V + N) * sizeof(double));
  a->chunk = carve(base, &off, ((n_floats + CHUNK - 1) / CHUNK) * sizeof(double));
  a->inputs = carve(base, &off, N * sizeof(int32_t));
  a->targets = carve(base, &off, N * sizeof(int32_t));
  return off;
}

TensorInfo *model_tensor_table(const ModelConfig *c, int *n) {
  TensorInfo *ts = calloc((size_t)tensor_count(c), sizeof *ts);
  if (ts) build_tensors(c, ts);
  *n = ts ? tensor_count(c) : 0;
  return ts;
}

static size_t arena_size(const ModelConfig *c) {
  TensorInfo *ts = calloc((size_t)tensor_count(c), sizeof *ts);
  if (!ts) return 0;
  size_t n = build_tensors(c, ts);
  free(ts);
  return n;
}

size_t model_memory_bytes(const ModelConfig *c) {
  Buffers a;
  return layout(c, arena_size(c), &a, NULL);
}

size_t model_allocated_bytes(const Model *m) { return m->buf_bytes; }

/* ---- create, free, init */

Model *model_create(const ModelConfig *cfg, int threads, Err *err) {
  if (config_validate(cfg, err) < 0) return NULL;
  if (threads < 1) return err_set(err, "threads (%d) must be at least 1", threads), NULL;
  Model *m = calloc(1, sizeof *m);
  if (!m) return err_set(err, "out of memory for a model"), NULL;
  m->cfg = *cfg;
  m->n_tensors = tensor_count(cfg);
  m->tensors = calloc((size_t)m->n_tensors, sizeof *m->tensors);
  if (!m->tensors) goto oom;
  m->n_floats = build_tensors(cfg, m->tensors);
  m->buf_bytes = layout(cfg, m->n_floats, &m->a, NULL);
  m->buf = aligned_alloc(64, m->buf_bytes);
  if (!m->buf) goto oom;
  memset(m->buf, 0, m->buf_bytes);
  layout(cfg, m->n_floats, &m->a, m->buf);
  for (size_t i = 0; i < (size_t)cfg->batch * cfg->ctx; i++) m->a.ones[i] = 1.0f;
  if (!(m->pool = pool_create(threads, err))) {
    model_free(m);
    return NULL;
  }
  /* The model splits products over its own pool; OpenBLAS runs each piece
  ** on the calling thread. */
  linalg_set_threads(1);
  return m;
oom:
  err_set(err, "out of memory: a model of this shape needs %.1f MiB",
          (double)model_memory_bytes(cfg) / (1024.0 * 1024.0));
  model_free(m);
  return NULL;
}

void model_free(Model *m) {
  if (!m) return;
  pool_free(m->pool);
  free(m->buf);
  free(m->tensors);
  free(m);
}

/* E_out's shared columns take E_in's values. */
void model_mirror_shared(Model *m) {
  const ModelConfig *c = &m->cfg;
  size_t d = (size_t)c->dim, k = (size_t)c->tie_k;
  if (k == 0) return;
  float *ein = tensor_ptr(m, m->a.params, T_WTE), *eout = tensor_ptr(m, m->a.params, t_lm_head(c));
  for (size_t r = 0; r < (size_t)c->vocab; r++) memcpy(eout + r * d, ein + r * d, k * sizeof(float));
}

void model_init(Model *m, uint64_t seed) {
  const ModelConfig *c = &m->cfg;
  float proj_std = 0.02f / sqrtf(2.0f * (float)c->layers);
  for (int i = 0; i < m->n_tensors; i++) {
    const TensorInfo *t = &m->tensors[i];
    float *p = m->a.params + t->offset;
    int init = INIT_NORMAL;
    if (i >= T_LAYER0 && i < t_lnf_w(c)) init = layer_table[(i - T_LAYER0) % LAYER_TENSORS].init;
    else if (i == t_lnf_w(c)) init = INIT_ONE;
    else if (i == t_lnf_w(c) + 1) init = INIT_ZERO;
    /* One stream per tensor: a tensor's values do not depend on the others. */
    Rng r;
    rng_seed(&r, rng_mix(seed, (uint64_t)i));
    for (size_t j = 0; j < t->numel; j++) {
      switch (init) {
        case INIT_NORMAL: p[j] = (float)(0.02 * rng_normal(&r)); break;
        case INIT_PROJ: p[j] = (float)(proj_std * rng_normal(&r)); break;
        case INIT_ZERO: p[j] = 0.0f; break;
        case INIT_ONE: p[j] = 1.0f; break;
      }
    }
  }
  model_mirror_shared(m);
  memset(m->a.grads, 0, m->n_floats * sizeof(float));
  memset(m->a.adam_m, 0, m->n_floats * sizeof(float));
  memset(m->a.adam_v, 0, m->n_floats * sizeof(float));
  m->adam_t = 0;
}

/* ---- accessors */

const ModelConfig *model_config(const Model *m) { return &m->cfg; }
int model_tensor_count(const Model *m) { return m->n_tensors; }
const TensorInfo *model_tensor(const Model *m, int i) {
  return i >= 0 && i < m->n_tensors ? &m->tensors[i] : NULL;
}
void tensor_matrix_shape(const TensorInfo *t, int *rows, int *cols) {
  *rows = t->shape[0];
  *cols = t->ndim == 2 ? t->shape[1] : 1;
}

const TensorInfo *model_find_tensor(const Model *m, const char *name) {
  for (int i = 0; i < m->n_tensors; i++)
    if (!strcmp(m->tensors[i].name, name)) return &m->tensors[i];
  return NULL;
}
size_t model_n_floats(const Model *m) { return m->n_floats; }
float *model_params(Model *m) { return m->a.params; }
float *model_grads(Model *m) { return m->a.grads; }
float *model_adam_m(Model *m) { return m->a.adam_m; }
float *model_adam_v(Model *m) { return m->a.adam_v; }
long model_adam_t(const Model *m) { return m->adam_t; }
void model_set_adam_t(Model *m, long t) { m->adam_t = t; }

const float *model_residual(const Model *m, int l) {
  if (l < 0 || l > m->cfg.layers) return NULL;
  return m->a.resid + (size_t)l * m->cfg.batch * m->cfg.ctx * m->cfg.dim;
}
const float *model_lnf_out(const Model *m) { return m->a.lnf; }
const float *model_logits(const Model *m) { return m->a.probs; }
