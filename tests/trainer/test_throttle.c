/*
** test_throttle.c -- the trainer's throttle (ui.speed, keys [ and ]):
** nonsense paces are clamped or mean flat out, and a slot of the pace is
** spent only on a step taken, never on a publication while a step waits
** for its on_step callbacks, so watching a slowed lab costs no extra wait.
**
** The one timed check has a margin of seconds on a pace of four: a step
** that comes at once against one that waits for the next slot.
*/
#include <math.h>
#include <time.h>

#include "tap.h"
#include "trainer/trainer.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(double s) { nanosleep(&(struct timespec){0, (long)(s * 1e9)}, NULL); }

static Trainer *tiny_trainer(Lab **lab, Err *err) {
  RunOptions o;
  run_options_default(&o);
  const char *set[][2] = {{"vocab", "256"}, {"dim", "16"},  {"layers", "1"},     {"heads", "1"},
                          {"ctx", "8"},     {"batch", "1"}, {"lens_every", "0"}, {"align_every", "0"}};
  *lab = lab_new(err);
  int fine = *lab != NULL;
  for (size_t i = 0; fine && i < sizeof set / sizeof set[0]; i++)
    fine = run_options_set_text(&o, set[i][0], set[i][1], err) == 0;
  return fine && lab_add_run(*lab, &o, err) ? trainer_new(*lab, err) : NULL;
}

/* The next step handed over, at most 'secs' from now; its sequence. */
static long next_handover(Trainer *t, long after, long *step, double secs) {
  double end = now_s() + secs;
  long seq;
  while ((seq = trainer_handover(t, step)) <= after && now_s() < end) nap(0.005);
  return seq > after ? seq : 0;
}

int main(void) {
  Err err = {{0}};
  Lab *lab = NULL;
  Trainer *t = tiny_trainer(&lab, &err);
  if (!t) {
    diag("cannot start: %s", err.msg);
    ok(0, "a trainer on a lab with one tiny run");
    return tap_done();
  }
  static const struct {
    double asked, got;
    const char *what;
  } paces[] = {{0, 0, "0 is flat out"},
               {-3, 0, "a negative pace is flat out"},
               {NAN, 0, "NaN is flat out"},
               {1e-300, TRAINER_SPEED_MIN, "a pace of nearly nothing is the slowest one"},
               {1e300, 1e9, "a pace beyond any step is capped"},
               {2.5, 2.5, "a pace is kept as asked"}};
  for (size_t i = 0; i < sizeof paces / sizeof paces[0]; i++) {
    trainer_set_speed(t, paces[i].asked);
    ok(trainer_speed(t) == paces[i].got, "%s (%g -> %g)", paces[i].what, paces[i].asked, trainer_speed(t));
  }

  /* A pace of 0.25 steps a second: one slot every 4 s. The first step is
  ** handed over; while it waits for its callbacks, a new ticket asks for
  ** a publication. Released after its slot has passed, the next step must
  ** come at once: had the publication spent the slot, it would wait 4 s. */
  Host h;
  trainer_host(t, &h);
  trainer_set_speed(t, 0.25);
  h.handover(&h, 1);
  long step = -1, k = h.submit(&h, -1, 2, &err);
  long seq = next_handover(t, 0, &step, 10);
  ok(k >= 0 && seq > 0 && step == 1, "the first step comes at once and waits for its callbacks (step %ld)", step);
  double first = now_s();
  nap(1);
  long k2 = h.submit(&h, -1, 1, &err);   /* a publication while the step waits */
  while (now_s() < first + 4.5) nap(0.05);
  trainer_handover_done(t, seq);
  double released = now_s();
  long seq2 = next_handover(t, seq, &step, 10);
  double waited = now_s() - released;
  ok(k2 >= 0 && seq2 > 0 && step == 2 && waited < 2.5,
     "the next step, its slot passed, comes at once (%.2f s after the release; a lost slot waits ~3.5 s)", waited);
  if (seq2 > 0) trainer_handover_done(t, seq2);
  h.handover(&h, 0);
  trainer_set_speed(t, 0);
  trainer_free(t);
  lab_free(lab);
  return tap_done();
}
