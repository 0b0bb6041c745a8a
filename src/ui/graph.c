/*
** graph.c -- series into a grid of cells: Braille, block or ASCII.
**
** Each series is first reduced to one value per horizontal sample (two per
** cell with Braille, one otherwise): the mean of its points that fall in
** the sample's x range. Consecutive samples are then joined: with Braille
** by a line on the 2x4 dot grid (Bresenham), with blocks by a level glyph
** in the sample's cell and full blocks over any jump, with ASCII by one mark
** per column. A cell has one colour, so where series cross the one drawn
** last wins; series also differ by dashes and marks, never by hue alone.
** A scatter skips the reduction: each point is one dot (Braille) or one
** mark per cell (block and ASCII, which have no finer grain for a point).
*/
#include "graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BRAILLE_BLANK 0x2800u
#define BLOCK_LOWER 0x2580u  /* + 1..8: lower eighth .. full block */

static const char ascii_marks[] = "*o+x#@%&";

/* Dot bits of a Braille cell, by column and row within it. */
static const uint8_t braille_bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

static GraphCell *cell_at(GraphCell *cells, int w, int h, int y, int x) {
  if (y < 0 || y >= h || x < 0 || x >= w) return NULL;
  return &cells[(size_t)y * w + x];
}

static void put(GraphCell *cells, int w, int h, int y, int x, uint32_t ch, uint8_t role) {
  GraphCell *c = cell_at(cells, w, h, y, x);
  if (c) {
    c->ch = ch;
    c->role = role;
  }
}

/* ------------------------------------------------------------ text */

/* Decode one UTF-8 sequence at 's'; returns its length (1 for a bad byte,
** which becomes '?'). */
static int utf8_next(const char *s, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  int n = u[0] < 0x80 ? 1 : (u[0] >> 5) == 6 ? 2 : (u[0] >> 4) == 14 ? 3 : (u[0] >> 3) == 30 ? 4 : 0;
  if (n == 0) {
    *cp = '?';
    return 1;
  }
  uint32_t c = n == 1 ? u[0] : u[0] & (0x7f >> n);
  for (int i = 1; i < n; i++) {
    if ((u[i] & 0xc0) != 0x80) {
      *cp = '?';
      return 1;
    }
    c = (c << 6) | (u[i] & 0x3f);
  }
  *cp = c;
  return n;
}

int graph_text(GraphCell *row, int w, const char *utf8, uint8_t role) {
  int x = 0;
  while (*utf8 && x < w) {
    uint32_t cp;
    utf8 += utf8_next(utf8, &cp);
    row[x].ch = cp < 0x20 ? ' ' : cp;
    row[x].role = role;
    x++;
  }
  return x;
}

static size_t utf8_put(uint32_t cp, char *o) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

size_t graph_to_utf8(const GraphCell *cells, int w, int h, char *out, size_t cap) {
  size_t n = 0;
  char b[4];
  for (int y = 0; y < h; y++) {
    for (int x = 0; x <= w; x++) {
      size_t k = x < w ? utf8_put(cells[(size_t)y * w + x].ch, b) : (b[0] = '\n', 1);
      if (n + k < cap) memcpy(out + n, b, k);
      n += k;
    }
  }
  if (cap) out[n < cap ? n : cap - 1] = '\0';
  return n;
}

/* "1.23e+04" -> "1.23e4", "1e-05" -> "1e-5". */
static void compact_exponent(char *s) {
  char *e = strchr(s, 'e');
  if (!e) return;
  char *p = e + 1, *q = e + 1;
  if (*p == '+') p++;
  else if (*p == '-') *q++ = *p++;
  while (*p == '0' && p[1]) p++;
  memmove(q, p, strlen(p) + 1);
}

