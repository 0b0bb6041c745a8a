/* config.c -- see config.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "base/num.h"
#include "core/model.h"
#include "core/settings_model.h"

ModelConfig config_default(void) {
  return (ModelConfig){.vocab = 1024, .dim = 128, .layers = 4, .heads = 4, .ctx = 64, .batch = 16,
                       .tie_k = 128};
}

int config_validate(const ModelConfig *c, Err *err) {
  for (int i = 0; i < N_MODEL_FIELDS; i++) {
    const ModelField *f = &model_fields[i];
    int v = *(const int *)((const char *)c + f->offset);
    if (i != MODEL_TIE && (v < 1 || v > f->max))
      return err_set(err, "%s (%d) must be between 1 and %d", f->name, v, f->max);
  }
  if (c->dim % c->heads != 0)
    return err_set(err, "heads (%d) must divide dim (%d)", c->heads, c->dim);
  if (c->tie_k < 0 || c->tie_k > c->dim)
    return err_set(err, "tied columns (%d) must be between 0 (untied) and dim (%d)", c->tie_k, c->dim);
  /* Keep every product of sizes that BLAS sees as an int inside an int. */
  if ((double)c->batch * c->ctx * (4.0 * c->dim > c->vocab ? 4.0 * c->dim : c->vocab) > 2147483647.0)
    return err_set(err, "batch (%d) x ctx (%d) is too large for vocab %d and dim %d", c->batch, c->ctx,
                   c->vocab, c->dim);
  return 0;
}

/* Floats in each arena: both embeddings whole, every block, ln_f. */
static size_t arena_floats(const ModelConfig *c) {
  size_t V = (size_t)c->vocab, d = (size_t)c->dim, T = (size_t)c->ctx, L = (size_t)c->layers;
  return V * d + T * d + L * (12 * d * d + 13 * d) + 2 * d + V * d;
}

size_t config_param_count(const ModelConfig *c) {
  return arena_floats(c) - (size_t)c->tie_k * (size_t)c->vocab;
}

size_t config_memory_bytes(const ModelConfig *c) {
  return model_memory_bytes(c);
}

double config_flops_per_token(const ModelConfig *c) {
  double V = c->vocab, d = c->dim, L = c->layers, T = c->ctx;
  return 6.0 * (12.0 * L * d * d + V * d) + 12.0 * L * T * d;
}

int config_parse_tie(const char *s, int dim, int *tie_k, Err *err) {
  if (!strcmp(s, "tied")) {
    *tie_k = dim;
    return 0;
  }
  if (!strcmp(s, "untied")) {
    *tie_k = 0;
    return 0;
  }
  long k;
  if (num_parse_long(s, LONG_MIN, LONG_MAX, &k) < 0)
    return err_set(err, "tie '%.40s': expected tied, untied or a column count", s);
  if (k < 0 || k > dim)
    return err_set(err, "tie %ld: the shared column count must be between 0 and dim (%d)", k, dim);
  *tie_k = (int)k;
  return 0;
}

const char *config_tie_name(int tie_k, int dim, char buf[16]) {
  if (tie_k == dim) snprintf(buf, 16, "tied");
  else if (tie_k == 0) snprintf(buf, 16, "untied");
  else snprintf(buf, 16, "%d", tie_k);
  return buf;
}
