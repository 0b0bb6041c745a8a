/*
** test_text.c -- valid UTF-8 out of bytes that come in pieces: characters
** split between pieces, ill-formed bytes replaced as Unicode says, a full
** buffer cut between characters, and random bytes in random pieces.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "tap.h"

#define FFFD "\xef\xbf\xbd"

/* 'pieces' (NULL-ended) through one stream into a buffer of 'cap'. */
static const char *stream(size_t cap, const char *const *pieces) {
  static char out[256];
  TextUtf8 u;
  text_utf8_begin(&u, out, cap);
  for (; *pieces; pieces++) text_utf8_put(&u, *pieces, strlen(*pieces));
  text_utf8_end(&u);
  return out;
}

#define is_str(got, want, what)                                  \
  do {                                                           \
    const char *got_ = (got);                                    \
    ok(strcmp(got_, want) == 0, "%s", what);                     \
    if (strcmp(got_, want) != 0) diag("got '%s'", got_);         \
  } while (0)

#define STREAM(cap, ...) stream(cap, (const char *const[]){__VA_ARGS__, NULL})

/* Valid UTF-8, checked by decoding to code points (a second, plainer
** reading than the one under test). */
static int valid_utf8(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = s[i] < 0x80 ? 1 : (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 : (s[i] & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || i + len > n) return 0;
    cp = len == 1 ? s[i] : s[i] & (0x7f >> len);
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return 0;
      cp = cp << 6 | (s[i + k] & 0x3f);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    i += len;
  }
  return 1;
}

static void test_pieces(void) {
  is_str(STREAM(64, "plain ", "text"), "plain text", "ASCII passes");
  is_str(STREAM(64, "caf\xc3", "\xa9!"), "caf\xc3\xa9!", "a character split between two pieces is held, then whole");
  is_str(STREAM(64, "\xf0\x9f", "\x98", "\x80"), "\xf0\x9f\x98\x80", "a 4-byte character in three pieces");
  is_str(STREAM(64, "end \xe2\x82"), "end " FFFD, "incomplete at the end: one U+FFFD");
  is_str(STREAM(64, "\xc3", "A"), FFFD "A", "a held start the next piece does not continue: U+FFFD, then the piece");
  is_str(STREAM(64, "\xc3", "\xc3\xa9"), FFFD "\xc3\xa9", "and a new start after it is read afresh");
  is_str(STREAM(64, "\xe0", "\x80"), FFFD FFFD, "overlong across pieces: two U+FFFD");
}

static void test_ill_formed(void) {
  /* Unicode 15, section 3.9, table 3-8: the U+FFFD substitution of maximal subparts. */
  is_str(STREAM(64, "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64"),
         "a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d", "Unicode's example of maximal subparts");
  is_str(STREAM(64, "\xed\xa0\x80"), FFFD FFFD FFFD, "a surrogate: three U+FFFD");
  is_str(STREAM(64, "\xf4\x90\x80\x80"), FFFD FFFD FFFD FFFD, "past U+10FFFF: four U+FFFD");
  is_str(STREAM(64, "\xc0\xaf"), FFFD FFFD, "C0 and C1 never start a character");
  is_str(STREAM(64, "\xff", "x\xfe"), FFFD "x" FFFD, "FF and FE each one U+FFFD");
  is_str(STREAM(64, "\xf0\x80\x80"), FFFD FFFD FFFD, "an overlong 4-byte start: each byte");
}

static void test_full(void) {
  is_str(STREAM(6, "ab\xf0\x9f\x98\x80"), "ab", "a 4-byte character that does not fit is left out whole");
  is_str(STREAM(6, "abcde", "f"), "abcde", "cap counts the NUL");
  is_str(STREAM(6, "ab\xc3\xa9", "\xc3\xa9z"), "ab\xc3\xa9", "nothing after the first character left out");
  char out[1] = {'x'};
  TextUtf8 u;
  text_utf8_begin(&u, out, 1);
  text_utf8_put(&u, "abc", 3);
  ok(text_utf8_end(&u) == 0 && out[0] == '\0', "a one-byte buffer holds the NUL only");
}

/* A uniform number in [0, 1) from a seeded linear congruential step: the
** base layer's tests stand on base alone, and these bytes need no more. */
static double uniform(uint64_t *s) {
  *s = *s * 6364136223846793005u + 1442695040888963407u;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* Random bytes, weighted to UTF-8 leads and continuations, in random pieces:
** always valid, and the same whatever the cut into pieces. */
static void test_random(void) {
  uint64_t rng = 7;
  static const uint8_t likely[] = {'a', ' ', 0x80, 0x9f, 0xa0, 0xbf, 0xc2, 0xc3, 0xdf, 0xe0, 0xe1, 0xed, 0xef,
                                   0xf0, 0xf1, 0xf4, 0xf5, 0xff, 0xc0};
  int invalid = 0, differ = 0;
  for (int trial = 0; trial < 5000; trial++) {
    uint8_t in[64];
    size_t n = 1 + uniform(&rng) * 63;
    for (size_t i = 0; i < n; i++)
      in[i] = uniform(&rng) < 0.8 ? likely[(size_t)(uniform(&rng) * sizeof likely)] : (uint8_t)(1 + uniform(&rng) * 255);   /* no NUL: outputs are strings */
    char whole[512], cut[512];
    TextUtf8 a, b;
    text_utf8_begin(&a, whole, sizeof whole);
    text_utf8_put(&a, (const char *)in, n);
    size_t la = text_utf8_end(&a);
    text_utf8_begin(&b, cut, sizeof cut);
    for (size_t i = 0; i < n;) {
      size_t k = 1 + uniform(&rng) * 4;
      if (k > n - i) k = n - i;
      text_utf8_put(&b, (const char *)in + i, k);
      i += k;
    }
    size_t lb = text_utf8_end(&b);
    invalid += !valid_utf8((const uint8_t *)whole, la) || strlen(whole) != la;
    differ += la != lb || memcmp(whole, cut, la) != 0;
  }
  ok(invalid == 0, "5000 random byte strings: every output valid UTF-8 (%d not)", invalid);
  ok(differ == 0, "and the same cut into random pieces as whole (%d differ)", differ);
}

/* Lists as messages say them: "a, b and c", cut but never overrun. */
static void test_list(void) {
  const char *words[] = {"tied", "untied", "partial"};
  char buf[64], tiny[9];
  for (size_t i = 0; i < 3; i++) text_list_add(buf, sizeof buf, i, 3, " or ", words[i]);
  ok(strcmp(buf, "tied, untied or partial") == 0, "three items, the last after ' or ': %s", buf);
  text_list_add(buf, sizeof buf, 0, 1, " and ", "alone");
  ok(strcmp(buf, "alone") == 0, "one item stands alone, and item 0 starts a new list: %s", buf);
  for (size_t i = 0; i < 2; i++) text_list_add(buf, sizeof buf, i, 2, " and ", words[i]);
  ok(strcmp(buf, "tied and untied") == 0, "two items: %s", buf);
  memset(tiny, 'x', sizeof tiny);
  for (size_t i = 0; i < 3; i++) text_list_add(tiny, sizeof tiny, i, 3, ", ", words[i]);
  ok(strlen(tiny) == sizeof tiny - 1 && strncmp(tiny, "tied, un", 8) == 0, "cut to the buffer: '%s'", tiny);
}

int main(void) {
  test_pieces();
  test_ill_formed();
  test_full();
  test_random();
  test_list();
  return tap_done();
}
