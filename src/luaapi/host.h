/*
** host.h -- what the Lua layer needs from whoever owns the lab.
**
** The Lua API never touches threads. It is handed a Host: a way to get
** exclusive use of the lab for a moment, and a way to ask for training steps
** that may take a while. Headless mode supplies a host that steps inline
** (checking for an interrupt between steps); the UI supplies one backed by
** the trainer thread, so that a script's 'r:step(n)' yields its coroutine
** while the trainer works and the screen stays live. docs/architecture.md,
** "The Host", says why it is shaped so.
*/
#ifndef TIELAB_HOST_H
#define TIELAB_HOST_H

#include "lab/lab.h"

typedef struct Host Host;

/* One run as a host last showed it: for reading only, valid during the
** call that hands it over. 'hist' may be NULL (not copied yet). */
typedef struct HostRunView {
  int id;
  const char *name;
  const RunMetrics *m;
  const RunOptions *o;
  const History *hist;
} HostRunView;

typedef void (*HostViewFn)(void *ctx, const HostRunView *v);

/* A job: one long piece of work on the lab (a lens fit), run by the host
** with the lab to itself, in place of steps. It says how far it is through
** 'report' ('what' it does, 'done' of 'total'), which returns nonzero when
** the job is to stop now (cancelled, interrupted, the host quitting): the
** job then fails with 'err' saying where it stopped, leaving the lab as it
** found it. */
typedef struct HostJobProgress HostJobProgress;
struct HostJobProgress {
  int (*report)(HostJobProgress *p, const char *what, long done, long total);
  void *ud;
};
typedef int (*HostJobFn)(Lab *lab, void *arg, HostJobProgress *p, Err *err);
typedef void (*HostJobFree)(void *arg);
/* A change posted to the lab: run between two steps, never waited for. */
typedef int (*HostPostFn)(Lab *lab, const void *arg, Err *err);
#define HOST_POST_MAX 256   /* bytes of a posted change's argument */
/* A call on the Lua thread (see 'call'). */
typedef int (*HostCallFn)(void *arg);

struct Host {
  /* Exclusive use of the lab until 'release'. May wait for the step in
  ** progress to end (one step), never for a whole request. */
  Lab *(*acquire)(Host *h);
  void (*release)(Host *h);

  /* Ask for 'n' steps of run 'id' (every unpaused run in lockstep when id
  ** is -1). Returns a ticket >= 0, or -1 with 'err' filled. */
  long (*submit)(Host *h, int id, long n, Err *err);

  /* State of a ticket: 1 done, 0 still running, -1 failed or stopped
  ** ('err' says why: a NaN loss at step k, a removed run, an interrupt). */
  int (*poll)(Host *h, long ticket, Err *err);

  /* Stop every request in flight at the next step boundary (a job at its
  ** next report). */
  void (*cancel)(Host *h);

  /* Run 'fn(lab, arg)' as a job; a ticket >= 0 polled with 'poll' and
  ** stopped with 'cancel' like steps, or -1 with 'err' filled. 'arg' is
  ** the job's from here on, whatever happens: the submitter reads it once
  ** 'poll' says the job ended (never before: the host may still be running
  ** it), and lets go of it with 'drop_job', at any time, even while the
  ** job runs (a closed coroutine): the job is then stopped, and 'free_arg'
  ** frees 'arg' once both the job ended and it was dropped. On failure
  ** (-1) 'arg' is freed already. Optional (NULL, with 'drop_job'): the Lua
  ** layer then runs a job itself, with the lab acquired. */
  long (*submit_job)(Host *h, HostJobFn fn, void *arg, HostJobFree free_arg, Err *err);
  void (*drop_job)(Host *h, long ticket);

  /* Optional: run 'fn(lab, arg)' between two steps without waiting for
  ** it ('arg', at most HOST_POST_MAX bytes, is copied); an error it
  ** returns is the host's to report. NULL: the Lua layer holds the lab
  ** and runs 'fn' itself. */
  int (*post)(Host *h, HostPostFn fn, const void *arg, size_t n, Err *err);

  /* Nonzero when 'submit' and 'submit_job' complete the work before
  ** returning (headless):
  ** the Lua layer then never needs to yield. */
  int inline_steps;

  /* Optional (NULL: the Lua layer reads the lab through 'acquire'): the
  ** lab as last published, for the read-only calls, never waiting for a
  ** step. Calls 'fn' for run 'id' (every run in the lab's order when id is
  ** -1) and returns how many runs it saw ('fn' NULL: only count). 'fn' runs
  ** with the host's lock held: it copies what it needs and never raises a
  ** Lua error. Whatever
  ** changes the lab ('release', a finished ticket) is published before it
  ** is visible, so a read after 'r:set' or 'r:step' sees the change. */
  int (*view)(Host *h, int id, HostViewFn fn, void *ctx);

  /* Set by the Lua layer: called on the Lua thread after every step
  ** ('step' is the lab-wide step: the highest step of any run, or after
  ** steps of one run, that run's step). An inline host calls it after
  ** every step; a host that steps on another thread calls it from 'serve'
  ** for every step it handed over. */
  void (*after_step)(void *ctx, long step);
  void *after_step_ctx;

  /* Optional, for a host that steps on another thread. 'handover' (1):
  ** the Lua layer has on_step callbacks, so every step is to wait until
  ** 'serve', on the Lua thread, has called 'after_step' for it; 0: steps
  ** go on unwatched. 'serve' is called by the host's owner whenever it can
  ** (its loop), and by the Lua layer while it waits for steps without
  ** yielding. 'hold' (1) keeps every step request waiting: the scripts are
  ** paused. */
  void (*handover)(Host *h, int on);
  void (*serve)(Host *h);
  void (*hold)(Host *h, int on);

  /* Optional, for a host that steps on another thread: run 'fn(arg)' on
  ** the Lua thread and wait for it, from the thread that steps (a step's
  ** hooks are Lua functions). The Lua thread runs it in 'serve', and while
  ** it waits in 'acquire'. Returns what 'fn' returned, or -1 when the host
  ** gave up (it is quitting). NULL: steps run on the Lua thread, which
  ** calls 'fn' itself. */
  int (*call)(Host *h, HostCallFn fn, void *arg);

  /* Optional (NULL: nothing steps but the caller): whether run 'id' is
  ** being stepped by someone else, with the lab held by the caller: 1
  ** while a request for its steps (or every run's) is in flight, 2 while
  ** the host steps every unpaused run freely (the lab's run key), else 0. */
  int (*stepping)(Host *h, int id);

  void *ud;   /* the implementation's own state */

  /* Optional, set by whoever owns the lab: every answer lab.wait_key
  ** gives, on the Lua thread as its wait ends ('pressed' 1: the
  ** speaker's '.' ended it; 0: the time ran out, or no key could come).
  ** Returns the answer the script gets: the lab journals 'pressed' and
  ** returns it; a replay, where no key can come, returns the answer it
  ** recorded. */
  int (*wait_answer)(void *ctx, int pressed);
  void *wait_answer_ctx;
};

#endif
