/*
** charts.c -- the chart panels: loss, gradient ratio, alignment over time,
** and the wide screen's third chart (the scripts' own series, else gradient
** norms), all drawn by graph.c from the histories in the newest snapshot;
** and, on demand in their place, the scatter of row norm against log token
** frequency. The shared time axis and each run's colour:
** docs/architecture.md, 'The chart panels'.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/fit.h"
#include "ui/uistate.h"

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
  GraphSeries s = {0};
  int n = ui_series_span(ui, slot, h, name, &s);
  *x = s.x;
  *y = s.y;
  return n;
}

int ui_series_span(Ui *ui, int slot, const History *h, const char *name, GraphSeries *s) {
  int n = 0;
  const HistBucket *b = h ? history_series(h, name, &n) : NULL;
  s->n = 0;
  if (!b || n <= 0 || slot < 0 || slot >= UI_SLOTS) return 0;
  if ((size_t)n * 4 > ui->cap_xy[slot]) {
    double *p = realloc(ui->xy[slot], sizeof *p * (size_t)n * 4);
    if (!p) return 0;
    ui->xy[slot] = p;
    ui->cap_xy[slot] = (size_t)n * 4;
  }
  double *xs = ui->xy[slot], *ys = xs + n, *lo = ys + n, *hi = lo + n;
  for (int i = 0; i < n; i++) {
    xs[i] = 0.5 * (double)(b[i].step_first + b[i].step_last);
    ys[i] = b[i].mean;
    lo[i] = b[i].min;
    hi[i] = b[i].max;
  }
  s->x = xs, s->y = ys, s->lo = lo, s->hi = hi, s->n = n;
  return n;
}

double ui_last_step(const Ui *ui) {
  double last = 0;
  for (int i = 0; i < ui->snap->n_runs; i++)
    if (ui->snap->runs[i].m.step > last) last = (double)ui->snap->runs[i].m.step;
  return last;
}

double ui_x_max(Ui *ui) { return graph_xaxis_update(&ui->xaxis, ui_last_step(ui)); }

/* Settings changes of the selected run, by kind; its creation (always at
** step 0) says nothing, and a lens fit changes no training. */
static int charted_event(const char *text) {
  return strcmp(text, HISTORY_EVENT_CREATED) != 0 &&
         strncmp(text, HISTORY_EVENT_LENS_FIT, strlen(HISTORY_EVENT_LENS_FIT)) != 0;
}

/* A settings change or a phase as the chart marks it: its kind and a
** short label ('untied', '(mean)', 'in x5', 'lr', 'phase 2'), written into
** 'label' (cap bytes). A label in parentheses qualifies another change of
** its step (the matrix a re-tie keeps). */
static GraphEventKind event_kind(const char *text, char *label, size_t cap) {
  static const struct {
    SettingId key;
    const char *before, *after;
    GraphEventKind kind;
  } kinds[] = {{SETTING_TIE, "", "", GRAPH_EVENT_TIE},
               {SETTING_TIE_MERGE, "(", ")", GRAPH_EVENT_TIE},
               {SETTING_IN_SCALE, "in x", "", GRAPH_EVENT_SCALE},
               {SETTING_OUT_SCALE, "out x", "", GRAPH_EVENT_SCALE}};
  size_t phase = strlen(HISTORY_EVENT_PHASE);
  if (strncmp(text, HISTORY_EVENT_PHASE " ", phase + 1) == 0) {
    snprintf(label, cap, "%.*s", (int)strcspn(text, ":"), text);   /* "phase 2" */
    return GRAPH_EVENT_PHASE;
  }
  size_t n = strcspn(text, "=");   /* the setting's name */
  for (size_t i = 0; text[n] == '=' && i < sizeof kinds / sizeof kinds[0]; i++) {
    const char *name = setting_name(kinds[i].key);
    if (strlen(name) != n || strncmp(text, name, n) != 0) continue;
    snprintf(label, cap, "%s%s%s", kinds[i].before, text + n + 1, kinds[i].after);
    return kinds[i].kind;
  }
  snprintf(label, cap, "%.*s", (int)n, text);
  return GRAPH_EVENT_OTHER;
}

