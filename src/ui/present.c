/*
** present.c -- the present view, for a room: one chart over the whole
** width, the figure that chart is about in big digits above it, and the
** script's caption in large type at the top. Which charts, and how large
** type is drawn: docs/architecture.md, 'The present view'.
*/
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ui/uistate.h"

#define BIG_ROWS 3          /* rows of one line of large type */
#define CAPTION_BIG_LINES 2 /* large type only when the caption fits in this many lines */
#define CAPTION_TEXT_LINES 3

/* ------------------------------------------------------------ the font */

/* Each glyph is 5 rows of dots ('#' on), all of the glyph's width. */
typedef struct BigGlyph {
  char c;
  const char *rows[5];
} BigGlyph;

static const BigGlyph font[] = {
    {'A', {".#.", "#.#", "###", "#.#", "#.#"}},   {'B', {"##.", "#.#", "##.", "#.#", "##."}},
    {'C', {".##", "#..", "#..", "#..", ".##"}},   {'D', {"##.", "#.#", "#.#", "#.#", "##."}},
    {'E', {"###", "#..", "##.", "#..", "###"}},   {'F', {"###", "#..", "##.", "#..", "#.."}},
    {'G', {".##", "#..", "#.#", "#.#", ".##"}},   {'H', {"#.#", "#.#", "###", "#.#", "#.#"}},
    {'I', {"###", ".#.", ".#.", ".#.", "###"}},   {'J', {"..#", "..#", "..#", "#.#", ".#."}},
    {'K', {"#.#", "#.#", "##.", "#.#", "#.#"}},   {'L', {"#..", "#..", "#..", "#..", "###"}},
    {'M', {"#...#", "##.##", "#.#.#", "#...#", "#...#"}},
    {'N', {"#..#", "##.#", "#.##", "#..#", "#..#"}},
    {'O', {".#.", "#.#", "#.#", "#.#", ".#."}},   {'P', {"##.", "#.#", "##.", "#..", "#.."}},
    {'Q', {".#.", "#.#", "#.#", "##.", ".##"}},   {'R', {"##.", "#.#", "##.", "#.#", "#.#"}},
    {'S', {".##", "#..", ".#.", "..#", "##."}},   {'T', {"###", ".#.", ".#.", ".#.", ".#."}},
    {'U', {"#.#", "#.#", "#.#", "#.#", "###"}},   {'V', {"#.#", "#.#", "#.#", "#.#", ".#."}},
    {'W', {"#...#", "#...#", "#.#.#", "##.##", "#...#"}},
    {'X', {"#.#", "#.#", ".#.", "#.#", "#.#"}},   {'Y', {"#.#", "#.#", ".#.", ".#.", ".#."}},
    {'Z', {"###", "..#", ".#.", "#..", "###"}},
    {'0', {"###", "#.#", "#.#", "#.#", "###"}},   {'1', {"##.", ".#.", ".#.", ".#.", "###"}},
    {'2', {"###", "..#", "###", "#..", "###"}},   {'3', {"###", "..#", ".##", "..#", "###"}},
    {'4', {"#.#", "#.#", "###", "..#", "..#"}},   {'5', {"###", "#..", "###", "..#", "###"}},
    {'6', {"###", "#..", "###", "#.#", "###"}},   {'7', {"###", "..#", "..#", "..#", "..#"}},
    {'8', {"###", "#.#", "###", "#.#", "###"}},   {'9', {"###", "#.#", "###", "..#", "###"}},
    {' ', {"..", "..", "..", "..", ".."}},        {'.', {".", ".", ".", ".", "#"}},
    {',', {"..", "..", "..", ".#", "#."}},        {':', {".", "#", ".", "#", "."}},
    {';', {"..", ".#", "..", ".#", "#."}},        {'!', {"#", "#", "#", ".", "#"}},
    {'?', {"###", "..#", ".#.", "...", ".#."}},   {'\'', {"#", "#", ".", ".", "."}},
    {'"', {"#.#", "#.#", "...", "...", "..."}},   {'-', {"...", "...", "###", "...", "..."}},
    {'+', {"...", ".#.", "###", ".#.", "..."}},   {'=', {"...", "###", "...", "###", "..."}},
    {'/', {"..#", "..#", ".#.", "#..", "#.."}},   {'(', {".#", "#.", "#.", "#.", ".#"}},
    {')', {"#.", ".#", ".#", ".#", "#."}},        {'%', {"#.#", "..#", ".#.", "#..", "#.#"}},
    {'<', {"..#", ".#.", "#..", ".#.", "..#"}},   {'>', {"#..", ".#.", "..#", ".#.", "#.."}},
    {'_', {"...", "...", "...", "...", "###"}},   {'*', {"...", "#.#", ".#.", "#.#", "..."}},
};
#define N_FONT ((int)(sizeof font / sizeof font[0]))

