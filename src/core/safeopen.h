/*
** safeopen.h -- opening a file a user named, for reading, without ever
** blocking on it.
**
** open(2) of a FIFO waits for a writer, and reading a device such as
** /dev/zero never ends: a corpus, a checkpoint, a journal or a manifest
** named by a user (or left in a folder by one) must be a regular file, and
** the check must be made on what was opened, not on the name beforehand
** (the name could change in between). So the file is opened non-blocking,
** looked at with fstat, refused with a message that says what it is when
** it is not a regular file, and only then read as usual.
*/
#ifndef TIELAB_CORE_SAFEOPEN_H
#define TIELAB_CORE_SAFEOPEN_H

#include <stdio.h>
#include <sys/stat.h>

#include "core/err.h"

enum {
  SAFEOPEN_NOFOLLOW = 1,   /* a symbolic link is refused too, not followed */
};

/* A descriptor (close-on-exec, blocking again) for reading the regular file
** 'path', or -1 with 'err' saying why ("PATH: is a FIFO, not a regular
** file"). 'st' (may be NULL) gets the file's status. When the open itself
** failed, errno is what open(2) said (ENOENT: there is no such file). */
int safeopen_read(const char *path, int flags, struct stat *st, Err *err);

/* The same as a stdio stream, opened "rb". */
FILE *safeopen_fread(const char *path, int flags, struct stat *st, Err *err);

#endif
