/*
** tap.h -- a few macros that print the Test Anything Protocol, which
** automake's tap-driver reads: one "ok N - what" or "not ok N - what" per
** check, and the plan at the end.
*/
#ifndef TIELAB_TAP_H
#define TIELAB_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                              \
  do {                                                             \
    int ok_c_ = (cond) ? 1 : 0;                                    \
    printf("%sok %d - ", ok_c_ ? "" : "not ", ++tap_n);            \
    printf(__VA_ARGS__);                                           \
    printf("\n");                                                  \
    if (!ok_c_) {                                                  \
      tap_failed++;                                                \
      printf("#   failed at %s:%d\n", __FILE__, __LINE__);         \
    }                                                              \
    fflush(stdout);                                                \
  } while (0)

#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

#define skip(...) (printf("ok %d - # SKIP ", ++tap_n), printf(__VA_ARGS__), printf("\n"))

static inline int tap_done(void) {
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#endif
