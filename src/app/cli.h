/*
** cli.h -- the command line: one table of options (name, argument, help),
** parsed into the mode to run and the options of the first run.
**
** The exit statuses, the program's contract, are base/err.h's EXIT_*.
*/
#ifndef TIELAB_CLI_H
#define TIELAB_CLI_H

#include <stdio.h>

#include "lab/lab.h"

typedef enum CliMode {
  MODE_UI, MODE_HEADLESS, MODE_BENCH, MODE_HELP, MODE_VERSION, MODE_REPLAY, MODE_LIST_OPTIONS, MODE_INSPECT
} CliMode;

typedef struct CliOptions {
  CliMode mode;
  RunOptions run;          /* model and run options given on the command line */
  int headless;            /* --headless (or --compare) */
  int bench;               /* --bench */
  unsigned long options_given;   /* bit i: program option i was on the command line */
  int steps;               /* --steps: bench steps, or steps of the built-in headless loop */
  int bench_warmup;        /* --bench-warmup: bench steps not timed */
  int print_every;         /* --print-every: built-in headless loop */
  const char *compare;     /* --compare paper: runs paper.lua ("paper") */
  const char *script;      /* SCRIPT.lua, or NULL */
  int script_argc;         /* arguments after the script */
  char **script_argv;
  int resume;              /* --resume */
  int sandbox;             /* --sandbox */
  int no_init;             /* --no-init: the init file is not run */
  int trust;               /* --trust: --replay as recorded (its folder, its sandbox) */
  int ascii;               /* --ascii */
  const char *theme;       /* --theme: dark, light or mono; NULL: from the terminal */
  int instruments;         /* --bench --instruments: whole lab steps */
  int forward;             /* --bench --forward: forward passes alone */
  int align;               /* --bench --align: the Table 1 alignment metrics */
  int align_warmup;        /* --bench --align: untimed calls, --bench-warmup when given (default 0) */
  long lua_mem_mb;         /* --lua-mem: cap on the Lua heap, MiB */
  const char *record;      /* --record: asciicast v2 file of the screen */
  const char *journal;     /* --journal: the lab's actions, for --replay */
  const char *replay;      /* --replay: the journal to play again */
  const char *inspect;     /* --inspect: a released model */
  const char *against;     /* --against: the second model of Table 1 */
  int json;                /* --json: --inspect ends with one JSON line */
  int argc;                /* the whole command line, as the journal keeps it */
  char **argv;
  const Reducer *reducer;   /* set by main under mpirun: the job's ranks share each batch; NULL: one process */
  char **task_options;     /* set by main: cli_task_options, for a script's tasks (lab.command) */
} CliOptions;

/* Parse argv. Returns 0, or -1 with a usage message in 'err' (exit 2). */
int cli_parse(int argc, char **argv, CliOptions *o, Err *err);
void cli_usage(FILE *f);
/* Every option, one a line, for the shell's completion: the name, its
** argument (or '-'), its choices (or '-'), and the modes that take it;
** then '@datadir DIR', the installed scripts' folder. */
void cli_list_options(FILE *f);
/* ' name=value' for each run setting given on the command line, as the
** built-in loops' first line shows them. */
void cli_print_given(FILE *f, const RunOptions *o);
/* The options a headless tielab running one of a script's tasks must be
** given too, so that the task runs as this process would run it:
** --no-init, --lua-mem and every run setting given (a corpus made
** absolute), one word each ("--in-scale=5"); NULL-terminated, malloc'd
** (cli_words_free), or NULL when memory runs out. --sandbox is the Lua
** layer's own to add (luaapi.h's task_options). */
char **cli_task_options(const CliOptions *o);
void cli_words_free(char **words);

#endif
