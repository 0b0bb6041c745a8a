/*
** panel_lens.c -- the lens by layer, the tied run beside its untied
** partner: the comparison the paper's lens finding is about.
**
** The table has a row per layer position (0 = right after the embeddings,
** "out" = the model's own output): for each of the two runs a bar of
** KL(final || lens) in bits, on one scale for both, its value and the top-1
** accuracy, then the difference of the KLs. Its title says which lens the
** numbers come from -- the tuned lens trained online as the runs train,
** the tuned lens fitted post hoc on the frozen model (r:fit_lens), or the
** logit lens -- and at which step. Given more rows (zoomed, or the present
** view), each position becomes a group of two bars as wide as the panel:
** the paper's figure of KL by layer, live.
**
** The history panel beside it draws each position's KL over time as a
** small chart, both runs on the same y scale in every chart, so a layer
** where the runs part shows as two lines that part.
**
** The pair: the selected run and the run it is compared with -- a tied
** run's alignment partner, else the first run tied the other way.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ui/fit.h"
#include "ui/uistate.h"

enum { LENS_ONLINE, LENS_FITTED, LENS_LOGIT };

static int tied(const TrainerRun *r) { return r->m.tie_k > 0; }

static int run_index(const Ui *ui, const TrainerRun *r) { return (int)(r - ui->snap->runs); }

/* The run compared with 'sel': its alignment partner when it is tied and
** has one, else the first run tied the other way. */
static const TrainerRun *partner_of(const Ui *ui, const TrainerRun *sel) {
  const TrainerSnap *s = ui->snap;
  if (tied(sel) && sel->m.align.partner[0])
    for (int i = 0; i < s->n_runs; i++)
      if (strcmp(s->runs[i].name, sel->m.align.partner) == 0 && &s->runs[i] != sel) return &s->runs[i];
  for (int i = 0; i < s->n_runs; i++)
    if (tied(&s->runs[i]) != tied(sel)) return &s->runs[i];
  return NULL;
}

static const LensStats *lens_of(const Ui *ui, const TrainerRun *r) {
  return ui->lens_mode == LENS_LOGIT ? &r->m.logit_lens : ui->lens_mode == LENS_FITTED ? &r->m.fitted_lens : &r->m.lens;
}

int lens_pair(const Ui *ui, LensPair *p) {
  memset(p, 0, sizeof *p);
  const TrainerRun *sel = ui_selected(ui);
  if (!sel) return 0;
  const TrainerRun *other = partner_of(ui, sel);
  p->run[0] = sel;
  p->run[1] = other;
  if (other && !tied(sel)) p->run[0] = other, p->run[1] = sel;   /* tied on the left */
  p->n = other ? 2 : 1;
  for (int k = 0; k < p->n; k++) {
    p->ls[k] = lens_of(ui, p->run[k]);
    p->color[k] = run_index(ui, p->run[k]) % TERM_SERIES_COLORS;
  }
  return p->n;
}

static int measured(const LensStats *ls) { return ls && ls->step >= 0 && ls->n > 0; }

/* Positions both runs have (they have as many when they are one shape). */
static int positions(const LensPair *p) {
  int n = LAB_MAX_POS;
  for (int k = 0; k < p->n; k++) n = measured(p->ls[k]) && p->ls[k]->n < n ? p->ls[k]->n : measured(p->ls[k]) ? n : 0;
  return n == LAB_MAX_POS ? 0 : n;
}

static void position_label(int i, int n, char *buf, size_t cap) {
  if (i == n - 1) snprintf(buf, cap, "out");
  else snprintf(buf, cap, "%d", i);
}

static const char *mode_name(const Ui *ui) {   /* for messages in the panel */
  static const char *const names[] = {[LENS_ONLINE] = "tuned lens, online", [LENS_FITTED] = "tuned lens, fitted",
                                      [LENS_LOGIT] = "logit lens"};
  return names[ui->lens_mode];
}

int lens_table_rows(Ui *ui) {
  const TrainerRun *r = ui->snap ? ui_selected(ui) : NULL;
  return 1 + (r ? r->m.lens.n : 4);
}

