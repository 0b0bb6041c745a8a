/*
** safeopen.h -- opening a file a user named without ever blocking on it:
** a FIFO, a device or a folder in its place is refused, on what was opened,
** never waited on. Why, and how for reading, writing and a script through a
** pipe: docs/architecture.md, 'Opening what a user names'.
*/
#ifndef TIELAB_BASE_SAFEOPEN_H
#define TIELAB_BASE_SAFEOPEN_H

#include <stdio.h>
#include <sys/stat.h>

#include "base/cancel.h"
#include "base/err.h"

enum {
  SAFEOPEN_NOFOLLOW = 1,   /* a symbolic link is refused too, not followed */
};

/* A descriptor (close-on-exec, blocking again) for the regular file 'path'
** opened with the open(2) flags 'oflags' (O_RDONLY, O_WRONLY or O_RDWR, and
** O_CREAT, O_APPEND, O_TRUNC; a file created gets mode 0666 less the umask),
** or -1 with 'err' saying why. errno is then that of the call that failed,
** or 0 when the file was refused for what it is. 'st' (may be NULL) gets
** the file's status. */
int safeopen_open(const char *path, int oflags, int flags, struct stat *st, Err *err);

/* A descriptor (close-on-exec, blocking again) for reading the regular file
** 'path', or -1 with 'err' saying why ("PATH: is a FIFO, not a regular
** file"). 'st' (may be NULL) gets the file's status. When the open itself
** failed, errno is what open(2) said (ENOENT: there is no such file). */
int safeopen_read(const char *path, int flags, struct stat *st, Err *err);

/* The same as a stdio stream, opened "rb". */
FILE *safeopen_fread(const char *path, int flags, struct stat *st, Err *err);

/* A stream for reading 'path', which may be anything but a folder: a FIFO
** or a pipe is waited for until a writer has written or gone, 'cancel'
** (may be NULL) asked every tenth of a second; NULL with 'err' when it
** said stop ("PATH: interrupted while waiting for a writer"). */
FILE *safeopen_fstream(const char *path, const Cancel *cancel, Err *err);

/* A stream for writing 'path', created or emptied ("w", close-on-exec): a
** FIFO with no reader is refused ("PATH: a FIFO with no reader") rather
** than waited for. */
FILE *safeopen_fwrite(const char *path, Err *err);

#endif
