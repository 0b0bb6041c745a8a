/*
** sig.h -- signals as bytes on a pipe.
**
** A handler only records which signal came and writes one byte to a pipe
** that the UI loop polls; the loop does the work (save, resize, clear the
** line). The one exception is Lua code running on the UI thread (a REPL
** entry, a script's slice, an on_step callback): the loop is not polling
** then, so SIGINT, SIGTERM and SIGHUP also call the armed interrupt
** function, which must be async-signal-safe (luaapi_interrupt only sets a
** flag); the Lua code stops and the loop then handles the signal (a
** SIGTERM still saves every run). Handlers are process-wide and safe on any thread, since OpenBLAS
** starts threads before main that no signal mask reaches.
*/
#ifndef TIELAB_UI_SIG_H
#define TIELAB_UI_SIG_H

#include "core/err.h"

#define SIG_BIT(s) (1u << (s))

/* Install handlers for SIGINT, SIGTERM, SIGHUP and SIGWINCH (before newterm,
** so that curses keeps its hands off SIGWINCH) and ignore SIGPIPE. */
int sig_open(Err *err);
void sig_close(void);

int sig_fd(void);

/* Signals received since the last call, as SIG_BIT()s; drains the pipe. */
unsigned sig_take(void);

/* While armed, SIGINT, SIGTERM and SIGHUP also call 'fn(ctx)' from the
** handler. Arm it around every call into Lua. */
void sig_set_interrupt(void (*fn)(void *ctx), void *ctx);
void sig_arm_interrupt(int on);

#endif
