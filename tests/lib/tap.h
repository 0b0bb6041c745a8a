/*
** tap.h -- a few macros that print the Test Anything Protocol, which
** automake's tap-driver reads: one "ok N - what" or "not ok N - what" per
** check, and the plan at the end.
*/
#ifndef TIELAB_TAP_H
#define TIELAB_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

/* What a check says, and the line's end. A '#' is escaped, so that no text
** a check quotes reads as a directive such as "# TODO". */
__attribute__((format(printf, 1, 2))) static inline void tap_what(const char *fmt, ...) {
  char what[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  for (const char *c = what; *c; c++) {
    if (*c == '#') putchar('\\');
    putchar(*c);
  }
  putchar('\n');
}

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
    tap_what(__VA_ARGS__);                                         \
    if (!ok_c_) {                                                  \
      tap_failed++;                                                \
      printf("#   failed at %s:%d\n", __FILE__, __LINE__);         \
    }                                                              \
    fflush(stdout);                                                \
  } while (0)

#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

/* skip("why"): one check skipped, saying why. Never a "# SKIP" line of a
** test's own: so the plan counts it, and .ci/run's run with the optional
** tools hidden proves the path. */
#define skip(...) (printf("ok %d # SKIP ", ++tap_n), printf(__VA_ARGS__), printf("\n"), fflush(stdout))

/* return skip_all("why"): the whole test skipped, before its first check.
** After a check a plan of none would lie: that is a failure instead. */
__attribute__((format(printf, 1, 2))) static inline int skip_all(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (tap_n > 0) {
    printf("not ok %d - skip_all after %d checks: ", tap_n + 1, tap_n);
    tap_n++, tap_failed++;
  } else {
    printf("1..0 # SKIP ");
  }
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  if (tap_n > 0) printf("1..%d\n", tap_n);
  fflush(stdout);
  return tap_n > 0;
}

/* return bail_out("why"): the test cannot go on (the machine refused what
** every later check needs): an error, never a skip. */
__attribute__((format(printf, 1, 2))) static inline int bail_out(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("Bail out! ");
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  return 1;
}

static inline int tap_done(void) {
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#endif
