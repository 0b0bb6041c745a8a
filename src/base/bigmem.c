/* bigmem.c -- see bigmem.h. */
#include <stdlib.h>
#include <sys/mman.h>

#include "base/bigmem.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *bigmem_alloc(size_t bytes) {
  /* Below a huge page the alignment would only waste memory. */
  if (bytes < HUGE_PAGE) return malloc(bytes ? bytes : 1);
  void *p = NULL;
  if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE);  /* advice only: refused is fine */
#endif
  return p;
}
