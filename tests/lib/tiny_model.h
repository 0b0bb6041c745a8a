/*
** tiny_model.h -- the tiny model the core's tests train and take apart:
** its shape, a model of it from a seed, a random batch, weights moved away
** from their init so that every term of a gradient matters, and the loss
** in double for finite differences.
*/
#ifndef TIELAB_TINY_MODEL_H
#define TIELAB_TINY_MODEL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/model.h"
#include "core/rng.h"
#include "tap.h"

/* V=32, d=16, two layers of two heads, T=8, B=3, 'tie_k' shared columns. */
static inline ModelConfig tiny(int tie_k) {
  return (ModelConfig){.vocab = 32, .dim = 16, .layers = 2, .heads = 2, .ctx = 8, .batch = 3, .tie_k = tie_k};
}

/* A model of shape 'c' on 'threads' threads, initialised from 'seed'; the
** test ends when it cannot be made. */
static inline Model *make(const ModelConfig *c, int threads, uint64_t seed) {
  Err err;
  Model *m = model_create(c, threads, &err);
  if (!m) {
    diag("model_create: %s", err.msg);
    exit(1);
  }
  model_init(m, seed);
  return m;
}

/* A random batch: inputs and targets [B,T]. */
static inline void random_batch(const ModelConfig *c, uint64_t seed, int32_t *in, int32_t *tg) {
  Rng r;
  rng_seed(&r, seed);
  for (int i = 0; i < c->batch * c->ctx; i++) {
    in[i] = (int32_t)rng_below(&r, (uint64_t)c->vocab);
    tg[i] = (int32_t)rng_below(&r, (uint64_t)c->vocab);
  }
}

/* Move the weights away from their init (LayerNorm gains around 1, every
** bias non-zero) so that every term of the gradient matters. E_out's
** shared columns are re-mirrored. */
static inline void perturb(Model *m, uint64_t seed) {
  Rng r;
  rng_seed(&r, seed);
  float *p = model_params(m);
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *t = model_tensor(m, i);
    double sd = strstr(t->name, "ln_") && strstr(t->name, "weight") ? 0.2 : 0.1;
    for (size_t j = 0; j < t->numel; j++) p[t->offset + j] += (float)(sd * rng_normal(&r));
  }
  model_mirror_shared(m);
}

/* The loss at the current weights, from the probabilities in double: the
** float the model returns is rounded to 2e-7, too coarse for differences. */
static inline double loss_of(Model *m, const int32_t *in, const int32_t *tg) {
  const ModelConfig *c = model_config(m);
  int n = c->batch * c->ctx;
  model_forward(m, in, tg, c->batch, c->ctx);
  double sum = 0.0;
  for (int i = 0; i < n; i++) sum -= log((double)model_logits(m)[(size_t)i * c->vocab + tg[i]]);
  return sum / n;
}

#endif
