/*
** clock.h -- the one clock tielab measures time with: seconds on the
** monotonic clock, which never jumps when the wall clock is set.
*/
#ifndef TIELAB_CLOCK_H
#define TIELAB_CLOCK_H

#include <time.h>

static inline double clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
