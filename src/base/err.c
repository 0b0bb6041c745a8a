/* err.c -- see err.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/text.h"

/* Messages end up on a screen; names and values in them come from files. */
static void make_showable(Err *e) {
  size_t n = strlen(e->msg);
  if (!text_needs_escape(e->msg, n)) return;
  char raw[ERR_MSG_MAX];
  memcpy(raw, e->msg, n + 1);
  text_escape(raw, n, e->msg, sizeof e->msg);
}

int err_set(Err *e, const char *fmt, ...) {
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    make_showable(e);
  }
  return -1;
}

int err_prefix(Err *e, const char *fmt, ...) {
  if (e) {
    char head[ERR_MSG_MAX], old[ERR_MSG_MAX];
    /* The joined text may be longer than 'msg': it is cut, by design. */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t n = strlen(head);
    if (n > sizeof e->msg - 3) n = sizeof e->msg - 3;
    memcpy(e->msg, head, n);
    memcpy(e->msg + n, ": ", 2);
    size_t room = sizeof e->msg - n - 3;
    size_t m = strlen(old);
    if (m > room) m = room;
    memcpy(e->msg + n + 2, old, m);
    e->msg[n + 2 + m] = '\0';
    make_showable(e);
  }
  return -1;
}

void err_one_line(Err *e) {
  for (char *s = e ? e->msg : NULL; s && *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}
