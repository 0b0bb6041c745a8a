/*
** num.c -- see num.h.
**
** printf and strtod follow LC_NUMERIC, which any part of the process (a Lua
** script's os.setlocale, say) may change. Every conversion here switches
** the calling thread to a "C" locale object for its duration with
** uselocale, which touches no other thread and no global state.
*/
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/num.h"

static locale_t c_locale;
static pthread_once_t c_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

/* Enter the "C" locale on this thread; the result goes to 'leave_c'. A
** failed newlocale leaves the locale as it is (the "C" locale of a process
** that never called setlocale). */
static locale_t enter_c(void) {
  pthread_once(&c_once, make_c_locale);
  return c_locale ? uselocale(c_locale) : (locale_t)0;
}

static void leave_c(locale_t old) {
  if (old) uselocale(old);
}

char *num_format(char *buf, size_t cap, double v) {
  if (isnan(v)) snprintf(buf, cap, "nan");
  else if (isinf(v)) snprintf(buf, cap, v > 0 ? "inf" : "-inf");
  else {
    locale_t old = enter_c();
    for (int prec = 6; prec <= 17; prec++) {
      snprintf(buf, cap, "%.*g", prec, v);
      if (strtod(buf, NULL) == v) break;
    }
    leave_c(old);
  }
  return buf;
}

/* Only what a plain decimal number is made of: strtod would also take
** leading spaces, hexadecimal, "inf" and "nan". */
static int decimal_chars(const char *s) {
  if (*s == '-' || *s == '+') s++;
  if (!(*s >= '0' && *s <= '9') && *s != '.') return 0;
  return s[strspn(s, "0123456789.eE+-")] == '\0';
}

int num_parse(const char *s, double *out) {
  if (!s || !decimal_chars(s)) return -1;
  locale_t old = enter_c();
  char *end;
  double v = strtod(s, &end);
  leave_c(old);
  if (end == s || *end != '\0' || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int num_parse_long(const char *s, long lo, long hi, long *out) {
  if (!s) return -1;
  const char *digits = *s == '-' ? s + 1 : s;
  if (*digits == '\0' || digits[strspn(digits, "0123456789")] != '\0') return -1;
  /* One way to write each number: no leading zeros ("007"), no "-0". */
  if ((digits[0] == '0' && digits[1] != '\0') || (digits != s && strcmp(digits, "0") == 0)) return -1;
  errno = 0;
  char *end;
  long v = strtol(s, &end, 10);   /* digits only: no locale takes part */
  if (errno || *end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

char *num_bytes(char *buf, size_t cap, unsigned long long n) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (n < 1024) {
    snprintf(buf, cap, "%llu byte%s", n, n == 1 ? "" : "s");
    return buf;
  }
  double v = (double)n / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) v /= 1024, u++;
  locale_t was = enter_c();
  snprintf(buf, cap, "%.1f %s", v, units[u]);
  leave_c(was);
  return buf;
}
