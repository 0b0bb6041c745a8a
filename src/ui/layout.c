/*
** layout.c -- panel rectangles for a terminal size. The bands of the lab
** view, top to bottom, and how rows are shared out: docs/architecture.md,
** 'The layout's bands'.
**
** Which panel is a chart, which is boxed, comes from the panel table
** (panelinfo.c).
*/
#include "ui/layout.h"

#include <string.h>

enum {
  SCROLL_MAX = 5,         /* the REPL's output at most, at 80x24 */
  CHART_MIN = 8,          /* rows a chart band keeps while the bands under it can give */
  BOX = 2,                /* a box's top and bottom border */
  LENS_DEFAULT = 5,       /* column heads and four positions */
  BAND_MIN = 8,           /* the narrow screen's lower band */
  ALIGN_FULL_ROWS = 12,   /* a box round column heads, eight metrics and a note */
  PRESENT_CHART_MIN = 6,  /* rows the present view keeps for its chart */
};

/* The least rows of a panel, from the panel table: a chart on the
** shortest screens, the compact alignment table, the lens at three
** positions, the sample's one line, the lens history's small chart. */
static int min_rows(PanelId id) { return layout_panel(id)->min_rows; }

static Rect rect(int y, int x, int h, int w) { return (Rect){y, x, h > 0 ? h : 0, w > 0 ? w : 0}; }

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The chart band: loss and gradient ratio, from 120 columns the alignment
** chart beside them. */
static void chart_band(Rect *r, int y, int h, int cols) {
  int n = cols >= 120 ? 3 : 2, w = cols / n;
  static const PanelId order[] = {P_LOSS, P_RATIO, P_ALIGNCHART};
  for (int i = 0; i < n; i++) r[order[i]] = rect(y, i * w, h, i == n - 1 ? cols - i * w : w);
}

/* Under 120 columns: the lens on the left, the alignment table over the
** sample on the right; the full table when the sample keeps a few rows. */
static void narrow_band(Rect *r, int y, int h, int cols) {
  int w = cols / 2;
  int ah = h >= ALIGN_FULL_ROWS + min_rows(P_SAMPLE) + 2 ? ALIGN_FULL_ROWS : min_rows(P_ALIGN);
  if (ah > h - min_rows(P_SAMPLE)) ah = h - min_rows(P_SAMPLE);
  r[P_LENS] = rect(y, 0, h, w);
  r[P_ALIGN] = rect(y, w, ah, cols - w);
  r[P_SAMPLE] = rect(y + ah, w, h - ah, cols - w);
}

/* A side column's width in a wide band: a quarter, at least 41 (the
** alignment table's 38 columns in a box). */
static int side_width(int cols) { return cols / 4 > 41 ? cols / 4 : 41; }

/* From 120 columns: the lens table beside its history by layer. */
static void lens_band(Rect *r, int y, int h, int cols) {
  int w = side_width(cols);
  r[P_LENS] = rect(y, 0, h, w);
  r[P_LENSHIST] = rect(y, w, h, cols - w);
}

/* From 120 columns: the alignment table, the sample, the gradient norms. */
static void lower_band(Rect *r, int y, int h, int cols) {
  int w = side_width(cols);
  r[P_ALIGN] = rect(y, 0, h, w);
  r[P_SAMPLE] = rect(y, w, h, w);
  r[P_EXTRA] = rect(y, 2 * w, h, cols - 2 * w);
}

/* A zoomed panel over the whole area; the alignment table keeps its rows
** and gives the rest to its chart over time, the lens table to its
** history by layer. */
static void zoomed(Rect *r, int zoom, int y, int h, int cols, int lens_box) {
  if (zoom == P_ALIGN && h >= ALIGN_FULL_ROWS + PRESENT_CHART_MIN) {
    r[P_ALIGN] = rect(y, 0, ALIGN_FULL_ROWS, cols);
    r[P_ALIGNCHART] = rect(y + ALIGN_FULL_ROWS, 0, h - ALIGN_FULL_ROWS, cols);
    return;
  }
  if (zoom == P_LENS && h >= lens_box + min_rows(P_LENSHIST)) {
    int top = lens_box + (h - lens_box - min_rows(P_LENSHIST)) / 3;
    r[P_LENS] = rect(y, 0, top, cols);
    r[P_LENSHIST] = rect(y + top, 0, h - top, cols);
    return;
  }
  r[zoom] = rect(y, 0, h, cols);
}

