/*
** jsonmem.h -- jansson's memory, counted against a caller's budget while
** the caller asks: what a script makes jansson allocate (a decoded tree,
** an encoded text) is held to the same cap as the script's own heap. The
** windows and the rule that keeps their blocks apart from the others:
** docs/architecture.md, 'jansson's memory'.
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
