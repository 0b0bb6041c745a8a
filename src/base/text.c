/* text.c -- see text.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "base/utf8.h"

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
    size_t len = utf8_char((const char *)s + i, n - i);
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
    size_t len = utf8_char((const char *)s + i, n - i);
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

/* ------------------------------------------------------------ streams */

static void emit(TextUtf8 *u, const void *p, size_t n) {
  if (u->full || u->len + n >= u->cap) {
    u->full = 1;
    return;
  }
  memcpy(u->out + u->len, p, n);
  u->len += n;
  u->out[u->len] = '\0';
}

static void emit_replacement(TextUtf8 *u) { emit(u, "\xef\xbf\xbd", 3); }

void text_utf8_begin(TextUtf8 *u, char *out, size_t cap) {
  memset(u, 0, sizeof *u);
  u->out = out, u->cap = cap;
  if (cap) out[0] = '\0';
  else u->full = 1;
}

/* Complete the held start of a character from 'in'; returns the bytes of
** 'in' taken. The held bytes are a valid prefix, so a byte that does not
** continue them is not taken: it starts what follows. */
static size_t complete_held(TextUtf8 *u, const uint8_t *in, size_t n) {
  size_t i = 0, need;
  while (u->n_held && i < n) {
    u->held[u->n_held] = in[i];
    if (utf8_prefix((const char *)u->held, u->n_held + 1, &need) <= u->n_held) {
      emit_replacement(u);
      u->n_held = 0;
      break;
    }
    i++;
    if (++u->n_held == need) {
      emit(u, u->held, need);
      u->n_held = 0;
    }
  }
  return i;
}

void text_utf8_put(TextUtf8 *u, const char *piece, size_t n) {
  const uint8_t *s = (const uint8_t *)piece;
  size_t i = complete_held(u, s, n);
  while (i < n) {
    size_t need, k = utf8_prefix(piece + i, n - i, &need);
    if (k == need) emit(u, s + i, k);
    else if (need && k == n - i) {
      memcpy(u->held, s + i, k);   /* k < need <= 4 */
      u->n_held = k;
    } else emit_replacement(u);
    i += k;
  }
}

size_t text_utf8_end(TextUtf8 *u) {
  if (u->n_held) emit_replacement(u);
  u->n_held = 0;
  return u->len;
}

void text_list_add(char *buf, size_t cap, size_t i, size_t n, const char *last, const char *item) {
  if (cap == 0) return;
  if (i == 0) buf[0] = '\0';
  size_t len = strlen(buf);
  if (len + 1 >= cap) return;
  const char *sep = i == 0 ? "" : i + 1 == n ? last : ", ";
  snprintf(buf + len, cap - len, "%s%s", sep, item);
}
