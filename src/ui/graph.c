/*
** graph.c -- series into a grid of cells: Braille, block or ASCII. Here
** the frame (legend, axes, plot area) and the record per plot cell that
** the series draw into, resolved to one glyph and colour each once all
** are in. How a chart is drawn, from points to cells: docs/architecture.md.
*/
#include "ui/graph.h"

#include "ui/legend.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "ui/graph_impl.h"

/* ASCII marks by colour, a second set for a colour used again (style 1);
** validation and baselines have one lighter mark, which their colour (or
** their place beside their run) tells apart. */
static const char solid_marks[2][GRAPH_COLORS + 1] = {"*o+x@%&=", "XOHWVZ8$"};

/* ------------------------------------------------------------ cells */

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

/* A series' role in the plot's cells. With colour a run is told by its
** hue, so its line is not bold: a bold cell beside a plain one costs the
** terminal a reset and the colour again, every frame the line moves, for
** a weight a Braille dot or a block hardly shows. Without colour bold is
** what marks the selected run. The legend keeps the bold name. */
static uint8_t plot_role(const Plot *p, const GraphSeries *s) {
  uint8_t role = graph_series_role(s);
  return p->mono ? role : (uint8_t)(role & ~GRAPH_ROLE_BOLD);
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

/* The role of a tint of series 'i''s colour: a faint span. */
static uint8_t tint_role(const Plot *p, int i) {
  return (uint8_t)(GRAPH_ROLE_SERIES + p->series[i].color % GRAPH_COLORS + GRAPH_ROLE_TINT);
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

/* Series 'i''s level in plot column 'cx': the mean of its line's levels
** over the cell's sample columns; NaN when it has none there. */
static double cell_level(const Plot *p, int i, int cx) {
  if (!p->level) return NAN;
  const float *lv = p->level + (size_t)i * p->pw * p->sx;
  double sum = 0;
  int n = 0;
  for (int k = 0; k < p->sx; k++)
    if (isfinite(lv[cx * p->sx + k])) sum += lv[cx * p->sx + k], n++;
  return n ? sum / n : NAN;
}

/* Of series 'a' (drawn on top) and 'b', the one whose line lies higher in
** column 'cx' into 'hi', the other into 'lo'; level with each other, or
** either not placed there, 'a'. By the lines' unrounded levels, not
** their dots: two runs 1% apart often have the same dots, and their
** order must not flip from cell to cell along the stretch. */
static void order_pair(const Plot *p, int a, int b, int cx, int *hi, int *lo) {
  double la = cell_level(p, a, cx), lb = cell_level(p, b, cx);
  int b_higher = lb < la;   /* false when either is NaN */
  *hi = b_higher ? b : a;
  *lo = b_higher ? a : b;
}

/* Series 'i''s half of a shared cell is drawn in column 'cx': its dashes
** (without colour, its pattern) say so; a solid line's always is. */
static int half_on(const Plot *p, int i, int cx) {
  const GraphSeries *s = &p->series[i];
  if (p->glyphs == GRAPH_BRAILLE) return line_dot_on(p, s, 2 * cx) || line_dot_on(p, s, 2 * cx + 1);
  return line_col_on(p, s, cx);
}

/* A shared cell without colour, Braille: the higher line's pattern in the
** cell's top row of dots, the lower's in its bottom row, two dot rows
** apart, so that each keeps its dashes and the two read as two lines. */
static uint32_t mono_pair_dots(const Plot *p, int hi, int lo, int cx) {
  uint32_t dots = 0;
  for (int k = 0; k < 2; k++) {
    if (line_dot_on(p, &p->series[hi], 2 * cx + k)) dots |= k ? 0x08 : 0x01;
    if (line_dot_on(p, &p->series[lo], 2 * cx + k)) dots |= k ? 0x80 : 0x40;
  }
  return dots;
}

/* A cell two runs share, 'a' the one on top (drawn last) and 'b' the one
** beneath: both are seen, the higher of the two above the lower, so a
** close pair reads as a ribbon of two lines in their order and never as
** cells that alternate between them.
**  - Braille and block, with colour: the cell's upper half ('▀') in the
**    higher run's colour over the lower run's as its background, each as
**    its line has it (a validation's tint, else full strength, never a
**    dim shade); a dashed line's half left out in its gaps.
**  - without colour: each run's pattern in its own half (Braille: the top
**    and bottom rows of dots; block: '▀', '▄' or '█' by which patterns
**    are on in the column), in the shared role.
**  - ASCII: the higher run's mark; with colour over the lower run's
**    colour as background, else the lower's mark goes to the cell beneath
**    ('pair_hi', 'pair_lo': placed once every cell is resolved,
**    'place_below').
**  - a terminal with colour but no background colours: both lines' dots
**    (the top one's level in block) in the shared role, which the legend
**    names. */
static void resolve_shared(Plot *p, CellMix *m, GraphCell *c, int a, int b, int cx) {
  int hi, lo;
  order_pair(p, a, b, cx, &hi, &lo);
  uint8_t lo_role = plot_role(p, &p->series[lo]);   /* a background: only with colour, never bold */
  p->shared = 1;
  if (p->glyphs == GRAPH_ASCII) {
    c->ch = graph_ascii_mark(&p->series[hi]);
    c->role = plot_role(p, &p->series[hi]);
    if (!p->mono && !p->no_shade) c->bg = lo_role;
    else m->pair_hi = hi + 1, m->pair_lo = lo + 1;
    return;
  }
  if (p->mono) {
    c->role = GRAPH_ROLE_SHARED;
    if (p->glyphs == GRAPH_BRAILLE) {
      c->ch = braille_base(c) | mono_pair_dots(p, hi, lo, cx);
    } else {
      int up = half_on(p, hi, cx), down = half_on(p, lo, cx);
      c->ch = up && down ? BLOCK_LOWER + 8 : up ? BLOCK_UPPER_HALF : down ? BLOCK_LOWER + 4 : ' ';
    }
    return;
  }
  if (p->no_shade) {
    c->role = GRAPH_ROLE_SHARED;
    if (p->glyphs == GRAPH_BRAILLE) c->ch = braille_base(c) | m->dots[0] | m->dots[1];
    else c->ch = m->ch[0] ? m->ch[0] : m->ch[1];
    return;
  }
  int up = half_on(p, hi, cx), down = half_on(p, lo, cx);
  if (!up && !down) up = down = 1;   /* both in a gap of their dashes: the cell is theirs still */
  if (up) {
    c->ch = BLOCK_UPPER_HALF;
    c->role = plot_role(p, &p->series[hi]);
    c->bg = down ? lo_role : 0;
  } else {
    c->ch = BLOCK_LOWER + 4;
    c->role = plot_role(p, &p->series[lo]);
  }
}

/* A cell's glyph and roles from what its series put there. One group: its
** line, or its validation's dots alone where they lie over their own run,
** so that validation is seen wherever it is drawn; in a scatter the
** points over their trend, the data before the summary. Two groups or more: the
** cell is shared by the last drawn and the one before it (resolve_shared).
** The faint layer shows only where no line is. */
static void resolve_cell(Plot *p, int cy, int cx) {
  CellMix *m = mix_at(p, cy, cx);
  GraphCell *c = cell_at(p->cells, p->w, p->h, p->y0 + cy, p->x0 + cx);
  if (!m || !c) return;
  if (!m->ids) {
    if (m->faint) resolve_faint(p, m, c);
    return;
  }
  int rep[64], val[64], last[64], n = cell_groups(p, m->ids, rep, val, last, 64), top, under;
  if (n == 0) return;
  if (n > 1) {
    /* Runs there by their edges only are not counted: a pair's ribbon is
    ** the row of their lines, not the row beneath too. */
    n = cell_groups(p, m->core, rep, val, last, 64);
    if (n == 0) {
      if (m->faint) resolve_faint(p, m, c);
      return;
    }
  }
  top_two(last, n, &top, &under);
  if (n > 1 && !p->scatter) {
    resolve_shared(p, m, c, rep[top], rep[under], cx);
    return;
  }
  /* A scatter's clouds that overlap are points, not two lines: the cell
  ** keeps every dot, in the colour of the series drawn last. */
  int own = n == 1 && val[0] >= 0 && !(p->scatter && !p->series[rep[0]].dashed);   /* validation over its own run */
  const GraphSeries *s = &p->series[own ? val[0] : rep[top]];
  c->role = plot_role(p, s);
  if (p->glyphs == GRAPH_ASCII) {
    c->ch = graph_ascii_mark(s);
  } else if (p->glyphs == GRAPH_BRAILLE) {
    c->ch = braille_base(c) | (own ? m->dots[1] : m->dots[0] | m->dots[1]);
  } else {
    int k = s->dashed ? 1 : 0;
    c->ch = m->ch[k] ? m->ch[k] : m->ch[!k];
  }
}

/* A plot cell no line reached, free for a mark moved there. */
static int free_cell(Plot *p, int cy, int cx) {
  const CellMix *m = mix_at(p, cy, cx);
  return m && !m->ids;
}

static void put_mark(Plot *p, int cy, int cx, int i) {
  GraphCell *c = cell_at(p->cells, p->w, p->h, p->y0 + cy, p->x0 + cx);
  *c = (GraphCell){.ch = graph_ascii_mark(&p->series[i]), .role = plot_role(p, &p->series[i])};
  mix_at(p, cy, cx)->ids |= id_bit(i + 1);   /* taken: no label over it, no second mark */
}

/* ASCII without background colours: the lower run of a shared cell takes
** the cell beneath it, or when that one holds a line (or is the plot's
** edge) the higher run moves up a cell and the lower keeps the shared one.
** A close pair reads as two lines of marks a row apart, the higher on top,
** each a row from where it is at most; with no free cell on either side,
** the higher run's mark alone. */
static void place_below(Plot *p) {
  for (int cy = 0; cy < p->ph; cy++)
    for (int cx = 0; cx < p->pw; cx++) {
      const CellMix *m = mix_at(p, cy, cx);
      int hi = m->pair_hi - 1, lo = m->pair_lo - 1;
      if (lo < 0) continue;
      if (free_cell(p, cy + 1, cx)) {
        put_mark(p, cy + 1, cx, lo);
      } else if (free_cell(p, cy - 1, cx)) {
        put_mark(p, cy - 1, cx, hi);
        put_mark(p, cy, cx, lo);
      }
    }
}

static void resolve_cells(Plot *p) {
  for (int cy = 0; cy < p->ph; cy++)
    for (int cx = 0; cx < p->pw; cx++) resolve_cell(p, cy, cx);
  if (p->glyphs == GRAPH_ASCII) place_below(p);
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

/* Clear the grid, plan the legend (with room for the shared cells' "both"
** when 'reserve'), draw the y labels and the x axis, and set up 'p' for the
** points; 0 when there is no room for a plot. */
static int frame(const Graph *g, GraphCell *cells, int w, int h, int scatter, int reserve, Plot *p, Legend *l,
                 LegendPlan *pl, int *kinds) {
  if (w <= 0 || h <= 0) return 0;
  for (size_t i = 0; i < (size_t)w * h; i++) cells[i] = (GraphCell){.ch = ' ', .role = GRAPH_ROLE_TEXT};
  /* Every kind of event counts for the plan, so the plot does not move when
  ** a marker scrolls out of sight. */
  int all[GRAPH_EVENT_KINDS] = {0};
  for (int i = 0; i < g->n_events; i++)
    if (g->events[i].kind >= 0 && g->events[i].kind < GRAPH_EVENT_KINDS) all[g->events[i].kind] = 1;
  *pl = legend_plan(g, l, scatter, reserve, all, w, legend_max_rows(h));
  if (h < 2 + pl->rows) return 0;

  *p = (Plot){.cells = cells, .w = w, .h = h, .y0 = pl->rows, .ph = h - 1 - pl->rows, .glyphs = g->glyphs,
              .log_y = g->log_y, .series = g->series, .n_series = g->n_series, .mono = g->mono,
              .no_shade = g->no_shade};
  p->sx = g->glyphs == GRAPH_BRAILLE ? 2 : 1;
  p->sy = g->glyphs == GRAPH_BRAILLE ? 4 : g->glyphs == GRAPH_BLOCK && !scatter ? 8 : 1;
  p->thick = g->glyphs == GRAPH_BRAILLE && !scatter && p->ph >= 5;
  p->scatter = scatter;
  p->lo = g->log_y ? log10(g->y_min > 0 ? g->y_min : 1e-12) : g->y_min;
  p->hi = g->log_y ? log10(g->y_max > 0 ? g->y_max : 1e-12) : g->y_max;
  widen_y(p);
  int lw = graph_label_cols(w);
  if (lw > 0) axes_snap_y(p);   /* round ends; a chart without labels keeps its range */
  p->x0 = lw > 0 ? lw + 1 : 0;
  p->pw = w - p->x0;
  p->x_min = g->x_min;
  p->x_max = g->x_max - g->x_min > 1e-12 * fabs(g->x_min) ? g->x_max : g->x_min + 1 + fabs(g->x_min) * 1e-9;

  if (lw > 0) axes_break(g, p);
  if (lw > 0) axes_y_labels(p, lw);
  line_ref_label(g, p, lw);
  axes_time(g, p, lw, kinds);
  axes_break_mark(p, lw, g->glyphs == GRAPH_ASCII);
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
  p->level = scatter ? NULL : malloc(sizeof *p->level * xs * (size_t)(g->n_series > 0 ? g->n_series : 1));
  for (size_t k = 0; p->level && k < xs * (size_t)g->n_series; k++) p->level[k] = NAN;
  int fine = p->mix && (scatter || (col.sum && col.cnt && p->level));
  if (fine) {
    line_ref(g, p);
    line_event_rules(g, p);
    for (int i = 0; i < g->n_series; i++) {
      if (scatter) line_scatter(p, &g->series[i], i + 1);
      else line_series(p, i + 1, g->smooth, &col);
    }
    resolve_cells(p);
    line_event_labels(g, p);
  }
  free(col.sum);
  free(col.cnt);
  free(p->mix);
  free(p->level);
  p->mix = NULL;
  p->level = NULL;
  return fine;
}

/* The frame is planned without the shared cells' entry in the legend
** ("both", colour without background colours); when cells turn out shared and the entry does not
** fit that plan, once more with it. */
static void draw(const Graph *g, GraphCell *cells, int w, int h, int scatter) {
  Plot p;
  Legend l;
  LegendPlan pl;
  for (int reserve = 0; reserve < 2; reserve++) {
    int kinds[GRAPH_EVENT_KINDS] = {0};
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

