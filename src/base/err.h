/*
** err.h -- the error value every fallible call below the edges fills.
**
** Functions that can fail take an 'Err *' as their last argument, return -1
** (or NULL) and write one specific line into it: what went wrong and with
** what ("corpus.txt: file is empty"). They never print and never exit; the
** edges (command line, Lua, UI) decide how to report it.
*/
#ifndef TIELAB_BASE_ERR_H
#define TIELAB_BASE_ERR_H

#define ERR_MSG_MAX 512

/* The program's exit statuses, which every edge returns: 0 ok, 1 runtime
** error, 2 usage error, 130 interrupted. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

typedef struct Err {
  char msg[ERR_MSG_MAX];
} Err;

/* Fill 'e' (may be NULL) with a printf-style message; always returns -1. */
int err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Put 'prefix: ' in front of the message already in 'e'; returns -1. */
int err_prefix(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Show each control character of the message (C0 and DEL) as '?', so it
** stays one line whatever a file or tensor name quoted in it holds. */
void err_one_line(Err *e);

#endif