/* The largest KL shown: the bars' common scale. */
static double kl_top(const LensPair *p, int n) {
  double top = 1e-9;
  for (int k = 0; k < p->n; k++)
    for (int i = 0; i < n; i++)
      if (isfinite(p->ls[k]->kl[i]) && p->ls[k]->kl[i] > top) top = p->ls[k]->kl[i];
  return top;
}

static int series_role(int color) { return ROLE_SERIES + color; }

/* The title: which lens, at which step (each run's when they differ),
** shorter forms when narrow. */
static void title(const Ui *ui, WINDOW *w, int wd, const LensPair *p) {
  static const char *const kinds[][2] = {{"tuned lens, online", "online"}, {"tuned lens, fitted", "fitted"},
                                         {"logit lens", "logit"}};
  long s0 = p->ls[0]->step, s1 = p->n > 1 ? p->ls[1]->step : s0;
  char when[48], v[3][160], buf[160];
  if (s0 == s1) snprintf(when, sizeof when, "@%ld", s0);
  else snprintf(when, sizeof when, "@%ld/@%ld", s0, s1);
  snprintf(v[0], sizeof v[0], "lens KL bits by layer, %s %s", kinds[ui->lens_mode][0], when);
  snprintf(v[1], sizeof v[1], "lens KL bits, %s %s", kinds[ui->lens_mode][1], when);
  snprintf(v[2], sizeof v[2], "lens %s", kinds[ui->lens_mode][1]);
  const char *const variants[] = {v[0], v[1], v[2]};
  term_print(&ui->term, w, 0, 0, wd, ROLE_TITLE,
             fit_choose(variants, 3, wd, term_glyph(&ui->term, GLYPH_ELLIPSIS), buf, sizeof buf));
}

/* Why there is nothing to show, in the panel's rows. */
static void absent(const Ui *ui, WINDOW *w, int h, int wd, const LensPair *p) {
  const Term *t = &ui->term;
  fit_print(t, w, 0, 0, wd, ROLE_TITLE, "lens by layer (%s)", mode_name(ui));
  const TrainerRun *r = p->n ? p->run[0] : NULL;
  for (int k = 0; k < p->n && k + 1 < h; k++) {
    r = p->run[k];
    if (measured(p->ls[k])) continue;
    const char *why = ui->lens_mode == LENS_FITTED ? "no fit yet: r:fit_lens()"
                      : ui->lens_mode == LENS_ONLINE && r->lens_every <= 0 ? "off (lens_every = 0)"
                                                                           : "not evaluated yet";
    fit_print(t, w, 1 + k, 0, wd, ROLE_LABEL, "%s: %s", r->name, why);
  }
  if (h > 3) fit_print(t, w, h - 1, 0, wd, ROLE_DIM, "l: online, fitted or logit lens");
}

/* ------------------------------------------------------------ compact: a row per position */

/* A run's cell in a row: its KL bar (bw cells, 0: none), the KL, the
** accuracy when 'acc'. Returns the columns used. */
static int run_cell(const Term *t, WINDOW *w, int y, int x, int bw, int acc, const LensStats *ls, int i, double top,
                    int color) {
  GraphCell bar[64];
  if (bw > 64) bw = 64;
  if (bw > 0) {
    graph_hbar(bar, bw, ls->kl[i] / top, t->glyphs, (uint8_t)series_role(color));
    term_cells(t, w, y, x, bar, bw);
  }
  int used = bw + term_printf(t, w, y, x + bw, 6, ROLE_TEXT, "%6.2f", ls->kl[i]);
  if (acc) {
    char a[16];
    snprintf(a, sizeof a, "%.2f", ls->acc[i]);
    used += term_printf(t, w, y, x + used, 4, ROLE_DIM, " %3s", a[0] == '0' ? a + 1 : a);
  }
  return used;
}

/* Columns of each run's cell and its bar, for 'wd' columns in all: the
** KL in six, the accuracy in four, the bar what is left. */
static void compact_widths(int wd, int runs, int *cw, int *bw, int *acc) {
  int room = wd - 4 - (runs > 1 ? 6 : 0);   /* position label; the difference */
  *cw = room / runs;
  *acc = *cw >= 1 + 6 + 4 + 1;
  *bw = *cw - 1 - 6 - (*acc ? 4 : 0);   /* a space between two runs' cells */
  if (*bw < 1) *bw = 0;
}

