/* textesc.c -- see textesc.h. */
#include "ui/textesc.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "base/utf8.h"

/* Format characters (Unicode's Cf): invisible, and the bidirectional ones
** reorder the text after them on a terminal that honours them. iswprint
** accepts them all. */
static int format_char(wchar_t wc) {
  static const wchar_t ranges[][2] = {{0x00ad, 0x00ad}, {0x061c, 0x061c}, {0x180e, 0x180e}, {0x200b, 0x200f},
                                      {0x202a, 0x202e}, {0x2060, 0x2064}, {0x2066, 0x206f}, {0xfeff, 0xfeff},
                                      {0xfff9, 0xfffb}};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    if (wc >= ranges[i][0] && wc <= ranges[i][1]) return 1;
  return 0;
}

/* Bytes of the character at 's' that may be shown as itself, 0 when its
** first byte is to be escaped. */
static size_t shown_as_is(const char *s, size_t n, int utf8) {
  const unsigned char c = (unsigned char)s[0];
  if (c < 0x80) return c >= 0x20 && c < 0x7f;
  uint32_t cp;
  size_t k = utf8 ? utf8_decode(s, n, &cp) : 0;
  if (!k || cp == UTF8_INVALID) return 0;
  /* iswprint says no to C1 controls and to what the locale cannot draw
  ** (term_print would show those as '?'); a U+FFFD the model wrote would
  ** read as a byte lost on the way. */
  wchar_t wc = (wchar_t)cp;
  return cp != UTF8_REPLACEMENT && !format_char(wc) && iswprint((wint_t)wc) ? k : 0;
}

size_t textesc(const char *in, size_t len, const char *newline, int utf8, char *out, size_t cap) {
  size_t w = 0;
  if (cap == 0) return 0;
  if (!newline) newline = "\n";
  for (size_t i = 0; i < len;) {
    char esc[TEXTESC_BYTES + 1];
    const char *piece = in + i;
    size_t used, k;
    if (in[i] == '\n') {
      piece = newline;
      k = strlen(newline);
      used = 1;
    } else if ((k = shown_as_is(in + i, len - i, utf8)) > 0) {
      used = k;
    } else {
      snprintf(esc, sizeof esc, "\\x%02x", (unsigned char)in[i]);
      piece = esc;
      k = TEXTESC_BYTES;
      used = 1;
    }
    if (w + k >= cap) break;
    memcpy(out + w, piece, k);
    w += k;
    i += used;
  }
  out[w] = '\0';
  return w;
}
