/*
** test_utf8.c -- base/utf8.h: what a valid character is (overlong
** forms, surrogates and code points past U+10FFFF refused, sequences cut
** short), how many bytes one U+FFFD stands for, encoding, and a round trip
** of every code point.
*/
#include <stdint.h>
#include <string.h>

#include "base/utf8.h"
#include "tap.h"

/* The bytes utf8_decode takes at 's' and the code point it reads. */
static size_t dec(const char *s, uint32_t *cp) { return utf8_decode(s, strlen(s), cp); }

static void test_valid(void) {
  uint32_t cp;
  ok(dec("A", &cp) == 1 && cp == 'A', "ASCII is one byte");
  ok(dec("\xc3\xa9", &cp) == 2 && cp == 0xe9, "U+00E9 in two bytes");
  ok(dec("\xe2\x82\xac", &cp) == 3 && cp == 0x20ac, "U+20AC in three bytes");
  ok(dec("\xf0\x9f\x98\x80", &cp) == 4 && cp == 0x1f600, "U+1F600 in four bytes");
  ok(dec("\xf4\x8f\xbf\xbf", &cp) == 4 && cp == 0x10ffff, "U+10FFFF, the last code point");
  ok(dec("\xef\xbf\xbd", &cp) == 3 && cp == UTF8_REPLACEMENT, "a real U+FFFD is a character like any other");
  ok(utf8_valid("h\xc3\xa9llo \xe2\x82\xac", 11) && utf8_valid("", 0), "valid text is valid, the empty text too");
}

static void test_invalid(void) {
  uint32_t cp;
  ok(dec("\xc0\xaf", &cp) == 1 && cp == UTF8_INVALID, "overlong 2-byte (C0 AF): one bad byte, then another");
  ok(utf8_char("\xe0\x80\xaf", 3) == 0 && dec("\xe0\x80\xaf", &cp) == 1, "overlong 3-byte (E0 80 AF) is refused byte by byte");
  ok(utf8_char("\xf0\x80\x80\xaf", 4) == 0 && dec("\xf0\x80\x80\xaf", &cp) == 1, "overlong 4-byte (F0 80 80 AF) too");
  ok(utf8_char("\xed\xa0\x80", 3) == 0 && dec("\xed\xa0\x80", &cp) == 1 && cp == UTF8_INVALID,
     "a surrogate (ED A0 80, U+D800) is no character");
  ok(utf8_char("\xf4\x90\x80\x80", 4) == 0, "past U+10FFFF (F4 90 80 80) is none");
  ok(utf8_char("\xf5\x80\x80\x80", 4) == 0 && utf8_char("\xff", 1) == 0, "F5..FF start nothing");
  ok(utf8_char("\x80", 1) == 0 && dec("\x80", &cp) == 1, "a lone continuation byte");
  ok(utf8_valid("ok\xed\xa0\x80", 5) == 0 && utf8_valid("\xc3", 1) == 0, "utf8_valid finds a bad or cut character");
}

static void test_truncated(void) {
  uint32_t cp;
  size_t need;
  ok(utf8_char("\xe2\x82", 2) == 0, "a 3-byte character cut after two bytes is not one");
  ok(dec("\xe2\x82" "A", &cp) == 2 && cp == UTF8_INVALID, "its two bytes are one bad character (one U+FFFD)");
  ok(dec("\xf0\x9f\x98" "A", &cp) == 3 && cp == UTF8_INVALID, "three bytes of a 4-byte one: one U+FFFD");
  ok(utf8_prefix("\xf0\x9f", 2, &need) == 2 && need == 4, "a start cut by the end: 2 of 4 bytes");
  ok(utf8_prefix("\xf0\x9f" "A", 3, &need) == 2 && need == 4, "cut by a byte that does not continue it");
  ok(utf8_char("\xc3", UTF8_MAX) == 0, "a NUL-terminated string may be read with UTF8_MAX: the NUL ends it");
  ok(utf8_incomplete_tail("ab\xe2\x82", 4) == 2 && utf8_incomplete_tail("ab\xe2\x82\xac", 5) == 0 &&
         utf8_incomplete_tail("ab", 2) == 0 && utf8_incomplete_tail("\x80", 1) == 0,
     "the incomplete tail: 2 bytes of a 3-byte character, none after a whole one");
}

static void test_encode(void) {
  char b[UTF8_MAX];
  ok(utf8_encode('A', b) == 1 && b[0] == 'A', "U+0041 encodes in one byte");
  ok(utf8_encode(0xe9, b) == 2 && memcmp(b, "\xc3\xa9", 2) == 0, "U+00E9 in two");
  ok(utf8_encode(0x20ac, b) == 3 && memcmp(b, "\xe2\x82\xac", 3) == 0, "U+20AC in three");
  ok(utf8_encode(0x1f600, b) == 4 && memcmp(b, "\xf0\x9f\x98\x80", 4) == 0, "U+1F600 in four");
  ok(utf8_encode(0xd800, b) == 3 && memcmp(b, "\xef\xbf\xbd", 3) == 0, "a surrogate is written as U+FFFD");
  ok(utf8_encode(0x110000, b) == 3 && memcmp(b, "\xef\xbf\xbd", 3) == 0, "past U+10FFFF too");
  int bad = 0;
  for (uint32_t c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    uint32_t back;
    size_t n = utf8_encode(c, b);
    bad += utf8_decode(b, n, &back) != n || back != c || utf8_char(b, n) != n;
  }
  ok(bad == 0, "every code point but the surrogates reads back as written (%d do not)", bad);
}

static void test_continuation(void) {
  int wrong = 0;
  for (int c = 0; c < 256; c++) wrong += utf8_is_continuation((unsigned char)c) != (c >= 0x80 && c <= 0xbf);
  ok(wrong == 0, "the bytes 0x80..0xBF, and only they, continue a character (%d wrong)", wrong);
}

int main(void) {
  test_valid();
  test_invalid();
  test_truncated();
  test_encode();
  test_continuation();
  return tap_done();
}
