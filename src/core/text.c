/* text.c -- see text.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"

/* See text_utf8_char. */
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

size_t text_utf8_char(const char *s, size_t n) { return n ? utf8_char((const uint8_t *)s, n) : 0; }

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

/* ------------------------------------------------------------ streams */

/* The well-formed start of a character at 's' (n bytes left): returns how
** many bytes fit the encoding and sets '*need' to the character's length
** (0 for a byte that starts none). Returned == need: a whole character;
** less and == n: cut short by the end; less and < n: ill-formed. */
static size_t utf8_prefix(const uint8_t *s, size_t n, size_t *need) {
  static const struct { uint8_t first, last, len, lo, hi; } leads[] = {
      {0x00, 0x7f, 1, 0, 0},       {0xc2, 0xdf, 2, 0x80, 0xbf}, {0xe0, 0xe0, 3, 0xa0, 0xbf},
      {0xe1, 0xec, 3, 0x80, 0xbf}, {0xed, 0xed, 3, 0x80, 0x9f}, {0xee, 0xef, 3, 0x80, 0xbf},
      {0xf0, 0xf0, 4, 0x90, 0xbf}, {0xf1, 0xf3, 4, 0x80, 0xbf}, {0xf4, 0xf4, 4, 0x80, 0x8f},
  };
  *need = 0;
  for (size_t i = 0; i < sizeof leads / sizeof leads[0]; i++) {
    if (s[0] < leads[i].first || s[0] > leads[i].last) continue;
    *need = leads[i].len;
    size_t k = 1;
    /* The second byte's range is the lead's own (no overlongs, surrogates
    ** or code points past U+10FFFF); later ones are any continuation. */
    if (k < *need && k < n && s[1] >= leads[i].lo && s[1] <= leads[i].hi) k++;
    else return k;
    while (k < *need && k < n && (s[k] & 0xc0) == 0x80) k++;
    return k;
  }
  return 1;
}

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
    if (utf8_prefix(u->held, u->n_held + 1, &need) <= u->n_held) {
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
    size_t need, k = utf8_prefix(s + i, n - i, &need);
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
