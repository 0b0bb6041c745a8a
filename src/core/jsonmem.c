/*
** jsonmem.c -- jansson's allocator: plain outside a window, counted inside
** one (see jsonmem.h for the rule that keeps the two apart).
*/
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "core/jsonmem.h"

/* The header of a counted block; the union keeps what follows it aligned
** for any type, as malloc's own blocks are. */
typedef union Header {
  struct {
    size_t size;   /* bytes asked for */
    size_t *used;  /* the counter charged */
  } h;
  max_align_t align;
} Header;

static _Thread_local JsonMem *jsonmem_window;
static atomic_int jsonmem_opened;   /* a window was ever entered */
static int jsonmem_installed;

int jsonmem_install(void) {
  if (jsonmem_installed) return 0;
  if (atomic_load_explicit(&jsonmem_opened, memory_order_relaxed)) return -1;
  json_set_alloc_funcs(jsonmem_malloc, jsonmem_free);
  jsonmem_installed = 1;
  return 0;
}

void jsonmem_enter(JsonMem *m) {
  atomic_store_explicit(&jsonmem_opened, 1, memory_order_relaxed);
  m->prev = jsonmem_window;
  jsonmem_window = m;
}

void jsonmem_leave(JsonMem *m) { jsonmem_window = m->prev; }

/* glibc's share: a size word before the block, 16-byte granules, 32 bytes
** at least. Counting it keeps the count near what the process pays for
** the many small nodes of a tree. */
size_t jsonmem_cost(size_t n) {
  size_t c = (n + sizeof(Header) + sizeof(size_t) + 15) & ~(size_t)15;
  return c < 32 ? 32 : c;
}

/* Whether growing a block charged 'was' to one charged 'now' keeps 'm'
** within its limit. */
static int fits(const JsonMem *m, size_t was, size_t now) {
  return !m->limit || now <= was || *m->used - was + now <= m->limit;
}

/* Ask the owner to free what it can, outside the window: what it runs to
** do so may use jansson for itself. */
static void reclaim(JsonMem *m) {
  if (!m->reclaim) return;
  jsonmem_window = m->prev;
  m->reclaim(m->ctx);
  jsonmem_window = m;
}

static void *counted_realloc(JsonMem *m, void *p, size_t n) {
  Header *old = p ? (Header *)p - 1 : NULL;
  size_t was = old ? jsonmem_cost(old->h.size) : 0;
  if (n > SIZE_MAX / 2) return NULL;
  size_t now = jsonmem_cost(n);
  if (!fits(m, was, now)) {
    reclaim(m);
    if (!fits(m, was, now)) {
      m->refused = 1;
      return NULL;
    }
  }
  size_t *used = old ? old->h.used : m->used;
  Header *b = old ? realloc(old, sizeof *b + n) : malloc(sizeof *b + n);
  if (!b) return NULL;
  *used = *used - was + now;
  b->h.size = n;
  b->h.used = used;
  return b + 1;
}

void *jsonmem_malloc(size_t n) {
  JsonMem *m = jsonmem_window;
  return m ? counted_realloc(m, NULL, n) : malloc(n);
}

void *jsonmem_realloc(void *p, size_t n) {
  JsonMem *m = jsonmem_window;
  return m ? counted_realloc(m, p, n) : realloc(p, n);
}

void jsonmem_free(void *p) {
  if (!jsonmem_window || !p) {
    free(p);
    return;
  }
  Header *b = (Header *)p - 1;
  *b->h.used -= jsonmem_cost(b->h.size);
  free(b);
}