/* Rows of the bands under the charts in an area of 'mh' rows: the lens
** band (wide screens only, 0 otherwise) and the lower band. When rows are
** short the lower band gives first (to its compact table), then the lens
** (to three positions), then the charts (to what is left): the lens is
** what the screen is for. */
static void band_rows(int mh, int cols, int lens_box, int *lens_h, int *low_h) {
  if (cols < 120) {
    *lens_h = 0;
    *low_h = clamp(lens_box > BAND_MIN ? lens_box : BAND_MIN, 0, mh - CHART_MIN);
    if (mh >= 36) *low_h = clamp(mh * 2 / 5, *low_h, mh - CHART_MIN);   /* a tall screen: more for the band */
    return;
  }
  int lens = lens_box > min_rows(P_LENSHIST) ? lens_box : min_rows(P_LENSHIST);
  if (mh > 36) lens += (mh - 36) / 4;   /* more history as the screen grows */
  int low = mh - lens - CHART_MIN >= ALIGN_FULL_ROWS + 9 ? ALIGN_FULL_ROWS : min_rows(P_ALIGN) + 1;
  if (mh - lens - low < CHART_MIN) low = min_rows(P_ALIGN);
  if (mh - lens - low < CHART_MIN) lens = clamp(mh - low - CHART_MIN, min_rows(P_LENS), lens);
  *lens_h = lens;
  *low_h = clamp(low, 0, mh - lens - min_rows(P_LOSS));
}

int layout_scroll_rows(int rows, int lines) { return clamp(lines, 1, SCROLL_MAX + (rows - LAYOUT_MIN_ROWS) / 10); }

static void lab_view(Layout *l, const LayoutAsk *ask) {
  int R = l->rows, C = l->cols, extra = R - LAYOUT_MIN_ROWS;
  Rect *r = l->r;
  r[P_STATUS] = rect(0, 0, 1, C);
  r[P_HINT] = rect(R - 1, 0, 1, C);
  r[P_INPUT] = rect(R - 2, 0, 1, C);
  int scroll_h = layout_scroll_rows(R, ask->scroll_lines);
  (void)extra;
  r[P_SCROLL] = rect(R - 2 - scroll_h, 0, scroll_h, C);

  int top = 1, mh = r[P_SCROLL].y - top;
  int lens_box = (ask->lens_rows > 0 ? ask->lens_rows : LENS_DEFAULT) + BOX, lens_h, low_h;
  band_rows(mh, C, lens_box, &lens_h, &low_h);
  int gh = mh - lens_h - low_h, by = top + gh;
  if (ask->results) r[P_RESULTS] = rect(by, 0, mh - gh, C);
  if (ask->zoom >= 0) {
    zoomed(r, ask->zoom, top, ask->results ? gh : mh, C, lens_box);
    return;
  }
  chart_band(r, top, gh, C);
  if (ask->results) return;
  if (C < 120) {
    narrow_band(r, by, low_h, C);
    return;
  }
  lens_band(r, by, lens_h, C);
  lower_band(r, by + lens_h, low_h, C);
}

/* The present view: status, the caption, big digits, one chart taking
** every row left, the REPL's input and the hint line. */
static void present_view(Layout *l, const LayoutAsk *ask) {
  int R = l->rows, C = l->cols;
  Rect *r = l->r;
  int cap = ask->caption_rows, room = R - 6 - PRESENT_CHART_MIN;
  if (cap > room) cap = room;
  if (cap < 0) cap = 0;
  int chart = layout_has(ask->chart, PANEL_CHART) ? ask->chart : P_LOSS;
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
  if (!layout_has(a.zoom, PANEL_CHART)) a.zoom = -1;
  if (a.view == VIEW_PRESENT) present_view(l, &a);
  else lab_view(l, &a);
}

Rect layout_center(int rows, int cols, int h, int w) {
  if (h > rows) h = rows;
  if (w > cols - 2) w = cols - 2;
  return rect((rows - h) / 2, (cols - w) / 2, h, w);
}