/* Events of run 'r' as the charts draw them; those of one step are one
** rule with one label, the words joined ("tied (mean)"), a qualifier in
** parentheses after what it qualifies, and of the kind of the first that
** is not just "a setting". */
static int run_events(const TrainerRun *r, GraphEvent *out, char (*labels)[24], int cap) {
  int n = 0;
  const HistEvent *ev = r && r->hist ? history_events(r->hist, &n) : NULL;
  int k = 0;
  for (int i = 0; i < n && k < cap; i++) {
    if (!charted_event(ev[i].text)) continue;
    char label[24];
    GraphEventKind kind = event_kind(ev[i].text, label, sizeof label);
    if (k > 0 && out[k - 1].x == (double)ev[i].step) {
      char *was = labels[k - 1], joined[64];
      if (label[0] == '(' || was[0] != '(') snprintf(joined, sizeof joined, "%s %s", was, label);
      else snprintf(joined, sizeof joined, "%s %s", label, was);
      size_t len = strlen(joined) < sizeof labels[k - 1] ? strlen(joined) : sizeof labels[k - 1] - 1;
      memcpy(was, joined, len);
      was[len] = '\0';
      if (out[k - 1].kind == GRAPH_EVENT_OTHER) out[k - 1].kind = kind;
      continue;
    }
    snprintf(labels[k], sizeof labels[k], "%s", label);
    out[k] = (GraphEvent){.x = (double)ev[i].step, .kind = kind, .label = labels[k]};
    k++;
  }
  return k;
}

typedef struct ChartSpec {
  PanelId panel;
  const char *title;
  int log_y;
  const char *ref_label;   /* a reference line at y = 1, so named; NULL: none */
  double y_cap;            /* the axis never goes above this (cosines: 1); 0: none */
  const char *x_label;     /* an x axis of its own, so named, over x_lo..x_hi; NULL: the lab's steps */
  double x_lo, x_hi;
  int not_steps;           /* that axis counts something else: no run's events on it */
  const TrainerRun *run;   /* whose events are drawn; NULL: the selected run's */
  int break_gaps;          /* the scale may break over a band no line reaches */
} ChartSpec;

/* Render 'series' into the panel with the shared time axis and the panel's
** sticky y scale. */
static void draw_chart(Ui *ui, WINDOW *win, int h, int w, const ChartSpec *cs, GraphSeries *series, int n,
                       int left_out) {
  werase(win);
  h = getmaxy(win);   /* in a box, the time axis lies on its bottom border */
  GraphCell *cells = ui_cells(ui, w, h);
  if (!cells) return;
  /* Before any data: a range around 1, on a log scale too. After, the
  ** range of what the x axis shows, spans included. */
  double lo = cs->log_y ? 0.1 : 0, hi = cs->log_y ? 10 : 1;
  double x_lo = cs->x_label ? cs->x_lo : 0, x_hi = cs->x_label ? cs->x_hi : ui_x_max(ui);
  GraphScale *sc = &ui->scale[cs->panel];
  if (graph_y_range_x(series, n, cs->log_y, x_lo, x_hi, &lo, &hi)) graph_scale_update(sc, lo, hi, cs->log_y);
  GraphEvent ev[HISTORY_MAX_EVENTS];
  static char labels[HISTORY_MAX_EVENTS][24];
  Graph g = {.title = cs->title,
             .glyphs = ui->view == VIEW_PRESENT && ui->term.glyphs == GRAPH_BRAILLE ? GRAPH_BLOCK : ui->term.glyphs,
             .log_y = cs->log_y,
             .x_min = x_lo,
             .x_max = x_hi,
             .x_label = cs->x_label ? cs->x_label : "step",
             .has_ref = cs->ref_label != NULL,
             .ref_y = 1,
             .ref_label = cs->ref_label,
             .y_min = sc->set ? sc->lo : lo,
             .y_max = fmin(sc->set ? sc->hi : hi, cs->y_cap > 0 ? cs->y_cap : INFINITY),
             .series = series,
             .n_series = n,
             .events = ev,
             .n_events = cs->not_steps ? 0 : run_events(cs->run ? cs->run : ui_selected(ui), ev, labels, HISTORY_MAX_EVENTS),
             .event_names = {[GRAPH_EVENT_OTHER] = "setting",
                             [GRAPH_EVENT_TIE] = setting_name(SETTING_TIE),
                             [GRAPH_EVENT_SCALE] = "scale",
                             [GRAPH_EVENT_PHASE] = "phase"},
             .smooth = ui->smooth,
             .runs_left_out = left_out,
             .break_gaps = cs->break_gaps,
             .no_shade = !ui->term.shaded,
             .mono = !ui->term.color};
  graph_render(&g, cells, w, h);
  ui_blit(ui, win, cells, w, h);
}

