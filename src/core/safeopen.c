/*
** safeopen.c -- open non-blocking, look at what was opened, then read.
*/
#include "core/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* What a file that is not a regular one is, for the message. */
static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a file of an unknown kind";
}

/* The message for an open(2) that failed; errno is left as it said. */
static int opening_failed(const char *path, int flags, Err *err) {
  int e = errno;
  if (e == ENOENT) err_set(err, "%s: no such file", path);
  else if (e == ELOOP && (flags & SAFEOPEN_NOFOLLOW)) err_set(err, "%s: is a symbolic link, refused here", path);
  else err_set(err, "%s: %s", path, strerror(e));
  errno = e;
  return -1;
}

int safeopen_read(const char *path, int flags, struct stat *st, Err *err) {
  if (!path || !*path) return err_set(err, "no file named (an empty name)");
  int oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (flags & SAFEOPEN_NOFOLLOW) oflags |= O_NOFOLLOW;
  int fd = open(path, oflags);
  if (fd < 0) return opening_failed(path, flags, err);
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return err_set(err, "%s: %s", path, strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return err_set(err, "%s: is %s, not a regular file", path, kind_of(sb.st_mode));
  }
  /* A regular file never blocks; reads go on as usual. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (st) *st = sb;
  return fd;
}

FILE *safeopen_fread(const char *path, int flags, struct stat *st, Err *err) {
  int fd = safeopen_read(path, flags, st, err);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    err_set(err, "%s: %s", path, strerror(e));
  }
  return f;
}
