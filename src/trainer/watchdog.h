/*
** watchdog.h -- the thread that makes SIGINT, SIGTERM and SIGHUP win over
** code that does not return.
**
** A signal normally stops the Lua code at once (the interrupt hook, the
** checks of the library calls that can run long), and the thread that runs
** Lua (the owner: headless's main thread, the lab's UI thread) takes the
** signal and ends, saving every run; in the lab a lone Ctrl-C only stops the
** script. Some code no check reaches: a C call that runs on (table.sort of
** a huge table, os.execute), a finaliser, which Lua runs with hooks off.
** The watchdog is a second thread, woken by the same signals (base/sig.h's
** watch pipe), that:
**
**   - nudges the owner's thread with a signal of its own while an ending
**     signal waits to be taken, so that a system call it is blocked in
**     (open() of a FIFO, a read of a terminal or a pipe) fails with EINTR
**     and the hook gets its turn; the nudge reaches that thread only while
**     Lua runs there (the arm hook of sig.h), never the loop's own calls;
**   - when the process has not ended WATCHDOG_GRACE seconds after an end
**     request (WATCHDOG_AGAIN after a further signal: a second Ctrl-C ends
**     tielab), takes the lab from its owner, saves every run where
**     --resume finds them, gives the terminal back and ends the process
**     with status 130. Work that ends by itself (a step, a job, a wait for
**     the trainer, the owner's own save: watchdog_busy) puts the deadline
**     off until it is done, so a long step is never cut short, and an
**     owner that saved and then hangs is ended with its own status, its
**     runs not saved again (watchdog_saved).
**
** An end request is SIGTERM or SIGHUP, or SIGINT, except in the lab, where a
** lone Ctrl-C is the script's: two untaken are one there. The owner's
** taking of the signals (sig_take) only cancels a lone Ctrl-C's nudges and
** two Ctrl-Cs' deadline in the lab; after SIGTERM or SIGHUP, taken or not,
** it is ending, and that end has the same deadline: a finaliser that loops
** as the Lua state closes does not keep tielab either.
**
** Why saving cannot race with a step: the watchdog saves only a lab its
** owner's 'take' hands over, which is exclusive use of it between two
** steps (the trainer's lock in the lab; in headless mode a gate that the
** main thread holds around every step, job and call into the lab), and it
** never gives it back: the process ends with the lab still held, so no
** step, no Lua call and no teardown can touch the runs while or after they
** are written. The owner stops the watchdog before it frees the lab, and
** holds the lab (or the gate) while it does: a watchdog that came too late
** waits for it, and is stopped before it gets it.
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
