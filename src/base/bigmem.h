/*
** bigmem.h -- memory for large working arrays (hundreds of megabytes):
** aligned to 2 MiB and advised to the kernel as huge-page memory, so the
** first touch costs one page fault per 2 MiB rather than one per 4 KiB.
** On a virtual machine a fault is dear: for the alignment metrics of two
** 50k x 2048 matrices, faults were a fifth of the time. Where the kernel
** has no transparent huge pages the advice is ignored and the memory is
** ordinary. Free it with free().
*/
#ifndef TIELAB_BASE_BIGMEM_H
#define TIELAB_BASE_BIGMEM_H

#include <stddef.h>

/* 'bytes' of uninitialised memory, or NULL. */
void *bigmem_alloc(size_t bytes);

#endif
