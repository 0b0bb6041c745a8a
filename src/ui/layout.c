/*
** layout.c -- panel rectangles for a terminal size.
**
** The lab view, top to bottom: the status line; the chart row; the lower
** band (lens, alignment table, sample; or a script's results); the REPL's
** output; its input line; the hint line. The chart row holds loss and
** gradient ratio, from 120 columns a third column (the alignment chart over
** the scripts' series or gradient norms), from 160 columns four charts side
** by side. Extra rows go mostly to the charts and the lower band, little to
** the REPL, whose output is often a line or two: rows it leaves empty are
** rows of the terminal not used.
*/
#include "ui/layout.h"

#include <string.h>

enum {
  SCROLL_ROWS = 5,        /* the REPL's output at 80x24 */
  RESULTS_SCROLL_ROWS = 3,/* ... while the results panel is shown */
  BAND_ROWS = 7,          /* the lower band at 80x24 */
  ALIGN_COMPACT_ROWS = 4, /* title, column names, E_in, E_out */
  ALIGN_FULL_ROWS = 10,   /* title, column names, eight metrics */
  PRESENT_CHART_MIN = 6,  /* rows the present view keeps for its chart */
};

static Rect rect(int y, int x, int h, int w) { return (Rect){y, x, h > 0 ? h : 0, w > 0 ? w : 0}; }

int layout_is_chart(int panel) {
  static const int charts[] = {P_LOSS, P_RATIO, P_EXTRA, P_LENS, P_ALIGN, P_ALIGNCHART, P_SCATTER};
  for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++)
    if (charts[i] == panel) return 1;
  return 0;
}

/* The chart row: 'n' columns of charts from the table, in order. */
static void chart_row(Rect *r, int y, int h, int cols) {
  if (cols >= 160) {
    static const PanelId four[] = {P_LOSS, P_RATIO, P_ALIGNCHART, P_EXTRA};
    int w = cols / 4;
    for (int i = 0; i < 4; i++) r[four[i]] = rect(y, i * w, h, i == 3 ? cols - 3 * w : w);
  } else if (cols >= 120) {
    int w = cols / 3, top = (h + 1) / 2;
    r[P_LOSS] = rect(y, 0, h, w);
    r[P_RATIO] = rect(y, w, h, w);
    r[P_ALIGNCHART] = rect(y, 2 * w, top, cols - 2 * w);
    r[P_EXTRA] = rect(y + top, 2 * w, h - top, cols - 2 * w);
  } else {
    int w = cols / 2;
    r[P_LOSS] = rect(y, 0, h, w);
    r[P_RATIO] = rect(y, w, h, cols - w);
  }
}

/* The lower band: lens on the left; the alignment table and the sample
** share the rest, in columns when there are 120 of them. */
static void lower_band(Rect *r, int y, int h, int cols) {
  if (cols >= 120) {
    int w = cols / 3;
    r[P_LENS] = rect(y, 0, h, w);
    r[P_ALIGN] = rect(y, w, h, w);
    r[P_SAMPLE] = rect(y, 2 * w, h, cols - 2 * w);
    return;
  }
  int w = cols / 2;
  /* The full table when the sample keeps a few rows under it. */
  int ah = h >= ALIGN_FULL_ROWS + 4 ? ALIGN_FULL_ROWS : ALIGN_COMPACT_ROWS;
  if (ah > h) ah = h;
  r[P_LENS] = rect(y, 0, h, w);
  r[P_ALIGN] = rect(y, w, ah, cols - w);
  r[P_SAMPLE] = rect(y + ah, w, h - ah, cols - w);
}

/* A zoomed panel over the chart area; the alignment table keeps its rows
** and gives the rest to its chart over time. */
static void zoomed(Rect *r, int zoom, int y, int h, int cols) {
  if (zoom == P_ALIGN && h >= ALIGN_FULL_ROWS + PRESENT_CHART_MIN) {
    r[P_ALIGN] = rect(y, 0, ALIGN_FULL_ROWS, cols);
    r[P_ALIGNCHART] = rect(y + ALIGN_FULL_ROWS, 0, h - ALIGN_FULL_ROWS, cols);
    return;
  }
  r[zoom] = rect(y, 0, h, cols);
}

