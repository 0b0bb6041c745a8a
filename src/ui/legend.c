/*
** legend.c -- the chart's title and legend (see legend.h).
**
** Entries come in the order of the runs in the lab (a series' group, else
** its colour), whatever order the series are drawn in: the selected run,
** drawn last, keeps its place. A run's validation line follows its run.
*/
#include "ui/legend.h"

#include <stdio.h>
#include <string.h>

#include "ui/width.h"

#define BRAILLE_BLANK 0x2800u
#define NAME_ALL (1 << 20)   /* a longest name that cuts none */
#define NAME_SHORT 5         /* the shortest a name is cut to ("ti…x2") */

/* Event markers by kind (Unicode, ASCII); the caller names the kinds. */
static const uint32_t event_marks[GRAPH_EVENT_KINDS][2] = {
    [GRAPH_EVENT_OTHER] = {0x25cf, '!'}, [GRAPH_EVENT_TIE] = {0x25b2, '^'}, [GRAPH_EVENT_SCALE] = {0x25c6, 'S'},
    [GRAPH_EVENT_PHASE] = {0x25bc, 'P'}};

uint32_t legend_event_mark(GraphEventKind kind, int ascii) { return event_marks[kind][ascii ? 1 : 0]; }

uint32_t graph_line_mark(const GraphSeries *s, GraphGlyphs g, int mono) {
  if (g == GRAPH_ASCII) return graph_ascii_mark(s);
  if (mono) return graph_mono_sample(s);    /* no colour: the line's pattern */
  /* A colour's second use has shorter dashes, as its line does. */
  static const uint32_t lines[2][2] = {{0x2501, 0x2505}, {0x254d, 0x2509}};   /* ━ ┅, ╍ ┉ */
  return lines[s->style % 2][s->dashed ? 1 : 0];
}

static uint32_t line_mark(const Graph *g, const GraphSeries *s, int scatter) {
  if (scatter && g->glyphs == GRAPH_BLOCK) return graph_ascii_mark(s);
  if (scatter && g->glyphs == GRAPH_BRAILLE) return BRAILLE_BLANK + 0x3f;   /* six dots */
  return graph_line_mark(s, g->glyphs, g->mono);
}

static int order_key(const GraphSeries *s) { return s->group > 0 ? s->group : s->color + 1; }

/* The series' indices in legend order (stable: a run before its
** validation line). */
static int legend_order(const Graph *g, int *idx) {
  int n = 0;
  for (int i = 0; i < g->n_series && n < LEGEND_MAX; i++) {
    int k = n++;
    while (k > 0 && order_key(&g->series[idx[k - 1]]) > order_key(&g->series[i])) idx[k] = idx[k - 1], k--;
    idx[k] = i;
  }
  return n;
}

static void add(Legend *l, LegendItem it) {
  if (l->n < LEGEND_MAX) l->item[l->n++] = it;
}

/* A dashed series' entry. Lines with one name ("val") have one entry,
** except in ASCII with 'val_each', where each mark of its own has its own
** entry; when they share it, the entry shows the first and last mark. */
static void dashed_item(const Graph *g, Legend *l, const GraphSeries *s, int scatter, int val_each) {
  int ascii = g->glyphs == GRAPH_ASCII;
  uint32_t mark = line_mark(g, s, scatter);
  for (int k = 0; k < l->n; k++)
    if (!l->item[k].is_run && l->item[k].mark && strcmp(l->item[k].name, s->name) == 0 &&
        (!(ascii && val_each) || l->item[k].mark == mark)) {
      if (ascii && l->item[k].mark != mark) l->item[k].last = mark;
      return;
    }
  add(l, (LegendItem){.mark = mark, .role = graph_series_role(s), .name = s->name});
}

void legend_items(const Graph *g, Legend *l, int scatter, int shared, int val_each, const int *kinds) {
  l->n = 0;
  snprintf(l->title, sizeof l->title, "%s%s", g->title ? g->title : "", g->title && g->log_y ? " (log)" : "");
  int idx[LEGEND_MAX], n = legend_order(g, idx);
  for (int k = 0; k < n; k++) {
    const GraphSeries *s = &g->series[idx[k]];
    if (!s->name) continue;
    if (s->dashed) dashed_item(g, l, s, scatter, val_each);
    else add(l, (LegendItem){.mark = line_mark(g, s, scatter), .role = graph_series_role(s), .name = s->name, .is_run = 1});
  }
  l->left_out = g->runs_left_out;
  if (g->runs_left_out > 0) {
    snprintf(l->more, sizeof l->more, "+%d run%s", g->runs_left_out, g->runs_left_out == 1 ? "" : "s");
    add(l, (LegendItem){.role = GRAPH_ROLE_LABEL, .name = l->more});
  }
  int ascii = g->glyphs == GRAPH_ASCII;
  if (g->has_ref && g->ref_label && !graph_ref_in_axis(g, l->w))
    add(l, (LegendItem){.mark = ascii ? '.' : 0x2504, .role = GRAPH_ROLE_REF, .name = g->ref_label});
  for (int k = 0; k < GRAPH_EVENT_KINDS; k++)
    if (kinds[k] && g->event_names[k])
      add(l, (LegendItem){.mark = event_marks[k][ascii], .role = GRAPH_ROLE_EVENT, .name = g->event_names[k]});
  if (shared && g->no_shade && !g->mono && !ascii)
    /* Colour without background colours: a shared cell's colour is no
    ** run's, which needs saying. Elsewhere it shows each run in its own
    ** colour, pattern or mark, which say it themselves. */
    add(l, (LegendItem){.mark = 0x2501, .role = GRAPH_ROLE_SHARED, .name = "both"});
}

