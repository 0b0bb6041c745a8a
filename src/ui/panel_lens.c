/*
** panel_lens.c -- the lens by layer, the tied run beside its untied
** partner (lenspair.c): the comparison the paper's lens finding is about.
** What its table and the history beside it show: docs/architecture.md,
** 'The lens panel'.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab/lensfit.h"
#include "ui/fit.h"
#include "ui/uistate.h"

static void position_label(const LensPair *p, int row, char *buf, size_t cap) {
  if (row == p->rows - 1) snprintf(buf, cap, "out");
  else snprintf(buf, cap, "%d", row);
}

int lens_table_rows(Ui *ui) {
  LensPair p;
  if (!ui->snap || !lens_pair(ui, &p) || p.rows <= 0) return 1 + 4;   /* column heads, a 3-layer model's rows */
  return 1 + p.rows;
}

static double kl_at(const LensPair *p, int k, int row) { return p->ls[k]->kl[lens_pos(p, k, row)]; }
static double acc_at(const LensPair *p, int k, int row) { return p->ls[k]->acc[lens_pos(p, k, row)]; }

/* The largest KL shown: the bars' common scale. */
static double kl_top(const LensPair *p) {
  double top = 1e-9;
  for (int k = 0; k < p->n; k++)
    for (int row = 0; row < p->rows; row++)
      if (isfinite(kl_at(p, k, row)) && kl_at(p, k, row) > top) top = kl_at(p, k, row);
  return top;
}

static int series_role(int color) { return ROLE_SERIES + color; }

/* The run at 'place' in the lab as the charts see it: its colour, its
** second mark when colours come round again, its line pattern without
** colour; so a bar and a legend mark here look as its line there does. */
static GraphSeries run_look(int place) {
  return (GraphSeries){.color = place % TERM_SERIES_COLORS, .style = place / TERM_SERIES_COLORS, .line = place};
}

/* A bar of 'frac' of 'bw' cells in the look of the run at 'place'. */
static void run_bar(const Term *t, WINDOW *w, int y, int x, int bw, double frac, int place) {
  GraphCell bar[512];
  if (bw > 512) bw = 512;
  GraphSeries s = run_look(place);
  graph_hbar_series(bar, bw, frac, t->glyphs, &s, !t->color);
  term_cells(t, w, y, x, bar, bw);
}

/* A difference in six columns: "+1.52", "+12.5". */
static void delta_text(double d, char *buf, size_t cap) {
  snprintf(buf, cap, fabs(d) < 9.995 ? "%+.2f" : "%+.1f", d);
}

/* The first run shown whose fitted lens did not converge, or NULL. */
static const TrainerRun *unconverged_fit(const LensPair *p) {
  for (int k = 0; k < p->n; k++)
    if (p->run[k]->m.fitted_lens.step >= 0 && !p->run[k]->m.fitted.converged) return p->run[k];
  return NULL;
}

#define NOT_CONVERGED_MARK " !NOT CONVERGED"

/* The title: which lens, at which step (each run's when they differ),
** shorter forms when narrow; the fitted lens of a fit that did not
** converge marked after it, in the warning colour. */
static void title(const Ui *ui, WINDOW *w, int wd, const LensPair *p) {
  const LensModeName *m = &lens_modes[ui->lens_mode];
  long s0 = p->ls[0]->step, s1 = p->n > 1 ? p->ls[1]->step : s0;
  char when[48], v[3][160], buf[160];
  if (s0 == s1) snprintf(when, sizeof when, "@%ld", s0);
  else snprintf(when, sizeof when, "@%ld/@%ld", s0, s1);
  snprintf(v[0], sizeof v[0], "lens KL bits by layer, %s %s", m->full, when);
  snprintf(v[1], sizeof v[1], "lens KL bits, %s %s", m->brief, when);
  snprintf(v[2], sizeof v[2], "lens %s", m->brief);
  const char *const variants[] = {v[0], v[1], v[2]};
  int mark = ui->lens_mode == LENS_FITTED && unconverged_fit(p) ? (int)strlen(NOT_CONVERGED_MARK) : 0;
  int room = wd - mark > 8 ? wd - mark : wd;
  int x = term_print(&ui->term, w, 0, 0, room, ROLE_TITLE,
                     fit_choose(variants, 3, room, term_glyph(&ui->term, GLYPH_ELLIPSIS), buf, sizeof buf));
  if (mark) term_print(&ui->term, w, 0, x, wd - x, ROLE_WARN, NOT_CONVERGED_MARK);
}

