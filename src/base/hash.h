/*
** hash.h -- FNV-1a, 64 bits: the one non-cryptographic hash of bytes
** (tokenizer tables, the BPE cache's key and checksum, the journal's
** script hashes, change marks). Its values are on disk (the BPE cache, the
** journal's "fnv1a64"), so they must never change. For what must resist
** an adversary, base/sha256.h.
*/
#ifndef TIELAB_BASE_HASH_H
#define TIELAB_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_BASIS 0xcbf29ce484222325ULL   /* the offset basis: a hash of nothing */
#define HASH_FNV_PRIME 0x100000001b3ULL

/* One more value into hash 'h': a byte, as FNV-1a has it, or a whole word
** at once (a cheaper mark over counts, not the hash of their bytes). */
static inline uint64_t hash_fnv_step(uint64_t h, uint64_t v) { return (h ^ v) * HASH_FNV_PRIME; }

/* The 'n' bytes at 'p' into 'h' (HASH_FNV_BASIS to start, or the hash of
** what came before them). */
static inline uint64_t hash_fnv1a(const void *p, size_t n, uint64_t h) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) h = hash_fnv_step(h, b[i]);
  return h;
}

#endif
