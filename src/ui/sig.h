/*
** sig.h -- signals as bytes on a pipe.
**
** A handler only records which signal came and writes one byte to a pipe
** that the UI loop polls; the loop does the work (save, resize, clear the
** line). The one exception is SIGINT while Lua code runs on the UI thread:
** the loop is not polling then, so the handler calls the armed interrupt
** function, which must be async-signal-safe (luaapi_interrupt only sets a
** flag). Handlers are process-wide and safe on any thread, since OpenBLAS
** starts threads before main that no signal mask reaches.
*/
#ifndef TIELAB_UI_SIG_H
#define TIELAB_UI_SIG_H

#include "../core/err.h"

#define SIG_BIT(s) (1u << (s))

/* Install handlers for SIGINT, SIGTERM, SIGHUP and SIGWINCH (before newterm,
** so that curses keeps its hands off SIGWINCH) and ignore SIGPIPE. */
int sig_open(Err *err);
void sig_close(void);

int sig_fd(void);

/* Signals received since the last call, as SIG_BIT()s; drains the pipe. */
unsigned sig_take(void);

/* While armed, SIGINT also calls 'fn(ctx)' from the handler. */
void sig_set_interrupt(void (*fn)(void *ctx), void *ctx);
void sig_arm_interrupt(int on);

#endif
