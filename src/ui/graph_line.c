/*
** graph_line.c -- a chart's lines: each series reduced to sample columns
** (mean and span), joined dot by dot (Braille), level by level (blocks) or
** mark by mark (ASCII), in the patterns that tell lines apart without
** colour; and the reference line, the events' rules and their labels.
*/
#include "ui/graph.h"

#include "ui/legend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ui/graph_impl.h"

/* Dot bits of a Braille cell, by column and row within it. */
static const uint8_t braille_bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

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
  if (layer == LAYER_LINE) m->core |= id_bit(id);
  m->dots[dashed] |= dots;
  if (ch) m->ch[dashed] = ch;
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

int line_dot_on(const Plot *p, const GraphSeries *s, int dx) { return dash_on(p, s, dx); }

int line_col_on(const Plot *p, const GraphSeries *s, int col) {
  if (p->mono && p->glyphs == GRAPH_BLOCK) return pattern_on(mono_pattern(s)->block, col);
  return sample_on(p, s, col);
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
      if (thick) braille_dot(p, x0, y0 + 1 < ys ? y0 + 1 : y0 - 1, id, 0, LAYER_EDGE);
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

/* The level row (0 at the top) of a transformed value, clamped to the
** plot, not rounded, and rounded. */
static double level_at(const Plot *p, double t) {
  int ys = p->ph * p->sy;
  double f = plot_level(p, t, ys);
  return !(f > 0) ? 0 : f > ys - 1 ? ys - 1 : f;
}

static int level_row(const Plot *p, double t) { return (int)lround(level_at(p, t)); }

/* Series 'id''s line passes level 'f' at sample column 'c' and 'pf' at
** 'pc' (-1: none before): the columns from one to the other take the
** level between, as the line does. */
static void record_level(Plot *p, int id, int pc, double pf, int c, double f) {
  if (!p->level) return;
  float *lv = p->level + (size_t)(id - 1) * p->pw * p->sx;
  if (pc < 0) pc = c, pf = f;
  for (int cc = pc; cc <= c; cc++) lv[cc] = (float)(cc == c ? f : pf + (f - pf) * (cc - pc) / (c - pc));
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
  double pf = 0;
  for (int c = 0; c < p->pw * p->sx; c++) {
    if (!col->cnt[c]) continue;
    double f = level_at(p, col->sum[c] / col->cnt[c]);
    int r = (int)lround(f);
    if (layer == LAYER_LINE) record_level(p, id, pc, pf, c, f);
    pf = f;
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
void line_series(Plot *p, int id, double smooth, Columns *col) {
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
void line_scatter(Plot *p, const GraphSeries *s, int id) {
  int xs = p->pw * p->sx, ys = p->ph * p->sy;
  for (int k = 0; k < s->n; k++) {
    double v = s->y[k];
    if (!plottable(p, v)) continue;
    double fx = (s->x[k] - p->x_min) / (p->x_max - p->x_min), t = transform(p, v);
    if (!(fx >= 0 && fx <= 1 && t >= p->lo && t <= p->hi)) continue;
    int c = (int)(fx * xs), r = (int)lround(plot_level(p, t, ys));
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
  return (int)lround(plot_level(p, t, p->ph * p->sy));
}

void line_ref(const Graph *g, Plot *p) {
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
void line_ref_label(const Graph *g, Plot *p, int lw) {
  int r = ref_sample_row(g, p);
  if (r < 0 || !graph_ref_in_axis(g, p->w)) return;
  int y = p->y0 + r / p->sy, len = (int)strlen(g->ref_label);
  for (int k = 0; k < lw; k++) put(p->cells, p->w, p->h, y, k, ' ', GRAPH_ROLE_TEXT);
  for (int k = 0; k < len; k++) put(p->cells, p->w, p->h, y, lw - len + k, (uint32_t)g->ref_label[k], GRAPH_ROLE_REF);
}

/* Each event in the x range as a dotted vertical rule through the plot,
** beneath the series: every other dot of one dot column (Braille), else
** a dotted rule glyph in every row. */
void line_event_rules(const Graph *g, Plot *p) {
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

/* Label cells [from, to) of plot row 'y' are free: inside the plot, no
** other label within a cell of them ('taken', that row's), no line there. */
static int label_room(Plot *p, const char *taken, int y, int from, int to) {
  if (from < 0 || to > p->pw) return 0;
  for (int x = from - 1; x <= to; x++)
    if (x >= 0 && x < p->pw && taken[x]) return 0;
  for (int x = from; x < to; x++)
    if (mix_at(p, y, x)->ids) return 0;
  return 1;
}

/* Each event's label just right of its rule (left of it near the right
** edge, where the newest events are), on the first row from the top
** where it fits and neither covers a line nor runs into another label: a
** line along the top row does not hide it. */
void line_event_labels(const Graph *g, Plot *p) {
  char *taken = p->mix && p->pw > 0 && p->ph > 0 ? calloc((size_t)p->pw * p->ph, 1) : NULL;
  if (!taken) return;
  for (int i = 0; i < g->n_events; i++) {
    const char *label = g->events[i].label;
    int c = sample_col(p, g->events[i].x);
    if (!label || !*label || c < 0) continue;
    int len = graph_text_len(label), from = c / p->sx + 1, to = from + len;
    if (to > p->pw) from = c / p->sx - len, to = c / p->sx;
    for (int y = 0; y < p->ph; y++) {
      char *row = taken + (size_t)y * p->pw;
      if (!label_room(p, row, y, from, to)) continue;
      graph_text(&p->cells[(size_t)(p->y0 + y) * p->w + p->x0 + from], to - from, label, GRAPH_ROLE_EVENT);
      memset(row + from, 1, (size_t)(to - from));
      break;
    }
  }
  free(taken);
}