static void lab_view(Layout *l, const LayoutAsk *ask) {
  int R = l->rows, C = l->cols, extra = R - LAYOUT_MIN_ROWS;
  Rect *r = l->r;
  r[P_STATUS] = rect(0, 0, 1, C);
  r[P_HINT] = rect(R - 1, 0, 1, C);
  r[P_INPUT] = rect(R - 2, 0, 1, C);
  int plain_h = SCROLL_ROWS + extra / 10, results_h = RESULTS_SCROLL_ROWS + extra / 20;
  int scroll_h = ask->results ? results_h : plain_h;
  r[P_SCROLL] = rect(R - 2 - scroll_h, 0, scroll_h, C);

  /* The charts and the lower band: 16 rows at 80x24 (7 for the band). The
  ** results panel gets the rows the REPL gives up; the charts stay. */
  int top = 1, mh = r[P_SCROLL].y - top;
  int base = mh - (scroll_h == plain_h ? 0 : plain_h - scroll_h);
  int gh = (LAYOUT_MIN_ROWS - 3 - SCROLL_ROWS - BAND_ROWS) + (base - 16) * 3 / 5;
  int bh = mh - gh, by = top + gh;
  if (ask->results) r[P_RESULTS] = rect(by, 0, bh, C);
  if (ask->zoom >= 0) {
    zoomed(r, ask->zoom, top, ask->results ? gh : mh, C);
    return;
  }
  chart_row(r, top, gh, C);
  if (!ask->results) lower_band(r, by, bh, C);
}

/* The present view: status, the caption, big digits, one chart taking
** every row left, the REPL's input and the hint line. */
static void present_view(Layout *l, const LayoutAsk *ask) {
  int R = l->rows, C = l->cols;
  Rect *r = l->r;
  int cap = ask->caption_rows, room = R - 6 - PRESENT_CHART_MIN;
  if (cap > room) cap = room;
  if (cap < 0) cap = 0;
  int chart = layout_is_chart(ask->chart) ? ask->chart : P_LOSS;
  r[P_STATUS] = rect(0, 0, 1, C);
  r[P_CAPTION] = rect(1, 0, cap, C);
  r[P_BIG] = rect(1 + cap, 0, 3, C);
  r[chart] = rect(4 + cap, 0, R - 6 - cap, C);
  r[P_INPUT] = rect(R - 2, 0, 1, C);
  r[P_HINT] = rect(R - 1, 0, 1, C);
}

void layout_compute(Layout *l, int rows, int cols, const LayoutAsk *ask) {
  static const LayoutAsk lab = {.view = VIEW_LAB, .zoom = -1, .chart = P_LOSS};
  LayoutAsk a = ask ? *ask : lab;
  memset(l, 0, sizeof *l);
  l->rows = rows;
  l->cols = cols;
  int min_r = a.view == VIEW_PRESENT ? LAYOUT_PRESENT_MIN_ROWS : LAYOUT_MIN_ROWS;
  int min_c = a.view == VIEW_PRESENT ? LAYOUT_PRESENT_MIN_COLS : LAYOUT_MIN_COLS;
  if (rows < min_r || cols < min_c) {
    l->too_small = 1;
    return;
  }
  if (!layout_is_chart(a.zoom)) a.zoom = -1;
  if (a.view == VIEW_PRESENT) present_view(l, &a);
  else lab_view(l, &a);
}

Rect layout_center(int rows, int cols, int h, int w) {
  if (h > rows) h = rows;
  if (w > cols - 2) w = cols - 2;
  return rect((rows - h) / 2, (cols - w) / 2, h, w);
}