/* Why a run has no numbers in this lens. */
static const char *why_absent(const Ui *ui, const TrainerRun *r) {
  if (ui->lens_mode == LENS_FITTED) return "no fit yet: r:fit_lens()";
  if (ui->lens_mode == LENS_ONLINE && r->lens_every <= 0) return "off (lens_every = 0)";
  return "not evaluated yet";
}

/* Nothing to compare: which run lacks what. */
static void absent(const Ui *ui, WINDOW *w, int h, int wd, const LensPair *p) {
  const Term *t = &ui->term;
  fit_print(t, w, 0, 0, wd, ROLE_TITLE, "lens by layer (%s)", lens_modes[ui->lens_mode].full);
  int y = 1;
  for (int k = 0; k < 2 && p->unmeasured[k] && y < h; k++, y++)
    fit_print(t, w, y, 0, wd, ROLE_LABEL, "%s: %s", p->unmeasured[k]->name, why_absent(ui, p->unmeasured[k]));
  if (y == 1) fit_print(t, w, 1, 0, wd, ROLE_LABEL, "no run");
  if (h > 3) fit_print(t, w, h - 1, 0, wd, ROLE_DIM, "l: online, fitted or logit lens");
}

/* ------------------------------------------------------------ compact: a row per position */

/* A run's cell in a row: its KL bar (bw cells, 0: none), the KL, the
** accuracy when 'acc'. */
static void run_cell(const Term *t, WINDOW *w, int y, int x, int bw, int acc, const LensPair *p, int k, int row,
                     double top) {
  if (bw > 0) run_bar(t, w, y, x, bw, kl_at(p, k, row) / top, p->place[k]);
  term_printf(t, w, y, x + bw, 6, ROLE_TEXT, "%6.2f", kl_at(p, k, row));
  if (!acc) return;
  char a[16];
  snprintf(a, sizeof a, "%.2f", acc_at(p, k, row));
  term_printf(t, w, y, x + bw + 6, 4, ROLE_DIM, " %3s", a[0] == '0' ? a + 1 : a);
}

/* Columns of each run's cell and its bar, for 'wd' columns in all: a
** space, the KL in six, the accuracy in four, the bar what is left. */
static void compact_widths(int wd, int runs, int *cw, int *bw, int *acc) {
  int room = wd - 4 - (runs > 1 ? 7 : 0);   /* position label; the difference */
  *cw = room / runs;
  *acc = *cw >= 1 + 6 + 4 + 1;
  *bw = *cw - 1 - 6 - (*acc ? 4 : 0);
  if (*bw < 1) *bw = 0;
}

static void compact(const Ui *ui, WINDOW *w, int h, int wd, const LensPair *p) {
  const Term *t = &ui->term;
  int cw, bw, acc;
  compact_widths(wd, p->n, &cw, &bw, &acc);
  double top = kl_top(p);
  /* Column heads: each run's name in its colour over its cell. */
  term_print(t, w, 1, 0, 4, ROLE_LABEL, "pos");
  for (int k = 0; k < p->n; k++) {
    char head[96], buf[96];
    snprintf(head, sizeof head, "%s%s", p->run[k]->name, acc ? " KL acc" : " KL");
    const char *const v[] = {head, p->run[k]->name};
    term_print(t, w, 1, 4 + k * cw + 1, cw - 1, series_role(p->color[k]),
               fit_choose(v, 2, cw - 1, term_glyph(t, GLYPH_ELLIPSIS), buf, sizeof buf));
  }
  if (p->n > 1) term_printf(t, w, 1, 4 + 2 * cw, 7, ROLE_LABEL, "  %sKL", term_glyph(t, GLYPH_DELTA));
  /* Too few rows for every position: the first ones, "out" the first to go. */
  int rows = h - 2 < p->rows ? h - 2 : p->rows;
  for (int row = 0; row < rows; row++) {
    char label[16], d[16];
    position_label(p, row, label, sizeof label);
    term_printf(t, w, 2 + row, 0, 4, ROLE_LABEL, "%3s", label);
    for (int k = 0; k < p->n; k++) run_cell(t, w, 2 + row, 4 + k * cw + 1, bw, acc, p, k, row, top);
    if (p->n < 2) continue;
    delta_text(kl_at(p, 0, row) - kl_at(p, 1, row), d, sizeof d);
    term_printf(t, w, 2 + row, 4 + 2 * cw, 7, ROLE_TEXT, " %6s", d);
  }
}

