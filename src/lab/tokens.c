/*
** tokens.c -- a run's tokenizer for a client: text to token ids, ids back
** to bytes, one token's bytes. The tokenizer (core/tokenizer.h) is the
** run's shared data's: a BPE learned from its corpus (ids 0..255 the
** bytes, then the merges), which a run loaded without its corpus keeps too
** (held_out_only), or a released model's own, which a run loaded from a
** model folder without a corpus holds itself; and where it came from.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/run.h"

/* The run's tokenizer, or an error saying why it has none: a model whose
** vocabulary is below the 256 byte ids gets no data (run_create_on). */
static const Tokenizer *tokenizer(const Run *r, Err *err) {
  const Tokenizer *tok = run_tok(r);
  if (tok) return tok;
  err_set(err, "run '%s' has no tokenizer: a vocabulary of %d is below the 256 byte ids", r->opt.name,
          model_config(r->model)->vocab);
  return NULL;
}

int run_token_count(const Run *r, Err *err) {
  const Tokenizer *tok = tokenizer(r, err);
  return tok ? tokenizer_size(tok) : -1;
}

int run_tokenizer_info(const Run *r, TokenizerInfo *t, Err *err) {
  const Tokenizer *tok = tokenizer(r, err);
  if (!tok) return -1;
  const SharedData *d = r->data;
  t->ids = tokenizer_size(tok);
  t->own = !r->weights_only;
  if (!tokenizer_bpe(tok)) {
    t->kind = "pretrained";
    snprintf(t->source, sizeof t->source, "%s", tokenizer_source(tok));
    return 0;
  }
  t->kind = d->held_out_only ? "checkpoint" : r->opt.corpus[0] ? "text" : "synthetic";
  snprintf(t->source, sizeof t->source, "%s", d->held_out_only ? r->origin : r->opt.corpus);
  return 0;
}

const char *run_tokenizer_text(const TokenizerInfo *t, char *buf, size_t cap) {
  const char *stand_in = t->own ? "" : " (not the model's own: its file held none)";
  if (!strcmp(t->kind, "synthetic"))
    snprintf(buf, cap, "learned from the synthetic language, %d ids%s", t->ids, stand_in);
  else if (!strcmp(t->kind, "text")) snprintf(buf, cap, "learned from %s, %d ids%s", t->source, t->ids, stand_in);
  else if (!strcmp(t->kind, "pretrained")) snprintf(buf, cap, "the released model's own, %s, %d ids", t->source, t->ids);
  else snprintf(buf, cap, "stored in the checkpoint %s, %d ids", t->source, t->ids);
  return buf;
}

/* A released tokenizer's ids may have gaps: an id is known when it has a token. */
static int id_known(const Tokenizer *tok, int32_t id) {
  size_t len;
  return id >= 0 && id < tokenizer_size(tok) && tokenizer_token(tok, id, &len);
}

/* An error naming the first of 'n' ids the tokenizer does not know
** (position from 1, as a script counts), or 0. */
static int check_ids(const Tokenizer *tok, const int32_t *ids, size_t n, Err *err) {
  for (size_t i = 0; i < n; i++)
    if (!id_known(tok, ids[i]))
      return err_set(err, "token id %d at position %zu is outside the tokenizer's ids [0, %d)", ids[i], i + 1,
                     tokenizer_size(tok));
  return 0;
}

int run_tokenize(const Run *r, const char *text, size_t len, int32_t *ids, size_t cap, size_t *n, Err *err) {
  const Tokenizer *tok = tokenizer(r, err);
  if (!tok) return -1;
  int32_t *encoded;
  /* a long text stops at an interrupt, as a corpus being read does */
  if (tokenizer_encode(tok, (const uint8_t *)text, len, &encoded, n, &r->lab->cancel, err) < 0) return -1;
  if (*n > cap) {
    free(encoded);
    return err_set(err, "%zu token ids do not fit in room for %zu", *n, cap);
  }
  memcpy(ids, encoded, *n * sizeof *ids);
  free(encoded);
  return 0;
}

int run_detokenize(const Run *r, const int32_t *ids, size_t n, char *out, size_t cap, size_t *len, Err *err) {
  const Tokenizer *tok = tokenizer(r, err);
  if (!tok || check_ids(tok, ids, n, err) < 0) return -1;
  *len = tokenizer_decode(tok, ids, n, (uint8_t *)out, cap);
  return 0;
}

const char *run_token(const Run *r, int32_t id, size_t *len, Err *err) {
  const Tokenizer *tok = tokenizer(r, err);
  if (!tok) return NULL;
  if (!id_known(tok, id)) {
    err_set(err, "token id %d is outside the tokenizer's ids [0, %d)", id, tokenizer_size(tok));
    return NULL;
  }
  return (const char *)tokenizer_token(tok, id, len);
}