/* Cells a character of 'cols' columns (width.h) takes: a wide one two,
** the second left for it (the terminal draws it over both); an accent,
** which a cell cannot hold beside its letter, one of its own: the
** terminal puts it on its letter and draws the column it leaves at the
** next blank (term_cells), so an entry reads whole and the next one
** starts where it was laid out. */
static int char_cells(int cols) { return cols == 0 ? 1 : cols; }

/* The first 'len' bytes of 'text' into the cells of 'row' (NULL: only
** counted). Returns the cells used; a character that does not fit 'w' is
** not begun. */
static int put_text(GraphCell *row, int w, const char *text, size_t len, uint8_t role) {
  int x = 0;
  for (size_t at = 0; at < len;) {
    wchar_t wc;
    int cols;
    at += width_char(text + at, len - at, &wc, &cols);
    int cells = char_cells(cols);
    if (x + cells > w) break;
    if (row) {
      row[x] = (GraphCell){.ch = wc < 0x20 ? ' ' : (uint32_t)wc, .role = role};
      for (int k = 1; k < cells; k++) row[x + k] = (GraphCell){.ch = ' ', .role = role};
    }
    x += cells;
  }
  return x;
}

/* Cells of the first 'len' bytes of 'text'. */
static int text_cells(const char *text, size_t len) { return put_text(NULL, 1 << 20, text, len, 0); }

/* How each item's name is shown under ('affix', 'max'): the runs' names
** shortened together, the other words whole. 0 when two run names would
** read alike. */
static int item_names(const Legend *l, int affix, int max, NameCut *cut) {
  const char *runs[LEGEND_MAX] = {0};
  int at[LEGEND_MAX], n = 0;
  for (int i = 0; i < l->n; i++) {
    int len = (int)strlen(l->item[i].name);
    cut[i] = (NameCut){0, len, len, len, 0};
    if (l->item[i].is_run) at[n] = i, runs[n++] = l->item[i].name;
  }
  NameCut rc[LEGEND_MAX];
  int distinct = names_fit(runs, n, affix, max, 1, rc);
  for (int k = 0; k < n; k++) cut[at[k]] = rc[k];
  return distinct;
}

/* Cells of item 'i': its mark (or a family "a-f") and a space, its name
** (with a one-cell ellipsis where it is cut). */
static int item_cols(const Legend *l, int i, const NameCut *cut) {
  const LegendItem *it = &l->item[i];
  const NameCut *c = &cut[i];
  int name = text_cells(it->name + c->start, (size_t)(c->head - c->start));
  if (c->cut) name += 1 + text_cells(it->name + c->tail, (size_t)(c->end - c->tail));
  return (it->mark ? 2 : 0) + (it->last ? 2 : 0) + name;
}

/* Lay the items out after the title in 'rows' rows of 'w'; with 'row_of'
** and 'col_of', say where each goes. 1 when all fit. The last column stays
** blank, so an entry never touches the chart to the right. */
static int flow(const Legend *l, int w, int rows, const NameCut *cut, int *row_of, int *col_of) {
  int row = 0, x = text_cells(l->title, strlen(l->title)), room = w - 1;
  if (x > w) return 0;
  for (int i = 0; i < l->n; i++) {
    int need = 1 + item_cols(l, i, cut);
    if (x + need > room && x > 0) {
      if (++row >= rows) return 0;
      x = -1;   /* a row's first entry needs no space before it */
    }
    if (x + need > room) return 0;
    if (row_of) row_of[i] = row, col_of[i] = x + 1;
    x += need;
  }
  return 1;
}

static int plan_fits(const Legend *l, int w, int rows, int affix, int max) {
  NameCut cut[LEGEND_MAX];
  return item_names(l, affix, max, cut) && flow(l, w, rows, cut, NULL, NULL);
}

int legend_fits(const Legend *l, const LegendPlan *pl, int w) { return plan_fits(l, w, pl->rows, pl->affix, pl->max); }

