/*
** buf.h -- text that grows as it is written: a frame of a recording, what
** a script prints, a note put together piece by piece, a printed value.
**
** Writing never fails outright. What does not fit -- past the buffer's
** 'max', or when memory runs out -- is left out and 'cut' says so; text
** is cut between two UTF-8 characters, never inside one. The bytes are
** NUL-terminated as soon as any were written.
*/
#ifndef TIELAB_BASE_BUF_H
#define TIELAB_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct Buf {
  char *s;       /* the text, NUL-terminated; NULL until something is written */
  size_t n;      /* its bytes, the NUL not counted */
  size_t cap;    /* bytes allocated */
  size_t max;    /* the most bytes it may hold; 0: as many as memory allows */
  int cut;       /* something was left out */
} Buf;

/* Append 'n' bytes of 'p'; what does not fit is left out (see above). */
void buf_add(Buf *b, const void *p, size_t n);

/* Append a printf-style text. */
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buf *b, const char *fmt, va_list ap);

/* One item more in a list: 'sep' first (", ", "; ") unless the text is
** still empty, then the printf-style item. */
void buf_item(Buf *b, const char *sep, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Empty it, keeping its memory and its 'max'. */
void buf_clear(Buf *b);

/* Free its memory; it is empty and can be written again ('max' kept). */
void buf_free(Buf *b);

#endif
