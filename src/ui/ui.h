/*
** ui.h -- the interactive lab: the screen, its keys and the Lua REPL.
**
** 'ui_main' builds the lab from the command line (a tied and an untied run
** on the same batches unless a tie mode was given; the autosaved runs with
** --resume; none when a script is given, which builds its own), starts the trainer thread and the Lua layer, and runs the
** screen until the user quits. With TERM=dumb, or without a terminal that
** can address the cursor, it runs a plain line REPL instead.
*/
#ifndef TIELAB_UI_UI_H
#define TIELAB_UI_UI_H

#include "lab/lab.h"

/* What the interactive lab takes from the command line: the UI's own view
** of it, filled by whoever parsed it. */
typedef struct UiOptions {
  RunOptions run;          /* the options of the first runs */
  const char *script;      /* SCRIPT.lua to run on the screen, or NULL */
  int script_argc;         /* its arguments */
  char **script_argv;
  int resume;              /* reopen the autosaved runs */
  int sandbox;             /* Lua without files, processes or the OS */
  int no_init;             /* --no-init: the init file is not run */
  int ascii;               /* ASCII glyphs only */
  const char *theme;       /* dark, light or mono; NULL: from the terminal */
  long lua_mem_mb;         /* cap on the Lua heap, MiB (0: none) */
  const char *record;      /* asciicast v2 file of the screen, or NULL */
  const char *journal;     /* the lab's actions, for a replay, or NULL */
  int argc;                /* the whole command line, as the journal keeps it */
  char **argv;
  const char *const *task_options;   /* what a script's tasks must be given too (luaapi.h) */
} UiOptions;

/* The keys of the screen, each with the Lua call it makes (keys.c): the
** help screen draws them, and a replay runs the recorded ones. */
typedef struct UiKey {
  int key;             /* a byte, or a curses KEY_* code */
  const char *label;   /* as shown in help */
  const char *help;
  const char *lua;     /* the Lua call the key makes */
  const char *hint;    /* in the hint line; NULL: only in help */
} UiKey;
const UiKey *ui_keys(int *n);

/* Returns the exit status: 0, 1 (runtime error), 130 (ended by a signal). */
int ui_main(const UiOptions *o);

#endif
