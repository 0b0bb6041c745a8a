/*
** test_schedule.c -- the learning-rate schedule alone: the warmup, constant,
** cosine and linear decay at chosen steps, the floor after the horizon, the
** embeddings' warmup factor, a warmup from a fraction of lr (OLMo's), and
** the horizon refused when it does not lie after the warmup or the floor
** when it lies above the peak.
*/
#include <math.h>
#include <string.h>

#include "core/schedule.h"
#include "tap.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

static void test_warmup(void) {
  Schedule s = {.kind = SCHEDULE_CONSTANT, .lr = 3e-4, .warmup = 1000};
  ok(near(schedule_lr(&s, 1), 3e-4 / 1000), "warmup step 1: lr/1000 (%.3g)", schedule_lr(&s, 1));
  ok(near(schedule_lr(&s, 500), 1.5e-4), "warmup step w/2: lr/2 (%.3g)", schedule_lr(&s, 500));
  ok(schedule_lr(&s, 1000) == 3e-4, "warmup step w: lr (%.3g)", schedule_lr(&s, 1000));
  ok(schedule_lr(&s, 123456) == 3e-4, "constant after the warmup");
  Schedule none = {.kind = SCHEDULE_CONSTANT, .lr = 1e-3};
  ok(schedule_lr(&none, 1) == 1e-3 && schedule_lr(&none, 10) == 1e-3, "no warmup: lr from step 1, exactly");
}

static void test_cosine(void) {
  Schedule s = {.kind = SCHEDULE_COSINE, .lr = 3e-4, .lr_min = 3e-5, .warmup = 1000, .decay_steps = 10000};
  double mid = schedule_lr(&s, 5500);
  ok(near(mid, (3e-4 + 3e-5) / 2), "cosine midpoint: (lr + lr_min)/2 (%.6g)", mid);
  ok(near(schedule_lr(&s, 1000), 3e-4), "cosine starts at lr after the warmup");
  ok(near(schedule_lr(&s, 500), 1.5e-4), "cosine warms up linearly first (%.3g)", schedule_lr(&s, 500));
  double q = schedule_lr(&s, 1000 + 9000 / 4), want = 3e-5 + (3e-4 - 3e-5) * 0.5 * (1 + cos(M_PI / 4));
  ok(near(q, want), "cosine a quarter in: %.6g (want %.6g)", q, want);
  ok(schedule_lr(&s, 10000) == 3e-5 && schedule_lr(&s, 20000) == 3e-5, "lr_min from decay_steps on");
  ok(schedule_lr(&s, 9999) > 3e-5, "just above lr_min before the horizon");
}

static void test_linear(void) {
  Schedule s = {.kind = SCHEDULE_LINEAR, .lr = 1e-3, .lr_min = 0, .warmup = 10, .decay_steps = 110};
  ok(near(schedule_lr(&s, 60), 5e-4), "linear halfway: lr/2 (%.3g)", schedule_lr(&s, 60));
  ok(near(schedule_lr(&s, 35), 7.5e-4), "linear a quarter in: 3/4 lr (%.3g)", schedule_lr(&s, 35));
  ok(schedule_lr(&s, 110) == 0 && schedule_lr(&s, 500) == 0, "linear reaches lr_min at decay_steps");
  ok(near(schedule_lr(&s, 5), 5e-4), "linear warms up first");
}

static void test_emb_warmup(void) {
  ok(schedule_warmup_factor(0, 1) == 1.0, "no embedding warmup: factor 1");
  ok(near(schedule_warmup_factor(100, 1), 0.01), "embedding warmup step 1: 1/100");
  ok(near(schedule_warmup_factor(100, 50), 0.5), "embedding warmup step 50: 1/2");
  ok(schedule_warmup_factor(100, 100) == 1.0 && schedule_warmup_factor(100, 1000) == 1.0,
     "embedding warmup done: factor 1");
}

static void test_check(void) {
  Err err;
  Schedule s = {.kind = SCHEDULE_COSINE, .lr = 1e-3, .warmup = 100, .decay_steps = 100};
  ok(schedule_check(&s, &err) < 0 && strstr(err.msg, "decay_steps") && strstr(err.msg, "warmup"),
     "cosine with decay_steps == warmup refused: %s", err.msg);
  s.kind = SCHEDULE_LINEAR;
  s.decay_steps = 0;
  ok(schedule_check(&s, &err) < 0, "linear with decay_steps below warmup refused: %s", err.msg);
  s.kind = SCHEDULE_CONSTANT;
  ok(schedule_check(&s, &err) == 0, "constant needs no horizon");
  s.kind = SCHEDULE_COSINE;
  s.decay_steps = 101;
  ok(schedule_check(&s, &err) == 0, "cosine with the horizon after the warmup");
  s.lr_min = 2e-3;
  ok(schedule_check(&s, &err) < 0 && strstr(err.msg, "'lr_min'") && strstr(err.msg, "'lr'"),
     "cosine with lr_min above lr refused: %s", err.msg);
  s.kind = SCHEDULE_LINEAR;
  ok(schedule_check(&s, &err) < 0, "linear with lr_min above lr refused");
  s.kind = SCHEDULE_CONSTANT;
  ok(schedule_check(&s, &err) == 0, "constant never reaches lr_min: not refused");
  s.kind = SCHEDULE_COSINE;
  s.lr_min = 1e-3;
  ok(schedule_check(&s, &err) == 0, "lr_min equal to lr: a flat decay, accepted");
  ok(strcmp(schedule_names[SCHEDULE_COSINE], "cosine") == 0 && schedule_names[3] == NULL, "kinds are named");
}

/* OLMo's cosine_with_warmup, lr = 1e-3: warmup from 0.1*lr, floor 0.1*lr. */
static void test_warmup_start(void) {
  Schedule s = {.kind = SCHEDULE_COSINE, .lr = 1e-3, .lr_min = 1e-4, .warmup = 100, .decay_steps = 1100,
                .warmup_start = 0.1};
  double olmo1 = 1e-4 + (1e-3 - 1e-4) * 1 / 100.0, olmo50 = 1e-4 + (1e-3 - 1e-4) * 0.5;
  ok(near(schedule_lr(&s, 1), olmo1), "warmup_start 0.1, step 1: %.6g (want %.6g)", schedule_lr(&s, 1), olmo1);
  ok(near(schedule_lr(&s, 50), olmo50), "warmup_start 0.1, step w/2: %.6g (want %.6g)", schedule_lr(&s, 50),
     olmo50);
  ok(near(schedule_lr(&s, 100), 1e-3), "warmup_start 0.1 reaches lr at the end of the warmup");
  ok(schedule_lr(&s, 1100) == 1e-4, "and decays to its floor");
  Schedule zero = s;
  zero.warmup_start = 0;
  int same = 1;
  for (long t = 1; t < 100; t++) same &= schedule_lr(&zero, t) == 1e-3 * ((double)t / 100.0);
  ok(same, "warmup_start 0 is lr * s/w bit for bit");
}

int main(void) {
  test_warmup_start();
  test_warmup();
  test_cosine();
  test_linear();
  test_emb_warmup();
  test_check();
  return tap_done();
}
