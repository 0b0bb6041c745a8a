/*
** bpe_impl.h -- the inside of the tokenizer, shared by bpe.c (chunks,
** encoding, decoding), bpe_learn.c (the merge learner) and bpe_cache.c
** (the cache file). Nothing outside those files includes it.
*/
#ifndef TIELAB_BPE_IMPL_H
#define TIELAB_BPE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "core/bpe.h"

/* Longest chunk; merges never build a token longer than this. */
#define CHUNK_MAX 256

struct Bpe {
  int n_merges;
  int32_t *merges;      /* 2*n_merges: (left, right) of id 256+i */
  uint32_t *tok_off;    /* vocab+1 offsets into 'tok_bytes' */
  uint8_t *tok_bytes;
  uint64_t *rank_key;   /* open-addressed map (left,right) -> merge index */
  int32_t *rank_val;
  size_t rank_cap;      /* a power of two */
};

/* ---- hashing ---------------------------------------------------------- */

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline uint64_t pair_key(int32_t left, int32_t right) {
  return ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
}

/* Put key 'k' -> 'v' in an open-addressed map whose empty slots hold -1. */
static inline void pairmap_put(uint64_t *key, int32_t *val, size_t cap, uint64_t k, int32_t v) {
  size_t i = mix64(k) & (cap - 1);
  while (val[i] >= 0) i = (i + 1) & (cap - 1);
  key[i] = k;
  val[i] = v;
}

static inline size_t pow2_at_least(size_t n) {
  size_t c = 16;
  while (c < n) c <<= 1;
  return c;
}


/*
** A map from distinct chunks (pointers into the text) to two numbers: the
** count while training, the place of the chunk's ids while encoding.
*/
typedef struct ChunkEntry {
  const uint8_t *p;     /* NULL: empty slot */
  uint32_t len;
  uint32_t hash;
  int64_t a;
  int64_t b;
} ChunkEntry;

typedef struct ChunkMap {
  ChunkEntry *e;
  size_t cap, n;
} ChunkMap;

/* bpe.c: the end of the chunk that starts at 'i' (< n), and the map of
** distinct chunks (a new entry has p set and a = b = 0; NULL: no memory). */
size_t chunk_end(const uint8_t *s, size_t n, size_t i);
int chunkmap_init(ChunkMap *m, size_t cap);
ChunkEntry *chunkmap_get(ChunkMap *m, const uint8_t *p, uint32_t len);

#endif
