/*
** test_trainer.c -- the training thread: tickets are served and counted,
** failures and cancels reach the poller, an acquirer gets the lab between
** two steps and nothing steps while it holds it, commands run, snapshots
** carry metrics and histories, the wake descriptor fires, and the thread
** stops promptly.
*/
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "live_set.h"
#include "tap.h"
#include "trainer/trainer.h"
#include "trainer_test.h"

static void nap(void) { nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL); }

/* Poll a ticket until it is no longer waiting, at most 'secs'. */
static int wait_ticket(Host *h, long ticket, double secs, Err *err) {
  double end = now_s() + secs;
  int st;
  while ((st = h->poll(h, ticket, err)) == 0 && now_s() < end) nap();
  return st;
}

/* Take snapshots until 'pred' holds, at most 'secs'. */
static int wait_snap(Trainer *t, TrainerSnap **s, int (*pred)(const TrainerSnap *), double secs) {
  double end = now_s() + secs;
  do {
    trainer_take(t, s);
    if (pred(*s)) return 1;
    nap();
  } while (now_s() < end);
  return 0;
}

static int five_steps(const TrainerSnap *s) { return s->n_runs == 1 && s->runs[0].m.step >= 5; }
static int scale_two(const TrainerSnap *s) { return s->n_runs == 1 && s->runs[0].m.in_scale == 2; }
static int sample_current(const TrainerSnap *s) {
  return s->n_runs == 1 && s->runs[0].sample_step == s->runs[0].m.step && s->runs[0].m.step > 5;
}
static long seen_seq;
static int new_message(const TrainerSnap *s) { return s->msg_seq > seen_seq; }

static int set_in_scale(Lab *lab, const void *arg, Err *err) {
  return live_number(lab_run(lab, 0), "in_scale", *(const double *)arg, err);
}

/* A command that holds the trainer as long as a slow step would. */
static int slow_cmd(Lab *lab, const void *arg, Err *err) {
  (void)lab, (void)arg, (void)err;
  nanosleep(&(struct timespec){1, 0}, NULL);
  return 0;
}

typedef struct Seen {
  long step;
  double in_scale;
  long points;
} Seen;

static void read_view(void *ctx, const HostRunView *v) {
  Seen *s = ctx;
  s->step = v->m->step;
  s->in_scale = v->o->in_scale;
  int n = 0;
  const HistBucket *b = v->hist ? history_series(v->hist, "loss", &n) : NULL;
  s->points = 0;
  for (int i = 0; b && i < n; i++) s->points += b[i].count;
}

static int fail_cmd(Lab *lab, const void *arg, Err *err) {
  (void)lab, (void)arg;
  return err_set(err, "this command fails");
}

