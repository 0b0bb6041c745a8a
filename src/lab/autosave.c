/* autosave.c -- see autosave.h. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lab/autosave.h"
#include "core/clock.h"
#include "core/replace.h"
#include "core/safeopen.h"

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

/* ------------------------------------------------------------ the writer's marks */

/* "<dir>/<leaf>" in 'buf'; 0, or -1 when it does not fit. */
static int join(char *buf, size_t cap, const char *dir, const char *leaf) {
  return (size_t)snprintf(buf, cap, "%s/%s", dir, leaf) < cap ? 0 : -1;
}

/* 'text' as the whole of <dir>/<leaf>, by the rules of replace.h: a reader
** sees the old file or the new one, and the new one is on disk. */
static int write_whole(const char *dir, const char *leaf, const char *text, Err *err) {
  char path[4400];
  if (join(path, sizeof path, dir, leaf) < 0) return err_set(err, "autosave path too long");
  Replace w;
  if (replace_begin(&w, path, err) < 0) return -1;
  size_t n = strlen(text), done = 0;
  int e = 0;
  while (done < n && !e) {
    ssize_t k = write(w.fd, text + done, n - done);
    if (k < 0 && errno != EINTR) e = errno;
    else if (k > 0) done += (size_t)k;
  }
  if ((e = replace_end(&w, e)) != 0) return err_set(err, "%s: cannot write: %s", path, strerror(e));
  return 0;
}

/* This process owns its session folder ('claimed'), and began a save of it
** that has not yet been completed ('saving'). */
static int claimed, saving;

static int claim(const char *dir, Err *err) {
  char pid[32];
  snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (write_whole(dir, AUTOSAVE_WRITER, pid, err) < 0) return -1;
  claimed = 1;
  return 0;
}

int autosave_claim(Err *err) {
  char dir[4096];
  if (autosave_dir(dir, sizeof dir, err) < 0) return -1;
  return claim(dir, err);
}

/* "812 tied-1.safetensors tied\n": a run's line of the manifest. */
static void manifest_line(Run *r, char *out, size_t cap) {
  char fn[128];
  file_name(r, fn, sizeof fn);
  int n = snprintf(out, cap, "%ld %s" AUTOSAVE_EXT " ", run_metrics(r)->step, fn);
  size_t i = n > 0 && (size_t)n < cap ? (size_t)n : 0;
  for (const char *p = run_name(r); *p && i + 2 < cap; p++) out[i++] = *p == '\n' || *p == '\r' ? ' ' : *p;
  out[i++] = '\n';
  out[i] = '\0';
}

int autosave_begin(const char *dir, Lab *lab, Err *err) {
  if (!claimed && claim(dir, err) < 0) return -1;
  size_t line_cap = 512, cap = (size_t)lab_n_runs(lab) * line_cap + 1;
  char *text = malloc(cap);
  if (!text) return err_set(err, "out of memory writing the autosave manifest");
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; i < lab_n_runs(lab); i++) {
    manifest_line(lab_run(lab, i), text + used, line_cap);
    used += strlen(text + used);
  }
  int rc = write_whole(dir, AUTOSAVE_MANIFEST, text, err);
  free(text);
  if (rc == 0) saving = 1;
  return rc;
}

void autosave_end(const char *dir, int complete) {
  char path[4400];
  if (!complete || join(path, sizeof path, dir, AUTOSAVE_WRITER) < 0) return;
  unlink(path);
  claimed = saving = 0;
}

void autosave_release(void) {
  char dir[4096], path[4400];
  Err err;
  if (!claimed || saving || autosave_dir(dir, sizeof dir, &err) < 0) return;
  if (join(path, sizeof path, dir, AUTOSAVE_WRITER) == 0) unlink(path);
  claimed = 0;
  if (has_checkpoint(dir)) return;
  if (join(path, sizeof path, dir, AUTOSAVE_MANIFEST) == 0) unlink(path);
  rmdir(dir);   /* fails, harmlessly, if anything else is there */
}

/* ------------------------------------------------------------ reading */

/* The pid in <dir>/.writer, or 0 when there is none (or it is no pid). */
static long writer_pid(const char *dir) {
  char path[4400];
  FILE *f = join(path, sizeof path, dir, AUTOSAVE_WRITER) == 0 ? safeopen_fread(path, SAFEOPEN_NOFOLLOW, NULL, NULL)
                                                               : NULL;
  long pid = 0;
  if (f && fscanf(f, "%ld", &pid) != 1) pid = 0;
  if (f) fclose(f);
  return pid > 0 ? pid : 0;
}

/* A process we may not signal (EPERM) exists all the same. */
static int pid_alive(long pid) { return kill((pid_t)pid, 0) == 0 || errno == EPERM; }

/* <dir>/<leaf> is there and not empty (a manifest of no run saves nothing). */
static int has_content(const char *dir, const char *leaf) {
  char path[4400];
  struct stat sb;
  return join(path, sizeof path, dir, leaf) == 0 && stat(path, &sb) == 0 && sb.st_size > 0;
}

