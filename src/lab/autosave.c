/* autosave.c -- see autosave.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lab/autosave.h"
#include "base/clock.h"
#include "base/folder.h"
#include "base/grow.h"
#include "base/replace.h"
#include "base/safeopen.h"
#include "base/text.h"
#include "base/utf8.h"

int autosave_state_path(char *buf, size_t cap, const char *leaf, Err *err) {
  int n = folder_xdg(FOLDER_STATE, "tielab", buf, cap, err);
  if (n < 0 || folder_make_all(buf, FOLDER_PRIVATE, err) < 0) return -1;
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
  return folder_make_all(buf, FOLDER_PRIVATE, err);
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

/* 'name' appended to the malloc'd list 'names' of 'n' (room for '*cap'):
** 0, or -1 when memory runs out. */
static int push_name(char ***names, int *n, size_t *cap, const char *name) {
  if (grow_array((void **)names, cap, (size_t)*n + 1, sizeof **names) < 0) return -1;
  if (!((*names)[*n] = strdup(name))) return -1;
  (*n)++;
  return 0;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* The entries of 'dir' that 'keep' accepts (never a name starting with
** '.'), sorted by 'order', as a malloc'd list (free_names): the count, or
** -1 with 'err'. */
typedef int (*KeepEntry)(DIR *d, const char *name);
static int list_folder(const char *dir, KeepEntry keep, int (*order)(const void *, const void *), char ***names,
                       Err *err) {
  DIR *d = opendir(dir);
  if (!d) return err_set(err, "nothing to resume: %s: %s", dir, strerror(errno));
  char **list = NULL;
  int n = 0, rc = 0;
  size_t cap = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)))
    if (e->d_name[0] != '.' && keep(d, e->d_name)) rc = push_name(&list, &n, &cap, e->d_name);
  closedir(d);
  if (rc < 0) {
    free_names(list, n);
    return err_set(err, "out of memory listing %s", dir);
  }
  if (n > 0) qsort(list, (size_t)n, sizeof *list, order);
  *names = list;
  return n;
}

static int is_checkpoint(DIR *d, const char *name) {
  (void)d;
  return has_ext(name, AUTOSAVE_EXT);
}