/* ------------------------------------------------------------ tall: a group of bars per position */

/* The legend row: each run's colour and name, and what the bars measure
** when there is room for it. */
static void tall_legend(const Term *t, WINDOW *w, int wd, const LensPair *p) {
  int x = 0;
  for (int k = 0; k < p->n; k++) {
    if (wd - x >= 2) run_bar(t, w, 1, x, 2, 1, p->place[k]);   /* a swatch: the bar's own fill */
    x += 2;
    x += term_printf(t, w, 1, x, wd - x, ROLE_TEXT, " %s  ", p->run[k]->name);
  }
  char what[3][96], buf[96];
  snprintf(what[0], sizeof what[0], "KL(final %s lens) in bits, top-1 accuracy", term_glyph(t, GLYPH_PARALLEL));
  snprintf(what[1], sizeof what[1], "KL in bits, accuracy");
  snprintf(what[2], sizeof what[2], "KL bits");
  const char *const v[] = {what[0], what[1], what[2]};
  const char *says = fit_choose(v, 3, wd - x, "", buf, sizeof buf);
  if (fit_cols(says) <= wd - x) term_print(t, w, 1, x, wd - x, ROLE_DIM, says);
}

/* The output position in one row at the foot: its KL is 0 by definition
** (the model's own output), so only its accuracy, each run's, is said. */
static void tall_out(const Term *t, WINDOW *w, int y, int wd, const LensPair *p) {
  int out = p->rows - 1;
  int x = term_printf(t, w, y, 0, wd, ROLE_KEY, "out");
  for (int k = 0; k < p->n; k++) {
    x += term_printf(t, w, y, x, wd - x, ROLE_TEXT, "  %s", p->run[k]->name);
    x += term_printf(t, w, y, x, wd - x, ROLE_DIM, " acc %.2f", acc_at(p, k, out));
  }
  /* Why it has no KL, as far as the row has room; never cut. */
  static const char *const why[] = {"   (KL 0: the model's own output)", "   (KL 0 by definition)", "   (KL 0)"};
  for (int i = 0; i < 3; i++)
    if (fit_cols(why[i]) <= wd - x) {
      term_print(t, w, y, x, wd - x, ROLE_DIM, why[i]);
      return;
    }
}

