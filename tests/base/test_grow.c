/*
** test_grow.c -- base/grow.h: room made by doubling, the items kept, and
** a size past what a size_t holds refused with the array left as it was.
*/
#include <stdint.h>
#include <stdlib.h>

#include "base/grow.h"
#include "tap.h"

int main(void) {
  int *a = NULL;
  size_t cap = 0, n = 0, grown = 0;
  int kept = 1;
  for (int i = 0; i < 100000; i++) {
    size_t before = cap;
    if (grow_array((void **)&a, &cap, n + 1, sizeof *a) < 0) break;
    grown += cap != before;
    a[n++] = i;
  }
  for (size_t i = 0; i < n; i++) kept &= a[i] == (int)i;
  ok(n == 100000 && kept, "100000 appends, every item kept");
  ok(cap >= n && cap < 2 * n && grown <= 14, "the capacity doubles: %zu for %zu items, %zu reallocations", cap, n, grown);
  int *same = a;
  ok(grow_array((void **)&a, &cap, 10, sizeof *a) == 0 && a == same, "room already there: nothing moves");
  size_t was = cap;
  ok(grow_array((void **)&a, &cap, SIZE_MAX / 2, sizeof *a) < 0 && a == same && cap == was,
     "more bytes than a size_t holds: refused, the array as it was");
  free(a);
  char *b = NULL;
  size_t bc = 0;
  ok(grow_array((void **)&b, &bc, 20, 1) == 0 && bc == 32, "from nothing: 16 doubled until enough (%zu)", bc);
  free(b);
  return tap_done();
}
