/*
** panel_align.c -- how alike the selected (tied) run's matrix is to its
** untied partner's E_in and E_out, as the paper measures it.
**
** Each score sits beside the same score against a random matrix of the same
** shape, because with a small V/d the linear-map and CCA-like scores inflate.
** The header says whether the partner shares the initial values (then the
** comparison with E_in starts biased). Four rows show the three headline
** metrics; a taller panel (zoomed, or a tall terminal) shows all eight.
*/
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "uistate.h"

static const struct {
  const char *name;
  size_t offset;
} metrics[] = {
    {"linear", offsetof(AlignScores, linear)},   {"procr", offsetof(AlignScores, procrustes)},
    {"cka", offsetof(AlignScores, cka)},         {"cca", offsetof(AlignScores, cca)},
    {"svcca", offsetof(AlignScores, svcca)},     {"subspace", offsetof(AlignScores, subspace)},
    {"knn", offsetof(AlignScores, knn)},         {"raw cos", offsetof(AlignScores, cos_raw)},
};
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
** by its random baseline, dimmer. */
static void compact(const Term *t, WINDOW *w, int wd, const AlignStats *a) {
  term_print(t, w, 1, 0, wd, ROLE_LABEL, "      linear rand procr rand   cka rand");
  const AlignResult *rows[2] = {&a->vs_in, &a->vs_out};
  const char *names[2] = {"E_in", "E_out"};
  for (int k = 0; k < 2; k++) {
    int x = term_printf(t, w, 2 + k, 0, wd, ROLE_KEY, "%-6s", names[k]);
    for (int i = 0; i < 3 && x < wd; i++) {
      char v[32], b[32];
      score_text(get(&rows[k]->score, i), v, sizeof v);
      score_text(get(&rows[k]->baseline, i), b, sizeof b);
      x += term_printf(t, w, 2 + k, x, wd - x, ROLE_TEXT, "  %s", v);
      x += term_printf(t, w, 2 + k, x, wd - x, ROLE_LABEL, " %s", b);
    }
  }
}

/* One row per metric: E_in, E_out, and their random baselines. */
static void full(const Term *t, WINDOW *w, int h, int wd, const AlignStats *a) {
  term_print(t, w, 1, 0, wd, ROLE_LABEL, "metric      E_in   E_out   rand_in rand_out");
  for (int i = 0; i < N_METRICS && i + 2 < h; i++)
    term_printf(t, w, i + 2, 0, wd, i == 0 ? ROLE_KEY : ROLE_TEXT, "%-9s %6.3f  %6.3f   %6.3f  %6.3f", metrics[i].name,
                get(&a->vs_in.score, i), get(&a->vs_out.score, i), get(&a->vs_in.baseline, i),
                get(&a->vs_out.baseline, i));
}

void panel_align(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui);
  if (!r || h < 1) return;
  const AlignStats *a = &r->m.align;
  if (r->m.tie_k == 0) {
    term_printf(t, w, 0, 0, wd, ROLE_TITLE, "alignment");
    term_printf(t, w, 1, 0, wd, ROLE_LABEL, "%s is untied now: tab selects another run", r->name);
    return;
  }
  if (a->step < 0) {
    term_printf(t, w, 0, 0, wd, ROLE_TITLE, "alignment of %s", r->name);
    if (r->align_every <= 0) term_print(t, w, 1, 0, wd, ROLE_LABEL, "off for this run (align_every = 0)");
    else term_printf(t, w, 1, 0, wd, ROLE_LABEL, "every %d steps, with an untied run on the same data", r->align_every);
    return;
  }
  term_printf(t, w, 0, 0, wd, ROLE_TITLE, "align %s vs %s @%ld%s", r->name, a->partner, a->step,
              a->partner_shares_init ? " (same init)" : "");
  if (h >= 10) full(t, w, h, wd, a);
  else compact(t, w, wd, a);
}
