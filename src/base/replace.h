/*
** replace.h -- replace a file whole: write a fresh temporary file beside
** it, sync it, rename it over the target. Readers see the old file or the
** new one, never a mix, and a crash mid-write leaves the old one. What may
** be replaced, and the temporary files: docs/architecture.md, 'Replacing a
** file whole'.
*/
#ifndef TIELAB_BASE_REPLACE_H
#define TIELAB_BASE_REPLACE_H

#include "base/err.h"

typedef struct Replace {
  char *target;   /* the file that will be replaced (a link resolved) */
  char *tmp;      /* the temporary file being written */
  int fd;         /* open on 'tmp' for writing; -1 once closed */
} Replace;

/* Check 'path', remove stale temporary files, open a new one: write to
** r->fd. -1 with one line naming 'path'; nothing is left to end. */
int replace_begin(Replace *r, const char *path, Err *err);

/* Write all 'n' bytes of 'p' to the temporary file, in pieces of at most
** 1 GiB (what one write(2) takes), a write a signal cut short going on.
** Returns 0 or the errno that stopped it: replace_end's 'failed'. */
int replace_write(Replace *r, const void *p, size_t n);

/* Close the temporary file (unless the caller did and set fd to -1) and
** rename it over the target, or remove it when 'failed' is an errno.
** Returns 0 or an errno; 'r' is freed either way. */
int replace_end(Replace *r, int failed);

#endif