/* Each layer position a group: a bar per run, as wide as the panel
** leaves, its KL and accuracy after it; under the pair, the difference
** (tied - untied) in its own row, as under a sum, which parts one group
** from the next. Bars are as thick as the rows allow; the rows a whole
** division leaves thicken the first groups' bars (the figures are about
** layer 0), so no row is left empty but one when fewer rows are left
** than a group has bars. One run: a row between groups instead; too few
** rows for the difference's: it follows the first bar's numbers. */
static void tall(const Ui *ui, WINDOW *w, int h, int wd, const LensPair *p) {
  const Term *t = &ui->term;
  tall_legend(t, w, wd, p);
  int layers = p->rows - 1, space = h - 3;   /* under the legend, above the output's row */
  if (layers < 1) layers = 1;
  /* Too few rows for a row of its own: the difference after the first
  ** bar's numbers, and no row between groups. */
  int inline_delta = p->n > 1 && space < layers * (p->n + 1);
  int sep = inline_delta ? 0 : p->n > 1 ? layers : layers - 1;   /* the difference's rows, or the gaps */
  int thick = (space - sep) / (layers * p->n);
  if (thick < 1) thick = 1;
  int spare = space - sep - layers * p->n * thick, more = spare > 0 ? spare / p->n : 0;   /* groups a row thicker */
  int right = 6 + 10 + (inline_delta ? 9 : 0), bw = wd - 4 - right;
  if (bw > 512) bw = 512;
  double top = kl_top(p);
  int y = 2;
  for (int row = 0; row < layers && y < h - 1; row++) {
    char label[16];
    int th = thick + (row < more);
    position_label(p, row, label, sizeof label);
    term_printf(t, w, y, 0, 4, ROLE_KEY, "%3s", label);
    for (int k = 0; k < p->n; k++)
      for (int r = 0; r < th; r++) {
        int yy = y + k * th + r;
        if (yy >= h - 1) break;
        run_bar(t, w, yy, 4, bw, kl_at(p, k, row) / top, p->place[k]);
        if (r != 0) continue;
        term_printf(t, w, yy, 4 + bw, 6, ROLE_TEXT, " %5.2f", kl_at(p, k, row));
        term_printf(t, w, yy, 4 + bw + 6, 10, ROLE_DIM, " acc %.2f", acc_at(p, k, row));
        if (!inline_delta || k > 0) continue;
        char d[16];
        delta_text(kl_at(p, 0, row) - kl_at(p, 1, row), d, sizeof d);
        term_printf(t, w, yy, 4 + bw + 16, 9, ROLE_LABEL, " %s %s", term_glyph(t, GLYPH_DELTA), d);
      }
    y += th * p->n;
    if (p->n > 1 && !inline_delta && y < h - 1) {
      char d[16];
      delta_text(kl_at(p, 0, row) - kl_at(p, 1, row), d, sizeof d);
      term_printf(t, w, y, 4 + bw - 1, 10, ROLE_LABEL, "%s %5s", term_glyph(t, GLYPH_DELTA), d);
    }
    y += row < sep;
  }
  if (p->rows > 1) tall_out(t, w, h - 1, wd, p);
}

/* On the bottom border: a run left out, else (the fitted lens shown) a
** fit that did not converge, whose numbers are not the converged lens's,
** else a fit the panel does not show, else what the difference is. */
static void foot(const Ui *ui, WINDOW *w, int h, int wd, const LensPair *p) {
  const Term *t = &ui->term;
  long fitted = -1;
  for (int k = 0; k < p->n; k++)
    if (p->run[k]->m.fitted_lens.step > fitted) fitted = p->run[k]->m.fitted_lens.step;
  const TrainerRun *loose = ui->lens_mode == LENS_FITTED ? unconverged_fit(p) : NULL;
  if (p->unmeasured[0])
    fit_print(t, w, h, 0, wd, ROLE_DIM, "%s: %s", p->unmeasured[0]->name, why_absent(ui, p->unmeasured[0]));
  else if (loose)
    fit_print(t, w, h, 0, wd, ROLE_WARN, "! %s fit NOT CONVERGED (%s, %ld steps)", loose->name,
              lensfit_stop_name(loose->m.fitted.stopped), loose->m.fitted.steps);
  else if (fitted >= 0 && ui->lens_mode != LENS_FITTED)
    fit_print(t, w, h, 0, wd, ROLE_DIM, "fitted @%ld: ui.lens('fitted')", fitted);
  else if (p->n > 1 && wd >= 24)
    fit_print(t, w, h, 0, wd, ROLE_DIM, "%s = %s %s %s", term_glyph(t, GLYPH_DELTA), p->run[0]->name,
              term_glyph(t, GLYPH_MINUS), p->run[1]->name);
}

void panel_lens(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  LensPair p;
  if (h < 1) return;
  if (!lens_pair(ui, &p) || p.rows <= 0) {
    absent(ui, w, h, wd, &p);
    return;
  }
  title(ui, w, wd, &p);
  /* Groups of bars once every position has a row per run. */
  if (h - 2 >= p.rows * p.n && wd >= 40) tall(ui, w, h, wd, &p);
  else compact(ui, w, h, wd, &p);
  foot(ui, w, h, wd, &p);
}

/* ------------------------------------------------------------ history by layer */

enum { HIST_MIN_W = 16 };   /* a small chart's columns, at least */

/* The runs of the history and what it draws: always a lens trained as
** they train (a fit is one point: in the fitted mode, the online lens's
** history), whether or not the mode's lens is measured. */
typedef struct History2 {
  const TrainerRun *run[2];
  int place[2], n;   /* the runs' places in the lab (run_look) */
  int layers;            /* layers both have (0: none measured yet) */
  const char *prefix;    /* the history's series: "lens" or "logit_lens" */
} History2;

