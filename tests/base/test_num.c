/* test_num.c -- numbers as text: shortest exact form, strict parsing, and
** both unchanged under a decimal-comma LC_NUMERIC. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/num.h"
#include "comma_locale.h"
#include "tap.h"

static void test_format(const char *when) {
  char b[NUM_TEXT_MAX];
  ok(strcmp(num_format(b, sizeof b, 0.0025), "0.0025") == 0, "%s: 0.0025 written as %s", when, b);
  ok(strcmp(num_format(b, sizeof b, 1e-8), "1e-08") == 0, "%s: 1e-8 written as %s", when, b);
  double third = 1.0 / 3, back = 0;
  num_format(b, sizeof b, third);
  ok(num_parse(b, &back) == 0 && back == third, "%s: 1/3 round-trips through %s", when, b);
  double tiny = 4.9406564584124654e-324, huge = -1.7976931348623157e308;
  int exact = num_parse(num_format(b, sizeof b, tiny), &back) == 0 && back == tiny;
  exact &= num_parse(num_format(b, sizeof b, huge), &back) == 0 && back == huge;
  ok(exact, "%s: the smallest subnormal and the largest double round-trip", when);
  ok(strcmp(num_format(b, sizeof b, NAN), "nan") == 0 && strcmp(num_format(b, sizeof b, -INFINITY), "-inf") == 0,
     "%s: nan and -inf by name", when);
}

static void test_parse(const char *when) {
  double v = 0;
  ok(num_parse("0.0025", &v) == 0 && v == 0.0025, "%s: '0.0025' reads as 0.0025", when);
  ok(num_parse("-1.5e-3", &v) == 0 && v == -1.5e-3 && num_parse(".5", &v) == 0 && v == 0.5,
     "%s: signs, exponents and a leading point", when);
  const char *bad[] = {"", " 1", "1 ", "1,5", "0,0025", "abc", "1e", "0x10", "inf", "nan", "-inf",
                       "1e999", "+", ".", "1.2.3", "1-2", "\t2"};
  int refused = 1;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (num_parse(bad[i], &v) == 0) {
      diag("'%s' accepted as %g", bad[i], v);
      refused = 0;
    }
  ok(refused, "%s: spaces, commas, hexadecimal, inf, nan, overflow and junk refused", when);
  long n = 0;
  ok(num_parse_long("320", 0, 1000, &n) == 0 && n == 320 && num_parse_long("-7", -10, 10, &n) == 0 && n == -7,
     "%s: whole numbers", when);
  const char *badl[] = {" 320", "320 ", "+3", "3.0", "1e3", "0x10", "", "-", "99999999999999999999", "007", "-0", "00"};
  refused = 1;
  for (size_t i = 0; i < sizeof badl / sizeof badl[0]; i++)
    if (num_parse_long(badl[i], -1000, 1000, &n) == 0) refused = 0;
  ok(refused && num_parse_long("1001", 0, 1000, &n) < 0 && num_parse_long("0", 0, 1, &n) == 0 && n == 0,
     "%s: strict whole numbers, in range, one way to write each", when);
}

/* Byte counts for messages, each in the unit that shows it. */
static void test_bytes(const char *where) {
  static const struct { unsigned long long n; const char *want; } cases[] = {
    {0, "0 bytes"}, {1, "1 byte"}, {1000, "1000 bytes"}, {1536, "1.5 KiB"},
    {3 << 19, "1.5 MiB"}, {1ull << 31, "2.0 GiB"}, {5ull << 40, "5.0 TiB"}, {3ull << 50, "3072.0 TiB"},
  };
  int all = 1;
  char buf[NUM_TEXT_MAX], seen[256] = "";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    num_bytes(buf, sizeof buf, cases[i].n);
    if (strcmp(buf, cases[i].want) != 0) all = 0;
    snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s", i ? ", " : "", buf);
  }
  ok(all, "%s: byte counts in their unit: %s", where, seen);
}

int main(void) {
  test_bytes("C locale");
  test_format("C locale");
  test_parse("C locale");
  int comma = comma_locale_on();
  if (comma > 0) {
    char b[32];
    snprintf(b, sizeof b, "%g", 0.5);
    ok(strcmp(b, "0,5") == 0, "the comma locale is in force (printf writes %s)", b);
    test_bytes("comma locale");
    test_format("comma locale");
    test_parse("comma locale");
    comma_locale_off();
  } else if (comma == 0) {
    skip("no decimal-comma locale on this machine (install 'locales' for localedef)");
  } else {
    ok(0, "localedef could not make a decimal-comma locale (de_DE.UTF-8) here");
  }
  return tap_done();
}
