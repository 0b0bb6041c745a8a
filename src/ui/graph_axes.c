/*
** graph_axes.c -- a chart's scales and axes: the ranges the series span,
** round ticks (1, 2, 5 x 10^k, and 2.5 on a tall plot, counted as whole
** multiples of their step, never added up), a broken scale where the
** lines leave a wide band empty, the y labels and the time axis with its
** event markers.
*/
#include "ui/graph.h"

#include "ui/legend.h"

#include <math.h>
#include <string.h>

#include "ui/graph_impl.h"

/* ------------------------------------------------------------ scales */

double graph_xaxis_update(GraphXAxis *a, double newest) {
  if (!(newest > GRAPH_X_FIRST)) return a->max = GRAPH_X_FIRST;
  if (newest > a->max || newest < 0.9 * a->max) a->max = newest / 0.905;
  return a->max;
}

/* Widen [*lo, *hi] ('any': already set) to v when a chart can show it. */
static int y_include(double v, int log_y, int any, double *lo, double *hi) {
  if (!isfinite(v) || (log_y && v <= 0)) return any;
  if (!any || v < *lo) *lo = v;
  if (!any || v > *hi) *hi = v;
  return 1;
}

int graph_y_range_x(const GraphSeries *s, int n, int log_y, double x_lo, double x_hi, double *lo, double *hi) {
  int any = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < s[i].n; k++) {
      if (!(s[i].x[k] >= x_lo && s[i].x[k] <= x_hi)) continue;
      any = y_include(s[i].y[k], log_y, any, lo, hi);
      if (s[i].lo) any = y_include(s[i].lo[k], log_y, any, lo, hi);
      if (s[i].hi) any = y_include(s[i].hi[k], log_y, any, lo, hi);
    }
  return any;
}

/* Points of no x are not drawn, so they do not count either. */
int graph_y_range(const GraphSeries *s, int n, int log_y, double *lo, double *hi) {
  return graph_y_range_x(s, n, log_y, -HUGE_VAL, HUGE_VAL, lo, hi);
}

void graph_scale_update(GraphScale *s, double lo, double hi, int log_y) {
  double tl = log_y ? log10(lo) : lo, th = log_y ? log10(hi) : hi;
  double sl = log_y ? log10(s->lo) : s->lo, sh = log_y ? log10(s->hi) : s->hi;
  int grow = !s->set || tl < sl || th > sh;
  int shrink = s->set && (th - tl) < 0.8 * (sh - sl);
  if (!grow && !shrink) return;
  /* The data's own range: the chart rounds its ends to a step of about a
  ** row, so a new extreme moves the scale about once a row. A span of a
  ** few roundings counts as none and gets a margin (computed so that it
  ** stays finite for values near the largest double). */
  double m = th * 0.1 - tl * 0.1;
  if (!(m > 1e-13 * fmax(fabs(tl), fabs(th)))) {
    m = fabs(th) * 0.1 + (log_y ? 0.1 : 1e-9);
    tl -= m;
    th += m;
  }
  s->lo = log_y ? pow(10, tl) : tl;
  s->hi = log_y ? pow(10, th) : th;
  s->set = 1;
}

