/*
** watchdog.c -- the watchdog thread (see watchdog.h): a poll on the watch
** pipe, a look at the signals not taken yet after each wake-up, nudges
** while one waits, a deadline per end request, and the end.
*/
#include "trainer/watchdog.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/sig.h"
#include "lab/autosave.h"

#define NUDGE_EVERY 0.1       /* seconds between nudges while a signal waits */
#define TAKE_SLICE 0.2        /* seconds of one try at the lab, between two looks */
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
  /* The thread's own: */
  int seen;             /* ending signals not taken at the last look */
  unsigned bits;        /* which, since they were last all taken */
  int ending;           /* an end request came: a further signal is "again" */
  int again;            /* one did */
  double deadline;      /* when to end the process (0: no request) */
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

/* Whether 'n' untaken signals ('bits') ask tielab to end. */
static int end_request(const Watchdog *w, int n, unsigned bits) {
  if (n == 0) return 0;
  if (!w->o.lone_sigint_spared) return 1;
  return n >= 2 || (bits & ~SIG_BIT(SIGINT)) != 0;
}

/* After a wake-up: nudge the owner while a signal waits, and set (or
** bring forward) the deadline of an end request. */
static void look(Watchdog *w, double now) {
  unsigned bits;
  int n = sig_unanswered(&bits);
  if (n == 0) {   /* the owner took them */
    /* Ctrl-C alone stopped a script in the lab, which goes on; any other
    ** signal taken means the owner is ending, and the deadline stays, for
    ** an end that hangs (a finaliser that loops, a save that never ends). */
    if (w->o.lone_sigint_spared && !(w->bits & ~SIG_BIT(SIGINT))) w->deadline = 0;
    w->seen = 0;
    w->bits = 0;
    return;
  }
  w->bits |= bits;
  if (n > w->seen || now - w->last_nudge >= NUDGE_EVERY) {
    pthread_kill(w->owner, NUDGE);
    w->last_nudge = now;
  }
  if (n > w->seen && end_request(w, n, bits)) {
    w->again |= w->ending || n >= 2;
    double until = now + (w->again ? WATCHDOG_AGAIN : WATCHDOG_GRACE);
    if (!w->deadline || until < w->deadline) w->deadline = until;
    w->ending = 1;
  }
  w->seen = n;
}

/* Milliseconds poll may sleep: until the next nudge or the deadline. */
static int wait_ms(const Watchdog *w, double now) {
  double wait = w->seen > 0 ? NUDGE_EVERY : -1;
  if (w->deadline && (wait < 0 || w->deadline - now < wait)) wait = w->deadline - now;
  if (wait < 0) return w->deadline ? 0 : -1;
  return (int)(wait * 1000) + 1;
}

static int stopping(const Watchdog *w) {
  struct pollfd p = {.fd = w->stop[0], .events = POLLIN};
  return poll(&p, 1, 0) > 0;
}

/* The lab from the owner: waited for as long as a step, a call into the lab
** or the owner's own save takes, unless a further signal comes (then
** WATCHDOG_AGAIN more); NULL when it does not come by then, or when the
** owner stops the watchdog (it got to the end by itself). */
static Lab *take_lab(Watchdog *w) {
  double give_up = w->again ? clock_seconds() + WATCHDOG_AGAIN : 0;
  for (;;) {
    Lab *lab = w->o.take(w->o.ctx, TAKE_SLICE);
    if (lab || stopping(w)) return lab;
    double now = clock_seconds();
    int before = w->seen;
    drain(sig_watch_fd());
    look(w, now);
    if (w->seen > before && !give_up) give_up = now + WATCHDOG_AGAIN;
    if (give_up && now >= give_up) return NULL;
  }
}

/* Save what can be saved and end the process; returns only when the
** owner stopped the watchdog meanwhile. */
static void end_process(Watchdog *w) {
  char why[128];
  if (w->again) snprintf(why, sizeof why, "interrupted again");
  else snprintf(why, sizeof why, "interrupted: tielab did not end within %.0f s", WATCHDOG_GRACE);
  Lab *lab = take_lab(w);
  if (!lab && stopping(w)) return;
  if (w->o.leave) w->o.leave(w->o.ctx);
  if (lab) watchdog_save(lab, why);
  else dprintf(STDERR_FILENO, "tielab: %s; nothing more saved: the lab stayed busy (a step, a call into it or a save)\n", why);
  /* What the script printed and stdio still holds, unless the owner's
  ** thread is inside stdout (it may never leave). */
  if (ftrylockfile(stdout) == 0) {
    fflush_unlocked(stdout);
    funlockfile(stdout);
  }
  _exit(STATUS_INTERRUPTED);
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
    if (w->deadline && now >= w->deadline) end_process(w);
    if (stopping(w)) break;
  }
  return NULL;
}

Watchdog *watchdog_start(const WatchdogOwner *o, Err *err) {
  Watchdog *w = calloc(1, sizeof *w);
  if (!w) return err_set(err, "out of memory starting the watchdog"), NULL;
  w->o = *o;
  w->owner = pthread_self();
  if (pipe(w->stop) < 0) {
    free(w);
    return err_set(err, "cannot start the watchdog: %s", strerror(errno)), NULL;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = nudged;   /* no SA_RESTART: that is the point */
  sigemptyset(&sa.sa_mask);
  sigaction(NUDGE, &sa, NULL);
  arm(0);
  sig_set_arm_hook(arm);
  /* The thread takes none of the process's signals: they are the owner's. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&w->thread, NULL, watch, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
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

void watchdog_save(Lab *lab, const char *why) {
  if (lab_rank(lab) > 0) return;   /* rank 0 saves the job's runs, which every rank holds alike */
  if (lab_n_runs(lab) == 0) {
    dprintf(STDERR_FILENO, "tielab: %s\n", why);
    return;
  }
  char dir[4096];
  Err err;
  if (autosave_dir(dir, sizeof dir, &err) < 0) {
    dprintf(STDERR_FILENO, "tielab: %s; cannot save the runs: %s\n", why, err.msg);
    return;
  }
  int complete = autosave_begin(dir, lab, &err) == 0;   /* the manifest first: --resume knows what to expect */
  if (!complete) dprintf(STDERR_FILENO, "tielab: cannot save the run: %s\n", err.msg);
  for (int i = 0; i < lab_n_runs(lab); i++)
    if (autosave_run(dir, lab_run(lab, i), &err) < 0) {
      dprintf(STDERR_FILENO, "tielab: cannot save the run: %s\n", err.msg);
      complete = 0;
    }
  if (complete) autosave_prune(lab, dir);
  autosave_end(dir, complete);
  dprintf(STDERR_FILENO, "tielab: %s; saved in %s (tielab --resume reopens it)\n", why, dir);
}