/* One series per run ('name'), and optionally a dashed one ('dashed'),
** each in its run's colour; from the seventh run on, colours come again,
** so a run also has a style (other marks and dashes) and its own group.
** The selected run comes last, bold, so it lies on top. With more runs
** than 'cap' series hold, the selected run's are taken first and the
** last runs are left out ('*left_out'), which the legend says. */
static int run_series(Ui *ui, GraphSeries *s, int cap, const char *name, const char *dashed, int *left_out) {
  int runs = ui->snap->n_runs, per = dashed ? 2 : 1, sel = -1, chosen[UI_SLOTS], k = 0;
  for (int i = 0; i < runs; i++)
    if (ui->snap->runs[i].id == ui->sel_id) sel = i;
  int room = (cap < UI_SLOTS ? cap : UI_SLOTS) / per - (sel >= 0);
  for (int i = 0; i < runs && k < room; i++)
    if (i != sel) chosen[k++] = i;
  if (sel >= 0 && room >= 0) chosen[k++] = sel;
  *left_out = runs - k;
  int n = 0, slot = 0;
  for (int j = 0; j < k; j++) {
    int i = chosen[j];
    const TrainerRun *r = &ui->snap->runs[i];
    GraphSeries run = {.name = r->name, .color = i % TERM_SERIES_COLORS, .bold = i == sel && runs > 1,
                       .group = i + 1, .style = i / TERM_SERIES_COLORS, .line = i};
    s[n] = run;
    ui_series_span(ui, slot++, r->hist, name, &s[n]);
    n++;
    if (!dashed) continue;
    run.name = "val";
    run.dashed = 1;
    run.n = ui_series(ui, slot++, r->hist, dashed, &run.x, &run.y);
    if (run.n > 0) s[n++] = run;
  }
  return n;
}

void panel_loss(Ui *ui, WINDOW *win, int h, int w) {
  GraphSeries s[UI_SLOTS];
  int left_out, n = run_series(ui, s, UI_SLOTS, "loss", "val_loss", &left_out);
  ChartSpec cs = {.panel = P_LOSS, .title = "loss"};
  draw_chart(ui, win, h, w, &cs, s, n, left_out);
}

void panel_ratio(Ui *ui, WINDOW *win, int h, int w) {
  GraphSeries s[UI_SLOTS];
  int left_out, n = run_series(ui, s, UI_SLOTS, "grad_ratio", NULL, &left_out);
  /* Out/in = 1 is the threshold: above it the output gradient dominates. */
  ChartSpec cs = {.panel = P_RATIO, .title = "grad out/in", .log_y = 1, .ref_label = "out=in"};
  draw_chart(ui, win, h, w, &cs, s, n, left_out);
}

