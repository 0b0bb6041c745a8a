/*
** fit.h -- text made to fit a width on purpose, never cut by the edge.
**
** A label that does not fit is shortened where a reader expects it: at a
** word boundary with an ellipsis, or replaced by a shorter variant the
** caller wrote for the purpose. Long text wraps at spaces. Widths are
** display columns of UTF-8 text, measured by width.h (wide characters
** count two, accents none, invalid bytes one; never cut inside a
** character and its accents); the caller's locale decides, as it does for
** curses. Everything
** but 'fit_print' is pure text in, text out, so the tests check it
** without a terminal.
*/
#ifndef TIELAB_UI_FIT_H
#define TIELAB_UI_FIT_H

#include <stddef.h>

#include "ui/term.h"

/* Display columns of 's'. */
int fit_cols(const char *s);

/* Bytes of the longest prefix of 's' (whole clusters) in 'cols' columns. */
size_t fit_prefix(const char *s, int cols);

/* 's' itself when it fits 'width'; else into 'buf' its longest beginning
** that ends at a word boundary, followed by 'ellipsis' ("…" or "..."),
** within 'width'. A first word longer than the width is shortened inside,
** still with the ellipsis; a width too small for the ellipsis gives "". */
const char *fit_text(const char *s, int width, const char *ellipsis, char *buf, size_t cap);

/* The first of 'n' variants (longest first) that fits 'width'; when none
** does, the last one shortened by fit_text. */
const char *fit_choose(const char *const *variants, int n, int width, const char *ellipsis, char *buf,
                       size_t cap);

/* The first line of 's' wrapped at 'width': returns its bytes, which end
** before a space where there is one in reach (a word longer than the
** width is broken); '*next' is where the next line starts, its leading
** spaces skipped. */
size_t fit_wrap(const char *s, int width, const char **next);

/* How many lines fit_wrap makes of 's' (at least 1). */
int fit_lines(const char *s, int width);

/* term_print of the formatted text, shortened by fit_text to 'maxw' with
** the terminal's ellipsis; returns the columns used. */
int fit_print(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* A message in at most 'rows' lines of 'maxw' columns, wrapped at spaces:
** the first of 'n' variants (longest first) that fits whole, else the
** last, its final line ended by an ellipsis. Returns the rows used. */
int fit_block(const Term *t, WINDOW *w, int y, int x, int rows, int maxw, int role, const char *const *variants,
              int n);

#endif
