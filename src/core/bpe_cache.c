/*
** bpe_cache.c -- the tokenizer of a corpus kept on disk, so that the same
** text and vocabulary are trained once: where the file lives, its layout,
** and reading it back whole or not at all.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/folder.h"
#include "base/replace.h"
#include "base/safeopen.h"
#include "core/bpe.h"
#include "core/bpe_impl.h"

/* ---- the cache file --------------------------------------------------------
**
** Layout, little-endian: magic "tielabBP", u32 version, u32 vocab asked for,
** u64 corpus hash, u64 corpus length, u32 merge count, then (left, right) as
** u32 pairs, then a u64 FNV-1a checksum of everything before it. 'version'
** changes whenever the chunking or the training rule changes.
*/

#define CACHE_MAGIC "tielabBP"
#define CACHE_VERSION 1
#define CACHE_HEAD 36
#define PATH_CAP 4096

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint64_t corpus_hash(const uint8_t *text, size_t n) {
  return mix64(hash_fnv1a(text, n, HASH_FNV_BASIS) ^ (uint64_t)n);
}

int bpe_cache_path(const uint8_t *text, size_t n, int vocab, char *path, size_t cap) {
  char dir[PATH_CAP];
  if (folder_xdg(FOLDER_CACHE, "tielab", dir, sizeof dir, NULL) < 0) return -1;
  int k = snprintf(path, cap, "%s/bpe-%016llx-%d.bin", dir,
                   (unsigned long long)corpus_hash(text, n), vocab);
  return k > 0 && (size_t)k < cap ? 0 : -1;
}

/* The tokenizer in 'path' if it is whole and made for this corpus, else NULL. */
static Bpe *cache_load(const char *path, uint64_t hash, size_t n, int vocab) {
  FILE *f = safeopen_fread(path, SAFEOPEN_NOFOLLOW, NULL, NULL);   /* a FIFO there is no cache */
  if (!f) return NULL;
  uint8_t head[CACHE_HEAD], sum[8];
  Bpe *b = NULL;
  uint8_t *body = NULL;
  if (fread(head, 1, CACHE_HEAD, f) != CACHE_HEAD || memcmp(head, CACHE_MAGIC, 8) != 0 ||
      get_u32(head + 8) != CACHE_VERSION || get_u32(head + 12) != (uint32_t)vocab ||
      get_u64(head + 16) != hash || get_u64(head + 24) != (uint64_t)n)
    goto done;
  uint32_t n_merges = get_u32(head + 32);
  if (n_merges > (uint32_t)(vocab - 256)) goto done;
  size_t body_len = 8 * (size_t)n_merges;
  body = malloc(body_len + 1);
  if (!body || fread(body, 1, body_len, f) != body_len || fread(sum, 1, 8, f) != 8 ||
      fgetc(f) != EOF)
    goto done;
  if (get_u64(sum) != hash_fnv1a(body, body_len, hash_fnv1a(head, CACHE_HEAD, HASH_FNV_BASIS))) goto done;
  int32_t *merges = malloc(sizeof *merges * (2 * (size_t)n_merges + 1));
  if (!merges) goto done;
  for (size_t i = 0; i < 2 * (size_t)n_merges; i++) merges[i] = (int32_t)get_u32(body + 4 * i);
  b = bpe_from_merges(merges, (int)n_merges, NULL);
  free(merges);
done:
  free(body);
  fclose(f);
  return b;
}

/* Write through a temporary file and rename, so a reader never sees half a file. */
static void cache_store(const char *path, const Bpe *b, uint64_t hash, size_t n, int vocab) {
  size_t len = CACHE_HEAD + 8 * (size_t)b->n_merges + 8;
  uint8_t *buf = malloc(len);
  if (!buf) return;
  memcpy(buf, CACHE_MAGIC, 8);
  put_u32(buf + 8, CACHE_VERSION);
  put_u32(buf + 12, (uint32_t)vocab);
  put_u64(buf + 16, hash);
  put_u64(buf + 24, (uint64_t)n);
  put_u32(buf + 32, (uint32_t)b->n_merges);
  for (size_t i = 0; i < 2 * (size_t)b->n_merges; i++)
    put_u32(buf + CACHE_HEAD + 4 * i, (uint32_t)b->merges[i]);
  put_u64(buf + len - 8, hash_fnv1a(buf, len - 8, HASH_FNV_BASIS));
  Replace r;
  if (replace_begin(&r, path, NULL) == 0) replace_end(&r, replace_write(&r, buf, len));
  free(buf);
}

Bpe *bpe_train_cached(const uint8_t *text, size_t n, int vocab, const Cancel *cancel, Err *err) {
  char path[PATH_CAP], dir[PATH_CAP];
  int have_path = bpe_cache_path(text, n, vocab, path, sizeof path) == 0;
  uint64_t hash = corpus_hash(text, n);
  if (have_path && vocab >= 256 && vocab <= BPE_VOCAB_MAX) {
    Bpe *b = cache_load(path, hash, n, vocab);
    if (b) return b;
  }
  Bpe *b = bpe_train(text, n, vocab, cancel, err);
  /* The cache only saves time: a directory that cannot be made is no error. */
  if (b && have_path && folder_xdg(FOLDER_CACHE, "tielab", dir, sizeof dir, NULL) >= 0 &&
      folder_make_all(dir, FOLDER_PRIVATE, NULL) == 0)
    cache_store(path, b, hash, n, vocab);
  return b;
}
