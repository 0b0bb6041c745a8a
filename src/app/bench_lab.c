/*
** bench_lab.c -- see bench_lab.h. The partner run is paused: it is there
** only to be aligned with, so the timed work is one run's step plus every
** instrument that rides on it.
*/
#include <stdlib.h>
#include <time.h>

#include "app/bench.h"
#include "app/bench_lab.h"
#include "base/clock.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The timed run as the options say (tied unless --tie), or its untied partner. */
static Run *add(Lab *lab, const CliOptions *o, const char *name, const char *tie, Err *err) {
  RunOptions ro = o->run;
  snprintf(ro.name, sizeof ro.name, "%s", name);
  if (tie && run_options_set_text(&ro, setting_name(SETTING_TIE), tie, err) < 0) return NULL;
  return lab_add_run(lab, &ro, err);
}

static void print_json(FILE *out, const CliOptions *o, Run *r, int ranks, double reduce_s, double med, double best,
                       double worst, int steps) {
  const ModelConfig *c = run_config(r);
  double tokens = (double)c->batch * c->ctx, fpt = config_flops_per_token(c);
  fputs("{\"impl\":\"tielab-lab\",\"instruments\":true,", out);
  bench_print_config(out, c);
  fprintf(out, ",\"%s\":%d,\"%s\":%d,\"%s\":%d,\"params\":%zu,\"%s\":%d,", setting_name(SETTING_LENS_EVERY),
          o->run.lens_every, setting_name(SETTING_EVAL_EVERY), o->run.eval_every, setting_name(SETTING_ALIGN_EVERY),
          o->run.align_every, config_param_count(c), setting_name(SETTING_THREADS), o->run.threads);
  fprintf(out,
          "\"steps\":%d,\"bench_warmup\":%d,\"tokens_per_step\":%.0f,\"tokens_per_s\":%.1f,\"step_ms\":%.3f,"
          "\"step_ms_min\":%.3f,\"step_ms_max\":%.3f,\"flops_per_token\":%.0f,\"gflops\":%.2f,\"loss_last\":%.6f,"
          "\"ranks\":%d,\"allreduce_ms\":%.3f,",
          steps, o->bench_warmup, tokens, tokens / med, med * 1e3, best * 1e3, worst * 1e3, fpt,
          fpt * tokens / med / 1e9, run_metrics(r)->loss, ranks, reduce_s / steps * 1e3);
  bench_print_optim(out, &o->run);
  fputc(',', out);
  bench_print_data(out, &o->run, 1);
  fputs("}\n", out);
}

/* Each step's time includes the instruments that fell due on it; the median
** hides the rare expensive ones, so the mean is what the ratio uses. */
int bench_lab_run(const CliOptions *o, FILE *out, Err *err) {
  int steps = o->steps > 0 ? o->steps : 100;
  Lab *lab = lab_new(err);
  double *t = malloc(sizeof *t * (size_t)steps);
  Run *r = NULL, *partner = NULL;
  int rc = -1;
  if (!lab || !t) goto done;
  lab_set_reducer(lab, o->reducer);
  if (!(r = add(lab, o, "bench", NULL, err)) || !(partner = add(lab, o, "bench_untied", "untied", err))) goto done;
  run_set_paused(partner, 1);
  double total = 0, reduce_s = 0;
  const Reducer *red = o->reducer;
  for (int i = 0; i < o->bench_warmup + steps; i++) {
    double t0 = clock_seconds(), busy0 = red ? red->busy(red->ctx) : 0;
    if (lab_step(lab, err) < 0) goto done;
    if (i < o->bench_warmup) continue;
    total += t[i - o->bench_warmup] = clock_seconds() - t0;
    if (red) reduce_s += red->busy(red->ctx) - busy0;
  }
  qsort(t, (size_t)steps, sizeof *t, cmp_double);
  print_json(out, o, r, lab_world(lab), reduce_s, total / steps, t[0], t[steps - 1], steps);
  rc = 0;
done:
  free(t);
  lab_free(lab);
  return rc;
}