static void compact(const Ui *ui, WINDOW *w, int h, int wd, const LensPair *p, int n) {
  const Term *t = &ui->term;
  int cw, bw, acc;
  compact_widths(wd, p->n, &cw, &bw, &acc);
  double top = kl_top(p, n);
  /* Column heads: each run's name in its colour over its cell. */
  term_print(t, w, 1, 0, 4, ROLE_LABEL, "pos");
  for (int k = 0; k < p->n; k++) {
    char head[96], buf[96];
    snprintf(head, sizeof head, "%s%s", p->run[k]->name, acc ? " KL acc" : " KL");
    const char *const v[] = {head, p->run[k]->name};
    term_print(t, w, 1, 4 + k * cw + 1, cw - 1, series_role(p->color[k]),
               fit_choose(v, 2, cw - 1, term_glyph(t, GLYPH_ELLIPSIS), buf, sizeof buf));
  }
  if (p->n > 1) term_print(t, w, 1, 4 + 2 * cw, 6, ROLE_LABEL, "  \u0394KL");
  int rows = h - 2 < n ? h - 2 : n;
  for (int j = 0; j < rows; j++) {
    /* Too few rows for every position: the first ones and "out". */
    int i = j == rows - 1 ? n - 1 : j;
    char label[16];
    position_label(i, n, label, sizeof label);
    term_printf(t, w, 2 + j, 0, 4, ROLE_LABEL, "%3s", label);
    for (int k = 0; k < p->n; k++) run_cell(t, w, 2 + j, 4 + k * cw + 1, bw, acc, p->ls[k], i, top, p->color[k]);
    if (p->n > 1) term_printf(t, w, 2 + j, 4 + 2 * cw, 6, ROLE_TEXT, " %+5.2f", p->ls[0]->kl[i] - p->ls[1]->kl[i]);
  }
}

/* ------------------------------------------------------------ tall: a group of bars per position */

/* Each position a group: a bar per run, 'thick' rows each, as wide as the
** panel leaves, its KL and accuracy after it; the difference on the
** group's first row. A legend row names the runs in their colours. */
static void tall(const Ui *ui, WINDOW *w, int h, int wd, const LensPair *p, int n) {
  const Term *t = &ui->term;
  int x = 0;
  for (int k = 0; k < p->n; k++) {
    x += term_print(t, w, 1, x, wd - x, series_role(p->color[k]), "\u2588\u2588 ");
    x += term_printf(t, w, 1, x, wd - x, ROLE_TEXT, "%s  ", p->run[k]->name);
  }
  term_print(t, w, 1, x, wd - x, ROLE_DIM, "KL(final \u2016 lens) in bits, top-1 accuracy");
  int per = (h - 2) / n, gap = per > p->n, thick = (per - gap) / p->n;
  if (thick < 1) thick = 1;
  int right = 6 + 10 + (p->n > 1 ? 9 : 0), bw = wd - 4 - right;
  double top = kl_top(p, n);
  for (int i = 0, y = 2; i < n; i++, y += per) {
    char label[16];
    position_label(i, n, label, sizeof label);
    term_printf(t, w, y, 0, 4, ROLE_KEY, "%3s", label);
    for (int k = 0; k < p->n; k++)
      for (int r = 0; r < thick; r++) {
        GraphCell bar[512];
        int b = bw < 512 ? bw : 512;
        graph_hbar(bar, b, p->ls[k]->kl[i] / top, t->glyphs, (uint8_t)series_role(p->color[k]));
        int yy = y + k * thick + r;
        term_cells(t, w, yy, 4, bar, b);
        if (r != 0) continue;
        term_printf(t, w, yy, 4 + b, 16, ROLE_TEXT, " %5.2f", p->ls[k]->kl[i]);
        term_printf(t, w, yy, 4 + b + 6, 10, ROLE_DIM, " acc %.2f", p->ls[k]->acc[i]);
        if (k == 0 && p->n > 1)
          term_printf(t, w, yy, 4 + b + 16, 9, ROLE_LABEL, " \u0394%+6.2f", p->ls[0]->kl[i] - p->ls[1]->kl[i]);
      }
  }
}

