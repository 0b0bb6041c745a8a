/*
** test_tokenizer.c -- the one interface over a run's two kinds of
** tokenizer: a learned BPE answers through it exactly as it does itself
** (ids, bytes, decoding), and a released tokenizer's files handed over as
** bytes (a checkpoint's) are refused, before anything is written or read,
** when they are not a tokenizer's files: another name (a path among them),
** one twice, none or too many. Released tokenizers read whole are tested
** with the runs that use them (tests/lab/test_hf_gpt2.sh).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/corpus.h"
#include "core/tokenizer.h"
#include "tap.h"

static void test_bpe(void) {
  Corpus c;
  Err err;
  corpus_synthetic(&c, 5, 20000, &err);
  Bpe *bpe = bpe_train(c.text, c.len, 300, NULL, &err);
  const Bpe *b = bpe;
  Tokenizer *t = tokenizer_from_bpe(bpe, &err);
  ok(t && tokenizer_bpe(t) == b && tokenizer_size(t) == bpe_vocab(b), "a learned BPE: %d ids, itself behind it",
     t ? tokenizer_size(t) : -1);
  int32_t *mine, *its;
  size_t n_mine, n_its;
  tokenizer_encode(t, c.text, 2000, &mine, &n_mine, NULL, &err);
  bpe_encode(b, c.text, 2000, &its, &n_its, NULL, &err);
  ok(n_mine == n_its && memcmp(mine, its, n_mine * sizeof *mine) == 0, "encodes as the BPE does (%zu ids)", n_mine);
  uint8_t back[2000];
  ok(tokenizer_decode(t, mine, n_mine, back, sizeof back) == 2000 && memcmp(back, c.text, 2000) == 0,
     "and decodes back to the text");
  size_t a, z;
  const uint8_t *ta = tokenizer_token(t, 299, &a), *tz = bpe_token_bytes(b, 299, &z);
  ok(ta && ta == tz && a == z, "token 299 is the BPE's %zu bytes", a);
  ok(!tokenizer_token(t, 300, &a) && !tokenizer_token(t, -1, &a), "ids outside it have no bytes");
  TokenizerFile files[TOKENIZER_MAX_FILES];
  ok(tokenizer_files(t, files) == 0, "and no files to carry");
  ok(tokenizer_from_bpe(NULL, &err) == NULL, "no BPE, no tokenizer");
  free(mine);
  free(its);
  tokenizer_free(t);
  corpus_free(&c);
}

static void refused(const TokenizerFile *f, int n, const char *why, const char *what) {
  Err err = {0};
  Tokenizer *t = tokenizer_from_files(f, n, "x", &err);
  ok(!t && strstr(err.msg, why), "%s refused: %s", what, err.msg);
  tokenizer_free(t);
}

static void test_files_refused(void) {
  const uint8_t json[] = "{}";
  TokenizerFile path = {"../tokenizer.json", json, 2}, other = {"config.json", json, 2};
  TokenizerFile twice[2] = {{"vocab.json", json, 2}, {"vocab.json", json, 2}};
  TokenizerFile three[3] = {{"vocab.json", json, 2}, {"merges.txt", json, 2}, {"tokenizer.json", json, 2}};
  refused(&path, 1, "a tokenizer file named '../tokenizer.json'", "a path for a name");
  refused(&other, 1, "a tokenizer file named 'config.json'", "another file's name");
  refused(twice, 2, "tokenizer file 'vocab.json' twice", "one file twice");
  refused(three, 3, "a tokenizer of 3 files", "three files");
  refused(three, 0, "a tokenizer of 0 files", "none");
  TokenizerFile empty = {"tokenizer.json", json, 0};
  Err err = {0};
  Tokenizer *t = tokenizer_from_files(&empty, 1, "x", &err);
  ok(!t && strncmp(err.msg, "tokenizer.json: ", 16) == 0, "an empty tokenizer.json is refused by its reader, named as itself: %s",
     err.msg);
}

int main(void) {
  test_bpe();
  test_files_refused();
  return tap_done();
}
