/*
** fuzz_journal.c -- libFuzzer harness for a journal as 'tielab --replay'
** takes it, up to where Lua would start: the reader (journal_read), the
** plan made of its recorded command line (replay_plan) and the sandbox's
** check of every file it names (replay_check), for a replay that is not
** trusted, in the harness's private folder.
**
** The input is the journal's bytes. It must be refused with a message, or
** read into a consistent journal whose plan keeps the user's heap cap (the
** default 1024 MiB: a journal never lifts it) and, once checked, names no
** absolute file outside the folder or tielab's data folder.
*/
#include "fuzz.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "app/replay_check.h"
#include "luaapi/luaapi.h"

static CliOptions user;
static char cwd[PATH_MAX], data[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_setup();
  static char *replay[] = {"tielab", "--replay", "fuzz.jsonl", NULL};
  Err err;
  if (chdir(fuzz_dir) != 0 || !getcwd(cwd, sizeof cwd) || cli_parse(3, replay, &user, &err) < 0) {
    fprintf(stderr, "fuzz_journal: cannot set up\n");
    abort();
  }
  if (!realpath(luaapi_data_dir(), data)) data[0] = '\0';
  return 0;
}

/* Whether 'path' is 'root' or under it: "/a/bc" is not under "/a/b". */
static int inside(const char *path, const char *root) {
  size_t n = strlen(root);
  return n > 0 && strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* 'file' made absolute against the folder, its "." and ".." parts taken
** out as the path is walked (a part at a time, kept on a stack of ends). */
static void normalise(const char *file, char out[PATH_MAX]) {
  char full[2 * PATH_MAX];
  snprintf(full, sizeof full, file[0] == '/' ? "%.0s%s" : "%s/%s", cwd, file);
  size_t ends[PATH_MAX / 2], depth = 0, len = 0;
  for (const char *p = full; *p;) {
    while (*p == '/') p++;
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.') len = depth > 0 ? ends[--depth] : 0;
    else if (n > 0 && !(n == 1 && p[0] == '.') && len + n + 1 < PATH_MAX) {
      ends[depth++] = len;
      out[len++] = '/';
      memcpy(out + len, p, n);
      len += n;
    }
    p += n;
  }
  if (len == 0) out[len++] = '/';
  out[len] = '\0';
}

/* A file the check let through: none, or one in the folder or tielab's
** data folder once made absolute, by its letters and with its links
** resolved when it exists. */
static void check_named(const char *file) {
  if (!file[0]) return;
  char lex[PATH_MAX], real[PATH_MAX];
  normalise(file, lex);
  fuzz_check(inside(lex, cwd) || inside(lex, data), "replay_check let a file outside the folder through");
  if (realpath(lex, real))
    fuzz_check(inside(real, cwd) || inside(real, data), "replay_check let a link to a file outside through");
}

static void check_journal(const JournalFile *f) {
  for (int i = 0; i < f->n_start; i++) fuzz_check(f->start[i].step >= 0, "a header run's step is negative");
  for (int i = 0; i < f->n; i++) {
    const JournalEntry *e = &f->e[i];
    fuzz_check(e->step >= 0 && e->n_runs >= 0 && (e->n_runs == 0 || e->runs), "an entry is inconsistent");
    for (int k = 0; k < e->n_runs; k++) fuzz_check(e->runs[k].step >= 0, "an entry's run step is negative");
    fuzz_check(e->kind != JOURNAL_SCRIPT || (e->path && e->path[0] && e->size >= 0), "a script entry without its file");
    fuzz_check(e->kind > JOURNAL_LINE || e->lua, "a key or line entry without its Lua");
  }
  fuzz_check(!f->has_end || f->end_step >= 0, "the final record's step is negative");
}

int LLVMFuzzerTestOneInput(const uint8_t *data_in, size_t size) {
  char path[64];
  Err err = {{0}};
  JournalFile f;
  fuzz_memfile(data_in, size, path, sizeof path);
  if (journal_read(path, &f, &err) < 0) {
    fuzz_check(err.msg[0] != 0, "refused without a message");
    fuzz_check(f.n == 0 && !f.e && !f.argv && !f.start, "a refused journal left something behind");
    return 0;
  }
  check_journal(&f);
  ReplayPlan plan;
  if (replay_plan(&f, path, &user, &plan, &err) < 0) {
    fuzz_check(err.msg[0] != 0, "a plan refused without a message");
  } else {
    fuzz_check(plan.sandbox, "an untrusted journal's plan is not sandboxed");
    fuzz_check(plan.heap_cap <= (size_t)user.lua_mem_mb << 20, "the journal lifted the user's heap cap");
    if (replay_check(&f, path, &plan, &err) < 0) {
      fuzz_check(err.msg[0] != 0, "a check refused without a message");
    } else {
      for (int i = 0; i < f.n_start; i++) check_named(f.start[i].opt.corpus);
      check_named(plan.rec.run.corpus);
      for (int i = 0; i < f.n; i++)
        if (f.e[i].kind == JOURNAL_SCRIPT) check_named(f.e[i].path);
    }
  }
  journal_file_free(&f);
  return 0;
}
