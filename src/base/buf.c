/* buf.c -- see buf.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/utf8.h"

/* Room for 'need' bytes and the NUL: 0, or -1 when memory ran out. The
** size doubles, so that text written a byte at a time costs little. */
static int reserve(Buf *b, size_t need) {
  if (need < b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap <= need) cap *= 2;
  char *p = realloc(b->s, cap);
  if (!p) return -1;
  b->s = p;
  b->cap = cap;
  return 0;
}

void buf_add(Buf *b, const void *p, size_t n) {
  size_t room = b->max ? (b->n < b->max ? b->max - b->n : 0) : n;
  if (n > room) {
    n = room - utf8_incomplete_tail(p, room);   /* whole characters only */
    b->cut = 1;
  }
  if (reserve(b, b->n + n) < 0) {
    b->cut = 1;
    return;
  }
  memcpy(b->s + b->n, p, n);
  b->n += n;
  b->s[b->n] = '\0';
}

void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
  char small[256];
  va_list again;
  va_copy(again, ap);
  int k = vsnprintf(small, sizeof small, fmt, ap);
  if (k < 0) b->cut = 1;
  else if ((size_t)k < sizeof small) buf_add(b, small, (size_t)k);
  else {
    /* Longer than the stack's room: formatted again into memory of its size. */
    char *big = malloc((size_t)k + 1);
    if (big && vsnprintf(big, (size_t)k + 1, fmt, again) == k) buf_add(b, big, (size_t)k);
    else b->cut = 1;
    free(big);
  }
  va_end(again);
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void buf_item(Buf *b, const char *sep, const char *fmt, ...) {
  if (b->n) buf_add(b, sep, strlen(sep));
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void buf_clear(Buf *b) {
  b->n = 0;
  b->cut = 0;
  if (b->s) b->s[0] = '\0';
}

void buf_free(Buf *b) {
  free(b->s);
  *b = (Buf){.max = b->max};
}