void graph_format(double v, int width, char *buf, size_t cap) {
  if (cap == 0) return;
  if (v == 0 || !isfinite(v)) {
    snprintf(buf, cap, "%s", v == 0 ? "0" : isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    return;
  }
  for (int p = 4; p >= 1; p--) {
    snprintf(buf, cap, "%.*g", p, v);
    compact_exponent(buf);
    if ((int)strlen(buf) <= width) return;
  }
}

/* ------------------------------------------------------------ scales */

double graph_x_extent(double x_last, double base) {
  if (!(base > 0)) base = 1;
  double x = base;
  while (x < x_last && x < 1e300) x *= 2;
  return x;
}

int graph_y_range(const GraphSeries *s, int n, int log_y, double *lo, double *hi) {
  int any = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < s[i].n; k++) {
      double v = s[i].y[k];
      if (!isfinite(v) || (log_y && v <= 0)) continue;
      if (!any || v < *lo) *lo = v;
      if (!any || v > *hi) *hi = v;
      any = 1;
    }
  return any;
}

void graph_scale_update(GraphScale *s, double lo, double hi, int log_y) {
  double tl = log_y ? log10(lo) : lo, th = log_y ? log10(hi) : hi;
  double sl = log_y ? log10(s->lo) : s->lo, sh = log_y ? log10(s->hi) : s->hi;
  int grow = !s->set || tl < sl || th > sh;
  int shrink = s->set && (th - tl) < 0.5 * (sh - sl);
  if (!grow && !shrink) return;
  /* Leave a margin of a tenth of the span so the next points fit too. */
  double m = (th - tl) * 0.1;
  if (!(m > 0)) m = fabs(th) * 0.1 + (log_y ? 0.1 : 1e-9);
  tl -= m;
  th += m;
  s->lo = log_y ? pow(10, tl) : tl;
  s->hi = log_y ? pow(10, th) : th;
  s->set = 1;
}

/* ------------------------------------------------------------ plotting */

typedef struct Plot {
  GraphCell *cells;
  int w, h;
  int x0, y0, pw, ph;   /* plot area in cells */
  int sx, sy;           /* samples per cell across and levels per cell down */
  double lo, hi;        /* transformed y range */
  double x_min, x_max;  /* x range, never empty */
  GraphGlyphs glyphs;
  int log_y;
} Plot;

static double transform(const Plot *p, double y) { return p->log_y ? log10(y) : y; }

static void braille_dot(Plot *p, int dx, int dy, uint8_t role) {
  GraphCell *c = cell_at(p->cells, p->w, p->h, p->y0 + dy / 4, p->x0 + dx / 2);
  if (!c) return;
  if (c->ch < BRAILLE_BLANK || c->ch > BRAILLE_BLANK + 0xff) c->ch = BRAILLE_BLANK;
  c->ch |= braille_bit[dx % 2][dy % 4];
  c->role = role;
}

static void braille_line(Plot *p, int x0, int y0, int x1, int y1, uint8_t role) {
  int dx = abs(x1 - x0), dy = -abs(y1 - y0);
  int stx = x0 < x1 ? 1 : -1, sty = y0 < y1 ? 1 : -1, e = dx + dy;
  for (;;) {
    braille_dot(p, x0, y0, role);
    if (x0 == x1 && y0 == y1) break;
    int e2 = 2 * e;
    if (e2 >= dy) {
      e += dy;
      x0 += stx;
    }
    if (e2 <= dx) {
      e += dx;
      y0 += sty;
    }
  }
}

/* One sample of block or ASCII tier at column 'col', level row 'r' (top-down,
** sy levels per cell), joined to the previous sample's level 'prev' (-1: none). */
static void cell_sample(Plot *p, int col, int r, int prev, int color, uint8_t role) {
  int cy = r / p->sy;
  if (p->glyphs == GRAPH_ASCII) {
    put(p->cells, p->w, p->h, p->y0 + cy, p->x0 + col, (uint32_t)ascii_marks[color % 8], role);
    return;
  }
  put(p->cells, p->w, p->h, p->y0 + cy, p->x0 + col, BLOCK_LOWER + (uint32_t)(p->sy - r % p->sy), role);
  if (prev < 0) return;
  int pc = prev / p->sy, lo = pc < cy ? pc : cy + 1, hi = pc < cy ? cy - 1 : pc;
  for (int y = lo; y <= hi; y++) put(p->cells, p->w, p->h, p->y0 + y, p->x0 + col, BLOCK_LOWER + 8, role);
}

