/*
** test_clock.c -- base/clock.h: deadlines on the wall clock and on the
** monotonic one, their nanoseconds carried into seconds, none in the past.
*/
#include <time.h>

#include "base/clock.h"
#include "tap.h"

static double ahead(struct timespec d, clockid_t id) {
  struct timespec now;
  clock_gettime(id, &now);
  return (double)(d.tv_sec - now.tv_sec) + (double)(d.tv_nsec - now.tv_nsec) * 1e-9;
}

int main(void) {
  struct timespec d = clock_deadline(1.75);
  double a = ahead(d, CLOCK_REALTIME);
  ok(a > 1.5 && a <= 1.75 && d.tv_nsec >= 0 && d.tv_nsec < 1000000000L, "clock_deadline(1.75) is 1.75 s ahead on the wall clock (%.3f)", a);
  d = clock_deadline_mono(2.999999999);
  a = ahead(d, CLOCK_MONOTONIC);
  ok(a > 2.7 && a <= 3.0 && d.tv_nsec >= 0 && d.tv_nsec < 1000000000L, "clock_deadline_mono(3) is 3 s ahead on the monotonic clock (%.3f)", a);
  a = ahead(clock_deadline_mono(-5), CLOCK_MONOTONIC);
  ok(a <= 0 && a > -0.25, "a negative wait is now, not in the past (%.3f)", a);
  double t0 = clock_seconds();
  ok(ahead(clock_deadline_mono(0), CLOCK_MONOTONIC) <= 0 && clock_seconds() >= t0, "clock_seconds never goes back");
  return tap_done();
}
