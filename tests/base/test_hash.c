/*
** test_hash.c -- base/hash.h: FNV-1a 64 against the published vectors
** (Fowler, Noll and Vo's test suite), hashing in pieces, and the step.
*/
#include <string.h>

#include "base/hash.h"
#include "tap.h"

static uint64_t of(const char *s) { return hash_fnv1a(s, strlen(s), HASH_FNV_BASIS); }

int main(void) {
  ok(of("") == 0xcbf29ce484222325ULL, "the hash of nothing is the offset basis");
  ok(of("a") == 0xaf63dc4c8601ec8cULL, "\"a\"");
  ok(of("foobar") == 0x85944171f73967e8ULL, "\"foobar\"");
  ok(of("chongo was here!\n") == 0x46810940eff5f915ULL, "\"chongo was here!\\n\"");
  ok(hash_fnv1a("bar", 3, hash_fnv1a("foo", 3, HASH_FNV_BASIS)) == of("foobar"), "in two pieces it is the same");
  uint64_t h = HASH_FNV_BASIS;
  for (const char *s = "foobar"; *s; s++) h = hash_fnv_step(h, (unsigned char)*s);
  ok(h == of("foobar"), "a byte at a time with hash_fnv_step too");
  ok(hash_fnv_step(1, 0x100) == (1 ^ 0x100) * HASH_FNV_PRIME, "a word steps in whole");
  return tap_done();
}
