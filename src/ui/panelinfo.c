/*
** panelinfo.c -- the panel table: a row per panel of the screen, with its
** names (as the tests know it, for ui.zoom, for ui.present) and what it is
** (a chart, drawn in a box, showing the trainer's data). Pure facts, no
** curses and no Ui, so that the layout and the tests read them; what draws
** a panel and its present-view figures are the same ids' columns in
** panels.c. The layout reads each panel's least size from here.
*/
#include "base/text.h"
#include "ui/layout.h"

#include <stdio.h>
#include <string.h>

/* The panel table: one row per panel, the charts first in the order
** ui.zoom and ui.present go through them. The zoom's "align" is the
** alignment table over its chart, the present view's "align" the chart
** alone, with the alignments as its figures. */
static const PanelInfo panels[] = {
    /* id, names (panel, zoom, present), what it is, rows and columns at least */
    {P_LOSS, "loss", "loss", "loss", PANEL_CHART | PANEL_BOXED | PANEL_DATA, 5, 20},
    {P_RATIO, "ratio", "ratio", "ratio", PANEL_CHART | PANEL_BOXED | PANEL_DATA, 5, 20},
    {P_ALIGNCHART, "alignchart", "align_chart", "align", PANEL_CHART | PANEL_BOXED | PANEL_DATA, 5, 20},
    /* a box round column heads and three positions, each run's two numbers */
    {P_LENS, "lens", "lens", "lens", PANEL_CHART | PANEL_BOXED | PANEL_DATA, 6, 40},
    /* a box round column heads, E_in and E_out; the table's 38 columns */
    {P_ALIGN, "align", "align", NULL, PANEL_CHART | PANEL_BOXED | PANEL_DATA, 5, 40},
    {P_EXTRA, "extra", "extra", NULL, PANEL_CHART | PANEL_BOXED | PANEL_DATA, 5, 20},
    {P_SCATTER, "scatter", NULL, "scatter", PANEL_CHART | PANEL_BOXED | PANEL_DATA, 5, 20},
    /* a box round a small chart of three plot rows */
    {P_LENSHIST, "lenshist", NULL, NULL, PANEL_BOXED | PANEL_DATA, 6, 20},
    {P_SAMPLE, "sample", NULL, NULL, PANEL_BOXED | PANEL_DATA, 3, 20},   /* a box round a line of text */
    {P_RESULTS, "results", NULL, NULL, PANEL_BOXED, 3, 40},
    {P_STATUS, "status", NULL, NULL, PANEL_DATA, 1, 40},
    {P_BIG, "big", NULL, NULL, PANEL_DATA, 3, 40},   /* three-row digits */
    {P_CAPTION, "caption", NULL, NULL, 0, 1, 40},
    {P_SCROLL, "scroll", NULL, NULL, 0, 1, 40},
    {P_INPUT, "input", NULL, NULL, 0, 1, 40},
    {P_HINT, "hint", NULL, NULL, 0, 1, 40},
};
_Static_assert(sizeof panels / sizeof panels[0] == P_COUNT, "one row per panel");

const PanelInfo *layout_panel(int id) {
  for (int i = 0; i < P_COUNT; i++)
    if ((int)panels[i].id == id) return &panels[i];
  return NULL;
}

int layout_has(int id, unsigned flag) {
  const PanelInfo *p = layout_panel(id);
  return p && (p->flags & flag) == flag;
}

unsigned layout_mask(unsigned flag) {
  unsigned bits = 0;
  for (int i = 0; i < P_COUNT; i++)
    if ((panels[i].flags & flag) == flag) bits |= 1u << panels[i].id;
  return bits;
}

static const char *name_of(const PanelInfo *p, PanelName which) {
  return which == NAME_ZOOM ? p->zoom : which == NAME_PRESENT ? p->present : p->name;
}

const char *layout_name(int id, PanelName which) {
  const PanelInfo *p = layout_panel(id);
  return p ? name_of(p, which) : NULL;
}

int layout_named(PanelName which, const char *name) {
  for (int i = 0; i < P_COUNT; i++) {
    const char *n = name_of(&panels[i], which);
    if (n && strcmp(n, name) == 0) return panels[i].id;
  }
  return -1;
}

int layout_list(PanelName which, int *ids) {
  int n = 0;
  for (int i = 0; i < P_COUNT; i++)
    if (name_of(&panels[i], which)) ids[n++] = panels[i].id;
  return n;
}

int layout_next(PanelName which, int panel, int none) {
  int ids[P_COUNT + 1], n = none, i = 0;
  ids[0] = -1;
  n += layout_list(which, ids + n);
  if (n == 0) return -1;
  while (i < n && ids[i] != panel) i++;
  return i == n ? ids[0] : ids[(i + 1) % n];   /* from one not in the list: the first */
}

void layout_names(PanelName which, char *buf, size_t cap) {
  int ids[P_COUNT], n = layout_list(which, ids);
  if (cap) buf[0] = '\0';
  for (int i = 0; i < n; i++) text_list_add(buf, cap, (size_t)i, (size_t)n, ", ", layout_name(ids[i], which));
}

