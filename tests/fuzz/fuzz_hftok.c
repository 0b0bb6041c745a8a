/*
** fuzz_hftok.c -- libFuzzer harness for reading a released tokenizer.
**
** The input is a tokenizer.json (the seeds: byte-level with merges as
** strings and as pairs, a Llama 3 Split, SentencePiece-style, Unigram).
** Whatever opens must be whole: every id's bytes look up to an id with the
** same bytes, and, when it encodes, the input's own bytes and a fixed text
** with an added token come back from encode and decode exactly.
*/
#include "fuzz.h"

#include "core/hftok.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_setup();
  return 0;
}

static void roundtrip(const HfTok *t, const uint8_t *x, size_t n) {
  int32_t *ids = NULL;
  size_t n_ids = 0;
  Err err;
  fuzz_check(hftok_encode(t, x, n, &ids, &n_ids, NULL, &err) == 0, "a tokenizer that can encode failed to");
  for (size_t i = 0; i < n_ids; i++) fuzz_check(hftok_bytes(t, ids[i], &(size_t){0}) != NULL, "encoded to an unknown id");
  uint8_t *back = malloc(n + 1);
  fuzz_check(hftok_decode(t, ids, n_ids, back, n) == n && memcmp(back, x, n) == 0, "decode(encode(x)) != x");
  free(back);
  free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  Err err;
  fuzz_memfile(data, size, path, sizeof path);
  HfTok *t = hftok_open(path, &err);
  if (!t) return 0;
  for (int32_t id = 0; id < hftok_size(t); id++) {
    size_t len, len2;
    const uint8_t *p = hftok_bytes(t, id, &len);
    if (!p) continue;
    int32_t found = hftok_lookup(t, p, len);
    const uint8_t *q = found >= 0 ? hftok_bytes(t, found, &len2) : NULL;
    fuzz_check(q && len2 == len && memcmp(p, q, len) == 0, "a token's bytes look up to other bytes");
    fuzz_check(hftok_spelling(t, id) != NULL, "a token without a spelling");
  }
  if (hftok_can_encode(t)) {
    static const char text[] = "Hello world<|endoftext|> it's 2024!\n\n  \xff\xc3 caf\xc3\xa9";
    roundtrip(t, data, size);
    roundtrip(t, (const uint8_t *)text, sizeof text - 1);
  }
  hftok_free(t);
  return 0;
}
