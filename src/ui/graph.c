/*
** graph.c -- series into a grid of cells: Braille, block or ASCII.
**
** Each series is first reduced to one value per horizontal sample (two per
** cell with Braille, one otherwise): the mean of its points that fall in
** the sample's x range. Consecutive samples are then joined: with Braille
** by a line on the 2x4 dot grid (Bresenham), two dots thick on a tall plot,
** with blocks by a level glyph in the sample's cell and full blocks over any
** jump, with ASCII by one mark per column. A cell has one colour, so the
** series draw into a record per plot cell of who came and what they put
** there, and only then is each cell resolved: a run's validation over its
** own line is shown, cells of two runs are shared (the legend explains
** it) and show their lines in turn, rather than the last series silently
** winning. Series also differ by dashes, tints and marks, never by hue
** alone; without colour each line has a pattern of its own.
** A scatter skips the reduction: each point is one dot (Braille) or one
** mark per cell (block and ASCII, which have no finer grain for a point).
** The legend (legend.c) is laid out before the plot (it may take a second
** row) and drawn after it, when shared cells and event kinds are known.
** Ticks are counted as whole multiples of their step, never added up, so a
** span a few roundings wide (0.1 + 0.2 against 0.3) cannot stall them.
*/
#include "ui/graph.h"

#include "ui/legend.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BRAILLE_BLANK 0x2800u
#define BLOCK_LOWER 0x2580u  /* + 1..8: lower eighth .. full block */

/* ASCII marks by colour, a second set for a colour used again (style 1);
** validation and baselines have one lighter mark, which their colour (or
** their place beside their run) tells apart. */
static const char solid_marks[2][GRAPH_COLORS + 1] = {"*o+x@%&=", "XOHWVZ8$"};
#define GRAPH_ASCII_DASHED ':'

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
** glyph and role from everything that came, so the order they were drawn
** in decides nothing but which lies on top. */
typedef struct CellMix {
  uint64_t ids;      /* the series there: bit id - 1 (the 64th series on share bit 63) */
  uint8_t dots[2];   /* Braille dots of solid lines, of dashed ones */
  uint32_t ch[2];    /* block glyph last drawn by a solid line, by a dashed one */
} CellMix;

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
  const GraphSeries *series;
  int n_series;
  CellMix *mix;         /* per plot cell */
  int stripes;          /* shared cells take their series' colours in turn */
  int shared;           /* some cell is shared */
} Plot;

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
** plot cell (cy, cx). */
static void mix_put(Plot *p, int cy, int cx, int id, uint8_t dots, uint32_t ch) {
  CellMix *m = mix_at(p, cy, cx);
  if (!m) return;
  int dashed = p->series[id - 1].dashed != 0;
  m->ids |= id_bit(id);
  m->dots[dashed] |= dots;
  if (ch) m->ch[dashed] = ch;
}

/* The series in one cell stand for their groups (a run's training and
** validation lines are one group; a series of group 0 is its own): 'rep'
** gets each group's last solid line there (which lies on top), else its
** dashed one, and 'val' its last dashed one (-1: none), in drawing order;
** returns how many groups. */
static int cell_groups(const Plot *p, uint64_t ids, int *rep, int *val, int cap) {
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
  }
  return n;
}

/* Of the lines in a shared cell (each group's, and its validation's when
** there), the one shown longest ago along this row ('shown': the column
** each series was last shown at, -1: never), so that every line gets its
** turns whatever the period of its dashes. */
static int least_recent(const int *rep, const int *val, int n, const int *shown) {
  int best = rep[0];
  for (int g = 0; g < n; g++)
    for (int k = 0; k < 2; k++) {
      int i = k ? val[g] : rep[g];
      if (i >= 0 && shown[i] < shown[best]) best = i;
    }
  return best;
}

