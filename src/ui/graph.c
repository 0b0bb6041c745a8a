/*
** graph.c -- series into a grid of cells: Braille, block or ASCII.
**
** Each series is first reduced to sample columns (two per cell with
** Braille, one otherwise): the mean of its points that fall in each, and
** the smallest and largest of them and of their envelopes ('lo', 'hi').
** The mean alone would shrink a spike as the history grows, so the span is
** drawn too, faintly (a tint of the series' colour), where it reaches
** beyond the line. With 'smooth', a solid series' raw line joins that faint
** layer and the line is drawn through the columns of its moving average
** (TensorBoard's, taken over the points before they are reduced).
** Consecutive samples are then joined: with Braille by a line on the 2x4
** dot grid (Bresenham), two dots thick on a tall plot, across any columns
** the series has no point in; with blocks by a level glyph in the sample's
** cell and full blocks over any jump; with ASCII by one mark per column.
** A cell has one colour, so the series draw into a record per plot cell
** of who came and what they put there, and only then is each cell
** resolved: the faint layer shows only where no line is, a run's
** validation over its own line is shown, and a cell of two runs keeps
** both lines' dots in the colour of the run on top over a dim background
** of the other's (without colour, the shared role: each line's own dash
** pattern tells them apart; in ASCII a mark no run has). Alternating the
** runs cell by cell would break both lines into dots. Series also differ
** by dashes, tints and marks, never by hue alone.
** The reference line and the events' dotted rules are drawn into the grid
** first, beneath the series; event labels last, where no line is.
** A scatter skips the reduction: each point is one dot (Braille) or one
** mark per cell (block and ASCII, which have no finer grain for a point).
** The legend (legend.c) is laid out before the plot (it may take a second
** row) and drawn after it, when shared cells and event kinds are known.
** Ticks are counted as whole multiples of their step, never added up, so a
** span a few roundings wide (0.1 + 0.2 against 0.3) cannot stall them.
** Per frame, memory is a few numbers per sample column and a record per
** cell; the work is one pass over the points (two when smoothed).
*/
#include "ui/graph.h"

#include "base/utf8.h"
#include "ui/legend.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BRAILLE_BLANK 0x2800u
#define BLOCK_LOWER 0x2580u  /* + 1..8: lower eighth .. full block */
#define BLOCK_FAINT 0x2591u  /* light shade: a faint span or raw line */

/* ASCII marks by colour, a second set for a colour used again (style 1);
** validation and baselines have one lighter mark, which their colour (or
** their place beside their run) tells apart. */
static const char solid_marks[2][GRAPH_COLORS + 1] = {"*o+x@%&=", "XOHWVZ8$"};
#define GRAPH_ASCII_DASHED ':'
#define GRAPH_ASCII_FAINT '|'    /* a span, a raw line under its average */
#define GRAPH_ASCII_RULE '\''   /* an event's rule: a dotted column */

/* Dot bits of a Braille cell, by column and row within it. */
static const uint8_t braille_bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

static GraphCell *cell_at(GraphCell *cells, int w, int h, int y, int x) {
  if (y < 0 || y >= h || x < 0 || x >= w) return NULL;
  return &cells[(size_t)y * w + x];
}

static void put(GraphCell *cells, int w, int h, int y, int x, uint32_t ch, uint8_t role) {
  GraphCell *c = cell_at(cells, w, h, y, x);
  if (c) *c = (GraphCell){.ch = ch, .role = role};
}

/* ------------------------------------------------------------ text */

int graph_text(GraphCell *row, int w, const char *utf8, uint8_t role) {
  int x = 0;
  while (*utf8 && x < w) {
    uint32_t cp;
    utf8 += utf8_decode(utf8, UTF8_MAX, &cp);   /* stops at the NUL */
    if (cp == UTF8_INVALID) cp = '?';
    row[x++] = (GraphCell){.ch = cp < 0x20 ? ' ' : cp, .role = role};
  }
  return x;
}

