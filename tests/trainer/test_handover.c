/*
** test_handover.c -- the trainer hands every step to the Lua thread while
** on_step callbacks watch: it waits after each step until 'serve' ran the
** callbacks, which see every step once, in order, with the metrics of that
** step; a ticket reads as done only after its last step's callbacks; with
** the handover off it trains on unwatched; and held tickets wait.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "trainer/trainer.h"
#include "trainer_test.h"

#define STEPS 12

static void nap(void) { nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL); }

/* What the callbacks saw: each step given, and the run's step in the view then. */
typedef struct Watch {
  Host *h;
  long steps[4 * STEPS], viewed[4 * STEPS];
  int n;
} Watch;

static void read_step(void *ctx, const HostRunView *v) { *(long *)ctx = v->m->step; }

static void on_step(void *ctx, long step) {
  Watch *w = ctx;
  if (w->n >= 4 * STEPS) return;
  long viewed = -1;
  w->h->view(w->h, -1, read_step, &viewed);
  w->steps[w->n] = step;
  w->viewed[w->n++] = viewed;
}

/* Serve handovers until the ticket is done, at most 'secs'. */
static int serve_until_done(Host *h, long ticket, double secs, Err *err) {
  double end = now_s() + secs;
  int st;
  while ((st = h->poll(h, ticket, err)) == 0 && now_s() < end) {
    h->serve(h);
    nap();
  }
  return st;
}

/* The step the view shows once it stands still for a while. */
static long settled(Host *h) {
  long a = -1, b = -2;
  for (int i = 0; i < 200 && a != b; i++) {
    h->view(h, -1, read_step, &a);
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    h->view(h, -1, read_step, &b);
  }
  return b;
}

int main(void) {
  Err err = {{0}};
  Lab *lab;
  Host h;
  Trainer *t = tiny_trainer(&lab, &h, &err);
  if (!t) return tap_done();
  Watch w = {.h = &h};
  h.after_step = on_step;
  h.after_step_ctx = &w;
  ok(h.handover && h.serve && h.hold, "the trainer's host hands over steps, serves and holds them");

  /* Watched: every step waits for its callbacks. */
  h.handover(&h, 1);
  long k = h.submit(&h, -1, STEPS, &err), step = -1;
  double end = now_s() + 10;
  while (!trainer_handover(t, &step) && now_s() < end) nap();
  ok(k >= 0 && step == 1 && h.poll(&h, k, &err) == 0,
     "the first step waits for its callbacks (step %ld)", step);
  ok(settled(&h) == 1, "and nothing steps meanwhile");
  ok(serve_until_done(&h, k, 30, &err) == 1, "served, the ticket of %d steps ends", STEPS);
  int in_order = w.n == STEPS;
  for (int i = 0; in_order && i < STEPS; i++) in_order = w.steps[i] == i + 1 && w.viewed[i] == i + 1;
  ok(in_order, "the callbacks saw every step once, in order, each with its own metrics (%d calls)", w.n);

  /* The last step's callbacks come before the ticket reads as done. */
  w.n = 0;
  k = h.submit(&h, -1, 1, &err);
  end = now_s() + 10;
  while (!trainer_handover(t, &step) && now_s() < end) nap();
  ok(h.poll(&h, k, &err) == 0, "a ticket whose last step is not served yet still waits");
  h.serve(&h);
  ok(h.poll(&h, k, &err) == 1 && w.n == 1 && w.steps[0] == STEPS + 1, "served, it is done (step %ld)",
     w.n ? w.steps[0] : -1L);

  /* Unwatched: steps go on without anyone serving them. */
  h.handover(&h, 0);
  w.n = 0;
  k = h.submit(&h, -1, STEPS, &err);
  end = now_s() + 30;
  int st;
  while ((st = h.poll(&h, k, &err)) == 0 && now_s() < end) nap();
  ok(st == 1 && w.n == 0 && trainer_handover(t, &step) == 0, "with the handover off, a ticket ends unserved");

  /* Held: tickets wait until released. */
  h.hold(&h, 1);
  long before = settled(&h);
  k = h.submit(&h, -1, 3, &err);
  nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
  ok(h.poll(&h, k, &err) == 0 && settled(&h) == before, "a held ticket waits (step %ld)", before);
  TrainerSnap *snap = trainer_snap_new();
  trainer_take(t, &snap);
  ok(snap->holding && snap->owed == 3, "the snapshot says so: holding, 3 steps owed (%ld)", snap->owed);
  h.hold(&h, 0);
  end = now_s() + 30;
  while ((st = h.poll(&h, k, &err)) == 0 && now_s() < end) nap();
  ok(st == 1 && settled(&h) == before + 3, "released, it is served");

  trainer_free(t);
  trainer_snap_free(snap);
  lab_free(lab);
  return tap_done();
}
