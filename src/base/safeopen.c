/*
** safeopen.c -- open non-blocking, look at what was opened, then read or
** write.
*/
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#define WRITER_POLL_MS 100   /* between two questions while a FIFO has no writer yet */

/* What a file that is not a regular one is, for the message. */
static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a file of an unknown kind";
}

/* Refuse a file that is no regular one; errno 0 says it was its kind. */
static int wrong_kind(const char *path, mode_t mode, Err *err) {
  err_set(err, "%s: is %s, not a regular file", path, kind_of(mode));
  errno = 0;
  return -1;
}

/* open(2) failed with errno: say why, errno kept. A FIFO with no reader
** (opened to write) and a socket fail with ENXIO: they are named for what
** they are. */
static int opening_failed(const char *path, int flags, Err *err) {
  int e = errno;
  struct stat st;
  if (e == ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return wrong_kind(path, st.st_mode, err);
  if (e == ENOENT) err_set(err, "%s: no such file", path);
  else if (e == ELOOP && (flags & SAFEOPEN_NOFOLLOW)) err_set(err, "%s: is a symbolic link, refused here", path);
  else err_set(err, "%s: %s", path, strerror(e));
  errno = e;
  return -1;
}

int safeopen_open(const char *path, int oflags, int flags, struct stat *st, Err *err) {
  if (!path || !*path) {
    errno = ENOENT;
    return err_set(err, "no file named (an empty name)");
  }
  /* O_TRUNC waits for the file's kind to be known: truncating is writing. */
  int truncate = (oflags & O_TRUNC) != 0;
  oflags = (oflags & ~O_TRUNC) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (flags & SAFEOPEN_NOFOLLOW) oflags |= O_NOFOLLOW;
  int fd = open(path, oflags, 0666);
  if (fd < 0) return opening_failed(path, flags, err);
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    err_set(err, "%s: %s", path, strerror(e));
    errno = e;
    return -1;
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return wrong_kind(path, sb.st_mode, err);
  }
  /* A regular file never blocks; reads and writes go on as usual. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (truncate && ftruncate(fd, 0) != 0) {
    int e = errno;
    close(fd);
    err_set(err, "%s: %s", path, strerror(e));
    errno = e;
    return -1;
  }
  if (st) *st = sb;
  return fd;
}

int safeopen_read(const char *path, int flags, struct stat *st, Err *err) {
  return safeopen_open(path, O_RDONLY, flags, st, err);
}

/* Reads (and writes) on 'fd' block again, as usual. */
static int blocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

static FILE *stream(int fd, const char *path, const char *mode, Err *err) {
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, mode);
  if (!f) {
    int e = errno;
    close(fd);
    err_set(err, "%s: %s", path, strerror(e));
  }
  return f;
}

FILE *safeopen_fread(const char *path, int flags, struct stat *st, Err *err) {
  return stream(safeopen_read(path, flags, st, err), path, "rb", err);
}

/* Until the FIFO 'fd' has something to read, or its writer came and went;
** -1 when 'cancel' said stop first. */
static int wait_for_writer(int fd, const Cancel *cancel) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  for (;;) {
    if (cancel_asked(cancel)) return -1;
    int n = poll(&p, 1, WRITER_POLL_MS);
    if (n > 0 || (n < 0 && errno != EINTR)) return 0;   /* a poll that fails leaves it to the read */
  }
}

FILE *safeopen_fstream(const char *path, const Cancel *cancel, Err *err) {
  if (!path || !*path) return err_set(err, "no file named (an empty name)"), NULL;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return opening_failed(path, 0, err), NULL;
  struct stat sb;
  const char *refused = fstat(fd, &sb) != 0 ? strerror(errno)
                        : S_ISDIR(sb.st_mode) ? "is a folder, not a file"
                        : S_ISFIFO(sb.st_mode) && wait_for_writer(fd, cancel) < 0 ? "interrupted while waiting for a writer"
                                                                                   : NULL;
  if (refused) {
    err_set(err, "%s: %s", path, refused);
    close(fd);
    return NULL;
  }
  return stream(blocking(fd), path, "rb", err);
}

FILE *safeopen_fwrite(const char *path, Err *err) {
  if (!path || !*path) return err_set(err, "no file named (an empty name)"), NULL;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0 && errno == ENXIO) return err_set(err, "%s: a FIFO with no reader", path), NULL;
  if (fd < 0) return opening_failed(path, 0, err), NULL;
  return stream(blocking(fd), path, "w", err);
}
