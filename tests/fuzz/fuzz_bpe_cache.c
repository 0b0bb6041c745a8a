/*
** fuzz_bpe_cache.c -- libFuzzer harness for the tokenizer cache reader.
**
** The input is a cache file (bpe_cache.c: magic, version, vocabulary, corpus hash
** and length, merge count, merges, checksum) for the corpus TEXT below, with
** the vocabulary its own header names (256 to VOCAB_MAX; others are asked
** for as 300 and so refused). It goes where 'bpe_train_cached' looks, and
** what comes back, loaded or trained anew, must encode and decode TEXT and
** the input bytes themselves exactly. The checksum is set right before the
** file is written, so that the fuzzer reaches the merges behind it; the
** check itself is covered by tests/core/test_bpe.
*/
#include "fuzz.h"

#include <sys/stat.h>

#include "core/bpe.h"

#define VOCAB_MAX 2048

/* The corpus the seeds were made for (tests/fuzz/seeds.lua writes them). */
static const char TEXT[] =
    "the cat sat on the mat. the dog sat on the log. a cat and a dog met on the mat,\n"
    "and the cat ran. then the dog ran after the cat, and the mat was empty again.\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_setup();
  /* Where bpe_cache_path points: $XDG_CACHE_HOME/tielab. */
  char dir[4200];
  if (mkdir(fuzz_path("cache", dir, sizeof dir), 0755) != 0 ||
      mkdir(fuzz_path("cache/tielab", dir, sizeof dir), 0755) != 0)
    abort();
  return 0;
}

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

static void roundtrip(const Bpe *b, const uint8_t *x, size_t n) {
  int32_t *ids = NULL;
  size_t n_ids = 0;
  Err err;
  if (bpe_encode(b, x, n, &ids, &n_ids, NULL, &err) < 0) return;
  uint8_t *back = malloc(n + 1);
  if (!back) abort();
  for (size_t i = 0; i < n_ids; i++)
    if (ids[i] < 0 || ids[i] >= bpe_vocab(b)) {
      fprintf(stderr, "fuzz_bpe_cache: encoding gave id %d of %d\n", (int)ids[i], bpe_vocab(b));
      abort();
    }
  size_t need = bpe_decode(b, ids, n_ids, back, n + 1);
  if (need != n || memcmp(back, x, n) != 0) {
    fprintf(stderr, "fuzz_bpe_cache: decode(encode(x)) != x\n");
    abort();
  }
  free(back);
  free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *text = (const uint8_t *)TEXT;
  size_t n = sizeof TEXT - 1;
  int vocab = 300;
  if (size >= 16 && get_u32(data + 12) >= 256 && get_u32(data + 12) <= VOCAB_MAX)
    vocab = (int)get_u32(data + 12);

  char path[4200];
  if (bpe_cache_path(text, n, vocab, path, sizeof path) < 0) abort();

  uint8_t *file = malloc(size ? size : 1);
  if (!file) return 0;
  if (size) memcpy(file, data, size);
  if (size >= 44) {
    uint64_t sum = fnv1a(file, size - 8);
    for (int i = 0; i < 8; i++) file[size - 8 + i] = (uint8_t)(sum >> (8 * i));
  }
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(file, 1, size, f) != size || fclose(f) != 0) abort();
  free(file);

  Err err;
  Bpe *b = bpe_train_cached(text, n, vocab, NULL, &err);
  if (!b) {
    fprintf(stderr, "fuzz_bpe_cache: no tokenizer: %s\n", err.msg);
    abort();
  }
  roundtrip(b, text, n);
  roundtrip(b, data, size);
  bpe_free(b);
  return 0;
}
