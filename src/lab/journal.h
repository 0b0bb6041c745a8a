/*
** journal.h -- the journal of the lab (--journal FILE): every action that
** changed the lab, with the step it happened at, so that 'tielab --replay
** FILE' can play it all again from the same seeds and check that it
** ends with the same numbers. Its lines and its "wait" entries:
** docs/architecture.md, 'The journal'.
**
** Writing takes the lab in hand (the caller holds it); nothing here knows
** of threads, Lua or the screen.
*/
#ifndef TIELAB_JOURNAL_H
#define TIELAB_JOURNAL_H

#include <stdint.h>

#include "lab/lab.h"

typedef struct Journal Journal;

/* The figures compared at the end, in this order. */
#define JOURNAL_N_METRICS 6
#define JOURNAL_METRIC_CHARS 48
const char *journal_metric_name(int i);
/* Run 'r''s final figures as hex floats. */
void journal_metrics(Run *r, char out[JOURNAL_N_METRICS][JOURNAL_METRIC_CHARS]);

/* ------------------------------------------------------------ writing */

/* Create 'path' and write the header: argv and every run of 'lab'. */
Journal *journal_open(const char *path, int argc, char **argv, Lab *lab, Err *err);
/* Keep every run's step now: the next entry is written with these, not
** with the lab as it is then (a REPL entry is journaled after it ran, to
** know it was whole, and may have added or removed runs meanwhile).
** 'lab' NULL forgets the mark (an entry that was not journaled after all). */
void journal_mark(Journal *j, Lab *lab);
/* A key's or a REPL entry's Lua call ('kind' "key" or "line"); 'sel' is
** the run the UI had selected ("" when none). */
int journal_call(Journal *j, Lab *lab, const char *kind, const char *lua, const char *sel, Err *err);
/* A script's key binding called for key code 'code'. */
int journal_binding(Journal *j, Lab *lab, int code, const char *sel, Err *err);
/* A script started: its path, arguments, size and content hash. */
int journal_script(Journal *j, Lab *lab, const char *path, int argc, char **argv, Err *err);
/* An answer of lab.wait_key ('pressed': the speaker's '.' ended the
** wait), at the steps now. Given while a marked call runs, it is written
** after that call's entry (and forgotten with its mark). */
int journal_wait(Journal *j, Lab *lab, int pressed, const char *sel, Err *err);
/* The final record, then close (also on error; NULL is fine). */
int journal_close(Journal *j, Lab *lab, Err *err);

/* FNV-1a 64 of a file's contents and its size. */
int journal_file_hash(const char *path, uint64_t *hash, long *size, Err *err);

/* ------------------------------------------------------------ reading */

typedef enum JournalKind { JOURNAL_KEY, JOURNAL_LINE, JOURNAL_BINDING, JOURNAL_SCRIPT, JOURNAL_WAIT } JournalKind;

/* "key", "line", "binding", "script" or "wait", as the journal names them. */
const char *journal_kind_name(JournalKind k);

typedef struct JournalStep {
  char name[64];
  long step;
} JournalStep;

typedef struct JournalEntry {
  JournalKind kind;
  long step;
  int n_runs;
  JournalStep *runs;
  char sel[64];
  char *lua;            /* key, line */
  int code;             /* binding */
  char *path;           /* script */
  int argc;
  char **argv;
  long size;
  uint64_t hash;
  int answer;           /* wait: lab.wait_key's answer */
} JournalEntry;

typedef struct JournalRun {
  char name[64];
  long step;
  RunOptions opt;                                          /* header runs */
  char metric[JOURNAL_N_METRICS][JOURNAL_METRIC_CHARS];    /* final runs */
} JournalRun;

typedef struct JournalFile {
  char version[64];     /* the tielab that recorded it ("" when unknown) */
  int argc;
  char **argv;
  char cwd[4096];       /* the recorded lab's folder ("" when unknown) */
  int n_start;
  JournalRun *start;    /* the runs of the header */
  int n;
  JournalEntry *e;
  int has_end;
  long end_step;
  int n_end;
  JournalRun *end;      /* the final record's runs */
} JournalFile;

/* Read a whole journal; errors name the file and the line. */
int journal_read(const char *path, JournalFile *f, Err *err);
void journal_file_free(JournalFile *f);

#endif
