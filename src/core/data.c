/* data.c -- see data.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "core/rng.h"

static int check_split_args(double val_fraction, int ctx, Err *err) {
  if (ctx < 1) return err_set(err, "dataset: context length %d, expected at least 1", ctx);
  if (!(val_fraction > 0 && val_fraction < 1))
    return err_set(err, "dataset: validation fraction %g, expected between 0 and 1", val_fraction);
  return 0;
}

int dataset_build(Dataset *ds, const Corpus *c, int vocab, double val_fraction, int ctx, const Cancel *cancel,
                  Err *err) {
  memset(ds, 0, sizeof *ds);
  if (check_split_args(val_fraction, ctx, err) < 0) return -1;
  Tokenizer *tok = tokenizer_from_bpe(bpe_train_cached(c->text, c->len, vocab, cancel, err), err);
  if (!tok) return err_prefix(err, "%s", c->name);
  return dataset_build_with(ds, c, tok, val_fraction, ctx, cancel, err);
}

int dataset_build_with(Dataset *ds, const Corpus *c, Tokenizer *tok, double val_fraction, int ctx,
                       const Cancel *cancel, Err *err) {
  memset(ds, 0, sizeof *ds);
  ds->tok = tok;
  if (check_split_args(val_fraction, ctx, err) < 0) {
    dataset_free(ds);
    return -1;
  }
  if (tokenizer_encode(ds->tok, c->text, c->len, &ds->tokens, &ds->n, cancel, err) < 0) {
    dataset_free(ds);
    return err_prefix(err, "%s", c->name);
  }
  size_t n_val = (size_t)((double)ds->n * val_fraction), need = (size_t)ctx + 1;
  ds->n_train = ds->n - n_val;
  if (ds->n_train < need || n_val < need) {
    err_set(err, "%s: too short: %zu tokens give %zu for training and %zu for validation, "
            "and each needs at least ctx+1 = %zu", c->name, ds->n, ds->n_train, n_val, need);
    dataset_free(ds);
    return -1;
  }
  snprintf(ds->name, sizeof ds->name, "%s", c->name);
  return 0;
}

void dataset_free(Dataset *ds) {
  tokenizer_free(ds->tok);
  free(ds->tokens);
  memset(ds, 0, sizeof *ds);
}

/*
** Copy the t+1 tokens of 'span' (of 'len' tokens) from 'start' into 'row'.
** A span shorter than a window (t larger than the 'ctx' the dataset was
** built for) wraps around rather than reading past its end.
*/
static void copy_window(const int32_t *span, size_t len, size_t start, int t, int32_t *row) {
  if (start + (size_t)t + 1 <= len) {
    memcpy(row, span + start, sizeof *row * ((size_t)t + 1));
    return;
  }
  for (int j = 0; j <= t; j++) row[j] = span[(start + (size_t)j) % len];
}

/* Number of window starts that fit in 'len' tokens (at least one). */
static size_t window_starts(size_t len, int t) {
  return len > (size_t)t ? len - (size_t)t : 1;
}

void dataset_train_batch(const Dataset *ds, uint64_t data_seed, uint64_t index,
                         int b, int t, int32_t *out) {
  Rng r;
  rng_seed(&r, rng_mix(data_seed, index));
  /* Without a training split (a checkpoint's held-out tokens alone) the
  ** windows come from what there is: a lens fit needs batches, and the lab
  ** refuses to train a model on such a dataset. */
  size_t n = ds->n_train ? ds->n_train : ds->n, starts = window_starts(n, t);
  for (int i = 0; i < b; i++)
    copy_window(ds->tokens, n, (size_t)rng_below(&r, starts), t, out + (size_t)i * ((size_t)t + 1));
}

size_t dataset_val_window(const Dataset *ds, int index, int n_val_batches, int b, int t, int i) {
  size_t n_val = ds->n - ds->n_train, last = window_starts(n_val, t) - 1;
  size_t windows = (size_t)n_val_batches * (size_t)b, w = (size_t)index * (size_t)b + (size_t)i;
  /* Window w of 'windows' starts at w/(windows-1) of the way to the last start. */
  size_t start = windows > 1 ? (size_t)((double)last * (double)w / (double)(windows - 1)) : 0;
  return start > last ? last : start;
}

void dataset_val_batch(const Dataset *ds, int index, int n_val_batches, int b, int t, int32_t *out) {
  const int32_t *val = ds->tokens + ds->n_train;
  size_t n_val = ds->n - ds->n_train;
  for (int i = 0; i < b; i++)
    copy_window(val, n_val, dataset_val_window(ds, index, n_val_batches, b, t, i), t,
                out + (size_t)i * ((size_t)t + 1));
}

void batch_split(const int32_t *rows, int b, int t, int32_t *inputs, int32_t *targets) {
  for (int i = 0; i < b; i++) {
    const int32_t *row = rows + (size_t)i * ((size_t)t + 1);
    memcpy(inputs + (size_t)i * (size_t)t, row, sizeof *row * (size_t)t);
    memcpy(targets + (size_t)i * (size_t)t, row + 1, sizeof *row * (size_t)t);
  }
}
