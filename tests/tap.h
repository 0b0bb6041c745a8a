/*
** tap.h -- a few macros that print the Test Anything Protocol, which
** automake's tap-driver reads: one "ok N - what" or "not ok N - what" per
** check, and the plan at the end.
*/
#ifndef TIELAB_TAP_H
#define TIELAB_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

/* AddressSanitizer reserves terabytes of shadow address space and keeps
** freed memory in quarantine: RLIMIT_AS and resident sizes say nothing
** about the program there, so tests that use them do without. */
#if defined(__SANITIZE_ADDRESS__)
#define TAP_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAP_UNDER_ASAN 1
#endif
#endif
#ifndef TAP_UNDER_ASAN
#define TAP_UNDER_ASAN 0
#endif

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