/* The glyph of one byte (letters in capitals), or NULL. */
static const BigGlyph *glyph(unsigned char c) {
  int u = toupper(c);
  for (int i = 0; i < N_FONT; i++)
    if (font[i].c == u) return &font[i];
  return NULL;
}

static int glyph_width(const BigGlyph *g) { return (int)strlen(g->rows[0]); }

/* Columns 'n' bytes of 'text' take in large type, a column between
** letters; -1 when a byte has no glyph. */
static int big_width(const char *text, size_t n) {
  int w = 0;
  for (size_t i = 0; i < n; i++) {
    const BigGlyph *g = glyph((unsigned char)text[i]);
    if (!g) return -1;
    w += glyph_width(g) + (i + 1 < n);
  }
  return w;
}

/* The cell for dots 'top' and 'bottom' (one column, two dot rows). */
static const char *dots_cell(int top, int bottom) {
  static const char *const cells[4] = {" ", "\u2584", "\u2580", "\u2588"};
  return cells[top << 1 | bottom];
}

/* Seven-segment glyphs for figures in ASCII, as wide as the dot font's. */
static const struct {
  char c;
  const char *rows[BIG_ROWS];
} segments[] = {
    {'0', {" _ ", "| |", "|_|"}}, {'1', {"   ", "  |", "  |"}}, {'2', {" _ ", " _|", "|_ "}},
    {'3', {" _ ", " _|", " _|"}}, {'4', {"   ", "|_|", "  |"}}, {'5', {" _ ", "|_ ", " _|"}},
    {'6', {" _ ", "|_ ", "|_|"}}, {'7', {" _ ", "  |", "  |"}}, {'8', {" _ ", "|_|", "|_|"}},
    {'9', {" _ ", "|_|", " _|"}}, {'.', {" ", " ", "."}},     {'-', {"   ", " _ ", "   "}},
    {'e', {" _ ", "|_ ", "|_ "}}, {'+', {"   ", " + ", "   "}}, {'x', {"   ", "\\/", "/\\"}},
};

static int segments_draw(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *text, size_t n) {
  int used = 0;
  for (size_t i = 0; i < n; i++) {
    size_t k = 0;
    while (k < sizeof segments / sizeof segments[0] && segments[k].c != text[i]) k++;
    if (k == sizeof segments / sizeof segments[0]) continue;
    int gw = (int)strlen(segments[k].rows[0]);
    if (used + gw > maxw) break;
    for (int row = 0; row < BIG_ROWS; row++) term_print(t, w, y + row, x + used, gw, role, segments[k].rows[row]);
    used += gw + 1;
  }
  return used > 0 ? used - 1 : 0;
}

/* Draw 'n' bytes of 'text' in large type with its top row at 'y', from
** column 'x' within 'maxw' columns; returns the columns used. */
static int big_draw(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *text, size_t n) {
  if (!t->utf8) return segments_draw(t, w, y, x, maxw, role, text, n);
  int used = 0;
  for (size_t i = 0; i < n; i++) {
    const BigGlyph *g = glyph((unsigned char)text[i]);
    if (!g) continue;
    int gw = glyph_width(g);
    if (used + gw > maxw) break;
    for (int row = 0; row < BIG_ROWS; row++)
      for (int c = 0; c < gw; c++) {
        int top = g->rows[2 * row][c] == '#', bottom = 2 * row + 1 < 5 && g->rows[2 * row + 1][c] == '#';
        if (top || bottom) term_print(t, w, y + row, x + used + c, 1, role, dots_cell(top, bottom));
      }
    used += gw + 1;
  }
  return used > 0 ? used - 1 : 0;
}

/* ------------------------------------------------------------ captions */

