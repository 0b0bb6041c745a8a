/* utf8.c -- see utf8.h. */
#include "base/utf8.h"

/* Each lead byte range, the length of the characters it starts, and the
** range its second byte must be in: narrower than a plain continuation
** byte after E0, ED, F0 and F4, which is what rules out overlong forms,
** surrogates and code points past U+10FFFF (Unicode's table 3-7). */
static const struct {
  uint8_t first, last, len, lo, hi;
} leads[] = {
    {0x00, 0x7f, 1, 0, 0},       {0xc2, 0xdf, 2, 0x80, 0xbf}, {0xe0, 0xe0, 3, 0xa0, 0xbf},
    {0xe1, 0xec, 3, 0x80, 0xbf}, {0xed, 0xed, 3, 0x80, 0x9f}, {0xee, 0xef, 3, 0x80, 0xbf},
    {0xf0, 0xf0, 4, 0x90, 0xbf}, {0xf1, 0xf3, 4, 0x80, 0xbf}, {0xf4, 0xf4, 4, 0x80, 0x8f},
};

size_t utf8_prefix(const char *str, size_t n, size_t *need) {
  const uint8_t *s = (const uint8_t *)str;
  *need = 0;
  if (n == 0) return 0;
  for (size_t i = 0; i < sizeof leads / sizeof leads[0]; i++) {
    if (s[0] < leads[i].first || s[0] > leads[i].last) continue;
    *need = leads[i].len;
    size_t k = 1;
    if (k < *need && k < n && s[1] >= leads[i].lo && s[1] <= leads[i].hi) k++;
    else return k;
    while (k < *need && k < n && utf8_is_continuation(s[k])) k++;
    return k;
  }
  return 1;
}

size_t utf8_char(const char *s, size_t n) {
  size_t need, k = utf8_prefix(s, n, &need);
  return need && k == need ? k : 0;
}

size_t utf8_decode(const char *str, size_t n, uint32_t *cp) {
  const uint8_t *s = (const uint8_t *)str;
  size_t need, k = utf8_prefix(str, n, &need);
  if (k == 0) return 0;
  if (!need || k < need) {
    *cp = UTF8_INVALID;
    return k;
  }
  /* The lead keeps 7, 5, 4 or 3 bits; each continuation byte 6 more. */
  uint32_t c = k == 1 ? s[0] : s[0] & (0x7fu >> k);
  for (size_t i = 1; i < k; i++) c = c << 6 | (s[i] & 0x3fu);
  *cp = c;
  return k;
}

size_t utf8_encode(uint32_t c, char *out) {
  if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) c = UTF8_REPLACEMENT;
  if (c < 0x80) {
    out[0] = (char)c;
    return 1;
  }
  size_t len = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  static const uint8_t lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
  for (size_t i = len - 1; i > 0; i--, c >>= 6) out[i] = (char)(0x80 | (c & 0x3f));
  out[0] = (char)(lead[len] | c);
  return len;
}

int utf8_valid(const char *s, size_t n) {
  for (size_t i = 0, k; i < n; i += k)
    if ((k = utf8_char(s + i, n - i)) == 0) return 0;
  return 1;
}

size_t utf8_incomplete_tail(const char *str, size_t n) {
  const uint8_t *s = (const uint8_t *)str;
  for (size_t back = 1; back <= 3 && back <= n; back++) {
    uint8_t c = s[n - back];
    if (utf8_is_continuation(c)) continue;   /* look further back */
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 1;
    return len > back ? back : 0;
  }
  return 0;
}
