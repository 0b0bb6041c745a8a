/*
** repl.h -- a GNU readline command line inside a curses window.
**
** readline's callback interface is fed the bytes the UI loop reads, and
** never touches the terminal: no terminal preparation, no signals, output to
** /dev/null, no LINES/COLUMNS in the environment. Its line is drawn by
** 'repl_draw' from rl_display_prompt, rl_line_buffer and rl_point, scrolled
** sideways to keep the cursor in view. Curses key codes are turned back into
** the escape sequences readline binds, so arrows, history and the user's
** inputrc work. History lives in one file, appended after every entry, so a
** lost connection loses nothing. readline is one per process: so is this.
*/
#ifndef TIELAB_UI_REPL_H
#define TIELAB_UI_REPL_H

#include <stddef.h>

#include "base/err.h"
#include "ui/term.h"

typedef struct ReplHooks {
  /* An accepted line, malloc'd: the hook frees it. NULL: end of input
  ** (Ctrl-D on an empty line). */
  void (*line)(void *ctx, char *line);
  /* Candidates for the last word of 'line' (the text before the cursor). */
  int (*complete)(void *ctx, const char *line, void (*add)(void *actx, const char *word), void *actx);
  /* Show a list of candidates when completion is ambiguous. */
  void (*matches)(void *ctx, char **words, int n);
  void *ctx;
} ReplHooks;

/* 'history' may be NULL (no history file). */
int repl_open(const ReplHooks *h, const char *history, Err *err);
void repl_close(void);

/* Input: bytes as typed, or a curses KEY_* code (0 when it means nothing
** to the command line). */
void repl_feed(const char *bytes, size_t n);
int repl_key(int key);

void repl_prompt(const char *prompt);
/* Forget the line being edited (Ctrl-C), also a half-done search. */
void repl_cancel(void);
/* Add a finished entry (several lines joined) to the history and its file. */
void repl_history_add(const char *entry);

/* Draw the prompt and line in one row of 'w' columns; with 'focused' the
** cursor is placed at the insertion point, else a hint shows. */
void repl_draw(const Term *t, WINDOW *win, int w, int focused, const char *hint);
/* Grows whenever the line or prompt changed. */
long repl_version(void);
/* Columns of the row the line is drawn in (for readline's idea of width). */
void repl_set_width(int cols);

#endif
