/*
** box.h -- a panel in a box, as btop draws them: a rounded border whose top
** row carries the panel's title (a chart's legend too) and whose bottom row
** may carry a footnote, so that panels never run into one another or into
** the REPL below them.
**
** The panel draws into its content window, which spans every row of the
** box and its columns inside the border less one of padding on the left:
** row 0 lies on the top border, the last row on the bottom border. What a
** panel leaves blank on those two rows becomes the border's line when the
** box is finished, but for one space each side of text, so a title reads
** "╭ loss ─ tied ──╮".
**
** The panel's draw function is handed the content window and the rows
** above the bottom border (h - 1): a panel that writes a footnote on the
** border, or a chart whose time axis lies on it, finds that row with
** getmaxy.
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
