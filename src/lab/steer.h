/*
** steer.h -- the moves a person makes when steering a run by hand: the
** next tie mode of the 't' key, a setting multiplied ('+' and '-' of old,
** ui.scale), and the in_scale ladder a speaker steps along.
**
** The lab's keys and 'tielab --replay' both make these moves; being one
** piece of code is what lets a replayed key land where the live one did.
*/
#ifndef TIELAB_LAB_STEER_H
#define TIELAB_LAB_STEER_H

#include "lab/lab.h"

/* tied -> untied -> half the columns tied -> tied. */
int steer_cycle_tie(Run *r, Err *err);

/* Multiply "in_scale", "out_scale" or "lr" by 'factor'. */
int steer_scale(Run *r, const char *key, double factor, Err *err);

/* The next in_scale rung from 'v' up (dir > 0) or down (dir < 0), along
** 1/50, 1/20, 1/10, 1/5, 1/3, 1/2, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000;
** from between two
** rungs, the nearer one in that direction. 0 past either end. */
double steer_ladder_next(double v, int dir);

#endif
