/*
** rng.h -- the one seeded generator every random number in tielab comes from.
**
** A small counter-free generator (xoshiro256** seeded through splitmix64):
** the same seed gives the same numbers on every machine, and its whole state
** is four words, so it can be saved and restored.
*/
#ifndef TIELAB_RNG_H
#define TIELAB_RNG_H

#include <stdint.h>

typedef struct Rng {
  uint64_t s[4];
} Rng;

void rng_seed(Rng *r, uint64_t seed);
uint64_t rng_u64(Rng *r);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t rng_below(Rng *r, uint64_t n);
/* Uniform in [0, 1). */
double rng_uniform(Rng *r);
/* Standard normal (Box-Muller, both values used in turn is not kept: one draw
** per call so that the stream does not depend on call parity). */
double rng_normal(Rng *r);
/* A seed derived from (seed, stream): independent streams from one seed. */
uint64_t rng_mix(uint64_t seed, uint64_t stream);

#endif
