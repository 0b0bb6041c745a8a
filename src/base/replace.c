/* replace.c -- see replace.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/replace.h"

/* A dead writer's temporary file is removed only after this long unchanged. */
#define STALE_SECONDS 60

/* "<base>.tmp.<pid>.<n>" as open_temp names them: the pid, else 0. */
static long temp_pid(const char *name, const char *base) {
  size_t n = strlen(base);
  if (strncmp(name, base, n) != 0 || strncmp(name + n, ".tmp.", 5) != 0) return 0;
  const char *p = name + n + 5, *dot = strchr(p, '.');
  if (!dot || dot == p || strspn(p, "0123456789") != (size_t)(dot - p)) return 0;
  if (dot[1] == '\0' || strspn(dot + 1, "0123456789") != strlen(dot + 1)) return 0;
  long pid = strtol(p, NULL, 10);
  return pid > 0 && pid <= INT_MAX ? pid : 0;
}

/* Remove the temporary files of 'path' whose writer no longer exists
** (kill(pid, 0) says ESRCH). Another target's, a live process's (even one
** we may not signal: EPERM) or anything not a regular file stays. */
static void remove_stale_temps(const char *path) {
  char *dir = strdup(path);
  if (!dir) return;
  char *slash = strrchr(dir, '/');
  const char *base = slash ? slash + 1 : dir;
  const char *where = slash == dir ? "/" : slash ? dir : ".";
  if (slash) *slash = '\0';
  DIR *d = opendir(where);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    long pid = temp_pid(e->d_name, base);
    if (pid == 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    /* Ours only, and quiet for a while: a writer on another host or in
    ** another PID namespace is not seen by kill, but keeps its file fresh. */
    struct stat sb;
    if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
        sb.st_uid == geteuid() && time(NULL) - sb.st_mtime > STALE_SECONDS)
      unlinkat(dirfd(d), e->d_name, 0);
  }
  if (d) closedir(d);
  free(dir);
}

static const char *file_kind(mode_t m) {
  return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
       : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Where the bytes go, by the rules of replace.h; a link pointing nowhere
** is refused because writing through it would create a file in a place
** nobody checked. */
static int resolve_target(const char *path, char **real, Err *err) {
  struct stat lsb, sb;
  if (lstat(path, &lsb) != 0) {
    if (errno != ENOENT) return err_set(err, "%s: %s", path, strerror(errno));
    *real = strdup(path);
  } else if (S_ISREG(lsb.st_mode)) {
    *real = strdup(path);
  } else if (S_ISLNK(lsb.st_mode)) {
    if (stat(path, &sb) != 0) return err_set(err, "%s: is a symbolic link to a missing file: not followed", path);
    if (!S_ISREG(sb.st_mode))
      return err_set(err, "%s: is a symbolic link to %s, not a regular file: not replaced", path,
                     file_kind(sb.st_mode));
    *real = realpath(path, NULL);
  } else {
    return err_set(err, "%s: exists and is %s, not a regular file: not replaced", path, file_kind(lsb.st_mode));
  }
  return *real ? 0 : err_set(err, "%s: out of memory", path);
}

/* A fresh temporary file beside 'path'; its name goes into 'tmp'. */
static int open_temp(const char *path, char *tmp, size_t size) {
  static unsigned counter;
  for (int tries = 0; tries < 100; tries++) {
    snprintf(tmp, size, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/* Make the rename itself durable; a folder that cannot be synced is no error. */
static void sync_parent(const char *path) {
  char *dir = strdup(path);
  if (!dir) return;
  char *slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = '\0';
  else if (slash) *slash = '\0';
  int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  free(dir);
}

int replace_begin(Replace *r, const char *path, Err *err) {
  memset(r, 0, sizeof *r);
  r->fd = -1;
  if (resolve_target(path, &r->target, err) < 0) return -1;
  size_t size = strlen(r->target) + 48;
  if (!(r->tmp = malloc(size))) {
    free(r->target);
    return err_set(err, "%s: out of memory", path);
  }
  remove_stale_temps(r->target);
  if ((r->fd = open_temp(r->target, r->tmp, size)) < 0) {
    int e = errno;
    free(r->target);
    free(r->tmp);
    return err_set(err, "%s: cannot write: %s", path, strerror(e));
  }
  /* The new file keeps the old one's permissions (and, for root, owner);
  ** if that fails it has the mode of any new file, which is no worse. */
  struct stat old;
  if (stat(r->target, &old) == 0) {
    int ignored = fchmod(r->fd, old.st_mode & 07777);
    if (geteuid() == 0) ignored = fchown(r->fd, old.st_uid, old.st_gid);
    (void)ignored;
  }
  return 0;
}

int replace_end(Replace *r, int failed) {
  int e = failed;
  if (r->fd >= 0 && e == 0 && fsync(r->fd) != 0) e = errno;
  if (r->fd >= 0 && close(r->fd) != 0 && e == 0) e = errno;
  if (e == 0 && rename(r->tmp, r->target) != 0) e = errno;
  if (e == 0) sync_parent(r->target);
  else unlink(r->tmp);
  free(r->target);
  free(r->tmp);
  r->target = r->tmp = NULL;
  r->fd = -1;
  return e;
}

int replace_write(Replace *r, const void *p, size_t n) {
  const char *b = p;
  while (n > 0) {
    ssize_t k = write(r->fd, b, n > (1u << 30) ? (1u << 30) : n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}
