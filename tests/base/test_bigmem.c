/*
** test_bigmem.c -- large working arrays: aligned to a huge page, usable to
** the last byte, advised as huge-page memory where the kernel has
** transparent huge pages (the mapping's VmFlags carry "hg"), and small
** requests served as ordinary memory.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bigmem.h"
#include "tap.h"

#define MIB ((size_t)1 << 20)

/* The VmFlags line of the mapping that holds 'p', from /proc/self/smaps. */
static int vm_flags_of(const void *p, char *flags, size_t size) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int inside = 0, found = -1;
  uintptr_t a = (uintptr_t)p;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) inside = a >= lo && a < hi;
    else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      snprintf(flags, size, "%s", line + 8);
      flags[strcspn(flags, "\n")] = 0;
      found = 0;
      break;
    }
  }
  fclose(f);
  return found;
}

int main(void) {
  size_t big = 64 * MIB + 12345;
  unsigned char *p = bigmem_alloc(big);
  ok(p != NULL, "64 MiB allocated");
  if (!p) return tap_done();
  ok(((uintptr_t)p & (2 * MIB - 1)) == 0, "aligned to 2 MiB");
  memset(p, 0xab, big);
  ok(p[0] == 0xab && p[big - 1] == 0xab, "usable from the first byte to the last");

  char flags[256];
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0 || TAP_UNDER_ASAN)
    skip("no transparent huge pages in this kernel, or under AddressSanitizer (its own allocator)");
  else
    ok(vm_flags_of(p, flags, sizeof flags) == 0 && strstr(flags, " hg") != NULL,
       "the mapping is advised as huge-page memory (VmFlags:%s)", flags);
  free(p);

  unsigned char *small = bigmem_alloc(100);
  ok(small != NULL, "a small request is served");
  if (small) memset(small, 1, 100);
  free(small);
  void *none = bigmem_alloc(0);
  ok(none != NULL, "zero bytes gives a pointer free() takes");
  free(none);
  if (TAP_UNDER_ASAN)
    skip("AddressSanitizer reports an impossible size itself");
  else
    ok(bigmem_alloc(SIZE_MAX / 2) == NULL, "an impossible size is refused with NULL");
  return tap_done();
}
