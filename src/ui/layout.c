/*
** layout.c -- panel rectangles for a terminal size.
*/
#include "layout.h"

#include <string.h>

static Rect rect(int y, int x, int h, int w) { return (Rect){y, x, h > 0 ? h : 0, w > 0 ? w : 0}; }

/* The lab view: a status line, charts on top, lens/alignment/sample below
** them, the REPL and the hint line at the bottom. */
static void lab_view(Layout *l, int zoom) {
  int R = l->rows, C = l->cols, extra = R - LAYOUT_MIN_ROWS;
  Rect *r = l->r;
  r[P_STATUS] = rect(0, 0, 1, C);
  r[P_HINT] = rect(R - 1, 0, 1, C);
  r[P_INPUT] = rect(R - 2, 0, 1, C);
  int scroll_h = 5 + extra * 2 / 5;
  r[P_SCROLL] = rect(R - 2 - scroll_h, 0, scroll_h, C);

  int top = 1, mh = r[P_SCROLL].y - top;     /* the chart area: 16 rows at 80x24 */
  if (zoom >= 0) {
    r[zoom] = rect(top, 0, mh, C);
    return;
  }
  int gh = 9 + (mh - 16) * 3 / 5, bh = mh - gh, by = top + gh;
  if (C >= 120) {
    int w3 = C / 3;
    r[P_LOSS] = rect(top, 0, gh, w3);
    r[P_RATIO] = rect(top, w3, gh, w3);
    r[P_EXTRA] = rect(top, 2 * w3, gh, C - 2 * w3);
    r[P_LENS] = rect(by, 0, bh, w3);
    r[P_ALIGN] = rect(by, w3, bh, w3);
    r[P_SAMPLE] = rect(by, 2 * w3, bh, C - 2 * w3);
  } else {
    int w2 = C / 2;
    r[P_LOSS] = rect(top, 0, gh, w2);
    r[P_RATIO] = rect(top, w2, gh, C - w2);
    r[P_LENS] = rect(by, 0, bh, w2);
    r[P_ALIGN] = rect(by, w2, 4, C - w2);
    r[P_SAMPLE] = rect(by + 4, w2, bh - 4, C - w2);
  }
}

/* The present view: the caption, big digits and one large chart, for a
** projector. */
static void present_view(Layout *l, const LayoutAsk *a) {
  int R = l->rows, C = l->cols, cap = a->caption_rows > 0 ? a->caption_rows : 0;
  if (R - 6 - cap < 4) cap = 0;   /* the chart comes first */
  Rect *r = l->r;
  r[P_STATUS] = rect(0, 0, 1, C);
  r[P_CAPTION] = rect(1, 0, cap, C);
  r[P_BIG] = rect(1 + cap, 0, 3, C);
  r[layout_is_chart(a->chart) ? a->chart : P_LOSS] = rect(4 + cap, 0, R - 6 - cap, C);
  r[P_INPUT] = rect(R - 2, 0, 1, C);
  r[P_HINT] = rect(R - 1, 0, 1, C);
}

int layout_is_chart(int panel) {
  static const int charts[] = {P_LOSS, P_RATIO, P_EXTRA, P_LENS, P_ALIGN, P_SCATTER, P_ALIGNCHART};
  for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++)
    if (charts[i] == panel) return 1;
  return 0;
}

void layout_compute(Layout *l, int rows, int cols, const LayoutAsk *ask) {
  static const LayoutAsk lab = {.view = VIEW_LAB, .zoom = -1, .chart = P_LOSS};
  const LayoutAsk *a = ask ? ask : &lab;
  memset(l, 0, sizeof *l);
  l->rows = rows;
  l->cols = cols;
  int min_r = a->view == VIEW_PRESENT ? LAYOUT_PRESENT_MIN_ROWS : LAYOUT_MIN_ROWS;
  int min_c = a->view == VIEW_PRESENT ? LAYOUT_PRESENT_MIN_COLS : LAYOUT_MIN_COLS;
  if (rows < min_r || cols < min_c) {
    l->too_small = 1;
    return;
  }
  if (a->view == VIEW_PRESENT) present_view(l, a);
  else lab_view(l, layout_is_chart(a->zoom) ? a->zoom : -1);
}

Rect layout_center(int rows, int cols, int h, int w) {
  if (h > rows - 2) h = rows - 2;
  if (w > cols - 2) w = cols - 2;
  return rect((rows - h) / 2, (cols - w) / 2, h, w);
}
