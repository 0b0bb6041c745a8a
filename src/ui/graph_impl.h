/*
** graph_impl.h -- the inside of a chart, shared by its files: graph.c (the
** frame and the cells the series draw into), graph_line.c (lines, spans,
** the reference line and events), graph_axes.c (scales, ticks, a
** broken scale and axes)
** and graph_text.c (text, numbers, bars and shades as cells).
** Nothing outside those files includes it.
*/
#ifndef TIELAB_UI_GRAPH_IMPL_H
#define TIELAB_UI_GRAPH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ui/graph.h"

#define BRAILLE_BLANK 0x2800u
#define BLOCK_LOWER 0x2580u  /* + 1..8: lower eighth .. full block */
#define BLOCK_UPPER_HALF 0x2580u  /* a shared cell's higher run over its lower */
#define BLOCK_FAINT 0x2591u  /* light shade: a faint span or raw line */
#define GRAPH_ASCII_DASHED ':'
#define GRAPH_ASCII_FAINT '|'    /* a span, a raw line under its average */
#define GRAPH_ASCII_RULE '\''   /* an event's rule: a dotted column */

static inline GraphCell *cell_at(GraphCell *cells, int w, int h, int y, int x) {
  if (y < 0 || y >= h || x < 0 || x >= w) return NULL;
  return &cells[(size_t)y * w + x];
}

static inline void put(GraphCell *cells, int w, int h, int y, int x, uint32_t ch, uint8_t role) {
  GraphCell *c = cell_at(cells, w, h, y, x);
  if (c) *c = (GraphCell){.ch = ch, .role = role};
}

/* What the series put into one plot cell. Nothing is written to the grid
** while they draw: once all are in, 'resolve_cells' chooses the cell's
** glyph and roles from everything that came, so the order they were drawn
** in decides nothing but which lies on top. */
typedef struct CellMix {
  uint64_t ids;      /* the series there: bit id - 1 (the 64th series on share bit 63) */
  uint64_t core;     /* those of them there by more than a thick line's edge dots:
                        two runs only touching a cell below both their lines with
                        the edges do not share it */
  uint8_t dots[2];   /* Braille dots of solid lines, of dashed ones */
  uint32_t ch[2];    /* block glyph last drawn by a solid line, by a dashed one */
  uint8_t faint;     /* the faint layer (spans, raw lines under their average):
                        Braille dots, else not 0 when any */
  int faint_by;      /* the series (id) that drew faint dots last: their colour */
  int pair_hi, pair_lo;  /* ASCII without background colours: the series (ids)
                            of a shared cell, higher and lower, whose marks go
                            a row apart; 0: none */
} CellMix;

/* Where a series' dots go: its line, the second dot of a thick line (its
** edge), or the faint layer beneath all lines. */
typedef enum Layer { LAYER_LINE, LAYER_EDGE, LAYER_FAINT } Layer;

typedef struct Plot {
  GraphCell *cells;
  int w, h;
  int x0, y0, pw, ph;   /* plot area in cells */
  int sx, sy;           /* samples per cell across and levels per cell down */
  double lo, hi;        /* transformed y range */
  double gap_lo, gap_hi;  /* a break: the values between, transformed, lie in the row
                             between its ends' labels; gap_hi <= gap_lo: none */
  double gap_step;      /* with a break, the y ticks' step its ends are multiples of */
  double x_min, x_max;  /* x range, never empty */
  GraphGlyphs glyphs;
  int log_y;
  int thick;            /* Braille lines two dots thick */
  int scatter;          /* points, not lines: a point lies over its own dashed trend */
  int mono;             /* no colour: each line its own pattern */
  int no_shade;         /* no background colours: shared cells in the shared role */
  const GraphSeries *series;
  int n_series;
  CellMix *mix;         /* per plot cell */
  float *level;         /* per series, per sample column: the level row (top-down,
                           not rounded) its line passes; NaN where it has none.
                           Which of two runs lies higher in a shared cell */
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

/* A transformed value's level row, 0 at the top to ys - 1 at the bottom,
** not clamped, 'ys' levels in all. Without a break the range is linear
** over the levels; with one, the break takes two rows' levels (its ends'
** labels a row apart, its mark between) and the ranges above and below
** it share the rest at one scale. */
#define PLOT_BREAK_ROWS 2
static inline int plot_broken(const Plot *p) { return p->gap_hi > p->gap_lo && p->hi - p->lo > p->gap_hi - p->gap_lo; }

static inline double plot_level(const Plot *p, double t, int ys) {
  double span = p->hi - p->lo, gap = p->gap_hi - p->gap_lo;
  if (!plot_broken(p)) return (p->hi - t) / span * (ys - 1);
  double band = (double)PLOT_BREAK_ROWS * p->sy, per = (ys - 1 - band) / (span - gap), top = (p->hi - p->gap_hi) * per;
  if (t >= p->gap_hi) return (p->hi - t) * per;
  if (t <= p->gap_lo) return top + band + (p->gap_lo - t) * per;
  return top + (p->gap_hi - t) / gap * band;
}

static inline CellMix *mix_at(Plot *p, int cy, int cx) {
  if (!p->mix || cy < 0 || cy >= p->ph || cx < 0 || cx >= p->pw) return NULL;
  return &p->mix[(size_t)cy * p->pw + cx];
}

static inline uint64_t id_bit(int id) { return (uint64_t)1 << (id - 1 < 63 ? id - 1 : 63); }

/* The Braille cell already in the grid (the reference line, event rules),
** for the series' dots to join. */
static inline uint32_t braille_base(const GraphCell *c) {
  return c->ch >= BRAILLE_BLANK && c->ch <= BRAILLE_BLANK + 0xff ? c->ch : BRAILLE_BLANK;
}

/* graph_line.c: a frame's reference line, event rules and labels, and its
** series, each drawn into the plot's cells */
void line_ref(const Graph *g, Plot *p);
void line_ref_label(const Graph *g, Plot *p, int lw);
void line_event_rules(const Graph *g, Plot *p);
void line_event_labels(const Graph *g, Plot *p);
void line_series(Plot *p, int id, double smooth, Columns *col);
void line_scatter(Plot *p, const GraphSeries *s, int id);
/* A series' pattern (dashes; without colour, its own) at Braille dot
** column 'dx', and at column 'col' of the coarser tiers. */
int line_dot_on(const Plot *p, const GraphSeries *s, int dx);
int line_col_on(const Plot *p, const GraphSeries *s, int col);

/* graph_axes.c: the y range widened to round ticks, the y labels and the
** time axis with its event markers (the kinds seen set in 'kinds') */
void axes_snap_y(Plot *p);
void axes_break(const Graph *g, Plot *p);
void axes_y_labels(Plot *p, int lw);
void axes_break_mark(Plot *p, int lw, int ascii);
void axes_time(const Graph *g, Plot *p, int lw, int *kinds);

/* graph_text.c: the cells UTF-8 text takes */
int graph_text_len(const char *s);

#endif
