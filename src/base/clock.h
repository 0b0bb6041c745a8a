/*
** clock.h -- the one clock tielab measures time with: seconds on the
** monotonic clock, which never jumps when the wall clock is set.
*/
#ifndef TIELAB_BASE_CLOCK_H
#define TIELAB_BASE_CLOCK_H

#include <time.h>

static inline double clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 'seconds' from now on clock 'id' (none or fewer: now). */
static inline struct timespec clock_after(clockid_t id, double seconds) {
  struct timespec ts;
  clock_gettime(id, &ts);
  time_t whole = seconds > 0 ? (time_t)seconds : 0;
  long ns = ts.tv_nsec + (seconds > 0 ? (long)((seconds - (double)whole) * 1e9) : 0);
  ts.tv_sec += whole + ns / 1000000000;
  ts.tv_nsec = ns % 1000000000;
  return ts;
}

/* 'seconds' from now on the wall clock: the deadline of a timed wait on a
** mutex or a condition (pthread_mutex_timedlock, pthread_cond_timedwait),
** which count in that clock by default. */
static inline struct timespec clock_deadline(double seconds) { return clock_after(CLOCK_REALTIME, seconds); }

/* The same on the monotonic clock, for a condition created to wait on it
** (pthread_condattr_setclock): a wait that a change of the wall clock
** neither cuts short nor stretches. */
static inline struct timespec clock_deadline_mono(double seconds) { return clock_after(CLOCK_MONOTONIC, seconds); }

#endif
