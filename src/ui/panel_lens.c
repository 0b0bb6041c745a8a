/*
** panel_lens.c -- per-layer lens accuracy of the selected run.
**
** One row per layer position (0 = after the embeddings, "out" = the model's
** own output): a bar of top-1 accuracy in eighths of a cell, the value, the
** KL(final || lens) in bits when there is room, and to the right a heatmap
** of the accuracy over the whole run (denser = higher, full = the best
** accuracy of any position now, named in the title), on the same time axis
** as the charts. With rows to spare each position's bar grows taller; a
** zoomed lens has the whole width for its history. 'l' switches between
** the tuned and the logit lens.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ui/fit.h"
#include "ui/uistate.h"

/* Positions to show when they do not all fit: spread evenly, last kept. */
static int pick_rows(int n, int rows, int *out) {
  if (rows >= n) {
    for (int i = 0; i < n; i++) out[i] = i;
    return n;
  }
  for (int i = 0; i < rows; i++) out[i] = rows > 1 ? (int)lround((double)i * (n - 1) / (rows - 1)) : n - 1;
  return rows;
}

#define HEAT_MAX 512   /* cells of a heatmap row */

/* The heatmap row of series 'name' into 'cells' (at most HEAT_MAX): one
** shade per cell, each cell the mean of the buckets whose steps fall in
** it; a value too small for a shade is a low mark. Returns the cells. */
static int heat_cells(Ui *ui, GraphCell *cells, int wd, const History *h, const char *name, double top) {
  const double *xs, *ys;
  int n = ui_series(ui, 0, h, name, &xs, &ys);
  if (wd <= 0) return 0;
  double x_max = ui_x_max(ui), sum[HEAT_MAX] = {0};
  int cnt[HEAT_MAX] = {0};
  if (wd > HEAT_MAX) wd = HEAT_MAX;
  for (int i = 0; i < n; i++) {
    int c = (int)(xs[i] / x_max * wd);
    if (c >= 0 && c < wd && isfinite(ys[i])) sum[c] += ys[i], cnt[c]++;
  }
  /* The lens is evaluated every few steps: a cell between two evaluations
  ** keeps the value of the one before, up to the newest. */
  int last = -1;
  for (int c = 0; c < wd; c++)
    if (cnt[c]) last = c;
  double v = NAN;
  for (int c = 0; c < wd; c++) {
    if (cnt[c]) v = sum[c] / cnt[c];
    cells[c].ch = c <= last && isfinite(v) ? graph_shade(v / top, ui->term.glyphs) : ' ';
    cells[c].role = ROLE_BAR;
    if (c <= last && isfinite(v) && cells[c].ch == ' ') cells[c].ch = ui->term.glyphs == GRAPH_ASCII ? '.' : 0x2581;
  }
  return wd;
}

/* The row of a taller bar above its bottom one: no low marks. */
static void heat_above(GraphCell *cells, int n) {
  for (int c = 0; c < n; c++)
    if (cells[c].ch == '.' || cells[c].ch == 0x2581) cells[c].ch = ' ';
}

void panel_lens(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui);
  if (!r || h < 1) return;
  const LensStats *ls = ui->lens_logit ? &r->m.logit_lens : &r->m.lens;
  const char *kind = ui->lens_logit ? "logit lens" : "tuned lens (online)";
  if (ls->step < 0 || ls->n <= 0) {
    fit_print(t, w, 0, 0, wd, ROLE_TITLE, "%s", kind);
    if (r->lens_every <= 0 && !ui->lens_logit) fit_print(t, w, 1, 0, wd, ROLE_LABEL, "off for %s (lens_every = 0)", r->name);
    else fit_print(t, w, 1, 0, wd, ROLE_LABEL, "not evaluated yet for %s", r->name);
    fit_print(t, w, 2, 0, wd, ROLE_LABEL, "(l: tuned or logit lens)");
    return;
  }
  /* The note on a fitted lens takes the last row when there is one to spare. */
  int note = r->m.fitted_lens.step >= 0 && h >= 4;
  if (note)
    fit_print(t, w, --h, 0, wd, ROLE_LABEL, "fitted @%ld: r:metrics().fitted_lens", r->m.fitted_lens.step);
  double top = 0.05;
  for (int i = 0; i < ls->n; i++)
    if (ls->acc[i] > top) top = ls->acc[i];
  char heat[32];
  snprintf(heat, sizeof heat, "heat 0..%.2f", top);
  int heat_w = fit_cols(heat) + 1;
  int x = fit_print(t, w, 0, 0, wd, ROLE_TITLE, "%s acc %s @%ld", kind, r->name, ls->step);
  if (wd - x > heat_w + 2) term_print(t, w, 0, wd - heat_w, heat_w, ROLE_LABEL, heat);
  int idx[LAB_MAX_POS], rows = pick_rows(ls->n, h - 1, idx);
  /* Taller bars when there are rows to spare: each position gets a block
  ** of the rows (the first ones a row more when they do not divide), its
  ** label and value on the bar's middle row. */
  int per = rows > 0 ? (h - 1) / rows : 1, spare = rows > 0 ? (h - 1) % rows : 0;
  if (per < 1) per = 1, spare = 0;
  int kl = wd >= 44;                    /* room for the KL column */
  int bar = wd < 36 ? 6 : wd / 5 < 10 ? 10 : wd / 5 > 16 ? 16 : wd / 5, left = 4 + bar + 5 + (kl ? 8 : 0);
  GraphCell cells[16];   /* the bar: at most 16 cells */
  for (int k = 0, y0 = 1; k < rows; k++) {
    int i = idx[k], block = per + (k < spare);
    char label[8];
    if (i == ls->n - 1) snprintf(label, sizeof label, "out");
    else snprintf(label, sizeof label, "%3d", i);
    graph_hbar(cells, bar, ls->acc[i], t->glyphs, ROLE_BAR);
    char name[64];
    snprintf(name, sizeof name, "%s.acc.%d", ui->lens_logit ? "logit_lens" : "lens", i);
    /* A block of three rows or more keeps its last one apart from the next. */
    int drawn = block >= 3 ? block - 1 : block, hw = 0;
    GraphCell bottom[HEAT_MAX], above[HEAT_MAX];
    if (wd - left - 2 >= 4 && r->hist) {
      hw = heat_cells(ui, bottom, wd - left - 2, r->hist, name, top);
      memcpy(above, bottom, sizeof *bottom * (size_t)hw);
      heat_above(above, hw);
    }
    for (int j = 0; j < drawn; j++) {
      int y = y0 + j;
      term_cells(t, w, y, 4, cells, bar);
      if (hw > 0) term_cells(t, w, y, left + 1, j == drawn - 1 ? bottom : above, hw);
      if (j != drawn / 2) continue;
      term_print(t, w, y, 0, 4, ROLE_LABEL, label);
      term_printf(t, w, y, 4 + bar, 5, ROLE_TEXT, " %.2f", ls->acc[i]);
      if (kl) term_printf(t, w, y, 4 + bar + 5, 8, ROLE_LABEL, " KL%4.1f", ls->kl[i]);
    }
    y0 += block;
  }
}