/* A script's series has an x axis of its own: the steps its points were
** plotted at, from the first to the last; and where they all share one
** step (a script that plots results after its training), their order,
** one point after another. Writes the slots' x values in that case. */
static void plots_axis(Ui *ui, GraphSeries *s, int n, ChartSpec *cs) {
  double lo = 0, hi = 0;
  int any = graph_x_range(s, n, &lo, &hi), most = 0;
  if (any && hi > lo) {
    cs->x_label = "step", cs->x_lo = lo, cs->x_hi = hi + (hi - lo) * 0.02;
    return;
  }
  for (int i = 0; i < n; i++) {
    double *x = ui->xy[i];   /* the slot's own x values (ui_series_span) */
    for (int k = 0; k < s[i].n; k++) x[k] = k + 1;
    if (s[i].n > most) most = s[i].n;
  }
  cs->x_label = "point", cs->x_lo = 0, cs->x_hi = most + 1, cs->not_steps = 1;
}

/* The scripts' series when there are any (in the present view, only the
** one it shows, or its group, if it names one), else the selected run's gradient norms
** (L2, before scaling). */
void panel_extra(Ui *ui, WINDOW *win, int h, int w) {
  GraphSeries s[UI_SLOTS];
  int n = 0;
  History *plots = ui->api ? luaapi_plots(ui->api) : NULL;
  if (plots && history_n_series(plots) > 0) {
    const char *only = ui->view == VIEW_PRESENT && ui->present_series[0] ? ui->present_series : NULL;
    for (int i = 0; i < history_n_series(plots) && n < UI_SLOTS; i++) {
      const char *name = history_series_name(plots, i);
      if (only && !present_series_member(name, only)) continue;
      s[n] = (GraphSeries){.name = name, .color = i % TERM_SERIES_COLORS, .line = i};
      ui_series_span(ui, n, plots, name, &s[n]);
      n++;
    }
    ChartSpec cs = {.panel = P_EXTRA, .title = only ? only : "plots"};
    plots_axis(ui, s, n, &cs);
    draw_chart(ui, win, h, w, &cs, s, n, 0);
    return;
  }
  static const struct {
    const char *series, *label;
  } norms[] = {{"grad_in", "in"}, {"grad_out", "out"}, {"grad_in_act", "in_act"}};
  const TrainerRun *r = ui_selected(ui);
  for (int i = 0; r && i < 3; i++) {
    const double *x, *y;
    int k = ui_series(ui, i, r->hist, norms[i].series, &x, &y);
    s[n++] = (GraphSeries){.name = norms[i].label, .x = x, .y = y, .n = k, .color = i, .dashed = i == 2, .line = i};
  }
  ChartSpec cs = {.panel = P_EXTRA, .title = "grad L2", .log_y = 1};
  draw_chart(ui, win, h, w, &cs, s, n, 0);
}

/* ------------------------------------------------------------ alignment over time */

/* The tied run's matrix (of the selected pair) against its untied partner's E_in and
** E_out, by the linear map and by Procrustes, each with the same score of a
** random matrix of the same shape (dashed, tinted): where a score lies on
** its baseline it says nothing. Short names, so that the lines' legend
** fits one row of a box of forty columns with the linear lines, of a
** wider one with all; where Procrustes' lines would wrap it they are left
** to the table beside (and to the zoom), never a name cut. The events'
** entries come after, and go first when the row is short (their rules
** label themselves). */
static const struct {
  const char *series, *baseline, *label;
} align_lines[] = {
    {"align.linear_in", "align.linear_in_base", "lin in"},
    {"align.linear_out", "align.linear_out_base", "lin out"},
    {"align.procrustes_in", "align.procrustes_in_base", "pro in"},
    {"align.procrustes_out", "align.procrustes_out_base", "pro out"},
};
#define N_ALIGN_LINES ((int)(sizeof align_lines / sizeof align_lines[0]))

