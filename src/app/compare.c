/*
** compare.c -- the paper's comparison as a built-in: three runs on identical
** batches (tied; untied; tied with in_scale 5), each with its own running
** means of the L2 gradient ratio over the first 100 steps and over the
** first 10% of training, then alignment of each tied matrix with the untied
** partner's E_in and E_out (with random baselines), per-layer tuned-lens KL
** and validation perplexity, printed as one table. On a terminal, stderr
** shows a progress line while the runs train.
*/
#include <math.h>
#include <string.h>

#include "app/compare.h"
#include "app/progress.h"
#include "base/sig.h"

#define N_ARMS 3

typedef struct Arm {
  const char *name, *tie;
  double in_scale;
  Run *run;
  /* sums of grad_out/grad_in (rows) and grad_out/grad_in_act (the paper's
  ** input side) over the first 100 steps and the first 10% */
  double ratio_100, ratio_10pct, act_100, act_10pct;
  long n_100, n_10pct;
} Arm;

static Run *add_arm(Lab *lab, const CliOptions *o, Arm *a, Err *err) {
  RunOptions ro = o->run;
  snprintf(ro.name, sizeof ro.name, "%s", a->name);
  if (run_options_set_text(&ro, setting_name(SETTING_TIE), a->tie, err) < 0) return NULL;
  ro.in_scale = a->in_scale;
  /* The untied partner gets its own init: sharing it would make the tied
  ** matrix equal its E_in at step 0 and bias the comparison. */
  if (strcmp(a->tie, "untied") == 0) ro.init_seed = o->run.init_seed + 1;
  return lab_add_run(lab, &ro, err);
}

static void accumulate(Arm *a, long step, long total) {
  const RunMetrics *m = run_metrics(a->run);
  if (!isfinite(m->grad_ratio) || !isfinite(m->grad_ratio_act)) return;
  if (step <= 100) {
    a->ratio_100 += m->grad_ratio;
    a->act_100 += m->grad_ratio_act;
    a->n_100++;
  }
  if (step <= (total + 9) / 10) {
    a->ratio_10pct += m->grad_ratio;
    a->act_10pct += m->grad_ratio_act;
    a->n_10pct++;
  }
}

static double mean(double sum, long n) { return n ? sum / (double)n : NAN; }

static void print_align(FILE *out, const char *label, const AlignResult *r) {
  fprintf(out, "  %-28s linear %.3f (random %.3f)   procrustes %.3f (random %.3f)\n", label,
          r->score.linear, r->baseline.linear, r->score.procrustes, r->baseline.procrustes);
}

static void print_lens(FILE *out, const Arm *arms) {
  fprintf(out, "\ntuned-lens KL(final || lens), bits/token, by layer position:\n  %-14s", "run");
  const RunMetrics *m0 = run_metrics(arms[0].run);
  for (int i = 0; i < m0->lens.n; i++) fprintf(out, "%8d", i);
  fprintf(out, "\n");
  for (int k = 0; k < N_ARMS; k++) {
    const LensStats *ls = &run_metrics(arms[k].run)->lens;
    fprintf(out, "  %-14s", arms[k].name);
    for (int i = 0; i < ls->n; i++) fprintf(out, "%8.3f", ls->kl[i]);
    fprintf(out, "\n");
  }
}

