/*
** test_buf.c -- base/buf.h: text that grows as it is written, printf
** into it (short and longer than the stack's room), lists, a limit that cuts
** between UTF-8 characters, clearing and freeing.
*/
#include <string.h>

#include "base/buf.h"
#include "tap.h"

static void test_growth(void) {
  Buf b = {0};
  ok(b.s == NULL && b.n == 0, "an empty buffer holds nothing and no memory");
  buf_add(&b, "", 0);
  ok(b.s && b.s[0] == '\0' && b.n == 0, "adding nothing still gives a NUL-terminated text");
  int same = 1;
  for (int i = 0; i < 100000; i++) buf_add(&b, "ab", 2);
  for (size_t i = 0; i < b.n; i++) same &= b.s[i] == "ab"[i % 2];
  ok(b.n == 200000 && same && b.s[b.n] == '\0' && !b.cut, "100000 small pieces grow it to %zu bytes, whole", b.n);
  ok(b.cap > b.n && b.cap <= 2 * (b.n + 1) + 256, "its memory doubles: %zu bytes for %zu", b.cap, b.n);
  buf_clear(&b);
  ok(b.n == 0 && b.s[0] == '\0' && b.cap > 0, "cleared, it keeps its memory");
  buf_free(&b);
  ok(b.s == NULL && b.n == 0 && b.cap == 0, "freed, it is empty again");
}

static void test_printf(void) {
  Buf b = {0};
  buf_printf(&b, "%d runs, %s", 3, "tied");
  buf_printf(&b, "; %.2f", 0.5);
  ok(strcmp(b.s, "3 runs, tied; 0.50") == 0, "printf appends: %s", b.s);
  char long_text[1000];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  buf_clear(&b);
  buf_printf(&b, "<%s>", long_text);
  ok(b.n == 1001 && b.s[0] == '<' && b.s[1000] == '>' && !b.cut, "a text longer than 256 bytes comes whole (%zu)", b.n);
  buf_free(&b);
  buf_item(&b, ", ", "%s", "wte");
  buf_item(&b, ", ", "%s (step %d)", "wpe", 3);
  ok(strcmp(b.s, "wte, wpe (step 3)") == 0, "items of a list, the separator between them: %s", b.s);
  buf_free(&b);
}

static void test_max(void) {
  Buf b = {.max = 8};
  buf_add(&b, "abcdef", 6);
  buf_add(&b, "gh", 2);
  ok(b.n == 8 && !b.cut && strcmp(b.s, "abcdefgh") == 0, "up to its max, nothing is cut");
  buf_add(&b, "i", 1);
  ok(b.n == 8 && b.cut, "a byte past it is left out and 'cut' says so");
  buf_clear(&b);
  ok(!b.cut && b.max == 8, "clearing forgets the cut, keeps the max");
  buf_add(&b, "abcde\xe2\x82\xac", 8);
  ok(b.n == 8 && !b.cut, "a character that fits exactly is kept");
  buf_clear(&b);
  buf_add(&b, "abcdef\xe2\x82\xac", 9);
  ok(b.n == 6 && b.cut && strcmp(b.s, "abcdef") == 0, "one that does not is left out whole, never cut inside");
  buf_clear(&b);
  buf_printf(&b, "%s", "0123456789");
  ok(b.n == 8 && b.cut && strcmp(b.s, "01234567") == 0, "printf is cut at the max too: %s", b.s);
  buf_free(&b);
  ok(b.max == 8, "freeing keeps the max");
}

int main(void) {
  test_growth();
  test_printf();
  test_max();
  return tap_done();
}