LegendPlan legend_plan(const Graph *g, Legend *l, int scatter, int shared, const int *kinds, int w, int max_rows) {
  /* {rows, affix}: whole names on one row, then on two, then without what
  ** they share (on a short chart, one row only). */
  static const int tries[][2] = {{1, 0}, {2, 0}, {2, 1}, {1, 1}};
  l->w = w;
  /* Names matter more than a mark per validation line: each try with one
  ** entry per line, then with one for them all. */
  /* An event's rule carries its own label in the plot, so on a row of
  ** whole names the events' entries go before the legend takes a second
  ** row. */
  static const int no_kinds[GRAPH_EVENT_KINDS] = {0};
  for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++)
    for (int each = 1; each >= 0 && tries[t][0] <= max_rows; each--) {
      legend_items(g, l, scatter, shared, each, kinds);
      if (plan_fits(l, w, tries[t][0], tries[t][1], NAME_ALL))
        return (LegendPlan){tries[t][0], tries[t][1], NAME_ALL, each};
      if (t > 0) continue;
      legend_items(g, l, scatter, shared, each, no_kinds);
      if (plan_fits(l, w, 1, 0, NAME_ALL)) return (LegendPlan){1, 0, NAME_ALL, each};
    }
  legend_items(g, l, scatter, shared, 0, kinds);
  /* Names shorter than NAME_SHORT say too little: rather fewer entries,
  ** and the legend counts the runs left out. */
  for (int max = 24; max >= NAME_SHORT; max--)
    if (plan_fits(l, w, max_rows, 1, max)) return (LegendPlan){max_rows, 1, max, 0};
  return (LegendPlan){max_rows, 1, NAME_SHORT, 0};
}

int graph_legend_fits_row(const Graph *g, int w) {
  static const int no_kinds[GRAPH_EVENT_KINDS] = {0};
  Legend l;
  LegendPlan pl = legend_plan(g, &l, 0, 0, no_kinds, w, 1);
  return pl.rows == 1 && pl.affix == 0 && legend_fits(&l, &pl, w);
}

/* The title; wider than the chart, what fits before an ellipsis in the
** last column (whole clusters), without the spaces it ends with. */
static void title_draw(const char *title, GraphCell *cells, int w, int ascii) {
  size_t len = strlen(title), n = 0;
  if (text_cells(title, len) <= w || w <= 1) {
    put_text(cells, w, title, len, GRAPH_ROLE_TITLE);
    return;
  }
  while (n < len) {
    int c;
    size_t next = n + width_cluster(title + n, len - n, &c);
    if (text_cells(title, next) > w - 1) break;
    n = next;
  }
  while (n > 1 && title[n - 1] == ' ') n--;
  int x = put_text(cells, w - 1, title, n, GRAPH_ROLE_TITLE);
  cells[x] = (GraphCell){.ch = ascii ? '~' : 0x2026, .role = GRAPH_ROLE_TITLE};
}

void legend_draw(const Legend *l, const LegendPlan *pl, GraphCell *cells, int w, int ascii) {
  title_draw(l->title, cells, w, ascii);
  /* What does not fit even shortened is left out from the end, the runs
  ** among it counted in a last entry. */
  Legend part;
  NameCut cut[LEGEND_MAX];
  int row_of[LEGEND_MAX], col_of[LEGEND_MAX];
  for (int keep = l->n; keep >= 0; keep--) {
    part = *l;
    part.n = keep;
    int runs = 0;
    for (int i = keep; i < l->n; i++) runs += l->item[i].is_run + (l->item[i].name == l->more ? l->left_out : 0);
    if (runs > 0 && keep < LEGEND_MAX) {
      snprintf(part.more, sizeof part.more, "+%d run%s", runs, runs == 1 ? "" : "s");
      part.item[part.n++] = (LegendItem){.role = GRAPH_ROLE_LABEL, .name = part.more};
    }
    item_names(&part, pl->affix, pl->max, cut);
    if (flow(&part, w, pl->rows, cut, row_of, col_of)) break;
    part.n = 0;
  }
  for (int i = 0; i < part.n; i++) {
    const LegendItem *it = &part.item[i];
    GraphCell *row = cells + (size_t)row_of[i] * w;
    int x = col_of[i];
    char shown[256];
    if (it->mark) row[x].ch = it->mark, row[x++].role = it->role;
    if (it->last) {
      row[x].ch = '-', row[x++].role = it->role;
      row[x].ch = it->last, row[x++].role = it->role;
    }
    if (it->mark) x++;   /* a mark is never read as part of the name ("ountied") */
    names_text(it->name, &cut[i], ascii ? "~" : "\u2026", shown, sizeof shown);
    put_text(row + x, w - x, shown, strlen(shown), it->role);
  }
}