/* Break 'text' into lines of at most 'width' columns at spaces, measured
** by 'measure'; each line is (start, length) in 'at'. Returns the lines
** needed (may exceed 'cap', then only 'cap' are filled), or -1 when a
** word alone does not fit or a character cannot be measured. */
static int wrap(const char *text, int width, int (*measure)(const char *, size_t), size_t at[][2], int cap) {
  int lines = 0;
  const char *p = text;
  while (*p == ' ') p++;
  while (*p) {
    size_t len = 0, best = 0;
    for (;;) {
      while (p[len] && p[len] != ' ') len++;
      int mw = measure(p, len);
      if (mw < 0) return -1;
      if (mw > width) break;
      best = len;
      if (!p[len]) break;
      while (p[len] == ' ') len++;
    }
    if (best == 0) return -1;
    if (lines < cap) at[lines][0] = (size_t)(p - text), at[lines][1] = best;
    lines++;
    p += best;
    while (*p == ' ') p++;
  }
  return lines;
}

static int text_measure(const char *s, size_t n) {
  char buf[512];
  if (n >= sizeof buf) return (int)n;
  memcpy(buf, s, n);
  buf[n] = '\0';
  return term_width(buf);
}

/* Large type when the terminal has half blocks and the caption fits in
** CAPTION_BIG_LINES lines of 'cols' columns and 'rows' rows; the line
** breaks go in 'at'. */
static int caption_big(const Term *t, const char *caption, int rows, int cols, size_t at[][2]) {
  if (!t->utf8) return 0;
  int n = wrap(caption, cols - 2, big_width, at, CAPTION_BIG_LINES);
  return n >= 1 && n <= CAPTION_BIG_LINES && n * BIG_ROWS <= rows ? n : 0;
}

int present_caption_rows(const Ui *ui, int rows, int cols) {
  const char *caption = ui->api ? luaapi_caption(ui->api) : "";
  if (!caption || !*caption) return 0;
  size_t at[CAPTION_TEXT_LINES][2];
  /* Room left for the chart decides how tall the caption may be. */
  int room = rows - 12;
  int big = caption_big(&ui->term, caption, room, cols, at);
  if (big) return big * BIG_ROWS;
  int n = wrap(caption, cols - 2, text_measure, at, CAPTION_TEXT_LINES);
  return n < 1 ? 1 : n < CAPTION_TEXT_LINES ? n : CAPTION_TEXT_LINES;
}

/* The caption as bold text, centred, in at most 'h' lines; the last line
** ends in an ellipsis when more would be needed. */
static void caption_text(const Term *t, WINDOW *w, int h, int wd, const char *caption) {
  size_t at[CAPTION_TEXT_LINES][2];
  int cap = h < CAPTION_TEXT_LINES ? h : CAPTION_TEXT_LINES;
  int n = wrap(caption, wd - 2, text_measure, at, cap);
  if (n < 0) {   /* one word wider than the screen: as much as fits */
    term_print(t, w, 0, 1, wd - 2, ROLE_TITLE, caption);
    return;
  }
  const char *ell = term_glyph(t, GLYPH_ELLIPSIS);
  for (int i = 0; i < n && i < cap; i++) {
    char line[512];
    int more = i == cap - 1 && n > cap;
    snprintf(line, sizeof line, "%.*s%s", (int)at[i][1], caption + at[i][0], more ? ell : "");
    int lw = term_width(line);
    if (lw > wd - 2) {   /* the ellipsis took the last column: drop the last word */
      const char *sp = strrchr(line, ' ');
      if (sp) snprintf(line + (sp - line), sizeof line - (size_t)(sp - line), "%s", ell);
      lw = term_width(line);
    }
    term_print(t, w, i, (wd - lw) / 2, wd, ROLE_TITLE, line);
  }
}

void panel_caption(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const char *caption = ui->api ? luaapi_caption(ui->api) : "";
  if (!caption || !*caption || h < 1) return;
  const Term *t = &ui->term;
  size_t at[CAPTION_BIG_LINES][2];
  int n = caption_big(t, caption, h, wd, at);
  if (!n) {
    caption_text(t, w, h, wd, caption);
    return;
  }
  for (int i = 0; i < n; i++) {
    int lw = big_width(caption + at[i][0], at[i][1]);
    big_draw(t, w, i * BIG_ROWS, (wd - lw) / 2, wd, ROLE_TITLE, caption + at[i][0], at[i][1]);
  }
}

