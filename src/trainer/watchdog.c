/*
** watchdog.c -- the watchdog thread (see watchdog.h): a poll on the watch
** pipe, a look at the signals not taken yet after each wake-up, nudges
** while one waits, a deadline per end request, and the end.
*/
#include "trainer/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sig.h"
#include "lab/autosave.h"

#define NUDGE_EVERY 0.1       /* seconds between nudges while a signal waits */
#define TAKE_SLICE 0.2        /* seconds of one try at the lab, between two looks */
#define INSIST 3              /* further signals after an end request that end busy work too */
#define STATUS_INTERRUPTED 130

/* The nudge: a real-time signal nobody else sends, whose handler does
** nothing: all it does is make a system call it interrupts fail with
** EINTR (it is installed without SA_RESTART). The lowest real-time
** signals are the favourites of other libraries, hence the offset. */
#define NUDGE (SIGRTMIN + 4)

struct Watchdog {
  WatchdogOwner o;
  pthread_t thread, owner;
  int stop[2];          /* watchdog_stop writes a byte */
  /* The owner's, read by the thread: */
  atomic_int busy;      /* inside work that ends by itself (watchdog_busy) */
  atomic_int saved;     /* its runs are saved ... */
  atomic_int status;    /* ... and it will end with this status */
  /* The thread's own: */
  int untaken;          /* ending signals not taken at the last look */
  unsigned counted;     /* sig_count() at the last look */
  int ending;           /* an end request came: a further signal is "again" */
  int again;            /* one did */
  double deadline;      /* when to end the process (0: no request) */
  unsigned first;       /* sig_count() at the first end request */
  int deferred;         /* the deadline found the owner busy, and said so */
  double last_nudge;
};

static void nudged(int s) { (void)s; }

/* The arm hook of sig.h, on the owner's thread: the nudge reaches it only
** while Lua runs there, never in the middle of the loop's own calls. */
static void arm(int on) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, NUDGE);
  pthread_sigmask(on ? SIG_UNBLOCK : SIG_BLOCK, &set, NULL);
}

static void drain(int fd) {
  char buf[64];
  while (fd >= 0 && read(fd, buf, sizeof buf) > 0) {
  }
}

/* Whether the signals so far ask tielab to end: SIGTERM or SIGHUP, taken
** or not (the owner that takes one is ending: that end is timed too), and
** SIGINT, except in the lab, where a lone Ctrl-C is the script's and two
** not taken yet are one that the lab cannot get to. */
static int end_request(const Watchdog *w, int untaken) {
  if (sig_seen() & ~SIG_BIT(SIGINT)) return 1;
  return !w->o.lone_sigint_spared || untaken >= 2;
}

/* After a wake-up: nudge the owner while a signal waits, and set (or
** bring forward) the deadline of an end request. */
static void look(Watchdog *w, double now) {
  int untaken = sig_unanswered(NULL);
  unsigned count = sig_count(), fresh = count - w->counted;
  w->counted = count;
  w->untaken = untaken;
  if (untaken > 0 && (fresh || now - w->last_nudge >= NUDGE_EVERY)) {
    pthread_kill(w->owner, NUDGE);
    w->last_nudge = now;
  }
  if (!end_request(w, untaken)) {
    /* Ctrl-C alone (or twice, taken together) stopped a script in the lab,
    ** which goes on: no deadline. */
    if (untaken == 0) w->deadline = 0, w->ending = w->again = w->deferred = 0;
    return;
  }
  if (!fresh) return;
  if (!w->ending) w->first = count - fresh + 1;
  w->again |= w->ending || fresh >= 2 || untaken >= 2;
  double until = now + (w->again ? WATCHDOG_AGAIN : WATCHDOG_GRACE);
  if (!w->deadline || until < w->deadline) w->deadline = until;
  w->ending = 1;
}

/* Whether the user insists: INSIST signals after the first end request
** end even work that should end by itself and does not (a step waiting
** for a peer that hangs, a save to a file system that does not answer). */
static int insisted(const Watchdog *w) { return w->ending && sig_count() - w->first >= INSIST; }