/* Reduce a series to one mean per sample column and draw it. */
static void plot_series(Plot *p, const GraphSeries *s, double x_min, double x_max, double *sum,
                        int *cnt) {
  int xs = p->pw * p->sx, ys = p->ph * p->sy;
  uint8_t role = (uint8_t)(GRAPH_ROLE_SERIES + s->color);
  memset(sum, 0, sizeof *sum * (size_t)xs);
  memset(cnt, 0, sizeof *cnt * (size_t)xs);
  for (int k = 0; k < s->n; k++) {
    double v = s->y[k];
    if (!isfinite(v) || (p->log_y && v <= 0) || !isfinite(s->x[k])) continue;
    double f = (s->x[k] - x_min) / (x_max - x_min);
    if (f < 0 || f > 1) continue;
    int c = (int)(f * xs);
    if (c >= xs) c = xs - 1;
    sum[c] += transform(p, v);
    cnt[c]++;
  }
  int pc = -1, pr = -1;
  for (int c = 0; c < xs; c++) {
    if (!cnt[c]) continue;
    double t = sum[c] / cnt[c];
    int r = (int)lround((p->hi - t) / (p->hi - p->lo) * (ys - 1));
    if (r < 0) r = 0;
    if (r > ys - 1) r = ys - 1;
    int skip = s->dashed && (p->glyphs == GRAPH_BRAILLE ? (c / 2) % 2 : c % 2);
    if (!skip) {
      if (p->glyphs == GRAPH_BRAILLE) braille_line(p, pc < 0 ? c : pc, pc < 0 ? r : pr, c, r, role);
      else cell_sample(p, c, r, pc == c - 1 ? pr : -1, s->color, role);
    }
    pc = c;
    pr = r;
  }
}

/* ------------------------------------------------------------ frame */

/* The legend's sample of a series: what its points or its line look like. */
static uint32_t legend_mark(const Graph *g, const GraphSeries *s, int scatter) {
  if (g->glyphs == GRAPH_ASCII || (scatter && g->glyphs == GRAPH_BLOCK)) return (uint32_t)ascii_marks[s->color % 8];
  if (scatter) return BRAILLE_BLANK + 0x3f;   /* six dots */
  return s->dashed ? 0x2505 : 0x2501;
}

static void legend(const Graph *g, GraphCell *row, int w, int scatter) {
  int x = g->title ? graph_text(row, w, g->title, GRAPH_ROLE_TITLE) : 0;
  for (int i = 0; i < g->n_series && x < w; i++) {
    const GraphSeries *s = &g->series[i];
    if (!s->name) continue;
    uint8_t role = (uint8_t)(GRAPH_ROLE_SERIES + s->color);
    x += 1;
    if (x >= w) break;
    row[x].ch = legend_mark(g, s, scatter);
    row[x].role = role;
    x++;
    x += graph_text(row + x, w - x, s->name, role);
  }
}

/* Value shown beside plot row 'r' (of ph): the top and bottom rows show the
** ends of the range, others the value at their middle. */
static double row_value(const Plot *p, int r) {
  double t;
  if (r == 0) t = p->hi;
  else if (r == p->ph - 1) t = p->lo;
  else {
    double ys = p->ph * p->sy - 1;
    t = p->hi - (r * p->sy + (p->sy - 1) / 2.0) / ys * (p->hi - p->lo);
  }
  return p->log_y ? pow(10, t) : t;
}

static int label_rows(int ph, int rows[5]) {
  int n = 0;
  rows[n++] = 0;
  if (ph >= 9) rows[n++] = ph / 4;
  if (ph >= 5) rows[n++] = ph / 2;
  if (ph >= 9) rows[n++] = 3 * ph / 4;
  if (ph >= 2) rows[n++] = ph - 1;
  return n;
}