int main(void) {
  Err err = {{0}};
  Lab *lab = lab_new(&err);
  Run *run = lab ? tiny_run(lab, &err) : NULL;
  if (!run) {
    diag("cannot make a run: %s", err.msg);
    ok(0, "a lab with one tiny run");
    return tap_done();
  }
  int id = run_id(run);

  Trainer *t = trainer_new(lab, &err);
  ok(t != NULL, "the trainer starts (%s)", t ? "" : err.msg);
  if (!t) return tap_done();
  Host h;
  trainer_host(t, &h);
  TrainerSnap *snap = trainer_snap_new();
  ok(trainer_take(t, &snap) == 1 && snap->n_runs == 1 && snap->runs[0].id == id && snap->runs[0].m.step == 0,
     "the first snapshot shows the run at step 0");
  ok(!trainer_running(t) && h.inline_steps == 0, "it starts paused, and its host does not step inline");

  /* Tickets. */
  long k = h.submit(&h, id, 5, &err);
  ok(k >= 0 && wait_ticket(&h, k, 20, &err) == 1, "a ticket of 5 steps is served");
  ok(wait_snap(t, &snap, five_steps, 5) && snap->runs[0].m.step == 5, "the snapshot then shows step 5 (%ld)",
     snap->runs[0].m.step);
  int n = 0;
  const HistBucket *b = snap->runs[0].hist ? history_series(snap->runs[0].hist, "loss", &n) : NULL;
  long points = 0;
  for (int i = 0; b && i < n; i++) points += b[i].count;
  ok(b && points == 5, "its copy of the history holds the 5 losses (%ld)", points);
  ok(snap->runs[0].sample_step >= 0 && snap->runs[0].sample_len > 0 &&
         snap->runs[0].sample_len <= sizeof snap->runs[0].sample,
     "and a text sample, its bytes counted (%zu)", snap->runs[0].sample_len);

  k = h.submit(&h, 999, 1, &err);
  err.msg[0] = '\0';
  ok(k >= 0 && wait_ticket(&h, k, 5, &err) == -1 && strstr(err.msg, "removed"),
     "a ticket for a run that is not there fails with a reason (%s)", err.msg);

  k = h.submit(&h, -1, 1000000, &err);
  h.cancel(&h);
  err.msg[0] = '\0';
  ok(wait_ticket(&h, k, 5, &err) == -1 && strstr(err.msg, "interrupted"), "cancel stops a ticket in flight (%s)",
     err.msg);

  /* Continuous training, and the lab held between two steps. */
  trainer_set_running(t, 1);
  double end = now_s() + 10;
  long before = 5;
  while (now_s() < end) {
    trainer_take(t, &snap);
    if (snap->runs[0].m.step > before + 3) break;
    nap();
  }
  ok(snap->runs[0].m.step > before + 3, "running: steps go on by themselves (%ld)", snap->runs[0].m.step);
  Lab *held = trainer_acquire(t);
  long s1 = run_metrics(lab_run(held, 0))->step;
  nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
  long s2 = run_metrics(lab_run(held, 0))->step;
  Lab *again = trainer_acquire(t);   /* nests */
  trainer_release(t);
  long s3 = run_metrics(lab_run(held, 0))->step;
  trainer_release(t);
  ok(held == lab && again == lab && s1 == s2 && s2 == s3, "acquired, the lab does not step (%ld %ld %ld)", s1, s2, s3);
  end = now_s() + 10;
  while (now_s() < end && run_metrics(run)->step == s3) nap();
  ok(run_metrics(run)->step > s3, "released, training goes on");
  trainer_set_running(t, 0);
  /* Samples are taken a few seconds apart while training; a pause must
  ** not leave the screen with text of an older step. */
  ok(wait_snap(t, &snap, sample_current, 2), "paused, the text sample is of the step training stopped at (%ld, %ld)",
     snap->runs[0].sample_step, snap->runs[0].m.step);
  /* The same when a holder of the lab stepped it, paused. */
  Lab *mine = trainer_acquire(t);
  Err step_err = {{0}};
  int stepped = run_step(lab_run(mine, 0), &step_err) == 0 && run_step(lab_run(mine, 0), &step_err) == 0;
  trainer_release(t);
  ok(stepped && wait_snap(t, &snap, sample_current, 2),
     "stepped by a holder of the lab, paused: the sample follows its step once released (%ld, %ld)",
     snap->runs[0].sample_step, snap->runs[0].m.step);

  /* Commands, and their errors as messages. */
  double two = 2;
  ok(trainer_post(t, set_in_scale, &two, sizeof two, &err) == 0 && wait_snap(t, &snap, scale_two, 5),
     "a queued command changes the run between steps");
  seen_seq = snap->msg_seq;
  ok(trainer_post(t, fail_cmd, NULL, 0, &err) == 0 && wait_snap(t, &snap, new_message, 5) &&
         strcmp(snap->msg, "this command fails") == 0,
     "a command's error becomes the snapshot's message");
  ok(trainer_post(t, fail_cmd, &two, TRAINER_ARG_MAX + 1, &err) < 0, "a command argument too large is refused");

  /* Reading never waits for a step: the view serves the newest publication. */
  ok(h.view != NULL, "the host has a view");
  Seen seen = {0};
  k = h.submit(&h, id, 3, &err);
  ok(wait_ticket(&h, k, 20, &err) == 1 && h.view(&h, id, read_view, &seen) == 1 && seen.step == run_metrics(run)->step &&
         seen.points == seen.step,
     "a finished ticket is in the view at once, history too (step %ld, %ld losses)", seen.step, seen.points);
  trainer_take(t, &snap);   /* the newest is now the one taken */
  seen.step = -1;
  ok(h.view(&h, id, read_view, &seen) == 1 && seen.step == run_metrics(run)->step, "and stays there after a take");
  Lab *lab2 = trainer_acquire(t);
  live_number(lab_run(lab2, 0), "in_scale", 3, &err);
  trainer_release(t);
  ok(h.view(&h, id, read_view, &seen) == 1 && seen.in_scale == 3, "a change made holding the lab shows on release");
  ok(h.view(&h, 999, read_view, &seen) == 0 && h.view(&h, -1, NULL, NULL) == 1, "the view counts the runs it has");
  ok(trainer_post(t, slow_cmd, NULL, 0, &err) == 0, "a slow command is queued");
  nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);   /* it is running now */
  double r0 = now_s();
  int got = h.view(&h, id, read_view, &seen);
  double waited = now_s() - r0;
  ok(got == 1 && waited < 0.1, "reading while the trainer is busy returns at once (%.3f s)", waited);
  r0 = now_s();
  trainer_acquire(t);
  waited = now_s() - r0;
  trainer_release(t);
  ok(waited > 0.3, "while acquiring waits for it (%.3f s)", waited);

  /* The wake descriptor: readable after a publication, once taken empty. */
  trainer_take(t, &snap);
  k = h.submit(&h, id, 1, &err);
  struct pollfd pfd = {.fd = trainer_wake_fd(t), .events = POLLIN};
  ok(poll(&pfd, 1, 5000) == 1, "a finished ticket wakes the UI's poll");
  wait_ticket(&h, k, 5, &err);
  nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);   /* its last publication and wake-up */
  trainer_take(t, &snap);
  ok(poll(&pfd, 1, 0) == 0, "after a take nothing is pending");

  /* Stopping while training runs flat out. */
  trainer_set_running(t, 1);
  nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
  double t0 = now_s();
  trainer_free(t);
  ok(now_s() - t0 < 5, "trainer_free returns promptly while running (%.3f s)", now_s() - t0);
  long s4 = run_metrics(run)->step;
  nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
  ok(run_metrics(run)->step == s4, "and nothing steps after it");

  trainer_snap_free(snap);
  lab_free(lab);
  return tap_done();
}
