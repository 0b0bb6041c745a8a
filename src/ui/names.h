/*
** names.h -- run names shortened so that they still tell the runs apart,
** for the chart legends and the status line, which both show every run's
** name and both run short of room. Pure text: no curses. How a name is
** shortened: docs/architecture.md, 'Run names in little room'.
*/
#ifndef TIELAB_UI_NAMES_H
#define TIELAB_UI_NAMES_H

#include <stddef.h>

/* What one name shows: bytes [start, head) of it and, when 'cut', an
** ellipsis and bytes [tail, end). */
typedef struct NameCut {
  int start, head, tail, end;
  int cut;
} NameCut;

#define NAMES_MAX 64   /* names shortened together; any more are left whole */

/* Shorten 'n' names: 'affix' drops the parts they share; names wider
** than 'max' columns are cut to at most 'max', an ellipsis of 'ell'
** columns included. Returns 1 when the names shown are as distinct as the
** names themselves, 0 when 'max' is too small for that. */
int names_fit(const char *const *names, int n, int affix, int max, int ell, NameCut *out);

/* Columns the name shows, with an ellipsis of 'ell' columns when cut. */
int names_cols(const char *name, const NameCut *c, int ell);

/* The name as shown, with 'ellipsis' where it is cut; in a 'buf' too
** small, as many whole clusters as it holds. */
void names_text(const char *name, const NameCut *c, const char *ellipsis, char *buf, size_t cap);

#endif
