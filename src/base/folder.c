/* folder.c -- see folder.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/folder.h"

/* Each kind's variable, its default under HOME, and its name in messages. */
static const struct {
  const char *var, *under_home, *what;
} kinds[] = {
    [FOLDER_STATE] = {"XDG_STATE_HOME", ".local/state", "state"},
    [FOLDER_CACHE] = {"XDG_CACHE_HOME", ".cache", "cache"},
    [FOLDER_CONFIG] = {"XDG_CONFIG_HOME", ".config", "config"},
    [FOLDER_DATA] = {"XDG_DATA_HOME", ".local/share", "data"},
};

static int absolute(const char *s) { return s && s[0] == '/'; }

int folder_xdg(FolderKind kind, const char *leaf, char *buf, size_t cap, Err *err) {
  const char *xdg = getenv(kinds[kind].var), *home = getenv("HOME");
  int n;
  if (absolute(xdg)) n = snprintf(buf, cap, "%s/%s", xdg, leaf);
  else if (absolute(home)) n = snprintf(buf, cap, "%s/%s/%s", home, kinds[kind].under_home, leaf);
  else return err_set(err, "neither %s nor HOME is set to an absolute path", kinds[kind].var);
  if (n < 0 || (size_t)n >= cap) return err_set(err, "%s folder path too long", kinds[kind].what);
  return n;
}

int folder_make(const char *path, mode_t mode) {
  struct stat st;
  if (mkdir(path, mode) == 0) return 0;
  if (errno != EEXIST) return -1;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;   /* a link to a folder is one */
  errno = ENOTDIR;
  return -1;
}

int folder_make_all(const char *path, mode_t mode, Err *err) {
  char buf[PATH_MAX];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) return err_set(err, "cannot create %s: %s", path, strerror(n ? ENAMETOOLONG : ENOENT));
  memcpy(buf, path, n + 1);
  /* Each folder on the way, the root aside; "a//b" and "a/" make no empty one. */
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (p[-1] != '/' && folder_make(buf, mode) < 0) return err_set(err, "cannot create %s: %s", buf, strerror(errno));
    if (c == '\0') return 0;
    *p = c;
  }
}
