/*
** bench.c -- see bench.h. Each step is timed in three parts: forward;
** backward; combine + clip + the optimizer step ("opt"). Medians over the timed steps,
** as the peer reports them.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/bench.h"
#include "core/model.h"
#include "core/rng.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of n values (sorted in place). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The settings from 'lr' on that the optimizer step reads. */
static const char *const optim_keys[] = {"lr", "warmup", "warmup_start", "schedule", "decay_steps", "lr_min",
                                         "lr_min_ratio", "eps", "beta1", "beta2", "weight_decay", "decay_all",
                                         "optimizer", "momentum", "nesterov", "clip", "grad_scale",
                                         "emb_lr_scale", "emb_warmup"};

void bench_print_optim(FILE *out, const RunOptions *o) {
  fputs("\"optim\":{", out);
  for (size_t i = 0; i < sizeof optim_keys / sizeof optim_keys[0]; i++) {
    const Setting *s = lab_setting_find(optim_keys[i]);
    char value[64];
    if (!s || run_options_get_text(o, s->name, value, sizeof value, NULL) < 0) continue;
    const char *quote = s->type == SET_STRING ? "\"" : "";   /* numbers and booleans are bare */
    fprintf(out, "%s\"%s\":%s%s%s", i ? "," : "", s->name, quote, value, quote);
  }
  fputc('}', out);
}

int bench_run(const RunOptions *o, int steps, int warmup, FILE *out, Err *err) {
  const ModelConfig *cfg = &o->model;
  int threads = o->threads;
  uint64_t seed = o->init_seed;
  if (steps < 1) return err_set(err, "bench: steps (%d) must be at least 1", steps);
  if (warmup < 0) return err_set(err, "bench: warmup (%d) must not be negative", warmup);
  Model *m = model_create(cfg, threads, err);
  if (!m) return -1;
  model_init(m, seed);
  size_t n = (size_t)cfg->batch * cfg->ctx;
  int32_t *tokens = malloc((n + (size_t)cfg->batch) * sizeof(int32_t) * 2);
  double *times = malloc(4 * (size_t)steps * sizeof(double));
  if (!tokens || !times) {
    free(tokens);
    free(times);
    model_free(m);
    return err_set(err, "bench: out of memory");
  }
  int32_t *inputs = tokens, *targets = tokens + n;
  double *t_step = times, *t_fwd = times + steps, *t_bwd = times + 2 * steps, *t_opt = times + 3 * steps;
  Rng rng;
  rng_seed(&rng, rng_mix(seed, 1));
  float loss_first = 0.0f, loss_last = 0.0f;
  for (int i = 0; i < warmup + steps; i++) {
    /* A random batch: B rows of T+1 ids, shifted by one for the targets. */
    for (int b = 0; b < cfg->batch; b++) {
      int32_t row[CONFIG_MAX_CTX + 1];
      for (int j = 0; j <= cfg->ctx; j++) row[j] = (int32_t)rng_below(&rng, (uint64_t)cfg->vocab);
      memcpy(inputs + (size_t)b * cfg->ctx, row, (size_t)cfg->ctx * sizeof(int32_t));
      memcpy(targets + (size_t)b * cfg->ctx, row + 1, (size_t)cfg->ctx * sizeof(int32_t));
    }
    GradStats gs;
    double t0 = now_s();
    float loss = model_forward(m, inputs, targets, cfg->batch, cfg->ctx);
    double t1 = now_s();
    model_backward(m, &gs);
    double t2 = now_s();
    model_combine(m, 1.0f, 1.0f);
    OptimConfig oc = run_options_optim_at(o, i + 1);
    model_clip_scaled(m, oc.grad_scale, oc.clip);
    model_update(m, &oc);
    double t3 = now_s();
    if (i == 0) loss_first = loss;
    loss_last = loss;
    if (i >= warmup) {
      int k = i - warmup;
      t_fwd[k] = t1 - t0;
      t_bwd[k] = t2 - t1;
      t_opt[k] = t3 - t2;
      t_step[k] = t3 - t0;
    }
  }
  double lo = t_step[0], hi = t_step[0];
  for (int k = 1; k < steps; k++) {
    if (t_step[k] < lo) lo = t_step[k];
    if (t_step[k] > hi) hi = t_step[k];
  }
  double step = median(t_step, steps), fpt = config_flops_per_token(cfg);
  char tie[16];
  fprintf(out,
          "{\"impl\":\"tielab\",\"config\":{\"vocab\":%d,\"dim\":%d,\"layers\":%d,\"heads\":%d,\"ctx\":%d,"
          "\"batch\":%d,\"tie\":\"%s\"},\"params\":%zu,\"threads\":%d,\"steps\":%d,\"bench_warmup\":%d,"
          "\"tokens_per_step\":%zu,\"tokens_per_s\":%.1f,\"step_ms\":%.3f,\"step_ms_min\":%.3f,"
          "\"step_ms_max\":%.3f,\"fwd_ms\":%.3f,\"bwd_ms\":%.3f,\"opt_ms\":%.3f,\"flops_per_token\":%.0f,"
          "\"gflops\":%.2f,\"loss_first\":%.6f,\"loss_last\":%.6f,",
          cfg->vocab, cfg->dim, cfg->layers, cfg->heads, cfg->ctx, cfg->batch,
          config_tie_name(cfg->tie_k, cfg->dim, tie), config_param_count(cfg), threads, steps, warmup, n,
          (double)n / step, step * 1e3, lo * 1e3, hi * 1e3, median(t_fwd, steps) * 1e3,
          median(t_bwd, steps) * 1e3, median(t_opt, steps) * 1e3, fpt, fpt * (double)n / step / 1e9,
          (double)loss_first, (double)loss_last);
  bench_print_optim(out, o);
  fputs("}\n", out);
  fflush(out);
  free(tokens);
  free(times);
  model_free(m);
  return 0;
}
