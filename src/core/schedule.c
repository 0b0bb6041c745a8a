/*
** schedule.c -- see schedule.h.
*/
#include <math.h>
#include <stddef.h>

#include "schedule.h"

const char *const schedule_names[] = {[SCHEDULE_CONSTANT] = "constant", [SCHEDULE_COSINE] = "cosine",
                                      [SCHEDULE_LINEAR] = "linear", NULL};

int schedule_check(const Schedule *s, Err *err) {
  if (s->kind != SCHEDULE_CONSTANT && s->decay_steps <= s->warmup)
    return err_set(err, "schedule %s needs 'decay_steps' (%ld) above 'warmup' (%ld)",
                   schedule_names[s->kind], s->decay_steps, s->warmup);
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
  if (step < s->warmup) return s->lr * schedule_warmup_factor(s->warmup, step);
  if (s->kind == SCHEDULE_CONSTANT) return s->lr;
  if (step >= s->decay_steps) return s->lr_min;
  double x = decay_progress(s, step);
  if (s->kind == SCHEDULE_COSINE) return s->lr_min + (s->lr - s->lr_min) * 0.5 * (1.0 + cos(M_PI * x));
  return s->lr - (s->lr - s->lr_min) * x;
}
