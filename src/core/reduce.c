/*
** reduce.c -- the hash the Reducer's keys are made of (reduce.h).
*/
#include "core/reduce.h"

#include <string.h>

/* FNV-1a over 32-bit words, the tail a byte at a time: fast enough to hash
** a model's weights (a few milliseconds for 6 M of them), and any changed
** bit changes the hash. */
uint32_t reduce_hash(uint32_t h, const void *bytes, size_t n) {
  const unsigned char *p = bytes;
  if (h == 0) h = 2166136261u;
  for (; n >= 4; p += 4, n -= 4) {
    uint32_t w;
    memcpy(&w, p, 4);
    h = (h ^ w) * 16777619u;
  }
  for (; n > 0; p++, n--) h = (h ^ *p) * 16777619u;
  return h;
}