/* The round step (1, 2 or 5 times a power of ten) nearest above span/n. */
static double nice_step(double span, int n) {
  if (!(span > 0)) return 1;
  double raw = span / (n > 0 ? n : 1), mag = pow(10, floor(log10(raw))), f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* ------------------------------------------------------------ axes */

static int y_label_put(Plot *p, int lw, int row, double v, char *used) {
  if (row < 0 || row >= p->ph || used[row]) return 0;
  char buf[32];
  graph_format(v, lw, buf, sizeof buf);
  int len = (int)strlen(buf);
  if (len > lw) return 0;
  for (int k = 0; k < len; k++)
    put(p->cells, p->w, p->h, p->y0 + row, lw - len + k, (uint32_t)buf[k], GRAPH_ROLE_LABEL);
  used[row] = 1;
  return 1;
}

/* Intervals between y ticks: a label every other row or so, at most six. */
static int y_intervals(const Plot *p) { return p->ph / 2 < 2 ? 2 : p->ph / 2 > 6 ? 6 : p->ph / 2; }

/* The y ticks' step: the round step above the span's sixth on a short
** plot (a lab view's); on a taller one the round step (1, 2, 2.5 or 5
** times a power of ten) nearest a label every other row, never closer
** than a row and a half, so that the eye finds a value's label across a
** wide chart and no stretch of rows is left without one. */
#define TALL_PLOT 12
static double y_step(const Plot *p) {
  int broken = plot_broken(p), rows = p->ph - (broken ? PLOT_BREAK_ROWS : 0);
  double span = p->hi - p->lo - (broken ? p->gap_hi - p->gap_lo : 0);   /* what the rows show */
  if (p->ph <= TALL_PLOT || !(span > 0)) return nice_step(span, y_intervals(p));
  double raw = span / (rows / 2), least = span / (rows / 1.4), mag = pow(10, floor(log10(raw)));
  static const double m[] = {1, 2, 2.5, 5, 10};
  /* A quarter step's labels carry a digit more than the step's own: not
  ** when that is more than the four digits a label prints (100.25). */
  double big = fmax(fabs(p->lo), fabs(p->hi));
  int quarter_fits = floor(log10(big > 0 ? big : 1)) - floor(log10(mag / 10)) + 1 <= 4;
  double best = 10 * mag;
  for (int i = 4; i >= 0; i--) {
    double c = m[i] * mag;
    if (i == 2 && !quarter_fits) continue;
    if (c >= least && fabs(log(c / raw)) <= fabs(log(best / raw))) best = c;
  }
  return best;
}

static int value_row(const Plot *p, double t) { return (int)lround(plot_level(p, t, p->ph * p->sy)) / p->sy; }

/* t lies inside the break, off every row but the break's. */
static int in_break(const Plot *p, double t, double step) {
  return plot_broken(p) && t > p->gap_lo + step * 1e-6 && t < p->gap_hi - step * 1e-6;
}

/* Round ticks: multiples of the step on a linear scale; on a log scale
** decades, then 5s and 2s where they leave a free row between labels. */
void axes_y_labels(Plot *p, int lw) {
  char used[1024] = {0};
  if (p->ph > (int)sizeof used) return;
  if (!p->log_y) {
    /* By whole multiples of the step, counted: adding the step to a tick
    ** can leave it unchanged, where the span is a few roundings wide. A
    ** break's ends are multiples of the step it was cut with, so the rows
    ** either side of it are labelled; the ticks inside it are stepped over. */
    double step = plot_broken(p) ? p->gap_step : y_step(p);
    double k0 = ceil(p->lo / step - 1e-9), k1 = floor(p->hi / step + 1e-9);
    int put = 0;
    for (double k = k0; k <= k1 && put <= p->ph; k++) {
      double t = k * step;
      if (in_break(p, t, step)) {
        k = ceil(p->gap_hi / step - 1e-9) - 1;
        continue;
      }
      y_label_put(p, lw, value_row(p, t), fabs(t) < step * 1e-9 ? 0 : t, used);
      put++;
    }
    return;
  }
  static const double mult[] = {1, 5, 2};
  for (int m = 0; m < 3; m++)
    for (double d = floor(p->lo); d <= ceil(p->hi); d++) {
      double t = d + log10(mult[m]);
      if (t < p->lo - 1e-9 || t > p->hi + 1e-9) continue;
      int r = value_row(p, t);
      if (m > 0 && ((r > 0 && used[r - 1]) || (r + 1 < p->ph && used[r + 1]))) continue;
      y_label_put(p, lw, r, pow(10, t), used);
    }
}

/* ------------------------------------------------------------ a break */

enum { BREAK_MAX_SERIES = 64 };

typedef struct Extent {
  double lo, hi;
} Extent;

/* The values one series spans over the x range shown (its line joins its
** points, so it passes every value between its least and its greatest);
** 0 when it has no point there. */
static int series_extent(const Plot *p, const GraphSeries *s, Extent *e) {
  int any = 0;
  for (int k = 0; k < s->n; k++) {
    if (!(s->x[k] >= p->x_min && s->x[k] <= p->x_max)) continue;
    any = y_include(s->y[k], 0, any, &e->lo, &e->hi);
    if (s->lo) any = y_include(s->lo[k], 0, any, &e->lo, &e->hi);
    if (s->hi) any = y_include(s->hi[k], 0, any, &e->lo, &e->hi);
  }
  return any;
}

/* The widest band of [lo, hi] between the series' extents (and the
** reference line) that none of them reaches: its lower end in '*at';
** 0 when there is none, or more series than are looked at. */
static double widest_gap(const Graph *g, const Plot *p, double *at) {
  Extent e[BREAK_MAX_SERIES + 1];
  int n = 0;
  if (g->n_series > BREAK_MAX_SERIES) return 0;
  for (int i = 0; i < g->n_series; i++)
    if (series_extent(p, &g->series[i], &e[n])) {
      e[n].lo = fmax(e[n].lo, p->lo), e[n].hi = fmin(e[n].hi, p->hi);   /* the range shown */
      n++;
    }
  if (g->has_ref && g->ref_y >= p->lo && g->ref_y <= p->hi) e[n++] = (Extent){g->ref_y, g->ref_y};
  for (int i = 1; i < n; i++)   /* by their lower ends */
    for (int k = i; k > 0 && e[k].lo < e[k - 1].lo; k--) {
      Extent t = e[k];
      e[k] = e[k - 1], e[k - 1] = t;
    }
  double widest = 0, reach = n > 0 ? e[0].hi : 0;
  for (int i = 1; i < n; i++) {
    if (e[i].lo - reach > widest) widest = e[i].lo - reach, *at = reach;
    reach = fmax(reach, e[i].hi);
  }
  return widest;
}

/* A band no line reaches, an eighth of the range and four rows at least,
** is cut out to a break of two rows; its ends are round ticks of the step
** the labels then use, so that the labels either side of it read as the
** scale's. What is left must be an eighth of the range too: a line
** a hair thick would otherwise be stretched over every row. */
void axes_break(const Graph *g, Plot *p) {
  p->gap_lo = p->gap_hi = p->gap_step = 0;
  if (!g->break_gaps || p->log_y || p->scatter || p->ph <= TALL_PLOT) return;
  double at = 0, gap = widest_gap(g, p, &at), span = p->hi - p->lo;
  if (!(gap >= span / 8 && gap / span * p->ph >= 4 && span - gap >= span / 8)) return;
  p->gap_lo = at, p->gap_hi = at + gap;
  double step = y_step(p);
  double lo = ceil(at / step - 1e-9) * step, hi = floor((at + gap) / step + 1e-9) * step;
  p->gap_lo = p->gap_hi = 0;
  if (!(hi - lo >= 2 * step * (1 - 1e-9) && span - (hi - lo) >= span / 8)) return;
  p->gap_lo = lo, p->gap_hi = hi, p->gap_step = step;
}

/* The break's row: a wavy mark across the y axis, left of the plot, where
** no line is drawn over it. */
void axes_break_mark(Plot *p, int lw, int ascii) {
  if (!plot_broken(p) || p->x0 <= 0) return;
  int ys = p->ph * p->sy, row = (int)lround(plot_level(p, (p->gap_lo + p->gap_hi) / 2, ys)) / p->sy;
  for (int x = lw - 1; x <= lw; x++) put(p->cells, p->w, p->h, p->y0 + row, x, ascii ? '~' : 0x2248, GRAPH_ROLE_AXIS);
}

/* The 1-2-5 step at or below v > 0. */
static double step_below(double v) {
  double mag = pow(10, floor(log10(v))), f = v / mag;
  return (f >= 5 ? 5 : f >= 2 ? 2 : 1) * mag;
}

/* The 1, 2 or 5 times a power of ten at or below v > 0 ('dir' < 0) or at
** or above it ('dir' > 0). */
static double round_125(double v, int dir) {
  static const double m[] = {1, 2, 5, 10};
  double mag = pow(10, floor(log10(v)));
  if (dir < 0) {
    double best = mag;
    for (int i = 0; i < 3; i++)
      if (m[i] * mag <= v * (1 + 1e-9)) best = m[i] * mag;
    return best;
  }
  for (int i = 0; i < 4; i++)
    if (m[i] * mag >= v * (1 - 1e-9)) return m[i] * mag;
  return 10 * mag;
}

/* How many of 1, 2 and 5 times a power of ten lie in [lo, hi]. */
static int labels_125(double lo, double hi) {
  int n = 0;
  for (double v = round_125(lo, 1); v <= hi * (1 + 1e-9) && n < 3; v = round_125(v * 1.01, 1)) n++;
  return n;
}

/* Widen the y range to round values of a step no taller than a row, so
** that the data's extremes lie in the top and the bottom row: the ticks
** are round, the ends fit the data rather than the ticks (a loss of 3 to
** 6.3 on a scale of 2 to 7 leaves a fifth of the rows empty). */
void axes_snap_y(Plot *p) {
  /* A row's share of the range, less the half dot a point's row is
  ** rounded by: an ASCII row holds half a row's values either side. */
  int sy = p->sy > 0 ? p->sy : 1;
  double row = (p->hi - p->lo) / (p->ph > 0 ? p->ph : 1) * (sy - 0.5) / sy;
  if (!(row > 0) || !isfinite(row)) return;
  if (!p->log_y) {
    double step = step_below(row);
    double lo = floor(p->lo / step + 1e-9) * step, hi = ceil(p->hi / step - 1e-9) * step;
    if (isfinite(lo) && isfinite(hi) && hi > lo) p->lo = lo, p->hi = hi;
    return;
  }
  /* In values, a row is a factor: each end moves by at most that much. */
  double f = pow(10, row) - 1, lo = pow(10, p->lo), hi = pow(10, p->hi);
  double sl = step_below(lo * (f < 0.5 ? f : 0.5)), sh = step_below(hi * (f < 0.5 ? f : 0.5));
  lo = floor(lo / sl + 1e-9) * sl;
  hi = ceil(hi / sh - 1e-9) * sh;
  /* Log labels are 1, 2 and 5 times a power of ten: a range that holds
  ** fewer than two of them widens to the nearest ones, or it would have
  ** no scale to read (ratios of 1.1 to 1.8). */
  if (lo > 0 && isfinite(hi) && hi > lo && labels_125(lo, hi) < 2) lo = round_125(lo, -1), hi = round_125(hi, 1);
  if (lo > 0 && isfinite(hi) && hi > lo) p->lo = log10(lo), p->hi = log10(hi);
}

static int x_col(const Plot *p, double x) {
  double f = (x - p->x_min) / (p->x_max - p->x_min);
  if (!(f >= 0 && f <= 1)) return -1;
  int c = (int)(f * p->pw);
  return c >= p->pw ? p->pw - 1 : c;
}

/* An event marker falls in columns [x, x + len) of the axis row. */
static int event_under(const Graph *g, const Plot *p, int x, int len) {
  for (int i = 0; i < g->n_events; i++) {
    int c = x_col(p, g->events[i].x);
    if (c >= 0 && p->x0 + c >= x && p->x0 + c < x + len) return 1;
  }
  return 0;
}

/* Round ticks along the time axis, each label centred on its column,
** none running into the next, nor into the x label at the right end, nor
** under an event's marker (which would read as a digit). */
static void x_ticks(const Graph *g, Plot *p, int end) {
  int y = p->h - 1, prev_end = p->x0 + 2;
  char widest[16];
  graph_format(p->x_max, 6, widest, sizeof widest);
  /* The smallest 1-2-5 step whose labels all fit with two cells between
  ** them: every tick labelled, evenly, rather than some left out. */
  double need = (p->x_max - p->x_min) * ((int)strlen(widest) + 2) / (p->pw > 0 ? p->pw : 1);
  double mag = pow(10, floor(log10(need > 0 ? need : 1))), f = need / mag;
  double step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
  double k0 = ceil(p->x_min / step + 1e-9);
  for (int i = 0; i < p->pw; i++) {
    double t = (k0 + i) * step;
    if (!(t < p->x_max)) break;
    if (t <= p->x_min) continue;
    char buf[16];
    graph_format(t, 6, buf, sizeof buf);
    int len = (int)strlen(buf), c = x_col(p, t);
    if (c < 0) continue;
    int x = p->x0 + c - len / 2;
    if (x <= prev_end + 1 || x + len > end || event_under(g, p, x, len)) continue;
    graph_text(&p->cells[(size_t)y * p->w + x], len, buf, GRAPH_ROLE_LABEL);
    prev_end = x + len;
  }
}

void axes_time(const Graph *g, Plot *p, int lw, int *kinds) {
  int ascii = g->glyphs == GRAPH_ASCII, y = p->h - 1;
  if (p->x0 > 0) {
    for (int r = 0; r < p->ph; r++) put(p->cells, p->w, p->h, p->y0 + r, lw, ascii ? '|' : 0x2502, GRAPH_ROLE_AXIS);
    put(p->cells, p->w, p->h, y, lw, ascii ? '+' : 0x2514, GRAPH_ROLE_AXIS);
  }
  for (int x = p->x0; x < p->w; x++) put(p->cells, p->w, p->h, y, x, ascii ? '-' : 0x2500, GRAPH_ROLE_AXIS);
  /* x_min just right of the corner, so it is not read as the y axis' own. */
  char lo[16];
  graph_format(g->x_min, 6, lo, sizeof lo);
  int nlo = (int)strlen(lo), end = p->w;
  if (p->pw >= nlo + 4) graph_text(&p->cells[(size_t)y * p->w + p->x0], nlo, lo, GRAPH_ROLE_LABEL);
  /* The x label left of the corner when it fits there, where no event
  ** marker can cover it; else at the right end. */
  int nl = g->x_label ? (int)strlen(g->x_label) : 0;
  if (nl > 0 && nl < lw) {
    graph_text(&p->cells[(size_t)y * p->w + lw - nl - 1], nl, g->x_label, GRAPH_ROLE_LABEL);
  } else if (nl > 0 && p->pw >= nl + 4) {
    end = p->w - nl - 1;
    put(p->cells, p->w, p->h, y, end, ' ', GRAPH_ROLE_LABEL);
    graph_text(&p->cells[(size_t)y * p->w + end + 1], nl, g->x_label, GRAPH_ROLE_LABEL);
  }
  x_ticks(g, p, end);
  /* Events last: a marker matters more than a digit of the axis label. */
  for (int i = 0; i < g->n_events; i++) {
    int c = x_col(p, g->events[i].x), k = g->events[i].kind;
    if (c < 0 || k < 0 || k >= GRAPH_EVENT_KINDS) continue;
    put(p->cells, p->w, p->h, y, p->x0 + c, legend_event_mark(k, ascii), GRAPH_ROLE_EVENT);
    kinds[k] = 1;
  }
}

int graph_x_range(const GraphSeries *s, int n, double *lo, double *hi) {
  int any = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < s[i].n; k++) {
      double v = s[i].x[k];
      if (!isfinite(v)) continue;
      if (!any || v < *lo) *lo = v;
      if (!any || v > *hi) *hi = v;
      any = 1;
    }
  return any;
}