/* Why there is no chart for run 'r' (variants, longest first, in 'why'),
** or 0 when there is one. */
static int align_chart_absent(const TrainerRun *r, int measured, const char *why[2]) {
  static const char *const untied[2] = {"untied now: tab selects a tied run", "untied now"};
  static const char *const off[2] = {"alignment is off for this run (align_every = 0)", "off (align_every = 0)"};
  static const char *const later[2] = {"not measured yet: every align_every steps, against an untied run on the same data",
                                       "not measured yet"};
  const char *const *v = r->m.tie_k == 0 ? untied : measured ? NULL : r->align_every <= 0 ? off : later;
  if (!v) return 0;
  why[0] = v[0], why[1] = v[1];
  return 2;
}

/* The alignment chart's series of run 'r' into 's', the first 'lines' of
** align_lines each with its baseline; returns how many, '*measured' 1
** when one has a point. */
static int align_series(Ui *ui, const TrainerRun *r, int lines, GraphSeries *s, int *measured) {
  int n = 0;
  for (int i = 0; r && i < lines; i++) {
    const double *x, *y;
    int k = ui_series(ui, 2 * i, r->hist, align_lines[i].series, &x, &y);
    *measured |= k > 0;
    s[n++] = (GraphSeries){.name = align_lines[i].label, .x = x, .y = y, .n = k, .color = i, .group = i + 1,
                           .line = i};
    k = ui_series(ui, 2 * i + 1, r->hist, align_lines[i].baseline, &x, &y);
    if (k > 0)
      s[n++] = (GraphSeries){.name = "rand", .x = x, .y = y, .n = k, .color = i, .dashed = 1, .group = i + 1};
  }
  return n;
}

void panel_align_chart(Ui *ui, WINDOW *win, int h, int w) {
  const TrainerRun *r = align_run(ui);
  GraphSeries s[2 * N_ALIGN_LINES];
  int measured = 0, n = align_series(ui, r, N_ALIGN_LINES, s, &measured);
  const char *why[2] = {"there is no run", "no run"};
  int n_why = r ? align_chart_absent(r, measured, why) : 2;
  if (n_why) {
    werase(win);
    fit_print(&ui->term, win, 0, 0, w, ROLE_TITLE, "alignment%s%s", r ? " of " : "", r ? r->name : "");
    fit_block(&ui->term, win, 1, 0, h - 1, w, ROLE_LABEL, why, n_why);
    return;
  }
  char title[96];
  snprintf(title, sizeof title, "align %s", r->name);
  Graph probe = {.title = title, .glyphs = ui->term.glyphs, .series = s, .n_series = n, .mono = !ui->term.color};
  if (!graph_legend_fits_row(&probe, w)) n = align_series(ui, r, 2, s, &measured);
  /* Cosines and CKA: at most 1. The scores to E_in, to E_out and their
  ** baselines lie in bands apart: the rows go to the lines. */
  ChartSpec cs = {.panel = P_ALIGNCHART, .title = title, .y_cap = 1, .run = r, .break_gaps = 1};
  draw_chart(ui, win, h, w, &cs, s, n, 0);
}

/* ------------------------------------------------------------ row norm scatter */

/* A correlation or a cosine in a few columns: ".53", "-.31", "1.00", "-". */
static void short_score(double v, char *buf, size_t cap) {
  char tmp[32];
  if (!isfinite(v)) {
    snprintf(buf, cap, "-");
    return;
  }
  snprintf(tmp, sizeof tmp, "%.2f", v);
  if (strncmp(tmp, "0.", 2) == 0) snprintf(buf, cap, "%s", tmp + 1);
  else if (strncmp(tmp, "-0.", 3) == 0) snprintf(buf, cap, "-%s", tmp + 2);
  else snprintf(buf, cap, "%s", tmp);
}