static void y_labels(Plot *p, int lw) {
  int rows[5], n = label_rows(p->ph, rows);
  for (int i = 0; i < n; i++) {
    char buf[32];
    graph_format(row_value(p, rows[i]), lw, buf, sizeof buf);
    int len = (int)strlen(buf);
    if (len > lw) continue;
    for (int k = 0; k < len; k++)
      put(p->cells, p->w, p->h, p->y0 + rows[i], lw - len + k, (uint32_t)buf[k], GRAPH_ROLE_LABEL);
  }
}

static void time_axis(const Graph *g, Plot *p, int lw) {
  int ascii = g->glyphs == GRAPH_ASCII, y = p->h - 1;
  if (p->x0 > 0) {
    for (int r = 0; r < p->ph; r++) put(p->cells, p->w, p->h, p->y0 + r, lw, ascii ? '|' : 0x2502, GRAPH_ROLE_AXIS);
    put(p->cells, p->w, p->h, y, lw, ascii ? '+' : 0x2514, GRAPH_ROLE_AXIS);
  }
  for (int x = p->x0; x < p->w; x++) put(p->cells, p->w, p->h, y, x, ascii ? '-' : 0x2500, GRAPH_ROLE_AXIS);
  char lo[16], hi[16];
  graph_format(g->x_min, lw > 0 ? lw : 6, lo, sizeof lo);
  graph_format(g->x_max, 7, hi, sizeof hi);
  int nlo = (int)strlen(lo), nhi = (int)strlen(hi);
  if (lw >= nlo) graph_text(&p->cells[(size_t)y * p->w + lw - nlo], nlo, lo, GRAPH_ROLE_LABEL);
  if (p->pw > nhi + 2) graph_text(&p->cells[(size_t)y * p->w + p->w - nhi], nhi, hi, GRAPH_ROLE_LABEL);
  int nl = g->x_label ? (int)strlen(g->x_label) + 2 : 0;
  if (nl > 2 && p->pw >= nl + 2 * (nhi + 1)) {
    int x = p->x0 + (p->pw - nl) / 2;
    put(p->cells, p->w, p->h, y, x, ' ', GRAPH_ROLE_LABEL);
    graph_text(&p->cells[(size_t)y * p->w + x + 1], nl - 2, g->x_label, GRAPH_ROLE_LABEL);
    put(p->cells, p->w, p->h, y, x + nl - 1, ' ', GRAPH_ROLE_LABEL);
  }
  /* Events last: a marker matters more than a digit of the axis label. */
  for (int i = 0; i < g->n_events; i++) {
    double f = (g->events[i] - g->x_min) / (g->x_max - g->x_min);
    if (!(f >= 0 && f <= 1)) continue;
    int c = (int)(f * p->pw);
    if (c >= p->pw) c = p->pw - 1;
    put(p->cells, p->w, p->h, y, p->x0 + c, ascii ? '^' : 0x25b2, GRAPH_ROLE_EVENT);
  }
}

/* Clear the grid, draw the legend, the y labels and the x axis, and set
** up 'p' for the points; 0 when there is no room for a plot. */
static int frame(const Graph *g, GraphCell *cells, int w, int h, int scatter, Plot *p) {
  if (w <= 0 || h <= 0) return 0;
  for (size_t i = 0; i < (size_t)w * h; i++) cells[i] = (GraphCell){' ', GRAPH_ROLE_TEXT};
  legend(g, cells, w, scatter);
  if (h < 3) return 0;

  *p = (Plot){.cells = cells, .w = w, .h = h, .y0 = 1, .ph = h - 2, .glyphs = g->glyphs, .log_y = g->log_y};
  p->sx = g->glyphs == GRAPH_BRAILLE ? 2 : 1;
  p->sy = g->glyphs == GRAPH_BRAILLE ? 4 : g->glyphs == GRAPH_BLOCK && !scatter ? 8 : 1;
  p->lo = g->log_y ? log10(g->y_min > 0 ? g->y_min : 1e-12) : g->y_min;
  p->hi = g->log_y ? log10(g->y_max > 0 ? g->y_max : 1e-12) : g->y_max;
  if (!(p->hi > p->lo) || !isfinite(p->lo) || !isfinite(p->hi)) {
    double c = isfinite(p->lo) ? p->lo : 0, d = fabs(c) * 0.1 + (g->log_y ? 0.1 : 1e-9);
    p->lo = c - d;
    p->hi = c + d;
  }
  int lw = w >= 12 ? (w / 4 < 6 ? w / 4 : 6) : 0;
  p->x0 = lw > 0 ? lw + 1 : 0;
  p->pw = w - p->x0;
  p->x_min = g->x_min;
  p->x_max = g->x_max > g->x_min ? g->x_max : g->x_min + 1;

  if (lw > 0) y_labels(p, lw);
  Graph gx = *g;
  gx.x_max = p->x_max;
  time_axis(&gx, p, lw);
  return 1;
}

