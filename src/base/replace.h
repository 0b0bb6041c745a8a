/*
** replace.h -- replace a file whole: write a fresh temporary file beside
** it, sync it, rename it over the target. Readers see the old file or the
** new one, never a mix, and a crash mid-write leaves the old one.
**
** Only a regular file is replaced. A symbolic link to a regular file is
** followed: its target is replaced and the link kept. A directory, device,
** FIFO, socket, a link to any of them or a link to nothing is refused
** (renaming over a device node as root would replace the device). Between
** the check and the rename the folder is the caller's to keep still.
**
** Temporary files are named "<target>.tmp.<pid>.<n>". Beginning a write
** removes those of the same target whose process no longer exists, left by
** a writer killed mid-save; a live process's file is never touched.
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