/* A cell's glyph and role from what its series put there. One group: its
** line, or its validation's dots alone where they lie over their own run,
** so that validation is seen wherever it is drawn. Two groups or more: the
** cell is shared, and its lines take it in turn along the row: in ASCII
** with their own marks (a stretch where runs coincide reads "*o+x@", each
** visible), with colour in their colours; without colour the cell has the
** shared role (reverse video). */
static void resolve_cell(Plot *p, int cy, int cx, int *shown) {
  const CellMix *m = mix_at(p, cy, cx);
  GraphCell *c = cell_at(p->cells, p->w, p->h, p->y0 + cy, p->x0 + cx);
  if (!m || !m->ids || !c) return;
  int rep[64], val[64], n = cell_groups(p, m->ids, rep, val, 64);
  if (n == 0) return;
  int own = n == 1 && val[0] >= 0;   /* validation over its own run */
  int pick = n == 1 ? (own ? val[0] : rep[0]) : least_recent(rep, val, n, shown);
  shown[pick] = cx;
  const GraphSeries *s = &p->series[pick];
  uint8_t role = graph_series_role(s);
  if (n > 1) {
    p->shared = 1;
    role = p->stripes ? role : GRAPH_ROLE_SHARED;
  }
  if (p->glyphs == GRAPH_ASCII) {
    c->ch = graph_ascii_mark(s);
  } else if (p->glyphs == GRAPH_BRAILLE) {
    uint32_t base = c->ch >= BRAILLE_BLANK && c->ch <= BRAILLE_BLANK + 0xff ? c->ch : BRAILLE_BLANK;
    c->ch = base | (own ? m->dots[1] : m->dots[0] | m->dots[1]);
  } else {
    int k = s->dashed ? 1 : 0;
    c->ch = m->ch[k] ? m->ch[k] : m->ch[!k];
  }
  c->role = role;
}

static void resolve_cells(Plot *p) {
  for (int cy = 0; cy < p->ph; cy++) {
    int shown[64];
    for (int i = 0; i < 64; i++) shown[i] = -1;
    for (int cx = 0; cx < p->pw; cx++) resolve_cell(p, cy, cx, shown);
  }
}