/* "E_in r .53 drift .98": the legend of one matrix, with the run's
** correlation of row norm with log frequency and its drift from step 0;
** without the drift when 'brief'. */
static void norms_legend(char *buf, size_t cap, const char *what, double r, double drift, int brief) {
  char a[32], b[32];
  short_score(r, a, sizeof a);
  short_score(drift, b, sizeof b);
  if (brief) snprintf(buf, cap, "%s r %s", what, a);
  else snprintf(buf, cap, "%s r %s drift %s", what, a, b);
}

/* Bins of ln count a trend is the mean of, and the points drawn along it
** per bin, so that it is a line of marks in every tier. */
#define TREND_BINS 24
#define TREND_STEPS 48

/* The mean row norm by bin of ln count, joined bin to bin: a line through
** the scatter that a room reads before the points. Returns its points,
** written to 'x' and 'y' (TREND_BINS * TREND_STEPS of room). */
static int norms_trend(const double *lf, const double *norm, int n, double xlo, double xhi, double *x, double *y) {
  double sum[TREND_BINS] = {0}, at[TREND_BINS] = {0};
  int cnt[TREND_BINS] = {0}, k = 0, m = 0;
  for (int i = 0; i < n; i++) {
    if (!isfinite(lf[i]) || !isfinite(norm[i])) continue;
    int b = (int)((lf[i] - xlo) / (xhi - xlo) * TREND_BINS);
    b = b < 0 ? 0 : b >= TREND_BINS ? TREND_BINS - 1 : b;
    sum[b] += norm[i], at[b] += lf[i], cnt[b]++;
  }
  double px = 0, py = 0;
  for (int b = 0; b < TREND_BINS; b++) {
    if (!cnt[b]) continue;
    double bx = at[b] / cnt[b], by = sum[b] / cnt[b];
    for (int s = m ? 1 : TREND_STEPS; s <= TREND_STEPS; s++, k++) {
      double f = (double)s / TREND_STEPS;
      x[k] = m ? px + (bx - px) * f : bx, y[k] = m ? py + (by - py) * f : by;
    }
    px = bx, py = by, m++;
  }
  return k;
}

/* One run's row norms against the log of each token's count in training
** into 'cells' (w x h) on the y range and x range given; its matrices'
** trends over them. A tied run has one matrix, drawn once. */
static void scatter_run(const Ui *ui, const TrainerRun *r, int color, GraphCell *cells, int w, int h,
                        const double *range, int brief) {
  const TrainerNorms *nm = &r->norms;
  static double tx[2][TREND_BINS * TREND_STEPS], ty[2][TREND_BINS * TREND_STEPS];
  int tied = r->m.tie_k >= r->m.dim, n = tied ? 1 : 2;
  char title[128], in[128], out[128];
  if (brief) snprintf(title, sizeof title, "%s", r->name);   /* the step is the figures' */
  else snprintf(title, sizeof title, "%s: norm vs ln count @%ld", r->name, nm->step);
  norms_legend(in, sizeof in, tied ? (brief ? "E_in=E_out" : "E_in=E_out (one matrix)") : "E_in", r->m.normfreq_in,
               r->m.drift_in, brief);
  norms_legend(out, sizeof out, "E_out", r->m.normfreq_out, r->m.drift_out, brief);
  const double *norm[2] = {nm->norm_in, nm->norm_out};
  const char *names[2] = {in, out};
  GraphSeries s[4];
  for (int i = 0; i < n; i++) {
    int c = (color + i) % TERM_SERIES_COLORS;
    s[i] = (GraphSeries){.name = names[i], .x = nm->log_freq, .y = norm[i], .n = nm->n, .color = c, .group = i + 1};
    s[n + i] = (GraphSeries){.x = tx[i], .y = ty[i], .color = c, .dashed = 1, .group = i + 1,
                             .n = norms_trend(nm->log_freq, norm[i], nm->n, range[2], range[3], tx[i], ty[i])};
  }
  const Term *t = &ui->term;
  Graph g = {.title = title,
             .glyphs = ui->view == VIEW_PRESENT && t->glyphs == GRAPH_BRAILLE ? GRAPH_BLOCK : t->glyphs,
             .x_min = range[2],
             .x_max = range[3],
             .y_min = range[0],
             .y_max = range[1],
             .series = s,
             .n_series = 2 * n,
             .x_label = brief ? "ln count" : "ln count in training",
             .no_shade = !t->shaded};
  graph_scatter(&g, cells, w, h);
}