/* Whether the owner is in work that ends by itself, which the deadline
** waits for. */
static int busy(Watchdog *w) { return atomic_load(&w->busy) > 0 && !insisted(w); }

/* Milliseconds poll may sleep: until the next nudge or the deadline (while
** the owner is busy past it, a look now and then). */
static int wait_ms(Watchdog *w, double now) {
  if (w->untaken > 0 || (w->deadline && now >= w->deadline)) return (int)(NUDGE_EVERY * 1000);
  if (w->deadline) return (int)((w->deadline - now) * 1000) + 1;
  return -1;
}

static int stopping(const Watchdog *w) {
  struct pollfd p = {.fd = w->stop[0], .events = POLLIN};
  return poll(&p, 1, 0) > 0;
}

/* The lab from the owner, waited for as long as it takes, unless a further
** signal comes while the owner is in no work that ends by itself (then it
** is stuck where it holds the lab); NULL then, or when the owner stops the
** watchdog (it got to the end by itself). */
static Lab *take_lab(Watchdog *w) {
  unsigned asked = sig_count();
  for (;;) {
    Lab *lab = w->o.take(w->o.ctx, TAKE_SLICE);
    if (lab || stopping(w)) return lab;
    drain(sig_watch_fd());
    look(w, clock_seconds());
    /* The lab took the Ctrl-Cs and goes on, or saved by itself meanwhile. */
    if (!w->deadline || atomic_load(&w->saved)) return NULL;
    if (busy(w)) asked = sig_count();
    else if (sig_count() != asked) return NULL;
  }
}

/* What a save says, one line per run it could not save. */
typedef struct Said {
  char *buf;
  size_t cap, n;
} Said;

static void said_failure(void *ctx, Run *r, const Err *failed) {
  Said *s = ctx;
  if (failed && s->n < s->cap)
    s->n += (size_t)snprintf(s->buf + s->n, s->cap - s->n, "tielab: cannot save the run: %s\n", failed->msg);
}

/* Save every run where --resume finds them; what to say in 'said'. */
static void autosave_quietly(Lab *lab, const char *why, char *said, size_t cap) {
  said[0] = 0;
  if (lab_rank(lab) > 0) return;   /* rank 0 saves the job's runs, which every rank holds alike */
  if (lab_n_runs(lab) == 0) {
    snprintf(said, cap, "tielab: %s\n", why);
    return;
  }
  char dir[4096];
  Err err;
  Said s = {said, cap, 0};
  autosave_lab(lab, dir, sizeof dir, said_failure, &s, &err);
  if (!dir[0]) snprintf(said, cap, "tielab: %s; cannot save the runs: %s\n", why, err.msg);
  else if (s.n < cap) snprintf(said + s.n, cap - s.n, "tielab: %s; saved in %s (tielab --resume reopens it)\n", why, dir);
}

/* The owner saved its runs and then hung (a finaliser that loops as Lua
** closes): end as it would have, without saving again. */
static void end_saved(Watchdog *w) {
  if (w->o.leave) w->o.leave(w->o.ctx);
  dprintf(STDERR_FILENO, "tielab: the runs were saved; ended as tielab did not end within %.0f s\n",
          w->again ? WATCHDOG_AGAIN : WATCHDOG_GRACE);
  _exit(atomic_load(&w->status));
}

