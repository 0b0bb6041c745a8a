/*
** grow.h -- arrays that grow as they are filled: room made for 'need'
** items by doubling, so that n appends cost O(n) copying in all. Text has
** its own buffer (base/buf.h).
*/
#ifndef TIELAB_BASE_GROW_H
#define TIELAB_BASE_GROW_H

#include <stddef.h>

/* Room in '*p' (of '*cap' items of 'elem' bytes) for at least 'need'
** items: the capacity doubles from 16 (or from '*cap') until it is enough.
** 0, or -1 when memory runs out or the bytes would not fit a size_t; then
** '*p' and '*cap' are as they were. */
int grow_array(void **p, size_t *cap, size_t need, size_t elem);

#endif
