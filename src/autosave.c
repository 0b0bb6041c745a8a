/* autosave.c -- see autosave.h. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "autosave.h"

#define AUTOSAVE_MAX_FILES 256

static int mkdirs(char *path, Err *err) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    int rc = mkdir(path, 0700);
    *p = '/';
    if (rc < 0 && errno != EEXIST) return err_set(err, "cannot create %s: %s", path, strerror(errno));
  }
  if (mkdir(path, 0700) < 0 && errno != EEXIST) return err_set(err, "cannot create %s: %s", path, strerror(errno));
  return 0;
}

int autosave_state_path(char *buf, size_t cap, const char *leaf, Err *err) {
  const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  int n;
  if (xdg && xdg[0] == '/') n = snprintf(buf, cap, "%s/tielab", xdg);
  else if (home && *home) n = snprintf(buf, cap, "%s/.local/state/tielab", home);
  else return err_set(err, "neither XDG_STATE_HOME nor HOME is set");
  if (n < 0 || (size_t)n >= cap) return err_set(err, "state folder path too long");
  if (mkdirs(buf, err) < 0) return -1;
  if ((size_t)snprintf(buf + n, cap - (size_t)n, "/%s", leaf) >= cap - (size_t)n)
    return err_set(err, "state file path too long");
  return 0;
}

/* "20261129-094512-4242": sorts by start time. */
static const char *session_name(void) {
  static char name[64];
  if (!name[0]) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    size_t n = strftime(name, sizeof name, "%Y%m%d-%H%M%S", &tm);
    snprintf(name + n, sizeof name - n, "-%ld", (long)getpid());
  }
  return name;
}

int autosave_dir(char *buf, size_t cap, Err *err) {
  char leaf[128];
  snprintf(leaf, sizeof leaf, "autosave/%s", session_name());
  if (autosave_state_path(buf, cap, leaf, err) < 0) return -1;
  return mkdirs(buf, err);
}

static int has_checkpoint(const char *dir);

int autosave_latest(char *buf, size_t cap, Err *err) {
  char root[4096];
  if (autosave_state_path(root, sizeof root, "autosave", err) < 0) return -1;
  DIR *d = opendir(root);
  if (!d) return err_set(err, "nothing to resume: %s: %s", root, strerror(errno));
  char best[256] = "";
  struct dirent *e;
  while ((e = readdir(d))) {
    char path[4400];
    if (e->d_name[0] == '.' || strcmp(e->d_name, session_name()) == 0 || strlen(e->d_name) >= sizeof best) continue;
    snprintf(path, sizeof path, "%s/%s", root, e->d_name);
    if (strcmp(e->d_name, best) > 0 && has_checkpoint(path)) snprintf(best, sizeof best, "%s", e->d_name);
  }
  closedir(d);
  if (!best[0]) return err_set(err, "nothing to resume: no saved lab in %s", root);
  if ((size_t)snprintf(buf, cap, "%s/%s", root, best) >= cap) return err_set(err, "autosave path too long");
  return 0;
}

/* A run as a file name: its name with letters, digits, '-', '_' and '.'
** kept, then its id, so that "a b" and "a_b" never share a file (the name
** itself travels inside the checkpoint). */
static void file_name(Run *r, char *out, size_t cap) {
  const char *name = run_name(r);
  size_t i = 0;
  for (; name[i] && i + 24 < cap; i++) {
    char c = name[i];
    int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
               c == '_' || (c == '.' && i > 0);
    out[i] = keep ? c : '_';
  }
  snprintf(out + i, cap - i, "-%d", run_id(r));
}

static int has_ext(const char *name, const char *ext) {
  size_t n = strlen(name), e = strlen(ext);
  return n > e && strcmp(name + n - e, ext) == 0;
}

int autosave_run(const char *dir, Run *r, Err *err) {
  char fn[128], path[4300];
  file_name(r, fn, sizeof fn);
  if ((size_t)snprintf(path, sizeof path, "%s/%s" AUTOSAVE_EXT, dir, fn) >= sizeof path)
    return err_set(err, "autosave path too long");
  return run_save(r, path, err);   /* run_save writes a temporary file and renames it */
}

void autosave_prune(Lab *lab, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!has_ext(e->d_name, AUTOSAVE_EXT)) continue;
    int keep = 0;
    for (int i = 0; i < lab_n_runs(lab) && !keep; i++) {
      char fn[128], want[160];
      file_name(lab_run(lab, i), fn, sizeof fn);
      snprintf(want, sizeof want, "%s" AUTOSAVE_EXT, fn);
      keep = strcmp(e->d_name, want) == 0;
    }
    char path[4400];
    if (!keep && (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path) unlink(path);
  }
  closedir(d);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int has_checkpoint(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  int found = 0;
  while (!found && (e = readdir(d))) found = e->d_name[0] != '.' && has_ext(e->d_name, AUTOSAVE_EXT);
  closedir(d);
  return found;
}

int autosave_list(const char *dir, char ***names, Err *err) {
  DIR *d = opendir(dir);
  if (!d) return err_set(err, "nothing to resume: %s: %s", dir, strerror(errno));
  char **list = calloc(AUTOSAVE_MAX_FILES, sizeof *list);
  int n = 0;
  struct dirent *e;
  while (list && (e = readdir(d)) && n < AUTOSAVE_MAX_FILES)
    if (e->d_name[0] != '.' && has_ext(e->d_name, AUTOSAVE_EXT) && (list[n] = strdup(e->d_name))) n++;
  closedir(d);
  if (!list) return err_set(err, "out of memory listing %s", dir);
  qsort(list, (size_t)n, sizeof *list, by_name);
  *names = list;
  return n;
}
