/*
** test_jsonmem.c -- jansson's allocator: counted in a window, refused past
** the limit (after asking for a collection), un-charged to the counter a
** block was charged to, and plain malloc outside a window.
*/
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/jsonmem.h"
#include "tap.h"

/* A JSON array of 'n' zeros. */
static char *zeros(size_t n) {
  char *s = malloc(2 * n + 2);
  if (!s) return NULL;
  s[0] = '[';
  for (size_t i = 0; i < n; i++) s[1 + 2 * i] = '0', s[2 + 2 * i] = ',';
  s[2 * n] = ']';
  s[2 * n + 1] = '\0';
  return s;
}

/* The heap being asked to collect: it gives back what it held. */
static void collect(void *ctx) { *(size_t *)ctx = 0; }

int main(void) {
  ok(jsonmem_install() == 0 && jsonmem_install() == 0, "installed, and a second time is nothing");

  json_t *plain = json_pack("{s:[i,i]}", "a", 1, 2);
  char *text = json_dumps(plain, JSON_COMPACT);
  ok(text && strcmp(text, "{\"a\":[1,2]}") == 0, "outside a window jansson is as before: %s", text);
  free(text);   /* plain malloc: free() is right for it */
  json_decref(plain);

  size_t used = 0;
  JsonMem m = {.used = &used};
  char *src = zeros(100000);
  jsonmem_enter(&m);
  json_t *tree = json_loads(src, 0, NULL);
  jsonmem_leave(&m);
  ok(tree && used >= 100000 * jsonmem_cost(sizeof(json_int_t)), "a tree of 100000 integers is counted: %zu bytes",
     used);

  JsonMem later = {.used = &used};
  jsonmem_enter(&later);
  json_decref(tree);
  jsonmem_leave(&later);
  ok(used == 0, "freed in another window, every byte is un-charged: %zu left", used);

  m = (JsonMem){.used = &used, .limit = 1 << 20};
  jsonmem_enter(&m);
  tree = json_loads(src, 0, NULL);
  jsonmem_leave(&m);
  ok(!tree && m.refused && used == 0, "past a 1 MiB limit: refused, and the half-made tree given back (%zu)", used);

  size_t heap = 900 << 10;   /* the caller's own blocks on the same counter */
  m = (JsonMem){.used = &heap, .limit = 1 << 20};
  jsonmem_enter(&m);
  void *p = jsonmem_malloc(200 << 10);
  jsonmem_leave(&m);
  ok(!p && m.refused && heap == 900 << 10, "a block the counter's other holders leave no room for is refused");

  m = (JsonMem){.used = &heap, .limit = 1 << 20, .reclaim = collect, .ctx = &heap};
  jsonmem_enter(&m);
  p = jsonmem_malloc(200 << 10);
  p = jsonmem_realloc(p, 400 << 10);
  size_t held = heap;
  jsonmem_free(p);
  jsonmem_leave(&m);
  ok(!m.refused && held == jsonmem_cost(400 << 10) && heap == 0,
     "a collection first makes room; a grown block is charged its new size (%zu)", held);

  p = jsonmem_malloc(64);
  free(p);   /* outside every window: plain */
  ok(1, "after the last window closes, blocks are plain again");

  free(src);
  return tap_done();
}
