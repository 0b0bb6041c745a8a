/*
** jsonmem.h -- jansson's memory, counted against a caller's budget while
** the caller asks: what a script makes jansson allocate (a decoded tree,
** an encoded text) is held to the same cap as the script's own heap.
**
** jsonmem_install gives jansson this module's allocator, once, before the
** program makes any jansson object. Outside a window the allocator is plain
** malloc and free, so every other user of jansson, on every thread, is as
** before (a json_dumps result is still free()d). Between jsonmem_enter and
** jsonmem_leave on one thread, each block jansson allocates carries a
** header with its size and the counter it was charged to, and a block that
** would take the counter past the limit is refused (jansson then fails as
** for malloc's NULL).
**
** The rule that keeps the two kinds apart: a block made in a window is
** freed in a window (any window, on any thread), and a block made outside
** one is freed outside one. So a window holds jansson calls on the
** caller's own tree and nothing else: no callback into code that could use
** jansson for something else, no longjmp out.
*/
#ifndef TIELAB_CORE_JSONMEM_H
#define TIELAB_CORE_JSONMEM_H

#include <stddef.h>

typedef struct JsonMem JsonMem;
struct JsonMem {
  size_t *used;                /* the count charged and un-charged, in bytes */
  size_t limit;                /* *used may not pass it; 0: no limit */
  void (*reclaim)(void *ctx);  /* asked, outside the window, to free what it can before a refusal */
  void *ctx;
  int refused;                 /* a block was refused for 'limit' */
  JsonMem *prev;               /* the window this one opened inside */
};

/* Give jansson this module's allocator. Returns 0, or -1 when a window has
** already been opened (blocks made before would be taken for counted ones);
** a second call does nothing. */
int jsonmem_install(void);

/* Charge this thread's jansson allocations to 'm' until jsonmem_leave(m). */
void jsonmem_enter(JsonMem *m);
void jsonmem_leave(JsonMem *m);

/* The allocator itself, for a buffer the caller keeps beside its tree
** (counted in a window, plain outside one; the rule above holds). */
void *jsonmem_malloc(size_t n);
void *jsonmem_realloc(void *p, size_t n);
void jsonmem_free(void *p);

/* What a block of 'n' bytes is charged: malloc's own share too. */
size_t jsonmem_cost(size_t n);

#endif