/* ------------------------------------------------------------ figures */

/* The mean of a series over the newest 'span' steps of its history, the
** steps it covers and, when 'points' is not NULL, how many points it
** averages; NAN when there is none. */
static double recent_mean(const History *h, const char *series, long span, long *first, long *last, long *points) {
  int n = 0;
  const HistBucket *b = h ? history_series(h, series, &n) : NULL;
  if (!b || n <= 0) return NAN;
  long end = b[n - 1].step_last, sum_n = 0;
  double sum = 0;
  *last = end;
  *first = end;
  for (int i = n - 1; i >= 0 && b[i].step_last > end - span; i--) {
    if (!isfinite(b[i].mean)) continue;
    sum += b[i].mean * (double)b[i].count;
    sum_n += b[i].count;
    *first = b[i].step_first;
  }
  if (points) *points = sum_n;
  return sum_n > 0 ? sum / (double)sum_n : NAN;
}

/* Steps a figure averages: a window short enough to follow the run, long
** enough that one step's noise does not move the digits. */
#define FIGURE_SPAN 100

/* "steps 1901-2000" (or "step 7"), the window of a mean. */
static void window_label(char *buf, size_t cap, long first, long last) {
  if (first == last) snprintf(buf, cap, "step %ld", last);
  else snprintf(buf, cap, "steps %ld-%ld", first, last);
}

static char labels[FIGURES_MAX][2][96];   /* the figures' labels for the frame being drawn */

int figures_loss(Ui *ui, const TrainerRun *r, Figure *f) {
  (void)ui;
  long a = 0, b = 0;
  double train = recent_mean(r->hist, "loss", FIGURE_SPAN, &a, &b, NULL);
  snprintf(labels[0][0], sizeof labels[0][0], "train loss");
  if (isfinite(train)) window_label(labels[0][1], sizeof labels[0][1], a, b);
  else snprintf(labels[0][1], sizeof labels[0][1], "step %ld", r->m.step);   /* no history yet */
  f[0] = (Figure){{labels[0][0], labels[0][1]}, isfinite(train) ? train : r->m.loss, 2};
  if (!isfinite(r->m.val_loss)) return 1;
  snprintf(labels[1][0], sizeof labels[1][0], "val loss");
  /* Measured every eval_every steps: an older one says so beside its step. */
  if (r->m.val_step == r->m.step) snprintf(labels[1][1], sizeof labels[1][1], "step %ld", r->m.val_step);
  else snprintf(labels[1][1], sizeof labels[1][1], "stale @%ld", r->m.val_step);
  f[1] = (Figure){{labels[1][0], labels[1][1]}, r->m.val_loss, 2};
  return 2;
}

/* The gradient ratio of the tied run and of its untied partner, each the
** mean of its newest steps: one step's ratio is too noisy to read. */
int figures_ratio(Ui *ui, const TrainerRun *r, Figure *f) {
  const TrainerRun *runs[2];
  int n = run_pair(ui, runs);
  if (n == 0) runs[0] = r, n = 1;
  for (int k = 0; k < n; k++) {
    long a = 0, b = 0;
    double v = recent_mean(runs[k]->hist, "grad_ratio", FIGURE_SPAN, &a, &b, NULL);
    snprintf(labels[k][0], sizeof labels[k][0], "%s out/in", runs[k]->name);
    window_label(labels[k][1], sizeof labels[k][1], a, b);
    f[k] = (Figure){{labels[k][0], labels[k][1]}, v, -2};
  }
  return n;
}

/* The lens at position 0, right after the embeddings, for the tied run
** and its untied partner: where the tied matrix's bias towards the output
** side shows. */
int figures_lens(Ui *ui, const TrainerRun *r, Figure *f) {
  (void)r;
  LensPair p;
  lens_pair(ui, &p);
  for (int k = 0; k < p.n; k++) {
    snprintf(labels[k][0], sizeof labels[k][0], "%s KL", p.run[k]->name);
    snprintf(labels[k][1], sizeof labels[k][1], "layer 0 @%ld", p.ls[k]->step);
    f[k] = (Figure){{labels[k][0], labels[k][1]}, p.ls[k]->kl[0], 2};
  }
  return p.n;
}

