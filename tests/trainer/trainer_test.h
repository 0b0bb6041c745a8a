/*
** trainer_test.h -- what the trainer's tests share: a monotonic clock for
** their deadlines, and a run small enough, measuring neither the lens nor
** the alignment, that its steps take milliseconds, well within them, and
** a trainer on a lab with that run.
*/
#ifndef TIELAB_TRAINER_TEST_H
#define TIELAB_TRAINER_TEST_H

#include <time.h>

#include "tap.h"
#include "trainer/trainer.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* tiny_run: that run added to 'lab', or NULL with 'err' set. */
static Run *tiny_run(Lab *lab, Err *err) {
  RunOptions o;
  run_options_default(&o);
  const char *set[][2] = {{"vocab", "256"}, {"dim", "32"},  {"layers", "1"},     {"heads", "2"},
                          {"ctx", "16"},    {"batch", "2"}, {"lens_every", "0"}, {"align_every", "0"}};
  for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
    if (run_options_set_text(&o, set[i][0], set[i][1], err) != 0) return NULL;
  return lab_add_run(lab, &o, err);
}

/* tiny_trainer: a lab with that run and a trainer on it, its Host in
** 'h', or NULL (reported as a failed test). */
static inline Trainer *tiny_trainer(Lab **lab, Host *h, Err *err) {
  *lab = lab_new(err);
  Run *run = *lab ? tiny_run(*lab, err) : NULL;
  Trainer *t = run ? trainer_new(*lab, err) : NULL;
  if (!t) {
    diag("cannot start: %s", err->msg);
    ok(0, "a trainer on a lab with one tiny run");
    return NULL;
  }
  trainer_host(t, h);
  return t;
}

#endif