/* A Braille dot of series 'id' at dot (dx, dy); 'id' 0 draws into the
** grid at once in 'role' (the reference line, beneath every series). */
static void braille_dot(Plot *p, int dx, int dy, int id, uint8_t role) {
  if (dx < 0 || dy < 0 || dy >= p->ph * 4) return;
  uint8_t bit = braille_bit[dx % 2][dy % 4];
  if (id) {
    mix_put(p, dy / 4, dx / 2, id, bit, 0);
    return;
  }
  GraphCell *c = cell_at(p->cells, p->w, p->h, p->y0 + dy / 4, p->x0 + dx / 2);
  if (!c) return;
  if (c->ch < BRAILLE_BLANK || c->ch > BRAILLE_BLANK + 0xff) c->ch = BRAILLE_BLANK;
  c->ch |= bit;
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

static void braille_line(Plot *p, int x0, int y0, int x1, int y1, int id, const GraphSeries *s) {
  int dx = abs(x1 - x0), dy = -abs(y1 - y0);
  int stx = x0 < x1 ? 1 : -1, sty = y0 < y1 ? 1 : -1, e = dx + dy;
  int ys = p->ph * 4, thick = line_thick(p, s);
  for (;;) {
    if (dash_on(p, s, x0)) {
      braille_dot(p, x0, y0, id, 0);
      /* The second dot below, or above on the bottom row. */
      if (thick) braille_dot(p, x0, y0 + 1 < ys ? y0 + 1 : y0 - 1, id, 0);
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
    mix_put(p, cy, col, id, 0, graph_ascii_mark(s));
    return;
  }
  mix_put(p, cy, col, id, 0, BLOCK_LOWER + (uint32_t)(p->sy - r % p->sy));
  if (prev < 0 || (p->mono && !mono_pattern(s)->heavy)) return;
  int pc = prev / p->sy, lo = pc < cy ? pc : cy + 1, hi = pc < cy ? cy - 1 : pc;
  for (int y = lo; y <= hi; y++) mix_put(p, y, col, id, 0, BLOCK_LOWER + 8);
}

/* Reduce a series to one mean per sample column and draw it; 'id' is its
** index + 1. */
static void plot_series(Plot *p, const GraphSeries *s, int id, double *sum, int *cnt) {
  int xs = p->pw * p->sx, ys = p->ph * p->sy;
  memset(sum, 0, sizeof *sum * (size_t)xs);
  memset(cnt, 0, sizeof *cnt * (size_t)xs);
  for (int k = 0; k < s->n; k++) {
    double v = s->y[k];
    if (!isfinite(v) || (p->log_y && v <= 0) || !isfinite(s->x[k])) continue;
    double f = (s->x[k] - p->x_min) / (p->x_max - p->x_min);
    if (f < 0 || f > 1) continue;
    int c = (int)(f * xs);
    if (c >= xs) c = xs - 1;
    sum[c] += transform(p, v);
    cnt[c]++;
  }
  int pc = -1, pr = -1, drawn = 0, prev = -1;
  for (int c = 0; c < xs; c++) {
    if (!cnt[c]) continue;
    double f = (p->hi - sum[c] / cnt[c]) / (p->hi - p->lo) * (ys - 1);
    int r = !(f > 0) ? 0 : f > ys - 1 ? ys - 1 : (int)lround(f);
    if (p->glyphs == GRAPH_BRAILLE) {
      braille_line(p, pc < 0 ? c : pc, pc < 0 ? r : pr, c, r, id, s);
    } else {
      /* The columns between two samples take the line between them, so a
      ** series measured every few steps reads as a line, not as blips.
      ** A sample left out for the dashes leaves the next unjoined. */
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

/* Every point of a series alone; points outside the ranges are left out
** rather than piled on the border. */
static void scatter_series(Plot *p, const GraphSeries *s, int id) {
  int xs = p->pw * p->sx, ys = p->ph * p->sy;
  for (int k = 0; k < s->n; k++) {
    double v = s->y[k];
    if (!isfinite(v) || (p->log_y && v <= 0)) continue;
    double fx = (s->x[k] - p->x_min) / (p->x_max - p->x_min), fy = (p->hi - transform(p, v)) / (p->hi - p->lo);
    if (!(fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1)) continue;
    int c = (int)(fx * xs), r = (int)lround(fy * (ys - 1));
    if (c >= xs) c = xs - 1;
    if (p->glyphs == GRAPH_BRAILLE) braille_dot(p, c, r, id, 0);
    else mix_put(p, r, c, id, 0, graph_ascii_mark(s));
  }
}

/* The reference line: every other dot (Braille), or a dashed rule. */
static void ref_line(const Graph *g, Plot *p) {
  if (!g->has_ref || (p->log_y && !(g->ref_y > 0))) return;
  double t = transform(p, g->ref_y);
  if (!(t >= p->lo && t <= p->hi)) return;
  int ys = p->ph * p->sy, r = (int)lround((p->hi - t) / (p->hi - p->lo) * (ys - 1));
  for (int x = 0; x < p->pw * p->sx; x++) {
    if (p->glyphs == GRAPH_BRAILLE) {
      if (x % 2 == 0) braille_dot(p, x, r * 4 / p->sy, 0, GRAPH_ROLE_REF);
    } else {
      put(p->cells, p->w, p->h, p->y0 + r / p->sy, p->x0 + x, p->glyphs == GRAPH_ASCII ? '.' : 0x2504, GRAPH_ROLE_REF);
    }
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

/* Clear the grid, plan the legend (with room for 'overlap' when
** 'reserve'), draw the y labels and the x axis, and set up 'p' for the
** points; 0 when there is no room for a plot. */
static int frame(const Graph *g, GraphCell *cells, int w, int h, int scatter, int reserve, Plot *p, Legend *l,
                 LegendPlan *pl, int *kinds) {
  if (w <= 0 || h <= 0) return 0;
  for (size_t i = 0; i < (size_t)w * h; i++) cells[i] = (GraphCell){' ', GRAPH_ROLE_TEXT};
  /* Every kind of event counts for the plan, so the plot does not move when
  ** a marker scrolls out of sight. */
  int all[3] = {0, 0, 0};
  for (int i = 0; i < g->n_events; i++)
    if (g->events[i].kind >= 0 && g->events[i].kind <= 2) all[g->events[i].kind] = 1;
  *pl = legend_plan(g, l, scatter, reserve, all, w, legend_max_rows(h));
  if (h < 2 + pl->rows) return 0;

  *p = (Plot){.cells = cells, .w = w, .h = h, .y0 = pl->rows, .ph = h - 1 - pl->rows, .glyphs = g->glyphs,
              .log_y = g->log_y, .series = g->series, .n_series = g->n_series, .mono = g->mono};
  p->sx = g->glyphs == GRAPH_BRAILLE ? 2 : 1;
  p->sy = g->glyphs == GRAPH_BRAILLE ? 4 : g->glyphs == GRAPH_BLOCK && !scatter ? 8 : 1;
  p->thick = g->glyphs == GRAPH_BRAILLE && !scatter && p->ph >= 5;
  p->lo = g->log_y ? log10(g->y_min > 0 ? g->y_min : 1e-12) : g->y_min;
  p->hi = g->log_y ? log10(g->y_max > 0 ? g->y_max : 1e-12) : g->y_max;
  widen_y(p);
  int lw = w >= 12 ? (w / 4 < 6 ? w / 4 : 6) : 0;
  if (lw > 0) snap_y(p);   /* round labels; a chart without any keeps every row for data */
  p->x0 = lw > 0 ? lw + 1 : 0;
  p->pw = w - p->x0;
  p->x_min = g->x_min;
  p->x_max = g->x_max - g->x_min > 1e-12 * fabs(g->x_min) ? g->x_max : g->x_min + 1 + fabs(g->x_min) * 1e-9;

  if (lw > 0) y_labels(p, lw);
  time_axis(g, p, lw, kinds);
  return 1;
}

/* The legend goes on last: only now is it known whether cells are shared
** and which kinds of event lie on the axis. */
static void finish(const Graph *g, Plot *p, Legend *l, const LegendPlan *pl, int scatter, const int *kinds) {
  legend_items(g, l, scatter, p->shared, pl->val_each, kinds);
  legend_draw(l, pl, p->cells, p->w, g->glyphs == GRAPH_ASCII);
}

/* Plot every series into the frame; 0 when out of memory. */
static int plot_all(const Graph *g, Plot *p, int scatter) {
  int xs = p->pw * p->sx;
  double *sum = scatter ? NULL : malloc(sizeof *sum * (size_t)xs);
  int *cnt = scatter ? NULL : malloc(sizeof *cnt * (size_t)xs);
  p->mix = calloc((size_t)p->pw * p->ph, sizeof *p->mix);
  p->stripes = g->stripes;
  int fine = p->mix && (scatter || (sum && cnt));
  if (fine) {
    ref_line(g, p);
    for (int i = 0; i < g->n_series; i++) {
      if (scatter) scatter_series(p, &g->series[i], i + 1);
      else plot_series(p, &g->series[i], i + 1, sum, cnt);
    }
    resolve_cells(p);
  }
  free(sum);
  free(cnt);
  free(p->mix);
  p->mix = NULL;
  return fine;
}

/* The frame is planned without 'overlap' in the legend; when cells turn
** out shared and the entry does not fit that plan, once more with it. */
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

GraphEventKind graph_event_kind(const char *text) {
  if (strncmp(text, "tie=", 4) == 0) return GRAPH_EVENT_TIE;
  if (strncmp(text, "in_scale=", 9) == 0 || strncmp(text, "out_scale=", 10) == 0) return GRAPH_EVENT_SCALE;
  return GRAPH_EVENT_OTHER;
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