int autosave_list(const char *dir, char ***names, Err *err) {
  return list_folder(dir, is_checkpoint, by_name, names, err);
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
  int e = replace_end(&w, replace_write(&w, text, strlen(text)));
  if (e != 0) return err_set(err, "%s: cannot write: %s", path, strerror(e));
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

int autosave_lab(Lab *lab, char *dir, size_t cap, AutosaveEach each, void *ctx, Err *err) {
  dir[0] = '\0';
  if (autosave_dir(dir, cap, err) < 0) {
    dir[0] = '\0';
    return -1;
  }
  Err first = {{0}}, e;
  int complete = autosave_begin(dir, lab, &first) == 0;   /* the manifest first: --resume knows what to expect */
  if (!complete && each) each(ctx, NULL, &first);
  /* One run that cannot be saved (a name too long, a full disk for a big
  ** one) is no reason to lose the others. */
  for (int i = 0; i < lab_n_runs(lab); i++) {
    Run *r = lab_run(lab, i);
    int rc = autosave_run(dir, r, &e);
    if (rc < 0 && complete) first = e;
    complete &= rc == 0;
    if (each) each(ctx, r, rc < 0 ? &e : NULL);
  }
  if (complete) autosave_prune(lab, dir);
  autosave_end(dir, complete);
  if (!complete && err) *err = first;
  return complete ? 0 : -1;
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

/* The pid in <dir>/.writer: 0 when there is no mark, -1 when the mark
** holds no pid (digits, at most a newline after them, of a pid_t above 0:
** a wider number would wrap into kill(2)'s "every process" or "the group"). */
static long writer_pid(const char *dir) {
  char path[4400], text[32];
  if (join(path, sizeof path, dir, AUTOSAVE_WRITER) < 0) return 0;
  struct stat sb;
  if (lstat(path, &sb) != 0 && errno == ENOENT) return 0;
  FILE *f = safeopen_fread(path, SAFEOPEN_NOFOLLOW, NULL, NULL);
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = '\0';
  if (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
  long pid = 0;
  for (size_t i = 0; i < n && pid >= 0; i++)
    pid = text[i] >= '0' && text[i] <= '9' && pid <= (INT_MAX - 9) / 10 ? pid * 10 + (text[i] - '0') : -1;
  return n > 0 && pid > 0 ? pid : -1;
}

/* A process we may not signal (EPERM) exists all the same; this process
** is not another one's save. */
static int pid_alive(long pid) {
  return pid > 0 && pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* <dir>/<leaf> is a regular file and not empty (a manifest of no run saves
** nothing). */
static int has_content(const char *dir, const char *leaf) {
  char path[4400];
  struct stat sb;
  return join(path, sizeof path, dir, leaf) == 0 && lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

/* A checkpoint's file name as file_name() makes it: letters, digits, '-',
** '_' and '.', not starting with '.', ending in AUTOSAVE_EXT. */
static int is_file_name(const char *s, size_t n) {
  if (n == 0 || n >= sizeof ((AutosaveEntry *)0)->file || s[0] == '.') return 0;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i])) return 0;
  size_t e = strlen(AUTOSAVE_EXT);
  return n > e && memcmp(s + n - e, AUTOSAVE_EXT, e) == 0;
}

/* 'n' bytes of a run's name into 'out' as they may be shown: control
** characters as '?', cut between characters. */
static void copy_name(char *out, size_t cap, const char *s, size_t n) {
  size_t i = 0;
  for (; i < n && i + 1 < cap; i++) out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  if (i < n) i -= utf8_incomplete_tail(out, i);   /* cut inside a character: without it */
  out[i] = '\0';
}

/* One line of the manifest, "<step> <file> <name>" (its newline cut off),
** into 'e'; -1 with 'why' when it is not one. */
static int manifest_entry(const char *line, size_t n, AutosaveEntry *e, char *why, size_t cap) {
  size_t i = 0;
  long step = 0;
  if (memchr(line, '\0', n)) return snprintf(why, cap, "holds a NUL byte"), -1;
  if (n > AUTOSAVE_MANIFEST_LINE) return snprintf(why, cap, "longer than %d bytes", AUTOSAVE_MANIFEST_LINE), -1;
  for (; i < n && isdigit((unsigned char)line[i]) && step <= (LONG_MAX - 9) / 10; i++) step = step * 10 + (line[i] - '0');
  if (i == 0 || i >= n || line[i] != ' ')
    return snprintf(why, cap, "does not start with a step (a whole number) and a space"), -1;
  const char *file = line + i + 1, *end = memchr(file, ' ', n - i - 1);
  size_t len = end ? (size_t)(end - file) : n - i - 1;
  if (!is_file_name(file, len)) {
    char shown[64];
    text_escape(file, len < 40 ? len : 40, shown, sizeof shown);
    return snprintf(why, cap, "'%s%s' is not a checkpoint's file name", shown, len > 40 ? "..." : ""), -1;
  }
  if (!end) return snprintf(why, cap, "ends at the file name, with no space and run name after it"), -1;
  e->step = step;
  memcpy(e->file, file, len);
  e->file[len] = '\0';
  copy_name(e->name, sizeof e->name, end + 1, n - (size_t)(end + 1 - line));
  return 0;
}

/* 'e' at the end of the manifest's list in 'f'; -1 when memory runs out. */
static int want_more(AutosaveFolder *f, const AutosaveEntry *e, size_t *cap) {
  if (grow_array((void **)&f->want, cap, (size_t)f->n_want + 1, sizeof *f->want) < 0) return -1;
  f->want[f->n_want++] = *e;
  return 0;
}

/* The manifest's lines into 'f' (n_want -1 when there is no manifest); -1
** with 'err' ("<path>:<line>: why") when it cannot be read or a line is not
** one the writer writes. */
static int read_manifest(AutosaveFolder *f, Err *err) {
  char path[4400];
  f->n_want = -1;
  if (join(path, sizeof path, f->dir, AUTOSAVE_MANIFEST) < 0) return err_set(err, "autosave path too long");
  struct stat sb;
  if (lstat(path, &sb) != 0 && errno == ENOENT) return 0;
  FILE *in = safeopen_fread(path, SAFEOPEN_NOFOLLOW, &sb, err);
  if (!in) return -1;
  if (sb.st_size > AUTOSAVE_MANIFEST_MAX) {
    fclose(in);
    return err_set(err, "%s: %lld bytes, more than a manifest holds", path, (long long)sb.st_size);
  }
  char *line = NULL, why[160];
  size_t line_cap = 0;
  ssize_t len;
  size_t cap = 0;
  int rc = 0;
  f->n_want = 0;
  for (int no = 1; rc == 0 && (len = getline(&line, &line_cap, in)) > 0; no++) {
    AutosaveEntry e;
    memset(&e, 0, sizeof e);
    if (line[len - 1] == '\n') len--;
    if (manifest_entry(line, (size_t)len, &e, why, sizeof why) < 0) rc = err_set(err, "%s:%d: %s", path, no, why);
    else if (want_more(f, &e, &cap) < 0) rc = err_set(err, "out of memory reading %s", path);
  }
  free(line);
  fclose(in);
  if (rc < 0) {
    free(f->want);
    f->want = NULL;
    f->n_want = -1;
  }
  return rc;
}

static int newest_first(const void *a, const void *b) { return -by_name(a, b); }

static int is_other_session(DIR *d, const char *name) {
  struct stat sb;
  return strcmp(name, session_name()) != 0 && fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISDIR(sb.st_mode);
}

/* The session folders in 'root' other than this session's, newest first
** (malloc'd, as autosave_list's): folders only, a symbolic link or any
** other kind of file in their place is passed over. Returns the count, or
** -1 with 'err'. */
static int session_folders(const char *root, char ***names, Err *err) {
  return list_folder(root, is_other_session, newest_first, names, err);
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
  Err bad = {{0}};
  if (read_manifest(f, &bad) < 0) snprintf(f->manifest_error, sizeof f->manifest_error, "%s", bad.msg);
  return 0;
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