size_t graph_to_utf8(const GraphCell *cells, int w, int h, char *out, size_t cap) {
  size_t n = 0;
  char b[4];
  for (int y = 0; y < h; y++) {
    for (int x = 0; x <= w; x++) {
      size_t k = x < w ? utf8_encode(cells[(size_t)y * w + x].ch, b) : (b[0] = '\n', 1);
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
  /* A whole number as it is ("10000", not "1e4") when it fits. */
  if (v == floor(v) && fabs(v) < 1e15) {
    snprintf(buf, cap, "%.0f", v);
    if ((int)strlen(buf) <= width) return;
  }
  for (int p = 4; p >= 1; p--) {
    snprintf(buf, cap, "%.*g", p, v);
    compact_exponent(buf);
    if ((int)strlen(buf) <= width) return;
  }
}

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
  int shrink = s->set && (th - tl) < 0.5 * (sh - sl);
  if (!grow && !shrink) return;
  /* Leave a margin of a tenth of the span so the next points fit too
  ** (computed so that it stays finite for values near the largest
  ** double); a span of a few roundings counts as none. */
  double m = th * 0.1 - tl * 0.1;
  if (!(m > 1e-13 * fmax(fabs(tl), fabs(th)))) m = fabs(th) * 0.1 + (log_y ? 0.1 : 1e-9);
  tl -= m;
  th += m;
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

/* The 1-2-5 value at or below (down) or above (!down) v > 0. */
static double log_snap(double v, int down) {
  static const double m[] = {1, 2, 5, 10};
  double d = pow(10, floor(log10(v))), best = down ? d : 10 * d;
  for (int i = 0; i < 4; i++) {
    double c = m[i] * d;
    if (down && c <= v * (1 + 1e-9)) best = c;
    if (!down && c >= v * (1 - 1e-9)) {
      best = c;
      break;
    }
  }
  return best;
}

/* ------------------------------------------------------------ plotting */

/* What the series put into one plot cell. Nothing is written to the grid
** while they draw: once all are in, 'resolve_cells' chooses the cell's
** glyph and roles from everything that came, so the order they were drawn
** in decides nothing but which lies on top. */
typedef struct CellMix {
  uint64_t ids;      /* the series there: bit id - 1 (the 64th series on share bit 63) */
  uint8_t dots[2];   /* Braille dots of solid lines, of dashed ones */
  uint32_t ch[2];    /* block glyph last drawn by a solid line, by a dashed one */
  uint8_t faint;     /* the faint layer (spans, raw lines under their average):
                        Braille dots, else not 0 when any */
  int faint_by;      /* the series (id) that drew faint dots last: their colour */
} CellMix;

/* Where a series' dots go: its line, or the faint layer beneath all lines. */
typedef enum Layer { LAYER_LINE, LAYER_FAINT } Layer;

typedef struct Plot {
  GraphCell *cells;
  int w, h;
  int x0, y0, pw, ph;   /* plot area in cells */
  int sx, sy;           /* samples per cell across and levels per cell down */
  double lo, hi;        /* transformed y range */
  double x_min, x_max;  /* x range, never empty */
  GraphGlyphs glyphs;
  int log_y;
  int thick;            /* Braille lines two dots thick */
  int mono;             /* no colour: each line its own pattern */
  int no_shade;         /* no background colours: shared cells in the shared role */
  const GraphSeries *series;
  int n_series;
  CellMix *mix;         /* per plot cell */
  int shared;           /* some cell is shared */
} Plot;

/* One series reduced to sample columns: the mean of what falls in each
** (points or their moving average), and the span of the points and of
** their envelopes. Arrays of one entry per sample column, reused by every
** series of a frame. */
typedef struct Columns {
  double *sum, *lo, *hi;
  int *cnt;
} Columns;

/* Line patterns without colour, by a series' 'line': which dot columns
** (Braille) or columns (block) of each period are drawn, whether the line
** is heavy (two dots thick; in block joined over jumps), and the legend's
** sample, a box-drawing line of the same weight and dashes. A block column
** has no thin line, so there the light ones also have gaps of their own,
** to differ from the heavy ones on a level stretch. Validation and
** baselines have a pattern of their own, sparser than any run's, and light.
** Light box-drawing triple dashes are the reference line's, so no run has
** them. */
typedef struct LinePattern {
  const char *braille, *block;   /* '1': drawn, '0': left out, repeated */
  int heavy;
  uint32_t sample;
} LinePattern;

static const LinePattern mono_lines[] = {
    {"1", "1", 1, 0x2501},          /* ━ solid */
    {"11111100", "1110", 1, 0x254d}, /* ╍ long dashes */
    {"1100", "10", 1, 0x2505},      /* ┅ short dashes */
    {"10", "100", 1, 0x2509},       /* ┉ dots */
    {"1", "11110", 0, 0x2500},      /* ─ thin solid (in block, rare gaps) */
    {"11111100", "110", 0, 0x254c},  /* ╌ thin long dashes */
};
#define N_MONO_LINES ((int)(sizeof mono_lines / sizeof mono_lines[0]))
static const LinePattern mono_dashed = {"10000000", "10000", 0, 0x2508};   /* ┈ a dot every four cells */

static const LinePattern *mono_pattern(const GraphSeries *s) {
  if (s->dashed) return &mono_dashed;
  int k = s->line % N_MONO_LINES;
  return &mono_lines[k < 0 ? k + N_MONO_LINES : k];
}

uint32_t graph_mono_sample(const GraphSeries *s) { return mono_pattern(s)->sample; }

static int pattern_on(const char *bits, int n) {
  size_t len = strlen(bits);
  return bits[(size_t)(n < 0 ? -n : n) % len] == '1';
}

static double transform(const Plot *p, double y) { return p->log_y ? log10(y) : y; }

/* A series' ASCII mark: by colour and style; validation and baselines
** one lighter mark. */
uint32_t graph_ascii_mark(const GraphSeries *s) {
  if (s->dashed) return GRAPH_ASCII_DASHED;
  return (uint32_t)solid_marks[s->style % 2][s->color % GRAPH_COLORS];
}

uint8_t graph_series_role(const GraphSeries *s) {
  return (uint8_t)(GRAPH_ROLE_SERIES + (s->color % GRAPH_COLORS) + (s->dashed ? GRAPH_ROLE_TINT : 0) +
                   (s->bold ? GRAPH_ROLE_BOLD : 0));
}

static CellMix *mix_at(Plot *p, int cy, int cx) {
  if (!p->mix || cy < 0 || cy >= p->ph || cx < 0 || cx >= p->pw) return NULL;
  return &p->mix[(size_t)cy * p->pw + cx];
}

static uint64_t id_bit(int id) { return (uint64_t)1 << (id - 1 < 63 ? id - 1 : 63); }

/* Series 'id' (1-based) puts Braille dots 'dots' or block glyph 'ch' into
** plot cell (cy, cx), on its line or on the faint layer. */
static void mix_put(Plot *p, int cy, int cx, int id, uint8_t dots, uint32_t ch, Layer layer) {
  CellMix *m = mix_at(p, cy, cx);
  if (!m) return;
  if (layer == LAYER_FAINT) {
    m->faint |= dots ? dots : 1;
    m->faint_by = id;
    return;
  }
  int dashed = p->series[id - 1].dashed != 0;
  m->ids |= id_bit(id);
  m->dots[dashed] |= dots;
  if (ch) m->ch[dashed] = ch;
}

/* The series in one cell stand for their groups (a run's training and
** validation lines are one group; a series of group 0 is its own): 'rep'
** gets each group's last solid line there (which lies on top), else its
** dashed one, 'val' its last dashed one (-1: none), and 'last' the last
** of its series drawn, in drawing order; returns how many groups. */
static int cell_groups(const Plot *p, uint64_t ids, int *rep, int *val, int *last, int cap) {
  int n = 0, key[64];
  for (int i = 0; i < p->n_series && i < 64; i++) {
    if (!(ids & id_bit(i + 1))) continue;
    const GraphSeries *s = &p->series[i];
    int k = s->group > 0 ? s->group : -(i + 1), g = 0;
    while (g < n && key[g] != k) g++;
    if (g == n) {
      if (n == cap) continue;
      key[n] = k, rep[n] = i, val[n++] = -1;
    } else if (!s->dashed || p->series[rep[g]].dashed) {
      rep[g] = i;
    }
    if (s->dashed) val[g] = i;
    last[g] = i;
  }
  return n;
}

/* The group drawn last in a cell (it lies on top) and the one drawn
** before it, by the last series of each. */
static void top_two(const int *last, int n, int *top, int *under) {
  *top = 0, *under = -1;
  for (int g = 1; g < n; g++) {
    if (last[g] > last[*top]) *under = *top, *top = g;
    else if (*under < 0 || last[g] > last[*under]) *under = g;
  }
}

/* The role of a tint of series 'i''s colour: a faint span, a shared
** cell's background. */
static uint8_t tint_role(const Plot *p, int i) {
  return (uint8_t)(GRAPH_ROLE_SERIES + p->series[i].color % GRAPH_COLORS + GRAPH_ROLE_TINT);
}

/* The Braille cell already in the grid (the reference line, event rules),
** for the series' dots to join. */
static uint32_t braille_base(const GraphCell *c) {
  return c->ch >= BRAILLE_BLANK && c->ch <= BRAILLE_BLANK + 0xff ? c->ch : BRAILLE_BLANK;
}

/* A cell only the faint layer reached: its dots (Braille) or a light mark
** in the tint of the series that drew there last. */
static void resolve_faint(const Plot *p, const CellMix *m, GraphCell *c) {
  /* A block or ASCII cell has room for one mark: the reference line's or
  ** an event rule's stays; Braille joins their dots. */
  int drawn = c->role == GRAPH_ROLE_REF || c->role == GRAPH_ROLE_EVENT;
  if (drawn && p->glyphs != GRAPH_BRAILLE) return;
  if (p->glyphs == GRAPH_BRAILLE) c->ch = braille_base(c) | m->faint;
  else c->ch = p->glyphs == GRAPH_ASCII ? GRAPH_ASCII_FAINT : BLOCK_FAINT;
  c->role = tint_role(p, m->faint_by - 1);
}

/* A cell's glyph and roles from what its series put there. One group: its
** line, or its validation's dots alone where they lie over their own run,
** so that validation is seen wherever it is drawn. Two groups or more: the
** cell is shared. It keeps every line's dots (Braille; a block cell the
** top one's level), so that neither line breaks up into dots where they
** run close; with colour in the colour of the group on top over a dim
** background of the one beneath, without colour in the shared role, each
** line in its own pattern. In ASCII, a mark of its own ('#'). The faint
** layer shows only where no line is. */
static void resolve_cell(Plot *p, int cy, int cx) {
  const CellMix *m = mix_at(p, cy, cx);
  GraphCell *c = cell_at(p->cells, p->w, p->h, p->y0 + cy, p->x0 + cx);
  if (!m || !c) return;
  if (!m->ids) {
    if (m->faint) resolve_faint(p, m, c);
    return;
  }
  int rep[64], val[64], last[64], n = cell_groups(p, m->ids, rep, val, last, 64), top, under;
  if (n == 0) return;
  top_two(last, n, &top, &under);
  int own = n == 1 && val[0] >= 0;   /* validation over its own run */
  const GraphSeries *s = &p->series[own ? val[0] : rep[top]];
  c->role = graph_series_role(s);
  if (n > 1) {
    p->shared = 1;
    if (p->mono || p->no_shade) c->role = GRAPH_ROLE_SHARED;
    else c->bg = tint_role(p, rep[under]);
  }
  if (p->glyphs == GRAPH_ASCII) {
    c->ch = n > 1 ? GRAPH_ASCII_SHARED : graph_ascii_mark(s);
  } else if (p->glyphs == GRAPH_BRAILLE) {
    c->ch = braille_base(c) | (own ? m->dots[1] : m->dots[0] | m->dots[1]);
  } else {
    int k = s->dashed ? 1 : 0;
    c->ch = m->ch[k] ? m->ch[k] : m->ch[!k];
  }
}

static void resolve_cells(Plot *p) {
  for (int cy = 0; cy < p->ph; cy++)
    for (int cx = 0; cx < p->pw; cx++) resolve_cell(p, cy, cx);
}

/* A Braille dot of series 'id' at dot (dx, dy) on 'layer'; 'id' 0 draws
** into the grid at once in 'role' (the reference line and event rules,
** beneath every series). */
static void braille_dot(Plot *p, int dx, int dy, int id, uint8_t role, Layer layer) {
  if (dx < 0 || dy < 0 || dy >= p->ph * 4) return;
  uint8_t bit = braille_bit[dx % 2][dy % 4];
  if (id) {
    mix_put(p, dy / 4, dx / 2, id, bit, 0, layer);
    return;
  }
  GraphCell *c = cell_at(p->cells, p->w, p->h, p->y0 + dy / 4, p->x0 + dx / 2);
  if (!c) return;
  c->ch = braille_base(c) | bit;
  c->role = role;
}

/* Dashes by style (see GraphSeries): dashed, five dot columns drawn and
** three left out, so a gap reads as a gap even where a line is steep or
** thick; a colour's second use has short gaps in its solid line and short
** dashes in its dashed one. Without colour, the series' pattern. */
static int dash_on(const Plot *p, const GraphSeries *s, int dx) {
  if (p->mono) return pattern_on(mono_pattern(s)->braille, dx);
  if (s->style % 2 == 0) return !s->dashed || dx % 8 < 5;
  return s->dashed ? dx % 8 < 2 : dx % 6 < 5;
}

/* The same without dots to leave out (block and ASCII): the n-th drawn
** column of the series, or a gap. ASCII marks tell series apart already,
** so only their dashed lines leave columns out. */
static int sample_on(const Plot *p, const GraphSeries *s, int n) {
  if (p->mono && p->glyphs == GRAPH_BLOCK) return pattern_on(mono_pattern(s)->block, n);
  if (s->style % 2 == 0) return !s->dashed || n % 2 == 0;
  return s->dashed ? n % 3 == 0 : n % 3 != 2;
}

/* Two dots thick (on a tall plot), unless the series' pattern is light. */
static int line_thick(const Plot *p, const GraphSeries *s) { return p->thick && (!p->mono || mono_pattern(s)->heavy); }

/* A line on the dot grid (Bresenham) from (x0, y0) to (x1, y1): the
** series' own (dashed, thick) on the line layer, one plain dot thin on the
** faint one. */
static void braille_line(Plot *p, int x0, int y0, int x1, int y1, int id, Layer layer) {
  const GraphSeries *s = &p->series[id - 1];
  int dx = abs(x1 - x0), dy = -abs(y1 - y0);
  int stx = x0 < x1 ? 1 : -1, sty = y0 < y1 ? 1 : -1, e = dx + dy;
  int ys = p->ph * 4, line = layer == LAYER_LINE, thick = line && line_thick(p, s);
  for (;;) {
    if (!line || dash_on(p, s, x0)) {
      braille_dot(p, x0, y0, id, 0, layer);
      /* The second dot below, or above on the bottom row. */
      if (thick) braille_dot(p, x0, y0 + 1 < ys ? y0 + 1 : y0 - 1, id, 0, layer);
    }
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
** sy levels per cell), joined to the previous sample's level 'prev' (-1: none);
** a light line without colour is not joined, which keeps it thin. */
static void cell_sample(Plot *p, const GraphSeries *s, int col, int r, int prev, int id) {
  int cy = r / p->sy;
  if (p->glyphs == GRAPH_ASCII) {
    mix_put(p, cy, col, id, 0, graph_ascii_mark(s), LAYER_LINE);
    return;
  }
  mix_put(p, cy, col, id, 0, BLOCK_LOWER + (uint32_t)(p->sy - r % p->sy), LAYER_LINE);
  if (prev < 0 || (p->mono && !mono_pattern(s)->heavy)) return;
  int pc = prev / p->sy, lo = pc < cy ? pc : cy + 1, hi = pc < cy ? cy - 1 : pc;
  for (int y = lo; y <= hi; y++) mix_put(p, y, col, id, 0, BLOCK_LOWER + 8, LAYER_LINE);
}

/* A value the plot can place: finite, and positive on a log scale. */
static int plottable(const Plot *p, double v) { return isfinite(v) && !(p->log_y && v <= 0); }

/* The sample column of x, -1 outside the x range. */
static int sample_col(const Plot *p, double x) {
  int xs = p->pw * p->sx;
  double f = (x - p->x_min) / (p->x_max - p->x_min);
  if (!(f >= 0 && f <= 1)) return -1;
  int c = (int)(f * xs);
  return c >= xs ? xs - 1 : c;
}

/* The level row (0 at the top) of a transformed value, clamped to the plot. */
static int level_row(const Plot *p, double t) {
  int ys = p->ph * p->sy;
  double f = (p->hi - t) / (p->hi - p->lo) * (ys - 1);
  return !(f > 0) ? 0 : f > ys - 1 ? ys - 1 : (int)lround(f);
}

/* Point k's bound from 'bound' (a series' lo or hi), or its value when
** there is none or the plot cannot place it. */
static double bound_or(const Plot *p, const double *bound, int k, double v) {
  return bound && plottable(p, bound[k]) ? bound[k] : v;
}

/* Reduce series 's' to sample columns into 'col': the mean of its values
** in each, or with 'smooth' > 0 of their moving average, taken over every
** point in x order (TensorBoard's, debiased: the first points are not
** pulled towards 0); the span of the values and their envelopes. */
static void reduce(const Plot *p, const GraphSeries *s, double smooth, Columns *col) {
  int xs = p->pw * p->sx;
  for (int c = 0; c < xs; c++) col->sum[c] = 0, col->cnt[c] = 0, col->lo[c] = HUGE_VAL, col->hi[c] = -HUGE_VAL;
  double avg = 0, weight = 1;   /* the average so far, and smooth^(points so far) */
  for (int k = 0; k < s->n; k++) {
    double v = s->y[k];
    if (!plottable(p, v)) continue;
    if (smooth > 0) {
      avg = avg * smooth + (1 - smooth) * v;
      weight *= smooth;
      v = avg / (1 - weight);
    }
    int c = isfinite(s->x[k]) ? sample_col(p, s->x[k]) : -1;
    if (c < 0) continue;
    col->sum[c] += transform(p, v);
    col->cnt[c]++;
    double lo = transform(p, bound_or(p, s->lo, k, s->y[k])), hi = transform(p, bound_or(p, s->hi, k, s->y[k]));
    col->lo[c] = fmin(col->lo[c], fmin(lo, hi));
    col->hi[c] = fmax(col->hi[c], fmax(lo, hi));
  }
}

/* Level rows 'r' and 'mean' are one place of the line: the dots of a
** thick Braille line, one cell of the others. */
static int on_line(const Plot *p, int r, int mean) {
  return p->glyphs == GRAPH_BRAILLE ? abs(r - mean) <= 1 : r / p->sy == mean / p->sy;
}

/* A span's end at level row 'r' is worth drawing: beyond the line's dots
** (Braille), beyond the next cell in the coarser tiers, where the noise of
** every line would otherwise fill the rows beside it. */
static int span_reaches(const Plot *p, int r, int mean) {
  return p->glyphs == GRAPH_BRAILLE ? abs(r - mean) > 1 : abs(r / p->sy - mean / p->sy) > 1;
}

/* The faint span of every sample column, from its smallest to its largest
** value: a spike that the mean of a long column hides is still seen. Only
** where it reaches beyond the line: it must not fill the gaps of dashes. */
static void draw_spans(Plot *p, int id, const Columns *col) {
  for (int c = 0; c < p->pw * p->sx; c++) {
    if (!col->cnt[c]) continue;
    int mean = level_row(p, col->sum[c] / col->cnt[c]), top = level_row(p, col->hi[c]), bottom = level_row(p, col->lo[c]);
    int up = span_reaches(p, top, mean), down = span_reaches(p, bottom, mean);
    for (int r = top; r <= bottom; r++) {
      if (on_line(p, r, mean) || (r < mean && !up) || (r > mean && !down)) continue;
      if (p->glyphs == GRAPH_BRAILLE) braille_dot(p, c, r, id, 0, LAYER_FAINT);
      else mix_put(p, r / p->sy, c, id, 0, 0, LAYER_FAINT);
    }
  }
}

/* The line through the columns' means: consecutive samples joined
** whatever lies between them (columns where the series has no point), on
** the dot grid in Braille; block and ASCII fill the columns between with
** the line between them, so a series measured every few steps reads as a
** line, not as blips. A sample left out for the dashes leaves the next
** unjoined. On the faint layer, block and ASCII mark each sample only. */
static void draw_means(Plot *p, int id, const Columns *col, Layer layer) {
  const GraphSeries *s = &p->series[id - 1];
  int pc = -1, pr = -1, drawn = 0, prev = -1;
  for (int c = 0; c < p->pw * p->sx; c++) {
    if (!col->cnt[c]) continue;
    int r = level_row(p, col->sum[c] / col->cnt[c]);
    if (p->glyphs == GRAPH_BRAILLE) {
      braille_line(p, pc < 0 ? c : pc, pc < 0 ? r : pr, c, r, id, layer);
    } else if (layer == LAYER_FAINT) {
      mix_put(p, r / p->sy, c, id, 0, 0, LAYER_FAINT);
    } else {
      for (int cc = pc < 0 ? c : pc + 1; cc <= c; cc++) {
        int rr = cc == c ? r : pr + (int)lround((double)(r - pr) * (cc - pc) / (c - pc));
        if (!sample_on(p, s, drawn++)) {
          prev = -1;
          continue;
        }
        cell_sample(p, s, cc, rr, prev, id);
        prev = rr;
      }
    }
    pc = c;
    pr = r;
  }
}

/* A series as a line; 'id' is its index + 1. A solid one has its spans
** beneath it; smoothed, its raw line too, faintly, under its average.
** Dashed lines (validation, baselines) are drawn as they are. */
static void plot_series(Plot *p, int id, double smooth, Columns *col) {
  const GraphSeries *s = &p->series[id - 1];
  int smoothed = !s->dashed && smooth > 0 && smooth < 1;
  reduce(p, s, 0, col);
  if (!s->dashed) draw_spans(p, id, col);
  if (smoothed) {
    draw_means(p, id, col, LAYER_FAINT);
    reduce(p, s, smooth, col);
  }
  draw_means(p, id, col, LAYER_LINE);
}

/* Every point of a series alone; points outside the ranges are left out
** rather than piled on the border. */
static void scatter_series(Plot *p, const GraphSeries *s, int id) {
  int xs = p->pw * p->sx, ys = p->ph * p->sy;
  for (int k = 0; k < s->n; k++) {
    double v = s->y[k];
    if (!plottable(p, v)) continue;
    double fx = (s->x[k] - p->x_min) / (p->x_max - p->x_min), fy = (p->hi - transform(p, v)) / (p->hi - p->lo);
    if (!(fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1)) continue;
    int c = (int)(fx * xs), r = (int)lround(fy * (ys - 1));
    if (c >= xs) c = xs - 1;
    if (p->glyphs == GRAPH_BRAILLE) braille_dot(p, c, r, id, 0, LAYER_LINE);
    else mix_put(p, r, c, id, 0, graph_ascii_mark(s), LAYER_LINE);
  }
}

/* The reference line: every other dot (Braille), or a dashed rule. */
/* The reference line's row in sample rows (top-down), or -1 when it is
** off the chart. */
static int ref_sample_row(const Graph *g, const Plot *p) {
  if (!g->has_ref || (p->log_y && !(g->ref_y > 0))) return -1;
  double t = transform(p, g->ref_y);
  if (!(t >= p->lo && t <= p->hi)) return -1;
  return (int)lround((p->hi - t) / (p->hi - p->lo) * (p->ph * p->sy - 1));
}

static void ref_line(const Graph *g, Plot *p) {
  int r = ref_sample_row(g, p);
  if (r < 0) return;
  for (int x = 0; x < p->pw * p->sx; x++) {
    if (p->glyphs == GRAPH_BRAILLE) {
      if (x % 2 == 0) braille_dot(p, x, r * 4 / p->sy, 0, GRAPH_ROLE_REF, LAYER_LINE);
    } else {
      put(p->cells, p->w, p->h, p->y0 + r / p->sy, p->x0 + x, p->glyphs == GRAPH_ASCII ? '.' : 0x2504, GRAPH_ROLE_REF);
    }
  }
}

int graph_label_cols(int w) { return w >= 12 ? (w / 4 < 6 ? w / 4 : 6) : 0; }

int graph_ref_in_axis(const Graph *g, int w) {
  return g->has_ref && g->ref_label && (int)strlen(g->ref_label) <= graph_label_cols(w);
}

/* The reference line named in the y labels' column, on its own row, in
** its grey: "out=in" where the ratio's "1" would be, and the legend keeps
** its row for the runs. */
static void ref_label(const Graph *g, Plot *p, int lw) {
  int r = ref_sample_row(g, p);
  if (r < 0 || !graph_ref_in_axis(g, p->w)) return;
  int y = p->y0 + r / p->sy, len = (int)strlen(g->ref_label);
  for (int k = 0; k < lw; k++) put(p->cells, p->w, p->h, y, k, ' ', GRAPH_ROLE_TEXT);
  for (int k = 0; k < len; k++) put(p->cells, p->w, p->h, y, lw - len + k, (uint32_t)g->ref_label[k], GRAPH_ROLE_REF);
}

/* Each event in the x range as a dotted vertical rule through the plot,
** beneath the series: every other dot of one dot column (Braille), else
** a dotted rule glyph in every row. */
static void event_rules(const Graph *g, Plot *p) {
  for (int i = 0; i < g->n_events; i++) {
    int c = sample_col(p, g->events[i].x);
    if (c < 0) continue;
    for (int r = 0; r < p->ph * (p->glyphs == GRAPH_BRAILLE ? 4 : 1); r++) {
      if (p->glyphs == GRAPH_BRAILLE) {
        if (r % 2 == 0) braille_dot(p, c, r, 0, GRAPH_ROLE_EVENT, LAYER_LINE);
      } else {
        put(p->cells, p->w, p->h, p->y0 + r, p->x0 + c, p->glyphs == GRAPH_ASCII ? GRAPH_ASCII_RULE : 0x250a,
            GRAPH_ROLE_EVENT);
      }
    }
  }
}

/* Cells of UTF-8 text. */
static int text_len(const char *s) {
  int n = 0;
  for (uint32_t cp; *s; n++) s += utf8_decode(s, UTF8_MAX, &cp);
  return n;
}

/* Label cells [from, to) of the plot's top row are free: inside the plot,
** no other label within a cell of them ('taken'), no line there. */
static int label_room(Plot *p, const char *taken, int from, int to) {
  if (from < 0 || to > p->pw) return 0;
  for (int x = from - 1; x <= to; x++)
    if (x >= 0 && x < p->pw && taken[x]) return 0;
  for (int x = from; x < to; x++)
    if (mix_at(p, 0, x)->ids) return 0;
  return 1;
}

/* Each event's label on the plot's top row, just right of its rule,
** where it fits and neither covers a line nor runs into another label. */
static void event_labels(const Graph *g, Plot *p) {
  char taken[1024] = {0};
  if (!p->mix || p->pw > (int)sizeof taken) return;
  for (int i = 0; i < g->n_events; i++) {
    const char *label = g->events[i].label;
    int c = sample_col(p, g->events[i].x);
    if (!label || !*label || c < 0) continue;
    int from = c / p->sx + 1, to = from + text_len(label);
    if (!label_room(p, taken, from, to)) continue;
    graph_text(&p->cells[(size_t)p->y0 * p->w + p->x0 + from], to - from, label, GRAPH_ROLE_EVENT);
    memset(taken + from, 1, (size_t)(to - from));
  }
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

static int value_row(const Plot *p, double t) {
  int ys = p->ph * p->sy;
  return (int)lround((p->hi - t) / (p->hi - p->lo) * (ys - 1)) / p->sy;
}

/* Round ticks: multiples of the step on a linear scale; on a log scale
** decades, then 5s and 2s where they leave a free row between labels. */
static void y_labels(Plot *p, int lw) {
  char used[1024] = {0};
  if (p->ph > (int)sizeof used) return;
  if (!p->log_y) {
    /* By whole multiples of the step, counted: adding the step to a tick
    ** can leave it unchanged, where the span is a few roundings wide. */
    double step = nice_step(p->hi - p->lo, y_intervals(p));
    double k0 = ceil(p->lo / step - 1e-9), k1 = floor(p->hi / step + 1e-9);
    for (int i = 0; i <= p->ph && k0 + i <= k1; i++) {
      double t = (k0 + i) * step;
      y_label_put(p, lw, value_row(p, t), fabs(t) < step * 1e-9 ? 0 : t, used);
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

/* Widen the y range to round ticks, so the labels at its ends are round. */
static void snap_y(Plot *p) {
  if (!p->log_y) {
    double step = nice_step(p->hi - p->lo, y_intervals(p));
    p->lo = floor(p->lo / step + 1e-9) * step;
    p->hi = ceil(p->hi / step - 1e-9) * step;
    return;
  }
  /* To 1-2-5 values rather than decades: a decade more at each end would
  ** leave a third of a short chart empty. */
  p->lo = log10(log_snap(pow(10, p->lo), 1));
  p->hi = log10(log_snap(pow(10, p->hi), 0));
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

static void time_axis(const Graph *g, Plot *p, int lw, int *kinds) {
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
    if (c < 0 || k < 0 || k > 2) continue;
    put(p->cells, p->w, p->h, y, p->x0 + c, legend_event_mark(k, ascii), GRAPH_ROLE_EVENT);
    kinds[k] = 1;
  }
}

/* ------------------------------------------------------------ frame */

/* A y range the plot can divide into rows: one narrower than a few
** roundings of its values (0.1 + 0.2 against 0.3) is widened around them,
** one wider than a double holds (-1e308..1e308) is narrowed, its extreme
** points drawn at the edge. */
static void widen_y(Plot *p) {
  double big = DBL_MAX / 4;
  if (p->lo < -big) p->lo = -big;
  if (p->hi > big) p->hi = big;
  if (p->lo > big) p->lo = big;
  if (p->hi < -big) p->hi = -big;
  if (p->hi - p->lo > 1e-12 * fmax(fabs(p->lo), fabs(p->hi)) && isfinite(p->lo) && isfinite(p->hi)) return;
  double c = isfinite(p->lo) ? p->lo : 0, d = fabs(c) * 0.1 + (p->log_y ? 0.1 : 1e-9);
  p->lo = c - d;
  p->hi = c + d;
}

/* The legend rows a chart of h rows may spend: a second only when the
** plot keeps at least five. */
static int legend_max_rows(int h) { return h >= 8 ? 2 : 1; }

/* Clear the grid, plan the legend (with room for ASCII's "# both" when
** 'reserve'), draw the y labels and the x axis, and set up 'p' for the
** points; 0 when there is no room for a plot. */
static int frame(const Graph *g, GraphCell *cells, int w, int h, int scatter, int reserve, Plot *p, Legend *l,
                 LegendPlan *pl, int *kinds) {
  if (w <= 0 || h <= 0) return 0;
  for (size_t i = 0; i < (size_t)w * h; i++) cells[i] = (GraphCell){.ch = ' ', .role = GRAPH_ROLE_TEXT};
  /* Every kind of event counts for the plan, so the plot does not move when
  ** a marker scrolls out of sight. */
  int all[3] = {0, 0, 0};
  for (int i = 0; i < g->n_events; i++)
    if (g->events[i].kind >= 0 && g->events[i].kind <= 2) all[g->events[i].kind] = 1;
  *pl = legend_plan(g, l, scatter, reserve, all, w, legend_max_rows(h));
  if (h < 2 + pl->rows) return 0;

  *p = (Plot){.cells = cells, .w = w, .h = h, .y0 = pl->rows, .ph = h - 1 - pl->rows, .glyphs = g->glyphs,
              .log_y = g->log_y, .series = g->series, .n_series = g->n_series, .mono = g->mono,
              .no_shade = g->no_shade};
  p->sx = g->glyphs == GRAPH_BRAILLE ? 2 : 1;
  p->sy = g->glyphs == GRAPH_BRAILLE ? 4 : g->glyphs == GRAPH_BLOCK && !scatter ? 8 : 1;
  p->thick = g->glyphs == GRAPH_BRAILLE && !scatter && p->ph >= 5;
  p->lo = g->log_y ? log10(g->y_min > 0 ? g->y_min : 1e-12) : g->y_min;
  p->hi = g->log_y ? log10(g->y_max > 0 ? g->y_max : 1e-12) : g->y_max;
  widen_y(p);
  int lw = graph_label_cols(w);
  if (lw > 0) snap_y(p);   /* round labels; a chart without any keeps every row for data */
  p->x0 = lw > 0 ? lw + 1 : 0;
  p->pw = w - p->x0;
  p->x_min = g->x_min;
  p->x_max = g->x_max - g->x_min > 1e-12 * fabs(g->x_min) ? g->x_max : g->x_min + 1 + fabs(g->x_min) * 1e-9;

  if (lw > 0) y_labels(p, lw);
  ref_label(g, p, lw);
  time_axis(g, p, lw, kinds);
  return 1;
}

/* The legend goes on last: only now is it known whether cells are shared
** and which kinds of event lie on the axis. */
static void finish(const Graph *g, Plot *p, Legend *l, const LegendPlan *pl, int scatter, const int *kinds) {
  legend_items(g, l, scatter, p->shared, pl->val_each, kinds);
  legend_draw(l, pl, p->cells, p->w, g->glyphs == GRAPH_ASCII);
}

/* Plot every series into the frame, over the reference line and the
** event rules, and label the events; 0 when out of memory. The columns
** are allocated per frame: a few numbers per sample column. */
static int plot_all(const Graph *g, Plot *p, int scatter) {
  size_t xs = (size_t)p->pw * p->sx;
  Columns col = {0};
  if (!scatter) {
    col.sum = malloc(sizeof *col.sum * xs * 3);
    col.lo = col.sum ? col.sum + xs : NULL;
    col.hi = col.sum ? col.sum + 2 * xs : NULL;
    col.cnt = malloc(sizeof *col.cnt * xs);
  }
  p->mix = calloc((size_t)p->pw * p->ph, sizeof *p->mix);
  int fine = p->mix && (scatter || (col.sum && col.cnt));
  if (fine) {
    ref_line(g, p);
    event_rules(g, p);
    for (int i = 0; i < g->n_series; i++) {
      if (scatter) scatter_series(p, &g->series[i], i + 1);
      else plot_series(p, i + 1, g->smooth, &col);
    }
    resolve_cells(p);
    event_labels(g, p);
  }
  free(col.sum);
  free(col.cnt);
  free(p->mix);
  p->mix = NULL;
  return fine;
}

/* The frame is planned without the shared cells' entry in the legend
** (ASCII's "# both"); when cells turn out shared and the entry does not
** fit that plan, once more with it. */
static void draw(const Graph *g, GraphCell *cells, int w, int h, int scatter) {
  Plot p;
  Legend l;
  LegendPlan pl;
  for (int reserve = 0; reserve < 2; reserve++) {
    int kinds[3] = {0, 0, 0};
    if (!frame(g, cells, w, h, scatter, reserve, &p, &l, &pl, kinds)) {
      if (w > 0 && h > 0) legend_draw(&l, &pl, cells, w, g->glyphs == GRAPH_ASCII);
      return;
    }
    if (!plot_all(g, &p, scatter)) return;
    if (!reserve && p.shared) {
      legend_items(g, &l, scatter, 1, pl.val_each, kinds);
      if (!legend_fits(&l, &pl, w)) continue;
    }
    finish(g, &p, &l, &pl, scatter, kinds);
    return;
  }
}

void graph_render(const Graph *g, GraphCell *cells, int w, int h) { draw(g, cells, w, h, 0); }

void graph_scatter(const Graph *g, GraphCell *cells, int w, int h) { draw(g, cells, w, h, 1); }

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
    row[x] = (GraphCell){.ch = ch, .role = role};
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
