/*
** charts.c -- the chart panels: loss, gradient ratio, and the wide screen's
** third chart (the scripts' own series, else gradient norms), all drawn by
** graph.c from the histories in the newest snapshot.
**
** Every chart of the lab shares one time axis: it fills from the left and
** halves when the runs reach its end, so between two halvings the terminal
** only receives the cells at the newest points.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "uistate.h"

#define X_BASE 64   /* steps on a fresh time axis */

GraphCell *ui_cells(Ui *ui, int w, int h) {
  size_t n = (size_t)(w > 0 ? w : 0) * (size_t)(h > 0 ? h : 0);
  if (n > ui->cap_cells) {
    GraphCell *c = realloc(ui->cells, sizeof *c * n);
    if (!c) return NULL;
    ui->cells = c;
    ui->cap_cells = n;
  }
  return ui->cells;
}

void ui_blit(Ui *ui, WINDOW *win, const GraphCell *c, int w, int h) {
  for (int y = 0; y < h; y++) term_cells(&ui->term, win, y, 0, c + (size_t)y * w, w);
}

int ui_series(Ui *ui, int slot, const History *h, const char *name, const double **x, const double **y) {
  int n = 0;
  const HistBucket *b = h ? history_series(h, name, &n) : NULL;
  if (!b || n <= 0 || slot < 0 || slot >= UI_SLOTS) return 0;
  if ((size_t)n * 2 > ui->cap_xy[slot]) {
    double *p = realloc(ui->xy[slot], sizeof *p * (size_t)n * 2);
    if (!p) return 0;
    ui->xy[slot] = p;
    ui->cap_xy[slot] = (size_t)n * 2;
  }
  double *xs = ui->xy[slot], *ys = xs + n;
  for (int i = 0; i < n; i++) {
    xs[i] = 0.5 * (double)(b[i].step_first + b[i].step_last);
    ys[i] = b[i].mean;
  }
  *x = xs;
  *y = ys;
  return n;
}

double ui_last_step(const Ui *ui) {
  double last = 0;
  for (int i = 0; i < ui->snap->n_runs; i++)
    if (ui->snap->runs[i].m.step > last) last = (double)ui->snap->runs[i].m.step;
  return last;
}

/* Events of the selected run, as steps. */
static int selected_events(Ui *ui, double *out, int cap) {
  const TrainerRun *r = ui_selected(ui);
  int n = 0;
  const HistEvent *ev = r && r->hist ? history_events(r->hist, &n) : NULL;
  int k = 0;
  for (int i = 0; i < n && k < cap; i++) out[k++] = (double)ev[i].step;
  return k;
}

typedef struct ChartSpec {
  PanelId panel;
  const char *title;
  int log_y;
} ChartSpec;

/* Render 'series' into the panel with the shared time axis and the panel's
** sticky y scale. */
static void draw_chart(Ui *ui, WINDOW *win, int h, int w, const ChartSpec *cs, GraphSeries *series, int n) {
  werase(win);
  GraphCell *cells = ui_cells(ui, w, h);
  if (!cells) return;
  double lo = 0, hi = 1;
  GraphScale *sc = &ui->scale[cs->panel];
  if (graph_y_range(series, n, cs->log_y, &lo, &hi)) graph_scale_update(sc, lo, hi, cs->log_y);
  double ev[HISTORY_MAX_EVENTS];
  Graph g = {.title = cs->title,
             .glyphs = ui->view == VIEW_PRESENT && ui->term.glyphs == GRAPH_BRAILLE ? GRAPH_BLOCK : ui->term.glyphs,
             .log_y = cs->log_y,
             .x_min = 0,
             .x_max = graph_x_extent(ui_last_step(ui), X_BASE),
             .y_min = sc->set ? sc->lo : lo,
             .y_max = sc->set ? sc->hi : hi,
             .series = series,
             .n_series = n,
             .events = ev,
             .n_events = selected_events(ui, ev, HISTORY_MAX_EVENTS)};
  graph_render(&g, cells, w, h);
  ui_blit(ui, win, cells, w, h);
}

/* One series per run ('name'), and optionally a dashed one ('dashed'). */
static int run_series(Ui *ui, GraphSeries *s, int cap, const char *name, const char *dashed) {
  int n = 0, slot = 0, dashed_named = 0;
  for (int i = 0; i < ui->snap->n_runs && n + 2 <= cap; i++) {
    const TrainerRun *r = &ui->snap->runs[i];
    const double *x, *y;
    int k = ui_series(ui, slot++, r->hist, name, &x, &y);
    s[n++] = (GraphSeries){.name = r->name, .x = x, .y = y, .n = k, .color = i % TERM_SERIES_COLORS};
    if (!dashed) continue;
    k = ui_series(ui, slot++, r->hist, dashed, &x, &y);
    if (k == 0) continue;
    s[n++] = (GraphSeries){.name = dashed_named++ ? NULL : "val", .x = x, .y = y, .n = k,
                           .color = i % TERM_SERIES_COLORS, .dashed = 1};
  }
  return n;
}

void panel_loss(Ui *ui, WINDOW *win, int h, int w) {
  GraphSeries s[UI_SLOTS];
  int n = run_series(ui, s, UI_SLOTS, "loss", "val_loss");
  ChartSpec cs = {P_LOSS, "loss", 0};
  draw_chart(ui, win, h, w, &cs, s, n);
}

void panel_ratio(Ui *ui, WINDOW *win, int h, int w) {
  GraphSeries s[UI_SLOTS];
  int n = run_series(ui, s, UI_SLOTS, "grad_ratio", NULL);
  ChartSpec cs = {P_RATIO, "grad out/in", 1};
  draw_chart(ui, win, h, w, &cs, s, n);
}

/* The scripts' series when there are any, else the selected run's
** gradient norms (L2, before scaling). */
void panel_extra(Ui *ui, WINDOW *win, int h, int w) {
  GraphSeries s[UI_SLOTS];
  int n = 0;
  History *plots = ui->api ? luaapi_plots(ui->api) : NULL;
  if (plots && history_n_series(plots) > 0) {
    for (int i = 0; i < history_n_series(plots) && n < UI_SLOTS; i++) {
      const char *name = history_series_name(plots, i);
      const double *x, *y;
      int k = ui_series(ui, n, plots, name, &x, &y);
      s[n] = (GraphSeries){.name = name, .x = x, .y = y, .n = k, .color = n % TERM_SERIES_COLORS};
      n++;
    }
    ChartSpec cs = {P_EXTRA, "plots", 0};
    draw_chart(ui, win, h, w, &cs, s, n);
    return;
  }
  static const struct {
    const char *series, *label;
  } norms[] = {{"grad_in", "in"}, {"grad_out", "out"}, {"grad_in_act", "in_act"}};
  const TrainerRun *r = ui_selected(ui);
  for (int i = 0; r && i < 3; i++) {
    const double *x, *y;
    int k = ui_series(ui, i, r->hist, norms[i].series, &x, &y);
    s[n++] = (GraphSeries){.name = norms[i].label, .x = x, .y = y, .n = k, .color = i, .dashed = i == 2};
  }
  ChartSpec cs = {P_EXTRA, "grad L2", 1};
  draw_chart(ui, win, h, w, &cs, s, n);
}