void panel_lens(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  LensPair p;
  if (h < 1 || !lens_pair(ui, &p)) return;
  int n = positions(&p);
  if (n <= 0) {
    absent(ui, w, h, wd, &p);
    return;
  }
  title(ui, w, wd, &p);
  /* Groups of bars once every position has a row per run. */
  if (h - 2 >= n * p.n && wd >= 40) tall(ui, w, h, wd, &p, n);
  else compact(ui, w, h, wd, &p, n);
  /* On the bottom border: a fit the panel does not show, else what the
  ** difference is. */
  long fitted = -1;
  for (int k = 0; k < p.n; k++)
    if (p.run[k]->m.fitted_lens.step > fitted) fitted = p.run[k]->m.fitted_lens.step;
  if (fitted >= 0 && ui->lens_mode != LENS_FITTED)
    fit_print(&ui->term, w, h, 0, wd, ROLE_DIM, "fitted @%ld: l shows it", fitted);
  else if (p.n > 1 && wd >= 24)
    fit_print(&ui->term, w, h, 0, wd, ROLE_DIM, "\u0394 = %s \u2212 %s", p.run[0]->name, p.run[1]->name);
}

/* ------------------------------------------------------------ history by layer */

enum { HIST_MIN_W = 16 };   /* a small chart's columns, at least */

void panel_lens_history(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  LensPair p;
  if (h < 3 || !lens_pair(ui, &p)) return;
  int n = positions(&p);
  const char *prefix = ui->lens_mode == LENS_LOGIT ? "logit_lens" : "lens";
  if (ui->lens_mode == LENS_FITTED) prefix = "lens";   /* a fit is one point: the online lens's history */
  int x = fit_print(&ui->term, w, 0, 0, wd, ROLE_TITLE, "%s KL bits by layer over steps ", prefix);
  for (int k = 0; k < p.n; k++) {
    x += term_print(&ui->term, w, 0, x, wd - x, series_role(p.color[k]), "\u2501");
    x += term_printf(&ui->term, w, 0, x, wd - x, ROLE_TEXT, "%s ", p.run[k]->name);
  }
  if (n <= 0) {
    fit_print(&ui->term, w, 1, 0, wd, ROLE_LABEL, "not evaluated yet");
    return;
  }
  /* As many small charts as fit side by side, the first positions; not
  ** "out", whose KL to the model's own output is 0 by definition. */
  int layers = n > 1 ? n - 1 : n, cols = wd / HIST_MIN_W < layers ? wd / HIST_MIN_W : layers;
  if (cols < 1) cols = 1;
  int cw = wd / cols, ch = h;   /* rows 1..h: the last lies on the bottom border, the time axis */
  GraphSeries s[2];
  for (int c = 0; c < cols; c++) {
    int i = c;
    for (int k = 0; k < p.n; k++) {
      char name[64];
      snprintf(name, sizeof name, "%s.kl.%d", prefix, i);
      s[k] = (GraphSeries){.color = p.color[k], .group = k + 1, .line = k, .bold = k == 0};
      s[k].n = ui_series(ui, 2 + k, p.run[k]->hist, name, &s[k].x, &s[k].y);
    }
    char label[16], title_buf[24];
    position_label(i, n, label, sizeof label);
    snprintf(title_buf, sizeof title_buf, "%s%s", i == n - 1 ? "" : "layer ", label);
    GraphCell *cells = ui_cells(ui, cw - 1, ch);
    if (!cells) return;
    /* Each layer on its own scale, both runs on it: where they part shows. */
    double lo = 0, hi = 1;
    if (graph_y_range(s, p.n, 0, &lo, &hi)) lo = lo < 0 ? lo : 0;
    Graph g = {.title = title_buf, .glyphs = ui->term.glyphs, .x_min = 0, .x_max = ui_x_max(ui),
               .y_min = lo, .y_max = hi > lo ? hi * 1.05 : lo + 1, .series = s, .n_series = p.n, .x_label = c == 0 ? "step" : NULL,
               .stripes = ui->term.color, .mono = !ui->term.color};
    graph_render(&g, cells, cw - 1, ch);
    for (int y = 0; y < ch; y++) term_cells(&ui->term, w, 1 + y, c * cw, cells + (size_t)y * (cw - 1), cw - 1);
  }
}
