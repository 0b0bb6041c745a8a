/*
** replay_check.h -- a journal read for --replay (journal.h), judged before
** any of it runs. A journal may come from anyone: its entries are Lua, its
** header makes runs and names files, its command line sets limits. Unless
** the user trusts it (--trust), it gets what a sandboxed script gets, and
** no more. What replay_plan and replay_check settle: docs/architecture.md,
** 'Judging a journal before a replay'.
*/
#ifndef TIELAB_REPLAY_CHECK_H
#define TIELAB_REPLAY_CHECK_H

#include <stddef.h>

#include "app/cli.h"
#include "lab/journal.h"

typedef struct ReplayPlan {
  CliOptions rec;     /* the recorded command line (its strings are the journal's) */
  int sandbox;        /* the journal's Lua runs sandboxed */
  size_t heap_cap;    /* bytes the Lua heap (and, sandboxed, the runs) may take */
} ReplayPlan;

/* The plan for journal 'f' ('path' names it in messages) under the user's
** options 'user'; -1 with 'err' when the journal cannot be replayed (its
** command line does not parse, it reopened autosaved runs, a run of its
** header started from a checkpoint). */
int replay_plan(const JournalFile *f, const char *path, const CliOptions *user, ReplayPlan *p, Err *err);

/* Under a sandboxed plan, every file 'f' names must be one the sandbox
** lets a script in the working directory read; -1 with 'err' naming the
** first that is not, and its line. */
int replay_check(const JournalFile *f, const char *path, const ReplayPlan *p, Err *err);

#endif
