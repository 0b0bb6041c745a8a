/*
** panel_align.c -- how alike the tied run of the selected pair has its matrix to its
** untied partner's E_in and E_out, as the paper measures it.
**
** Each score sits beside the same score against a random matrix of the same
** shape, because with a small V/d the linear-map and CCA-like scores inflate.
** The header says whether the partner shares the initial values (then the
** comparison with E_in starts biased). Four rows show the three headline
** metrics; a taller panel (zoomed, or a tall terminal) shows all eight,
** raw cosine and subspace overlap dimmed: they depend on the basis, and
** between independently trained models the basis is arbitrary, so they
** say nothing there (the paper's raw cosine is about 0).
*/
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ui/fit.h"
#include "ui/uistate.h"

static const struct {
  const char *name;
  size_t offset;
} metrics[] = {
    {"linear", offsetof(AlignScores, linear)},   {"procr", offsetof(AlignScores, procrustes)},
    {"cka", offsetof(AlignScores, cka)},         {"cca", offsetof(AlignScores, cca)},
    {"svcca", offsetof(AlignScores, svcca)},     {"subspace", offsetof(AlignScores, subspace)},
    {"knn", offsetof(AlignScores, knn)},         {"raw cos", offsetof(AlignScores, cos_raw)},
};

/* Scores that change with a rotation of either matrix: shown dimmed. */
static int basis_bound(int i) { return metrics[i].offset == offsetof(AlignScores, cos_raw) ||
                                       metrics[i].offset == offsetof(AlignScores, subspace); }
#define N_METRICS ((int)(sizeof metrics / sizeof metrics[0]))

static double get(const AlignScores *s, int i) { return *(const double *)((const char *)s + metrics[i].offset); }

/* A score in four columns: "0.53", "-.31", "1.00". */
static void score_text(double v, char *buf, size_t cap) {
  char tmp[32];
  snprintf(tmp, sizeof tmp, "%.2f", v);
  if (strncmp(tmp, "0.", 2) == 0) snprintf(buf, cap, "%4s", tmp + 1);
  else if (strncmp(tmp, "-0.", 3) == 0) snprintf(buf, cap, "-%s", tmp + 2);
  else snprintf(buf, cap, "%4s", tmp);
}

/* Rows E_in / E_out, columns the first three metrics, each score followed
** by its random baseline, dimmer; narrower panels keep fewer metrics. */
static void compact(const Term *t, WINDOW *w, int wd, const AlignStats *a) {
  static const char *const heads[] = {"      linear rand procr rand   cka rand", "      linear rand procr rand",
                                      "      linear rand"};
  int shown = 3;
  while (shown > 1 && term_width(heads[3 - shown]) > wd) shown--;
  term_print(t, w, 1, 0, wd, ROLE_LABEL, heads[3 - shown]);
  const AlignResult *rows[2] = {&a->vs_in, &a->vs_out};
  const char *names[2] = {"E_in", "E_out"};
  for (int k = 0; k < 2; k++) {
    int x = term_printf(t, w, 2 + k, 0, wd, ROLE_KEY, "%-6s", names[k]);
    for (int i = 0; i < shown && x < wd; i++) {
      char v[32], b[32];
      score_text(get(&rows[k]->score, i), v, sizeof v);
      score_text(get(&rows[k]->baseline, i), b, sizeof b);
      x += term_printf(t, w, 2 + k, x, wd - x, ROLE_TEXT, "  %s", v);
      x += term_printf(t, w, 2 + k, x, wd - x, ROLE_LABEL, " %s", b);
    }
  }
}

#define FULL_COLS 38   /* the full table's rows */

/* One row per metric: E_in, E_out, and their random baselines; the
** basis-bound ones dimmed, with a note when a row is left for it. */
static void full(const Term *t, WINDOW *w, int h, int wd, const AlignStats *a) {
  term_print(t, w, 1, 0, wd, ROLE_LABEL, "metric    E_in  E_out rand_in rand_out");
  int i = 0;
  for (; i < N_METRICS && i + 2 < h; i++)
    term_printf(t, w, i + 2, 0, wd, i == 0 ? ROLE_KEY : basis_bound(i) ? ROLE_DIM : ROLE_TEXT,
                "%-8s %5.2f  %5.2f   %5.2f    %5.2f", metrics[i].name, get(&a->vs_in.score, i),
                get(&a->vs_out.score, i), get(&a->vs_in.baseline, i), get(&a->vs_out.baseline, i));
  /* The note on its own row, else beside the column heads when it fits. */
  static const char note[] = "dim: basis-bound, void across models";
  int head = FULL_COLS + 2, len = term_width(note);
  if (i + 2 < h) term_print(t, w, i + 2, 0, wd, ROLE_DIM, note);
  else if (head + len <= wd) term_print(t, w, 1, head, wd - head, ROLE_DIM, note);
}

void panel_align(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = align_run(ui);
  if (!r || h < 1) return;
  const AlignStats *a = &r->m.align;
  const char *ell = term_glyph(t, GLYPH_ELLIPSIS);
  char buf[256], line[256];
  if (r->m.tie_k == 0) {
    fit_print(t, w, 0, 0, wd, ROLE_TITLE, "alignment of %s", r->name);
    const char *const untied[] = {"untied now: tab selects another run", "untied: tab selects another", "untied now"};
    term_print(t, w, 1, 0, wd, ROLE_LABEL, fit_choose(untied, 3, wd, ell, buf, sizeof buf));
    return;
  }
  if (a->step < 0) {
    fit_print(t, w, 0, 0, wd, ROLE_TITLE, "alignment of %s", r->name);
    if (r->align_every <= 0) {
      const char *const off[] = {"off for this run (align_every = 0)", "off (align_every = 0)", "off"};
      term_print(t, w, 1, 0, wd, ROLE_LABEL, fit_choose(off, 3, wd, ell, buf, sizeof buf));
    } else {
      char every[2][96];
      snprintf(every[0], sizeof every[0], "every %d steps, with an untied run on the same data", r->align_every);
      snprintf(every[1], sizeof every[1], "every %d steps, with an untied run", r->align_every);
      const char *const v[] = {every[0], every[1], "not measured yet"};
      term_print(t, w, 1, 0, wd, ROLE_LABEL, fit_choose(v, 3, wd, ell, buf, sizeof buf));
    }
    return;
  }
  /* The title: the run, its partner and the step; shorter forms when narrow. */
  char v[3][192];
  snprintf(v[0], sizeof v[0], "align %s vs %s @%ld%s", r->name, a->partner, a->step,
           a->partner_shares_init ? " (same init)" : "");
  snprintf(v[1], sizeof v[1], "align %s vs %s @%ld", r->name, a->partner, a->step);
  snprintf(v[2], sizeof v[2], "align %s @%ld", r->name, a->step);
  const char *const titles[] = {v[0], v[1], v[2]};
  snprintf(line, sizeof line, "%s", fit_choose(titles, 3, wd, ell, buf, sizeof buf));
  term_print(t, w, 0, 0, wd, ROLE_TITLE, line);
  if (h >= 10 && wd >= FULL_COLS) full(t, w, h, wd, a);
  else compact(t, w, wd, a);
}
