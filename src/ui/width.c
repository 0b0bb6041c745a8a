/*
** width.c -- columns of UTF-8 text, and its clusters (see width.h).
**
** Each character is decoded afresh: UTF-8 (and every locale the screen
** runs in) keeps no shift state between characters, and a bad byte then
** cannot spoil the next one.
*/
#include "ui/width.h"

#include <string.h>

#include "base/utf8.h"

#define ZERO_WIDTH_JOINER 0x200d

int width_wchar(wchar_t wc) {
  int w = wcwidth(wc);
  return w < 0 ? 1 : w;
}

size_t width_char(const char *s, size_t len, wchar_t *wc, int *cols) {
  mbstate_t st;
  memset(&st, 0, sizeof st);
  size_t k = mbrtowc(wc, s, len, &st);
  if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
    /* Bad UTF-8 is one bad character per maximal subpart, as base/utf8.h
    ** counts it; a character the locale cannot decode (valid UTF-8 under
    ** another codeset) stays a byte at a time. */
    uint32_t cp;
    size_t bad = utf8_decode(s, len, &cp);
    *wc = '?';
    *cols = 1;
    return cp == UTF8_INVALID ? bad : 1;
  }
  *cols = width_wchar(*wc);
  return k;
}

size_t width_cluster(const char *s, size_t len, int *cols) {
  wchar_t wc;
  size_t used = width_char(s, len, &wc, cols);
  while (used < len) {
    wchar_t next;
    int c;
    size_t k = width_char(s + used, len - used, &next, &c);
    if (c != 0 && wc != ZERO_WIDTH_JOINER) break;
    *cols += c;
    used += k;
    wc = next;
  }
  return used;
}

int width_cols(const char *s, size_t len) {
  int cols = 0, c;
  for (size_t at = 0; at < len;) {
    at += width_cluster(s + at, len - at, &c);
    cols += c;
  }
  return cols;
}

size_t width_prefix(const char *s, size_t len, int cols) {
  size_t at = 0;
  int have = 0, c;
  while (at < len) {
    size_t k = width_cluster(s + at, len - at, &c);
    if (have + c > cols) break;
    have += c;
    at += k;
  }
  return at;
}

size_t width_suffix(const char *s, size_t len, int cols) {
  int total = width_cols(s, len), before = 0, c;
  size_t at = 0;
  while (at < len && total - before > cols) {
    at += width_cluster(s + at, len - at, &c);
    before += c;
  }
  return at;
}

size_t width_cluster_at(const char *s, size_t len, size_t at, size_t *end) {
  size_t start = 0, next = 0;
  int c;
  while (next < len) {
    next = start + width_cluster(s + start, len - start, &c);
    if (at < next) break;
    start = next;
  }
  if (end) *end = next;
  return start;
}
