/*
** sha256.h -- SHA-256 (FIPS 180-4), for naming a corpus by its content: a
** checkpoint keeps the hash of the text it was trained on, so a corpus
** pointed to later is known to be the same bytes.
*/
#ifndef TIELAB_BASE_SHA256_H
#define TIELAB_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct Sha256 {
  uint32_t h[8];
  uint64_t bytes;        /* hashed so far */
  uint8_t block[64];
  size_t used;           /* bytes waiting in 'block' */
} Sha256;

#define SHA256_HEX 65    /* 64 hex digits and a NUL */

void sha256_begin(Sha256 *s);
void sha256_add(Sha256 *s, const void *data, size_t n);
void sha256_end(Sha256 *s, uint8_t digest[32]);

/* The digest of 'n' bytes as lower-case hex. */
char *sha256_hex(const void *data, size_t n, char out[SHA256_HEX]);

#endif