/* The linear alignment of the tied run of the selected pair, named in
** the first figure: it holds the measurement whichever of the two is
** selected. */
int figures_align(Ui *ui, const TrainerRun *r, Figure *f) {
  const TrainerRun *t = align_run(ui);
  if (t) r = t;
  const AlignStats *a = &r->m.align;
  int have = a->step >= 0 && r->m.tie_k > 0;
  snprintf(labels[0][0], sizeof labels[0][0], "%s linear", r->name);
  f[0] = (Figure){{labels[0][0], "to E_in"}, have ? a->vs_in.score.linear : NAN, 2};
  f[1] = (Figure){{"linear", "to E_out"}, have ? a->vs_out.score.linear : NAN, 2};
  return 2;
}

/* The correlation of row norm with log count: the tied run's one matrix
** beside its untied partner's output matrix, the one a tied matrix is
** compared with, when both are measured; else the selected run's
** matrices. Each with the step it was measured at. */
int figures_scatter(Ui *ui, const TrainerRun *r, Figure *f) {
  const TrainerRun *runs[2];
  int n = run_pair(ui, runs);
  if (n == 2 && runs[0]->norms.step >= 0 && runs[1]->norms.step >= 0) {
    for (int k = 0; k < 2; k++) {
      int tied = runs[k]->m.tie_k >= runs[k]->m.dim;
      snprintf(labels[k][0], sizeof labels[k][0], "%s %s r", runs[k]->name, tied ? "E" : "E_out");
      snprintf(labels[k][1], sizeof labels[k][1], "norm~freq @%ld", runs[k]->norms.step);
      f[k] = (Figure){{labels[k][0], labels[k][1]}, tied ? runs[k]->m.normfreq_in : runs[k]->m.normfreq_out, 2};
    }
    return 2;
  }
  int tied = r->m.tie_k >= r->m.dim;
  f[0] = (Figure){{"norm~freq r", tied ? "E_in=E_out" : "E_in"}, r->m.normfreq_in, 2};
  if (tied) return 1;
  f[1] = (Figure){{"norm~freq r", "E_out"}, r->m.normfreq_out, 2};
  return 2;
}

const char *present_series_member(const char *name, const char *shown) {
  size_t n = strlen(shown);
  if (strncmp(name, shown, n) != 0) return NULL;
  if (name[n] == '\0') return name + n;
  return name[n] == ':' && name[n + 1] == ' ' && name[n + 2] ? name + n + 2 : NULL;
}

/* Decimals the newest values of a series carry: none when they are whole
** numbers, else down to the digit their spread moves (at most three),
** the spread of their buckets' extremes and newest values;
** -1 (by magnitude) when they do not move. */
#define NOISE_SPAN 8   /* newest buckets the spread is read over */
static int series_decimals(const HistBucket *b, int n) {
  double lo = INFINITY, hi = -INFINITY;
  int whole = 1;
  for (int i = n - 1; i >= 0 && i >= n - NOISE_SPAN; i--) {
    const double v[3] = {b[i].min, b[i].max, b[i].last};
    for (int k = 0; k < 3; k++) {
      if (!isfinite(v[k])) continue;
      if (v[k] < lo) lo = v[k];
      if (v[k] > hi) hi = v[k];
      whole &= v[k] == floor(v[k]) && fabs(v[k]) < 1e15;
    }
  }
  if (lo > hi) return -1;
  if (whole) return 0;
  if (hi == lo) return -1;
  int d = -(int)floor(log10(hi - lo));
  return d < 0 ? 0 : d > 3 ? 3 : d;
}

