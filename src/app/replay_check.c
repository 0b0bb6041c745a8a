/*
** replay_check.c -- see replay_check.h.
*/
#include "app/replay_check.h"

#include "luaapi/luaapi.h"

enum { MIB = 1 << 20 };


int replay_plan(const JournalFile *f, const char *path, const CliOptions *user, ReplayPlan *p, Err *err) {
  if (cli_parse(f->argc, f->argv, &p->rec, err) < 0) return err_prefix(err, "%s: its command line", path);
  if (p->rec.resume)
    return err_set(err, "%s: the recorded lab reopened autosaved runs (--resume); it cannot be replayed", path);
  for (int i = 0; i < f->n_start; i++)
    if (f->start[i].step != 0)
      return err_set(err, "%s: run %s started at step %ld (a checkpoint): it cannot be replayed", path,
                     f->start[i].name, f->start[i].step);
  p->sandbox = user->sandbox || !user->trust || p->rec.sandbox;
  /* the user's --lua-mem (its default too) is the ceiling: a journal only lowers it */
  long mb = p->rec.lua_mem_mb < user->lua_mem_mb ? p->rec.lua_mem_mb : user->lua_mem_mb;
  p->heap_cap = (size_t)mb * MIB;
  return 0;
}

/* The journal's file 'file' at line 'line' ('what' says whose it is). */
static int check_file(const char *path, int line, const char *what, const char *file, Err *err) {
  if (!file[0] || luaapi_sandbox_check(file, 0, err) == 0) return 0;
  return err_prefix(err, "%s:%d: %s", path, line, what);
}

int replay_check(const JournalFile *f, const char *path, const ReplayPlan *p, Err *err) {
  if (!p->sandbox) return 0;
  char what[128];
  for (int i = 0; i < f->n_start; i++) {
    snprintf(what, sizeof what, "run %s's corpus", f->start[i].name);
    if (check_file(path, 1, what, f->start[i].opt.corpus, err) < 0) return -1;
  }
  if (check_file(path, 1, "the recorded --corpus", p->rec.run.corpus, err) < 0) return -1;
  for (int i = 0; i < f->n; i++)   /* the header is line 1, entry i line i + 2 */
    if (f->e[i].kind == JOURNAL_SCRIPT && check_file(path, i + 2, "the script", f->e[i].path, err) < 0) return -1;
  return 0;
}