static void print_table(FILE *out, Arm *arms, long steps) {
  fprintf(out, "\n%-10s %11s %11s %11s %11s %9s %9s\n", "run", "act<=100", "act<=10%", "rows<=100",
          "rows<=10%", "val loss", "val ppl");
  for (int k = 0; k < N_ARMS; k++) {
    const RunMetrics *m = run_metrics(arms[k].run);
    const Arm *a = &arms[k];
    char loss[48], ppl[48];   /* measured at the last step; one that could not be says its own */
    fprintf(out, "%-10s %11.3f %11.3f %11.3f %11.3f %9s %9s\n", a->name, mean(a->act_100, a->n_100),
            mean(a->act_10pct, a->n_10pct), mean(a->ratio_100, a->n_100), mean(a->ratio_10pct, a->n_10pct),
            run_val_text(m, m->val_loss, 4, loss, sizeof loss), run_val_text(m, m->val_ppl, 2, ppl, sizeof ppl));
  }
  fprintf(out,
          "(mean L2 ratio of the output-side gradient to the input side over the first 100 steps and the\n"
          " first 10%% of %ld: 'act' = the paper's input side, the gradient at the lookup output (B*T x d);\n"
          " 'rows' = the input-side gradient summed into vocabulary rows (V x d))\n", steps);
  fprintf(out, "\nalignment of each tied matrix with the untied run's matrices:\n");
  for (int k = 0; k < N_ARMS; k++) {
    if (k == 1) continue;
    AlignStats as;
    Err err;
    if (lab_align(arms[k].run, arms[1].run, &as, &err) < 0) {
      fprintf(out, "  %s: %s\n", arms[k].name, err.msg);
      continue;
    }
    char label[96];
    snprintf(label, sizeof label, "%s vs untied E_in", arms[k].name);
    print_align(out, label, &as.vs_in);
    snprintf(label, sizeof label, "%s vs untied E_out", arms[k].name);
    print_align(out, label, &as.vs_out);
    if (as.partner_shares_init) fprintf(out, "  (the partner shares the init: E_in comparison biased)\n");
  }
  print_lens(out, arms);
}

int compare_paper(const CliOptions *o, FILE *out, CompareInterrupted on_interrupt) {
  Arm arms[N_ARMS] = {{.name = "tied", .tie = "tied", .in_scale = 1.0},
                      {.name = "untied", .tie = "untied", .in_scale = 1.0},
                      {.name = "tied_in5", .tie = "tied", .in_scale = 5.0}};
  long steps = o->steps > 0 ? o->steps : 1000;
  Err err;
  Lab *lab = lab_new(&err);
  if (lab) lab_set_reducer(lab, o->reducer);
  if (!lab) goto fail;
  for (int k = 0; k < N_ARMS; k++)
    if (!(arms[k].run = add_arm(lab, o, &arms[k], &err))) goto fail;
  if (sig_open(0, &err) < 0) goto fail;
  fprintf(out, "# tied, untied, tied_in5: %ld steps", steps);
  cli_print_given(out, &o->run);
  fputc('\n', out);
  /* On a terminal a progress line; the step lines are there in any case. */
  Progress *p = progress_new(stderr, 0);
  progress_start(p, steps);
  for (long s = 1; s <= steps && !sig_ended(); s++) {
    if (lab_step(lab, &err) < 0) {
      progress_free(p);
      goto fail;
    }
    for (int k = 0; k < N_ARMS; k++) accumulate(&arms[k], s, steps);
    progress_set(p, s, "the paper's three runs");
    if (s % o->print_every == 0 || s == steps)
      progress_printf(p, stderr, "step %ld/%ld  loss %.4f %.4f %.4f\n", s, steps, run_metrics(arms[0].run)->loss,
                      run_metrics(arms[1].run)->loss, run_metrics(arms[2].run)->loss);
  }
  progress_free(p);
  if (sig_ended()) {
    char why[64];
    snprintf(why, sizeof why, "interrupted at step %ld", lab_max_step(lab));
    if (on_interrupt) on_interrupt(lab, why);
    else fprintf(stderr, "tielab: %s\n", why);
    lab_free(lab);
    return EXIT_INTERRUPTED;
  }
  for (int k = 0; k < N_ARMS; k++)
    if (run_metrics(arms[k].run)->val_step != steps && run_measure(arms[k].run, &err) < 0) goto fail;
  print_table(out, arms, steps);
  lab_free(lab);
  return EXIT_OK;
fail:
  fprintf(stderr, "tielab: %s\n", err.msg);
  lab_free(lab);
  return EXIT_RUNTIME;
}
