/*
** watchdog.h -- the thread that makes SIGINT, SIGTERM and SIGHUP win over
** code that does not return: it nudges the owner of the Lua state out of a
** blocked call, and past a deadline saves every run and ends the process.
** When it acts, and why its save cannot race with a step:
** docs/architecture.md.
*/
#ifndef TIELAB_WATCHDOG_H
#define TIELAB_WATCHDOG_H

#include "lab/lab.h"

#define WATCHDOG_GRACE 3.0   /* seconds an end request may stay untaken */
#define WATCHDOG_AGAIN 1.0   /* after a further signal */

typedef struct Watchdog Watchdog;

typedef struct WatchdogOwner {
  /* Exclusive use of the lab at a safe point, waiting at most 'seconds';
  ** NULL when it could not be had by then. On the watchdog's thread; what
  ** it returns is never given back. */
  Lab *(*take)(void *ctx, double seconds);
  /* Optional: give the terminal back before the end, with system calls
  ** only, whatever the owner's thread is doing. */
  void (*leave)(void *ctx);
  /* Optional: the deadline found the owner busy; make what can stop early
  ** stop (the lab: a lens fit, at its next report). */
  void (*hurry)(void *ctx);
  void *ctx;
  int lone_sigint_spared;   /* the lab: a lone Ctrl-C stops a script, never the lab */
} WatchdogOwner;

/* Start watching, from the owner's thread (the one that runs Lua, which
** the nudges are for), after sig_open; NULL with 'err' when no thread. */
Watchdog *watchdog_start(const WatchdogOwner *o, Err *err);

/* Stop watching (NULL: nothing), before the lab goes away. The owner may
** hold the lab (or its gate) meanwhile: a watchdog waiting for it gives
** up; holding it keeps a watchdog that came too late from saving again
** what the owner has just saved. */
void watchdog_stop(Watchdog *w);

/* The owner is in (1) or out of (0) work that ends by itself: a step, a
** job, a wait for the trainer's step, its own save (nests; 'w' may be
** NULL). A deadline waits for it: the owner takes the signal once it is
** done, and no process ends in the middle of a step or a save. */
void watchdog_busy(Watchdog *w, int on);

/* The owner saved every run and will end with 'status'. Should it then
** hang (a finaliser that loops as Lua closes), the deadline ends the
** process with that status, and nothing is saved again. */
void watchdog_saved(Watchdog *w, int status);

/* What an interrupted tielab does with its runs, whoever ends it: saved
** where 'tielab --resume' finds them (rank 0 of a job saves), and said in
** one line on stderr with 'why' ("why; saved in DIR (...)"). */
void watchdog_save(Lab *lab, const char *why);

#endif
