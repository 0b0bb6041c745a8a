/*
** schedule.h -- the learning rate at each training step: a linear warmup
** from 0, then constant, cosine or linear decay to a floor, and the token
** embeddings' own warmup factor. Pure functions of the step, so a run, a
** benchmark and a test all compute the same rate.
**
** Steps are 1-based: step s is the update that makes a run's step count s.
**   warmup:   a + (lr - a) * s / warmup  for s < warmup, a = lr * warmup_start
**   constant: lr
**   cosine:   lr_min + (lr - lr_min) * 0.5 * (1 + cos(pi * (s - w) / (D - w)))
**   linear:   lr - (lr - lr_min) * (s - w) / (D - w)
** with w = warmup and D = decay_steps; cosine and linear give lr_min from
** s = D on. OLMo's cosine_with_warmup is warmup_start = 0.1 (its default
** warmup_min_lr) with lr_min = 0.1 * lr (its alpha_f).
*/
#ifndef TIELAB_SCHEDULE_H
#define TIELAB_SCHEDULE_H

#include "base/err.h"

typedef enum ScheduleKind { SCHEDULE_CONSTANT, SCHEDULE_COSINE, SCHEDULE_LINEAR } ScheduleKind;

/* Names of the kinds, by kind ("constant", "cosine", "linear"), NULL-ended. */
extern const char *const schedule_names[];

typedef struct Schedule {
  ScheduleKind kind;
  double lr, lr_min;        /* the peak rate and the floor, absolute */
  long warmup;              /* steps of linear warmup (0: none) */
  double warmup_start;      /* the warmup's first rate over lr, in [0, 1] */
  long decay_steps;         /* the horizon, counted from step 0 with the warmup */
} Schedule;

/* Refuses a decaying schedule whose horizon does not lie after its warmup,
** or whose floor lies above its peak. */
int schedule_check(const Schedule *s, Err *err);

/* The rate of step 'step' (>= 1). */
double schedule_lr(const Schedule *s, long step);

/* min(1, step / warmup), 1 when warmup is 0: a linear warmup's factor. */
double schedule_warmup_factor(long warmup, long step);

#endif
