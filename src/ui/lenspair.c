/*
** lenspair.c -- which runs the lens panels compare, and which of their
** layer positions: the selected run and its partner, the tied one first;
** and which run's alignment the alignment panels show.
**
** A tied run's partner is the untied run it is aligned with; an untied
** run's is the tied run aligned with it; else the first run tied the other
** way. "Tied" is any tying (tie_k > 0): a half-tied run still shares rows.
** A run whose lens is not measured (lens_every = 0, no fit yet) leaves the
** comparison, and the panel says so, rather than hiding its partner's
** numbers. Runs of different depth are compared layer by layer as far as
** both go, and "out" with "out": each run's own output.
*/
#include <string.h>

#include "ui/uistate.h"

const LensModeName lens_modes[LENS_MODES] = {
    [LENS_ONLINE] = {"tuned", "online", "tuned lens, online"},
    [LENS_FITTED] = {"fitted", "fitted", "tuned lens, fitted"},
    [LENS_LOGIT] = {"logit", "logit", "logit lens"},
};

static int tied(const TrainerRun *r) { return r->m.tie_k > 0; }

static const TrainerRun *named(const TrainerSnap *s, const char *name, const TrainerRun *not) {
  for (int i = 0; i < s->n_runs; i++)
    if (&s->runs[i] != not && strcmp(s->runs[i].name, name) == 0) return &s->runs[i];
  return NULL;
}

static const TrainerRun *partner_of(const Ui *ui, const TrainerRun *sel) {
  const TrainerSnap *s = ui->snap;
  const TrainerRun *p = tied(sel) && sel->m.align.partner[0] ? named(s, sel->m.align.partner, sel) : NULL;
  for (int i = 0; !p && !tied(sel) && i < s->n_runs; i++)   /* the tied run aligned with this one */
    if (tied(&s->runs[i]) && strcmp(s->runs[i].m.align.partner, sel->name) == 0) p = &s->runs[i];
  for (int i = 0; !p && i < s->n_runs; i++)
    if (tied(&s->runs[i]) != tied(sel)) p = &s->runs[i];
  return p;
}

const LensStats *lens_of(const Ui *ui, const TrainerRun *r) {
  static const size_t at[LENS_MODES] = {[LENS_ONLINE] = offsetof(RunMetrics, lens),
                                        [LENS_FITTED] = offsetof(RunMetrics, fitted_lens),
                                        [LENS_LOGIT] = offsetof(RunMetrics, logit_lens)};
  return (const LensStats *)((const char *)&r->m + at[ui->lens_mode]);
}

static int measured(const LensStats *ls) { return ls->step >= 0 && ls->n > 0; }

int run_pair(const Ui *ui, const TrainerRun *runs[2]) {
  const TrainerRun *sel = ui_selected(ui), *other = sel ? partner_of(ui, sel) : NULL;
  runs[0] = sel, runs[1] = other;
  if (other && !tied(sel)) runs[0] = other, runs[1] = sel;   /* tied on the left */
  return !sel ? 0 : other ? 2 : 1;
}

/* The alignment is measured on the tied run of a pair, against its
** partner: whichever of the two is selected, the panels show the tied
** one's. A lone run is itself. */
const TrainerRun *align_run(const Ui *ui) {
  const TrainerRun *runs[2];
  return run_pair(ui, runs) ? runs[0] : NULL;
}

int lens_pair(const Ui *ui, LensPair *p) {
  memset(p, 0, sizeof *p);
  const TrainerRun *runs[2];
  int n = run_pair(ui, runs);
  for (int k = 0, left = 0; k < n; k++) {
    const LensStats *ls = lens_of(ui, runs[k]);
    if (!measured(ls)) {
      p->unmeasured[left++] = runs[k];
      continue;
    }
    p->run[p->n] = runs[k];
    p->ls[p->n] = ls;
    p->place[p->n] = (int)(runs[k] - ui->snap->runs);
    p->color[p->n] = p->place[p->n] % TERM_SERIES_COLORS;
    p->n++;
  }
  /* The layers both have, and "out". */
  p->rows = 0;
  for (int k = 0; k < p->n; k++)
    if (k == 0 || p->ls[k]->n < p->rows) p->rows = p->ls[k]->n;
  return p->n;
}

int lens_pos(const LensPair *p, int k, int row) { return row == p->rows - 1 ? p->ls[k]->n - 1 : row; }
