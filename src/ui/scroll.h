/*
** scroll.h -- the REPL's output pane: a bounded list of lines (results,
** errors, echoed input, notes) wrapped at spaces to the pane's width when
** drawn, with a scroll position for PgUp/PgDn.
*/
#ifndef TIELAB_UI_SCROLL_H
#define TIELAB_UI_SCROLL_H

#include <stddef.h>

#include "ui/term.h"

typedef enum ScrollKind { SCROLL_OUT, SCROLL_ERR, SCROLL_ECHO, SCROLL_NOTE } ScrollKind;

typedef struct Scroll Scroll;

Scroll *scroll_new(int max_lines);
void scroll_free(Scroll *s);

/* Append text; it is split at newlines, and text without a final newline
** is continued by the next call of the same kind. */
void scroll_add(Scroll *s, const char *text, size_t n, ScrollKind kind);
void scroll_addf(Scroll *s, ScrollKind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Move the view by 'pages' pages (negative: back in time); 0: to the end. */
void scroll_page(Scroll *s, int pages, int height);
/* The view shows the newest lines; the oldest (as far as the last draw
** knew). */
int scroll_at_end(const Scroll *s);
int scroll_at_start(const Scroll *s);

/* Draw the newest lines that fit (or those at the scroll position). */
void scroll_draw(Scroll *s, const Term *t, WINDOW *w, int h, int wd);

/* Rows the newest lines take at width 'w', counted up to 'cap': the rows
** the pane would fill. */
int scroll_rows(const Scroll *s, int w, int cap);

/* Grows with every change, for redraw decisions. */
long scroll_version(const Scroll *s);

#endif
