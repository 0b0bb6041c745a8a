/*
** schedule.c -- see schedule.h.
*/
#include <math.h>
#include <stddef.h>

#include "core/schedule.h"

const char *const schedule_names[] = {[SCHEDULE_CONSTANT] = "constant", [SCHEDULE_COSINE] = "cosine",
                                      [SCHEDULE_LINEAR] = "linear", NULL};

int schedule_check(const Schedule *s, Err *err) {
  if (s->kind != SCHEDULE_CONSTANT && s->decay_steps <= s->warmup)
    return err_set(err, "schedule %s needs 'decay_steps' (%ld) above 'warmup' (%ld)",
                   schedule_names[s->kind], s->decay_steps, s->warmup);
  if (s->kind != SCHEDULE_CONSTANT && s->lr_min > s->lr)
    return err_set(err, "schedule %s would rise: 'lr_min' (%g) is above 'lr' (%g)", schedule_names[s->kind],
                   s->lr_min, s->lr);
  return 0;
}

double schedule_warmup_factor(long warmup, long step) {
  return warmup > 0 && step < warmup ? (double)step / (double)warmup : 1.0;
}

/* Progress through the decay, 0 at the end of the warmup, 1 at the horizon. */
static double decay_progress(const Schedule *s, long step) {
  return (double)(step - s->warmup) / (double)(s->decay_steps - s->warmup);
}

double schedule_lr(const Schedule *s, long step) {
  if (step < s->warmup) {
    /* start + (lr - start) * f: with start 0 exactly lr * f, as before warmup_start. */
    double start = s->lr * s->warmup_start;
    return start + (s->lr - start) * schedule_warmup_factor(s->warmup, step);
  }
  if (s->kind == SCHEDULE_CONSTANT) return s->lr;
  if (step >= s->decay_steps) return s->lr_min;
  double x = decay_progress(s, step);
  if (s->kind == SCHEDULE_COSINE) return s->lr_min + (s->lr - s->lr_min) * 0.5 * (1.0 + cos(M_PI * x));
  return s->lr - (s->lr - s->lr_min) * x;
}
