/* text.c -- see text.h. */
#include <stdint.h>
#include <stdio.h>

#include "core/text.h"

/* Length of the valid UTF-8 character at 's' (n bytes left), 0 if invalid:
** no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_char(const uint8_t *s, size_t n) {
  uint8_t c = s[0];
  size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (len == 0 || len > n) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && s[1] < 0xa0) return 0;   /* overlong */
  if (c == 0xed && s[1] > 0x9f) return 0;   /* surrogate */
  if (c == 0xf0 && s[1] < 0x90) return 0;   /* overlong */
  if (c == 0xf4 && s[1] > 0x8f) return 0;   /* above U+10FFFF */
  return len;
}

static int is_c0(uint8_t c) { return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f; }

/* U+0080..U+009F, encoded as C2 80..C2 9F: some terminals act on them. */
static int is_c1(const uint8_t *s, size_t len) { return len == 2 && s[0] == 0xc2 && s[1] < 0xa0; }

int text_needs_escape(const char *text, size_t n) {
  const uint8_t *s = (const uint8_t *)text;
  for (size_t i = 0; i < n;) {
    if (s[i] >= 0x20 && s[i] < 0x7f) {
      i++;
      continue;
    }
    size_t len = utf8_char(s + i, n - i);
    if (len == 0 || is_c0(s[i]) || is_c1(s + i, len)) return 1;
    i += len;
  }
  return 0;
}

size_t text_escape(const char *text, size_t n, char *out, size_t cap) {
  const uint8_t *s = (const uint8_t *)text;
  size_t w = 0;
  if (cap == 0) return 0;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_char(s + i, n - i);
    char esc[8];
    const char *piece = (const char *)s + i;
    size_t k = len;
    if (len == 0 || is_c1(s + i, len)) {
      uint8_t b = len == 0 ? s[i] : s[i + 1];
      k = (size_t)snprintf(esc, sizeof esc, "\\x%02x", b);
      piece = esc;
      len = len == 0 ? 1 : 2;
    } else if (is_c0(s[i])) {
      esc[0] = '^';
      esc[1] = s[i] == 0x7f ? '?' : (char)(s[i] + '@');
      piece = esc;
      k = 2;
    }
    if (w + k >= cap) break;
    for (size_t j = 0; j < k; j++) out[w++] = piece[j];
    i += len;
  }
  out[w] = '\0';
  return w;
}

size_t text_incomplete_tail(const char *text, size_t n) {
  const uint8_t *s = (const uint8_t *)text;
  for (size_t back = 1; back <= 3 && back <= n; back++) {
    uint8_t c = s[n - back];
    if ((c & 0xc0) == 0x80) continue;   /* a continuation byte: look further back */
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 1;
    return len > back ? back : 0;
  }
  return 0;
}