/* The runs whose norms are measured: the selected pair, tied first (its
** partner only when measured). */
static int scatter_runs(const Ui *ui, const TrainerRun *runs[2]) {
  int n = run_pair(ui, runs);
  if (n == 0 && (runs[0] = ui_selected(ui)) != NULL) n = 1;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (runs[i]->norms.step >= 0 && runs[i]->norms.n > 0) runs[k++] = runs[i];
  return k;
}

/* Columns a scatter of one run needs to sit beside another's. */
#define SCATTER_HALF_MIN 36

/* Row norms against the log of each token's count in training, measured
** by the trainer every few seconds: the tied run of the selected pair
** beside its untied partner, on one y scale, when both are measured and
** the width allows; else the selected run alone. */
void panel_scatter(Ui *ui, WINDOW *win, int h, int w) {
  werase(win);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui), *runs[2];
  if (!r || h < 1) return;
  int n = scatter_runs(ui, runs);
  if (n == 0) {
    const TrainerNorms *nm = &r->norms;
    term_printf(t, win, 0, 0, w, ROLE_TITLE, "%s: norm vs ln count", r->name);
    term_print(t, win, 1, 0, w, ROLE_LABEL,
               nm->step < 0 ? "not measured yet: the next step measures it"
                            : "no token counts: this run has no training data");
    return;
  }
  if (n == 2 && w < 2 * SCATTER_HALF_MIN) n = 1, runs[0] = r->norms.step >= 0 && r->norms.n > 0 ? r : runs[0];
  h = getmaxy(win);   /* in a box, the x axis lies on its bottom border */
  /* One y range and one x range for both: their points compare. */
  double range[4] = {0, 1, 0, 1};
  int any = 0;
  for (int k = 0; k < n; k++) {
    const TrainerNorms *nm = &runs[k]->norms;
    GraphSeries s[2] = {{.x = nm->log_freq, .y = nm->norm_in, .n = nm->n}, {.x = nm->log_freq, .y = nm->norm_out, .n = nm->n}};
    int m = runs[k]->m.tie_k >= runs[k]->m.dim ? 1 : 2;
    double lo = 0, hi = 1, xlo = 0, xhi = 1;
    if (graph_y_range(s, m, 0, &lo, &hi)) {
      range[0] = any && range[0] < lo ? range[0] : lo, range[1] = any && range[1] > hi ? range[1] : hi;
      graph_x_range(s, m, &xlo, &xhi);
      range[2] = any && range[2] < xlo ? range[2] : xlo, range[3] = any && range[3] > xhi ? range[3] : xhi;
      any = 1;
    }
  }
  GraphScale *sc = &ui->scale[P_SCATTER];
  if (any) graph_scale_update(sc, range[0], range[1], 0);
  if (sc->set) range[0] = sc->lo, range[1] = sc->hi;
  /* Whole numbers at the ends of the x axis: ln 0 is a token seen once. */
  range[2] = floor(range[2]);
  range[3] = ceil(range[3]) > range[2] ? ceil(range[3]) : range[2] + 1;
  GraphCell *cells = ui_cells(ui, w, h);
  if (!cells) return;
  for (int k = 0, x = 0; k < n; k++) {
    int cw = n == 1 ? w : k == 0 ? w / 2 : w - w / 2;
    scatter_run(ui, runs[k], (int)(runs[k] - ui->snap->runs), cells, cw, h, range, n > 1);
    for (int y = 0; y < h; y++) term_cells(t, win, y, x, cells + (size_t)y * cw, cw);
    x += cw;
  }
}
