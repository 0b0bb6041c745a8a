/*
** steer.c -- the tie cycle, scaling a setting, and the in_scale ladder.
*/
#include "lab/steer.h"

#include <stdio.h>
#include <string.h>

int steer_cycle_tie(Run *r, Err *err) {
  const RunMetrics *m = run_metrics(r);
  char next[16];
  if (m->tie_k >= m->dim) snprintf(next, sizeof next, "untied");
  else if (m->tie_k == 0) snprintf(next, sizeof next, "%d", m->dim / 2);
  else snprintf(next, sizeof next, "tied");
  return run_set_text(r, "tie", next, err);
}

int steer_scale(Run *r, const char *key, double factor, Err *err) {
  const RunOptions *o = run_options(r);
  double v = strcmp(key, "in_scale") == 0 ? o->in_scale : strcmp(key, "out_scale") == 0 ? o->out_scale : o->lr;
  return run_set_number(r, key, v * factor, err);
}

/* Round numbers a speaker can say. */
static const double ladder[] = {1.0 / 50, 1.0 / 20, 1.0 / 10, 1.0 / 5, 1.0 / 3, 1.0 / 2, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000};
#define N_LADDER ((int)(sizeof ladder / sizeof ladder[0]))

double steer_ladder_next(double v, int dir) {
  const double tol = 1e-9;   /* 1/3 set by hand is on the rung */
  if (dir > 0) {
    for (int i = 0; i < N_LADDER; i++)
      if (ladder[i] > v * (1 + tol)) return ladder[i];
  } else {
    for (int i = N_LADDER - 1; i >= 0; i--)
      if (ladder[i] < v * (1 - tol)) return ladder[i];
  }
  return 0;
}
