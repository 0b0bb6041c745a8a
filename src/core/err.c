/* err.c -- see err.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

int err_set(Err *e, const char *fmt, ...) {
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int err_prefix(Err *e, const char *fmt, ...) {
  if (e) {
    char head[ERR_MSG_MAX], old[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
  }
  return -1;
}
