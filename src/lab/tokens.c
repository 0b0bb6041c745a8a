/*
** tokens.c -- a run's tokenizer for a client: text to token ids, ids back
** to bytes, one token's bytes. The tokenizer is the run's shared data's
** (core/bpe.h: ids 0..255 the bytes, then the merges), which a run loaded
** without its corpus keeps too (held_out_only), and where it came from.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/run.h"

/* The run's tokenizer, or an error saying why it has none: a model whose
** vocabulary is below the 256 byte ids gets no data (run_create_on). */
static const Bpe *tokenizer(const Run *r, Err *err) {
  if (r->data && r->data->ds.bpe) return r->data->ds.bpe;
  err_set(err, "run '%s' has no tokenizer: a vocabulary of %d is below the 256 byte ids", r->opt.name,
          model_config(r->model)->vocab);
  return NULL;
}

int run_token_count(const Run *r, Err *err) {
  const Bpe *bpe = tokenizer(r, err);
  return bpe ? bpe_vocab(bpe) : -1;
}

int run_tokenizer_info(const Run *r, TokenizerInfo *t, Err *err) {
  const Bpe *bpe = tokenizer(r, err);
  if (!bpe) return -1;
  const SharedData *d = r->data;
  t->ids = bpe_vocab(bpe);
  t->own = !r->weights_only;
  t->kind = d->held_out_only ? "checkpoint" : r->opt.corpus[0] ? "text" : "synthetic";
  snprintf(t->source, sizeof t->source, "%s", d->held_out_only ? r->origin : r->opt.corpus);
  return 0;
}

const char *run_tokenizer_text(const TokenizerInfo *t, char *buf, size_t cap) {
  const char *stand_in = t->own ? "" : " (not the model's own: its file held none)";
  if (!strcmp(t->kind, "synthetic"))
    snprintf(buf, cap, "learned from the synthetic language, %d ids%s", t->ids, stand_in);
  else if (!strcmp(t->kind, "text")) snprintf(buf, cap, "learned from %s, %d ids%s", t->source, t->ids, stand_in);
  else snprintf(buf, cap, "stored in the checkpoint %s, %d ids", t->source, t->ids);
  return buf;
}

static int id_known(const Bpe *bpe, int32_t id) { return id >= 0 && id < bpe_vocab(bpe); }

/* An error naming the first of 'n' ids the tokenizer does not know
** (position from 1, as a script counts), or 0. */
static int check_ids(const Bpe *bpe, const int32_t *ids, size_t n, Err *err) {
  for (size_t i = 0; i < n; i++)
    if (!id_known(bpe, ids[i]))
      return err_set(err, "token id %d at position %zu is outside the tokenizer's ids [0, %d)", ids[i], i + 1,
                     bpe_vocab(bpe));
  return 0;
}

int run_tokenize(const Run *r, const char *text, size_t len, int32_t *ids, size_t cap, size_t *n, Err *err) {
  const Bpe *bpe = tokenizer(r, err);
  if (!bpe) return -1;
  int32_t *encoded;
  /* a long text stops at an interrupt, as a corpus being read does */
  if (bpe_encode(bpe, (const uint8_t *)text, len, &encoded, n, &r->lab->cancel, err) < 0) return -1;
  if (*n > cap) {
    free(encoded);
    return err_set(err, "%zu token ids do not fit in room for %zu", *n, cap);
  }
  memcpy(ids, encoded, *n * sizeof *ids);
  free(encoded);
  return 0;
}

int run_detokenize(const Run *r, const int32_t *ids, size_t n, char *out, size_t cap, size_t *len, Err *err) {
  const Bpe *bpe = tokenizer(r, err);
  if (!bpe || check_ids(bpe, ids, n, err) < 0) return -1;
  *len = bpe_decode(bpe, ids, n, (uint8_t *)out, cap);
  return 0;
}

const char *run_token(const Run *r, int32_t id, size_t *len, Err *err) {
  const Bpe *bpe = tokenizer(r, err);
  if (!bpe) return NULL;
  if (!id_known(bpe, id)) {
    err_set(err, "token id %d is outside the tokenizer's ids [0, %d)", id, bpe_vocab(bpe));
    return NULL;
  }
  return (const char *)bpe_token_bytes(bpe, id, len);
}
