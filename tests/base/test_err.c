/*
** test_err.c -- the error value: a message set with printf's formats, a
** prefix put in front, escape sequences from a quoted name made harmless,
** and a message kept to one line whatever a name in it holds.
*/
#include <string.h>

#include "base/err.h"
#include "tap.h"

int main(void) {
  Err e = {0};
  ok(err_set(&e, "%s: %d rows", "x.bin", 3) == -1 && strcmp(e.msg, "x.bin: 3 rows") == 0, "err_set: %s", e.msg);
  ok(err_prefix(&e, "load %s", "run") == -1 && strcmp(e.msg, "load run: x.bin: 3 rows") == 0, "err_prefix: %s",
     e.msg);
  err_set(&e, "bad \x1b]0;title\x07 name");
  ok(strchr(e.msg, '\x1b') == NULL && strchr(e.msg, '\x07') == NULL, "an escape sequence is not kept: %s", e.msg);
  err_set(&e, "tensor 'a\nb\tc' is short");
  err_one_line(&e);
  ok(strcmp(e.msg, "tensor 'a?b?c' is short") == 0, "err_one_line: newline and tab as '?': %s", e.msg);
  strcpy(e.msg, "del\x7f!");
  err_one_line(&e);
  ok(strcmp(e.msg, "del?!") == 0, "err_one_line: DEL as '?'");
  err_one_line(NULL);
  ok(err_set(NULL, "nobody listens") == -1, "a NULL Err is allowed");
  return tap_done();
}
