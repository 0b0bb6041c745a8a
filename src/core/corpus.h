/*
** corpus.h -- where the text comes from: a file given by the user, checked
** for being real text, or the built-in synthetic language generated from a
** seed (Zipfian word frequencies and a grammar a small model can learn).
*/
#ifndef TIELAB_CORPUS_H
#define TIELAB_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct Corpus {
  uint8_t *text;
  size_t len;
  char name[256];   /* the file name, or "synthetic:<seed>" */
} Corpus;

/* Smallest corpus accepted, in bytes. */
#define CORPUS_MIN_BYTES 4096
/* Largest corpus read unless the caller allows more: the text and its
** tokens live in memory. */
#define CORPUS_DEFAULT_MAX_BYTES (1ULL << 30)

/* Read 'path', at most CORPUS_DEFAULT_MAX_BYTES. Refused with a message
** naming the file: missing, unreadable, not a regular file, empty, shorter
** than CORPUS_MIN_BYTES, larger than the cap, of a size that cannot be
** known (a /proc or /sys file says 0 bytes and reads on), growing while it
** is read, or binary (NUL bytes, or mostly bytes that are neither
** printable nor whitespace nor UTF-8). */
int corpus_read(Corpus *c, const char *path, Err *err);
/* The same with a cap of 'max_bytes'; with 'nofollow' a symbolic link in
** place of the file is refused, not followed. */
int corpus_read_max(Corpus *c, const char *path, uint64_t max_bytes, int nofollow, Err *err);

/* Generate about 'bytes' of the synthetic language from 'seed'. */
int corpus_synthetic(Corpus *c, uint64_t seed, size_t bytes, Err *err);

void corpus_free(Corpus *c);

#endif
