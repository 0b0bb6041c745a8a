/*
** box.h -- a panel in a box, as btop draws them: a rounded border whose top
** row carries the panel's title (a chart's legend too) and whose bottom row
** may carry a footnote, so that panels never run into one another or into
** the REPL below them. The content window and the rows a panel draws on:
** docs/architecture.md, 'Boxes'.
*/
#ifndef TIELAB_UI_BOX_H
#define TIELAB_UI_BOX_H

#include "ui/term.h"

/* The content window of a box drawn in 'outer' (h x w), or NULL when it
** is too small for one (fewer than 2 rows or 4 columns). */
WINDOW *box_content(WINDOW *outer, int h, int w);

/* Before the panel draws: the side borders and the corners. */
void box_begin(const Term *t, WINDOW *outer, int h, int w);

/* After it: the top and bottom rows made border where the panel left them
** blank. */
void box_finish(const Term *t, WINDOW *outer, int h, int w);

#endif
