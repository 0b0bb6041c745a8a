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

static int starts_with(const char *s, const char *prefix) { return prefix[0] && strncmp(s, prefix, strlen(prefix)) == 0; }

/* A file the check let through: relative, or absolute in one of the folders. */
static void check_named(const char *file) {
  fuzz_check(file[0] != '/' || starts_with(file, cwd) || starts_with(file, data),
             "replay_check let an absolute file outside the folder through");
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