/* The script's series shown, or each series of the group shown (the
** first FIGURES_MAX), labelled with its arm: a series measured step by
** step as the mean of its newest steps with their window, as the run's
** figures, at the decimals its noise allows (one point of a noisy series
** is not a reading); a sparse one (an alignment every few dozen steps) as
** its newest value with its step, which a caption can quote. */
#define SPARSE_POINTS 10   /* fewer in the window: a sparse series */
int figures_series(Ui *ui, const TrainerRun *r, Figure *f) {
  (void)r;
  History *plots = ui->api ? luaapi_plots(ui->api) : NULL;
  int k = 0;
  for (int i = 0; plots && i < history_n_series(plots) && k < FIGURES_MAX; i++) {
    const char *name = history_series_name(plots, i), *arm = present_series_member(name, ui->present_series);
    int n = 0;
    const HistBucket *b = arm ? history_series(plots, name, &n) : NULL;
    if (!b || n <= 0) continue;
    long first = 0, last = 0, points = 0;
    double value = recent_mean(plots, name, FIGURE_SPAN, &first, &last, &points);
    if (points < SPARSE_POINTS) value = b[n - 1].last, first = last = b[n - 1].step_last;
    window_label(labels[k][1], sizeof labels[k][1], first, last);
    f[k] = (Figure){{*arm ? arm : name, labels[k][1]}, value, series_decimals(b, n)};
    k++;
  }
  if (k == 0) f[k++] = (Figure){{ui->present_series, "no points yet"}, NAN, -1};
  return k;
}

const char *present_chart_name(const Ui *ui) {
  if (ui->present_chart == P_EXTRA && ui->present_series[0]) return ui->present_series;
  const char *name = layout_name(ui->present_chart, NAME_PRESENT);
  return name ? name : layout_name(P_LOSS, NAME_PRESENT);
}

/* A figure as big-digit text: "3.872", "0.54", "-" when not measured. */
static void figure_text(const Figure *f, char *buf, size_t cap) {
  double v = f->value, a = fabs(v);
  if (!isfinite(v)) snprintf(buf, cap, "-");
  else if (f->decimals == -2) snprintf(buf, cap, a >= 10 ? "%.0fx" : a >= 1 ? "%.1fx" : "%.2gx", v);
  else if (f->decimals >= 0) snprintf(buf, cap, "%.*f", f->decimals, v);
  else if (a != 0 && (a < 1e-3 || a >= 1e6)) snprintf(buf, cap, "%.2e", v);
  else snprintf(buf, cap, "%.*f", a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3, v);
}

/* Columns one figure takes: its label, a space, the number. */
static int figure_width(const Figure *f) {
  char num[32];
  figure_text(f, num, sizeof num);
  int lw = term_width(f->label[0]), l2 = term_width(f->label[1]);
  return (lw > l2 ? lw : l2) + 1 + big_width(num, strlen(num));
}

static int figure_draw(const Term *t, WINDOW *w, int x, int maxw, int role, const Figure *f) {
  char num[32];
  figure_text(f, num, sizeof num);
  int lw = term_width(f->label[0]), l2 = term_width(f->label[1]);
  if (l2 > lw) lw = l2;
  term_print(t, w, 0, x + lw - term_width(f->label[0]), maxw, ROLE_LABEL, f->label[0]);
  term_print(t, w, 1, x + lw - term_width(f->label[1]), maxw, ROLE_LABEL, f->label[1]);
  return lw + 1 + big_draw(t, w, 0, x + lw + 1, maxw - lw - 1, role, num, strlen(num));
}

/* Big digits for the chart shown: its figures for the selected run, and
** the run and its step in small type at the right when there is room. */
void panel_big(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui);
  if (!r || h < BIG_ROWS) return;
  const UiPanel *p = ui_panel(ui->present_chart);
  FiguresFn fn = p && p->figures ? p->figures : ui_panel(P_LOSS)->figures;
  Figure f[FIGURES_MAX];
  int n = fn(ui, r, f), gap = 4;
  char tie[16], who[96], when[48];
  snprintf(who, sizeof who, "%s (%s)", r->name, config_tie_name(r->m.tie_k, r->m.dim, tie));
  snprintf(when, sizeof when, "step %ld", r->m.step);
  int need = 0;
  for (int i = 0; i < n; i++) need += (i ? gap : 0) + figure_width(&f[i]);
  while (n > 1 && need > wd - 1) need -= gap + figure_width(&f[--n]);   /* the first figure matters most */
  int side = term_width(who) > term_width(when) ? term_width(who) : term_width(when);
  int x = 1;
  for (int i = 0; i < n; i++) x += figure_draw(t, w, x, wd - x, i ? ROLE_KEY : ROLE_TITLE, &f[i]) + gap;
  if (x + side <= wd) {
    term_print(t, w, 0, wd - side - 1, side, ROLE_KEY, who);
    term_print(t, w, 1, wd - side - 1, side, ROLE_LABEL, when);
  }
}
