/*
** sig.h -- the process's signals, for every mode: handlers that only record
** which signal came and write one byte to a pipe (the self-pipe). Who asks
** what came, the interrupt function for Lua on the calling thread, and the
** watchdog's second pipe: docs/architecture.md, 'Signals'.
*/
#ifndef TIELAB_BASE_SIG_H
#define TIELAB_BASE_SIG_H

#include <pthread.h>

#include "base/cancel.h"
#include "base/err.h"

#define SIG_BIT(s) (1u << (s))

/* What a caller handles beyond SIGINT, SIGTERM and SIGHUP. */
enum {
  SIG_WITH_WINCH = 1,    /* record SIGWINCH too (before newterm, so that curses keeps its hands off it) */
  SIG_IGNORE_PIPE = 2,   /* ignore SIGPIPE: a write to a closed pipe fails instead */
};

/* Install the handlers ('extra': SIG_WITH_WINCH | SIG_IGNORE_PIPE, or 0). */
int sig_open(int extra, Err *err);
/* Back to the default dispositions; the pipe closed. */
void sig_close(void);

int sig_fd(void);

/* Signals received since the last call, as SIG_BIT()s; drains the pipe.
** Taking them answers them: sig_unanswered counts from zero again. */
unsigned sig_take(void);

/* How many SIGINT, SIGTERM and SIGHUP came since the last sig_take, and
** which ('*bits', SIG_BIT()s; may be NULL). */
int sig_unanswered(unsigned *bits);

/* Readable after each SIGINT, SIGTERM or SIGHUP: the watchdog's own pipe
** (whoever polls it drains it), -1 before sig_open. */
int sig_watch_fd(void);

/* The first of SIGINT, SIGTERM or SIGHUP received and not taken yet, or 0. */
int sig_ended(void);

/* How many of SIGINT, SIGTERM and SIGHUP have come since the start. */
unsigned sig_count(void);

/* The SIG_BITs of every ending signal that ever came, taken or not. */
unsigned sig_seen(void);

/* Act as if signal 's' had come: another process of the job was stopped
** by one, so this one stops as well (and saves what it would). */
void sig_post(int s);

/* A Cancel (base/cancel.h) that asks to stop once sig_ended() says a
** signal came: for long work on the thread that would take it. */
const Cancel *sig_cancel(void);

/* While armed, SIGINT, SIGTERM and SIGHUP also call 'fn(ctx)' from the
** handler. Arm it around every call into Lua. */
void sig_set_interrupt(void (*fn)(void *ctx), void *ctx);
void sig_arm_interrupt(int on);

/* Called by sig_arm_interrupt with its 'on', on the thread that arms: the
** watchdog lets its nudge reach that thread only while Lua runs. NULL:
** none. */
void sig_set_arm_hook(void (*fn)(int on));

/* Start a thread that takes none of the process's signals, so that they
** reach the threads that wait for them: every signal is blocked in it from
** its first instruction, but those a fault raises on the faulting thread
** (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS), whose blocking POSIX
** leaves undefined. Returns pthread_create's code (0: started). */
int sig_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