void graph_render(const Graph *g, GraphCell *cells, int w, int h) {
  Plot p;
  if (!frame(g, cells, w, h, 0, &p)) return;
  int xs = p.pw * p.sx;
  double *sum = malloc(sizeof *sum * (size_t)xs);
  int *cnt = malloc(sizeof *cnt * (size_t)xs);
  if (sum && cnt)
    for (int i = 0; i < g->n_series; i++) plot_series(&p, &g->series[i], p.x_min, p.x_max, sum, cnt);
  free(sum);
  free(cnt);
}

/* Every point of a series alone; points outside the ranges are left out
** rather than piled on the border. */
static void scatter_series(Plot *p, const GraphSeries *s) {
  int xs = p->pw * p->sx, ys = p->ph * p->sy;
  uint8_t role = (uint8_t)(GRAPH_ROLE_SERIES + s->color);
  for (int k = 0; k < s->n; k++) {
    double v = s->y[k];
    if (!isfinite(v) || (p->log_y && v <= 0)) continue;
    double fx = (s->x[k] - p->x_min) / (p->x_max - p->x_min), fy = (p->hi - transform(p, v)) / (p->hi - p->lo);
    if (!(fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1)) continue;
    int c = (int)(fx * xs), r = (int)lround(fy * (ys - 1));
    if (c >= xs) c = xs - 1;
    if (p->glyphs == GRAPH_BRAILLE) braille_dot(p, c, r, role);
    else put(p->cells, p->w, p->h, p->y0 + r, p->x0 + c, (uint32_t)ascii_marks[s->color % 8], role);
  }
}

void graph_scatter(const Graph *g, GraphCell *cells, int w, int h) {
  Plot p;
  if (!frame(g, cells, w, h, 1, &p)) return;
  for (int i = 0; i < g->n_series; i++) scatter_series(&p, &g->series[i]);
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

/* ------------------------------------------------------------ bars and shades */

void graph_hbar(GraphCell *row, int w, double frac, GraphGlyphs g, uint8_t role) {
  if (!(frac > 0)) frac = 0;
  if (frac > 1) frac = 1;
  int eighths = (int)lround(frac * w * 8);
  for (int x = 0; x < w; x++) {
    int e = eighths - x * 8;
    uint32_t ch = ' ';
    if (e >= 8) ch = g == GRAPH_ASCII ? '#' : 0x2588;
    else if (e > 0) ch = g == GRAPH_ASCII ? (e >= 4 ? '=' : ' ') : 0x2590 - (uint32_t)e;
    row[x].ch = ch;
    row[x].role = role;
  }
}

uint32_t graph_shade(double v, GraphGlyphs g) {
  static const uint32_t utf[] = {' ', 0x2591, 0x2592, 0x2593, 0x2588};
  static const char ascii[] = " .:-=+*#%@";
  if (!(v > 0)) v = 0;
  if (v > 1) v = 1;
  if (g == GRAPH_ASCII) return (uint32_t)ascii[(int)lround(v * 9)];
  return utf[(int)lround(v * 4)];
}