static void history_runs(const Ui *ui, History2 *hp) {
  hp->n = run_pair(ui, hp->run);
  int logit = ui->lens_mode == LENS_LOGIT;
  hp->prefix = logit ? "logit_lens" : "lens";
  hp->layers = -1;
  for (int k = 0; k < hp->n; k++) {
    hp->place[k] = (int)(hp->run[k] - ui->snap->runs);
    const LensStats *ls = logit ? &hp->run[k]->m.logit_lens : &hp->run[k]->m.lens;
    int layers = ls->n - 1;   /* not "out": its KL to the model's own output is 0 by definition */
    if (hp->layers < 0 || layers < hp->layers) hp->layers = layers;
  }
  if (hp->layers < 0) hp->layers = 0;
}

/* The title: whose history, each run's line as its chart draws it (its
** colour, or without colour its pattern; in ASCII its mark). */
static void history_title(const Ui *ui, WINDOW *w, int wd, const History2 *hp) {
  const Term *t = &ui->term;
  int x = fit_print(t, w, 0, 0, wd, ROLE_TITLE, "%s lens KL bits by layer over steps ",
                    ui->lens_mode == LENS_LOGIT ? "logit" : "online");
  for (int k = 0; k < hp->n && x < wd; k++) {
    GraphSeries s = run_look(hp->place[k]);
    GraphCell mark = {.ch = graph_line_mark(&s, t->glyphs, !t->color), .role = graph_series_role(&s)};
    term_cells(t, w, 0, x++, &mark, 1);
    x += term_printf(t, w, 0, x, wd - x, ROLE_TEXT, " %s ", hp->run[k]->name);
  }
}

/* Layer 'layer' of the history: both runs' KL over the steps, on a scale
** of its own, into columns x..x+cw-1, rows 1..h (the last on the bottom
** border: the time axis). */
static void history_chart(Ui *ui, WINDOW *w, const History2 *hp, int layer, int x, int cw, int h, int first) {
  GraphSeries s[2];
  for (int k = 0; k < hp->n; k++) {
    char name[64];
    snprintf(name, sizeof name, "%s.kl.%d", hp->prefix, layer);
    s[k] = run_look(hp->place[k]);
    s[k].group = k + 1, s[k].bold = k == 0;
    ui_series_span(ui, 2 + k, hp->run[k]->hist, name, &s[k]);
  }
  char label[24];
  snprintf(label, sizeof label, "layer %d", layer);
  GraphCell *cells = ui_cells(ui, cw, h);
  if (!cells) return;
  double lo = 0, hi = 1;
  if (graph_y_range(s, hp->n, 0, &lo, &hi)) lo = lo < 0 ? lo : 0;
  Graph g = {.title = label, .glyphs = ui->term.glyphs, .x_min = 0, .x_max = ui_x_max(ui), .y_min = lo,
             .y_max = hi > lo ? hi * 1.05 : lo + 1, .series = s, .n_series = hp->n, .x_label = first ? "step" : NULL,
             .smooth = ui->smooth, .mono = !ui->term.color, .no_shade = !ui->term.shaded};
  graph_render(&g, cells, cw, h);
  for (int y = 0; y < h; y++) term_cells(&ui->term, w, 1 + y, x, cells + (size_t)y * cw, cw);
}

void panel_lens_history(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  History2 hp;
  history_runs(ui, &hp);
  if (h < 3 || hp.n == 0) return;
  history_title(ui, w, wd, &hp);
  if (hp.layers <= 0) {
    fit_print(&ui->term, w, 1, 0, wd, ROLE_LABEL, "not evaluated yet");
    return;
  }
  /* As many small charts as fit side by side, the first layers. */
  int cols = wd / HIST_MIN_W < hp.layers ? wd / HIST_MIN_W : hp.layers;
  if (cols < 1) cols = 1;
  int cw = wd / cols;
  for (int c = 0; c < cols; c++) history_chart(ui, w, &hp, c, c * cw, cw - 1, h, c == 0);
}
