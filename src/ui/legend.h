/*
** legend.h -- the chart's first row(s): its title and what each mark
** means. Private to the chart's files (graph*.c) and legend.c.
**
** The legend is planned before the plot (it may take a second row, which
** the plot then gives up) and drawn after it, when shared cells and the
** kinds of event on the axis are known. When entries do not fit, in this
** order: a second row, run names without what they share, in ASCII one
** entry for every validation line instead of one each, names cut in the
** middle (never two alike), and last entries left out from the end.
*/
#ifndef TIELAB_UI_LEGEND_H
#define TIELAB_UI_LEGEND_H

#include "ui/graph.h"
#include "ui/names.h"

#define LEGEND_MAX 48

typedef struct LegendItem {
  uint32_t mark;    /* 0: none, the name is the whole entry ("+2 runs") */
  uint32_t last;    /* not 0: a family of marks, 'mark' to 'last' ("a-f val") */
  uint8_t role;
  const char *name;
  int is_run;       /* a solid series: its name may be shortened */
} LegendItem;

typedef struct Legend {
  LegendItem item[LEGEND_MAX];
  int n;
  char title[96];
  char more[32];    /* "+N runs" */
  int left_out;     /* the N */
  int w;            /* the chart's width (set by legend_plan) */
} Legend;

/* How the legend is laid out: its rows, whether run names lose what they
** share, their longest, and one entry per validation line (ASCII). */
typedef struct LegendPlan {
  int rows, affix, max, val_each;
} LegendPlan;

/* The items: every named series, the runs left out, the reference line,
** the kinds of event in 'kinds', and "both" when 'shared' cells take a
** colour of their own (colour without background colours). */
void legend_items(const Graph *g, Legend *l, int scatter, int shared, int val_each, const int *kinds);

/* The plan for the chart's width and the rows it may spend; 'g' and
** 'scatter' rebuild the items when the plan changes them. */
LegendPlan legend_plan(const Graph *g, Legend *l, int scatter, int shared, const int *kinds, int w, int max_rows);

/* 1 when every item fits the plan's rows in width 'w'. */
int legend_fits(const Legend *l, const LegendPlan *pl, int w);

/* The title and the items that fit into the first rows of 'cells'. */
void legend_draw(const Legend *l, const LegendPlan *pl, GraphCell *cells, int w, int ascii);

/* An event's mark on the time axis by kind (Unicode or ASCII). */
uint32_t legend_event_mark(GraphEventKind kind, int ascii);

/* Shared with graph.c: a series' ASCII mark. */
uint32_t graph_ascii_mark(const GraphSeries *s);

#endif