/* The manifest's lines into 'f' (n_want -1 when there is no manifest). */
static int read_manifest(AutosaveFolder *f, Err *err) {
  char path[4400];
  f->n_want = -1;
  if (join(path, sizeof path, f->dir, AUTOSAVE_MANIFEST) < 0) return err_set(err, "autosave path too long");
  struct stat sb;
  if (lstat(path, &sb) != 0 && errno == ENOENT) return 0;
  FILE *in = safeopen_fread(path, SAFEOPEN_NOFOLLOW, NULL, err);
  if (!in) return -1;
  char *line = NULL;
  size_t line_cap = 0;
  int cap = 0, rc = 0;
  f->n_want = 0;
  while (rc == 0 && getline(&line, &line_cap, in) > 0) {
    AutosaveEntry e;
    memset(&e, 0, sizeof e);
    int name_at = 0;
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "%ld %159s %n", &e.step, e.file, &name_at) < 2 || name_at == 0) continue;
    snprintf(e.name, sizeof e.name, "%s", line + name_at);
    if (f->n_want == cap) {
      AutosaveEntry *p = realloc(f->want, sizeof *p * (size_t)(cap = cap ? 2 * cap : 8));
      if (!p) rc = err_set(err, "out of memory reading %s", path);
      else f->want = p;
    }
    if (rc == 0) f->want[f->n_want++] = e;
  }
  free(line);
  fclose(in);
  return rc;
}

static int newest_first(const void *a, const void *b) { return -by_name(a, b); }

/* The session folders in 'root' other than this session's, newest first
** (malloc'd, as autosave_list's). Returns the count, or -1 with 'err'. */
static int session_folders(const char *root, char ***names, Err *err) {
  DIR *d = opendir(root);
  if (!d) return err_set(err, "nothing to resume: %s: %s", root, strerror(errno));
  char **list = NULL;
  int n = 0, cap = 0, rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d))) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, session_name()) == 0) continue;
    if (n == cap) {
      char **p = realloc(list, sizeof *p * (size_t)(cap = cap ? 2 * cap : 16));
      if (!p) break;
      list = p;
    }
    if (!(list[n] = strdup(e->d_name))) break;
    n++;
  }
  closedir(d);
  if (n > 0) qsort(list, (size_t)n, sizeof *list, newest_first);
  *names = list;
  return n;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* What --resume waits for: since when, and the owner (and whether it was
** saving) it last said it waits for. */
typedef struct {
  double since;
  long pid;
  int saving;
} Wait;

/* Whether to wait for the live owner 'w' of 'path' (said when that is
** news): a save under way ('busy': its manifest is written) gets longer
** than a lab that has not begun one. */
static int keep_waiting(Wait *wt, const char *path, long w, int busy, FILE *say) {
  double bound = busy ? AUTOSAVE_WAIT_SAVING : AUTOSAVE_WAIT_RUNNING;
  if (clock_seconds() - wt->since >= bound) return 0;
  if (wt->pid == w && wt->saving == busy) return 1;
  if (say && busy)
    fprintf(say, "tielab: process %ld is saving to %s: waiting for it (at most %.0f s)\n", w, path, bound);
  else if (say)
    fprintf(say, "tielab: the lab of process %ld, which saves to %s when it ends, still runs: "
            "waiting for it (at most %.0f s)\n", w, path, bound);
  wt->pid = w;
  wt->saving = busy;
  return 1;
}

/* One look at the folders, newest first: 0 and 'f' filled when one is
** chosen, 1 when a live owner is to be waited for, -1 when none has
** anything, -2 with 'err'. */
static int choose_folder(const char *root, AutosaveFolder *f, Wait *wt, FILE *say, Err *err) {
  char **names = NULL;
  int n = session_folders(root, &names, err), rc = -1;
  if (n < 0) return -2;
  for (int i = 0; i < n && rc == -1; i++) {
    char path[sizeof f->dir];
    if (join(path, sizeof path, root, names[i]) < 0) continue;
    long w = writer_pid(path);
    int alive = w > 0 && pid_alive(w), busy = has_content(path, AUTOSAVE_MANIFEST);
    int saved = busy || has_checkpoint(path);
    if (alive && keep_waiting(wt, path, w, busy, say)) {
      rc = 1;
    } else if (alive && !saved) {
      if (say) fprintf(say, "tielab: passing over %s: process %ld still runs there and has saved nothing\n", path, w);
    } else if (saved) {
      snprintf(f->dir, sizeof f->dir, "%s", path);
      f->writer = w;
      f->writer_alive = alive;
      rc = 0;
    }
  }
  free_names(names, n);
  return rc;
}

int autosave_latest(AutosaveFolder *f, FILE *say, Err *err) {
  char root[4096];
  memset(f, 0, sizeof *f);
  f->n_want = -1;
  if (autosave_state_path(root, sizeof root, "autosave", err) < 0) return -1;
  Wait wt = {clock_seconds(), 0, 0};
  int rc;
  while ((rc = choose_folder(root, f, &wt, say, err)) == 1) {
    struct timespec poll = {0, 50 * 1000 * 1000};
    nanosleep(&poll, NULL);
  }
  if (rc == -2) return -1;
  if (rc < 0) return err_set(err, "nothing to resume: no saved lab in %s", root);
  if (f->writer_alive && say)
    fprintf(say, "tielab: process %ld is still writing %s after %.0f s: reopening what is complete\n", f->writer,
            f->dir, clock_seconds() - wt.since);
  return read_manifest(f, err);
}

void autosave_folder_free(AutosaveFolder *f) {
  free(f->want);
  f->want = NULL;
  f->n_want = -1;
}

const AutosaveEntry *autosave_wanted(const AutosaveFolder *f, const char *file) {
  for (int i = 0; i < f->n_want; i++)
    if (strcmp(f->want[i].file, file) == 0) return &f->want[i];
  return NULL;
}