/* Save what can be saved and end the process; returns only when the
** owner stopped the watchdog meanwhile. The runs are saved before the
** terminal is given back: a terminal that blocks (a dead link, XOFF) may be
** why the owner is stuck. */
static void end_process(Watchdog *w) {
  if (atomic_load(&w->saved)) end_saved(w);
  char why[128];
  if (w->again) snprintf(why, sizeof why, "interrupted again");
  else snprintf(why, sizeof why, "interrupted: tielab did not end within %.0f s", WATCHDOG_GRACE);
  Lab *lab = take_lab(w);
  if (!lab && (stopping(w) || !w->deadline)) return;
  if (atomic_load(&w->saved)) end_saved(w);   /* the lab is held: nothing steps after that save */
  char said[4096 + 256];
  if (lab) autosave_quietly(lab, why, said, sizeof said);
  else snprintf(said, sizeof said, "tielab: %s; nothing more saved: the lab stayed busy (a call into it, held)\n", why);
  if (w->o.leave) w->o.leave(w->o.ctx);
  dprintf(STDERR_FILENO, "%s", said);
  /* What the script printed and stdio still holds, unless the owner's
  ** thread is inside stdout (it may never leave). */
  if (ftrylockfile(stdout) == 0) {
    fflush_unlocked(stdout);
    funlockfile(stdout);
  }
  _exit(STATUS_INTERRUPTED);
}

/* Work that ends by itself (a step, the owner's save) is waited for: the
** owner then gets WATCHDOG_AGAIN to take the signal and end as it would. A
** job is asked to stop at its next report, and the user is told, once. */
static void defer(Watchdog *w, double now) {
  w->deadline = now + WATCHDOG_AGAIN;
  if (w->deferred) return;
  w->deferred = 1;
  if (w->o.hurry) w->o.hurry(w->o.ctx);
  dprintf(STDERR_FILENO, "tielab: waiting for the step or save in progress to end (%d more signals end tielab at once)\n",
          INSIST - (int)(sig_count() - w->first));
}

static void *watch(void *arg) {
  Watchdog *w = arg;
  for (;;) {
    struct pollfd fds[2] = {{.fd = sig_watch_fd(), .events = POLLIN}, {.fd = w->stop[0], .events = POLLIN}};
    poll(fds, 2, wait_ms(w, clock_seconds()));
    if (fds[1].revents) break;
    drain(sig_watch_fd());
    double now = clock_seconds();
    look(w, now);
    if (w->deadline && now >= w->deadline) {
      if (busy(w)) defer(w, now);
      else end_process(w);
    }
    if (stopping(w)) break;
  }
  return NULL;
}

Watchdog *watchdog_start(const WatchdogOwner *o, Err *err) {
  Watchdog *w = calloc(1, sizeof *w);
  if (!w) return err_set(err, "out of memory starting the watchdog"), NULL;
  w->o = *o;
  w->owner = pthread_self();
  w->counted = sig_count();
  if (pipe(w->stop) < 0) {
    free(w);
    return err_set(err, "cannot start the watchdog: %s", strerror(errno)), NULL;
  }
  for (int i = 0; i < 2; i++) fcntl(w->stop[i], F_SETFD, FD_CLOEXEC);   /* never a command's (os.execute) */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = nudged;   /* no SA_RESTART: that is the point */
  sigemptyset(&sa.sa_mask);
  sigaction(NUDGE, &sa, NULL);
  arm(0);
  sig_set_arm_hook(arm);
  /* The thread takes none of the process's signals: they are the owner's. */
  int rc = sig_thread_start(&w->thread, watch, w);
  if (rc != 0) {
    sig_set_arm_hook(NULL);
    close(w->stop[0]);
    close(w->stop[1]);
    free(w);
    return err_set(err, "cannot start the watchdog thread: %s", strerror(rc)), NULL;
  }
  return w;
}

void watchdog_stop(Watchdog *w) {
  if (!w) return;
  ssize_t n = write(w->stop[1], "", 1);
  (void)n;
  pthread_join(w->thread, NULL);
  sig_set_arm_hook(NULL);
  close(w->stop[0]);
  close(w->stop[1]);
  free(w);
}

void watchdog_busy(Watchdog *w, int on) {
  if (w) atomic_fetch_add(&w->busy, on ? 1 : -1);
}

void watchdog_saved(Watchdog *w, int status) {
  if (!w) return;
  atomic_store(&w->status, status);
  atomic_store(&w->saved, 1);
}

void watchdog_save(Lab *lab, const char *why) {
  char said[4096 + 512];
  autosave_quietly(lab, why, said, sizeof said);
  dprintf(STDERR_FILENO, "%s", said);
}
