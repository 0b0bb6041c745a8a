/*
** bench.c -- see bench.h. Each step is one 'train_step', timed in three
** parts through its own callbacks: forward (until 'after_forward');
** backward (until 'on_grad'); combine + clip + the optimizer step ("opt").
** Medians over the timed steps, as the peer reports them. The batches are
** random tokens from the data seed, or with --corpus the run's own
** training batches of that file.
*/
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "app/bench.h"
#include "base/clock.h"
#include "core/data.h"
#include "core/model.h"
#include "core/rng.h"
#include "core/settings_model.h"
#include "core/step.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of n values (sorted in place). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The settings the optimizer step reads: the optimizer's group, then the
** embeddings' scales, each in the table's order. */
void bench_print_optim(FILE *out, const RunOptions *o) {
  static const SettingGroup groups[] = {GROUP_OPTIMIZER, GROUP_SCALES};
  int n;
  const Setting *s = lab_settings(&n);
  const char *sep = "";
  fputs("\"optim\":{", out);
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
    for (int i = 0; i < n; i++) {
      char value[64];
      if (s[i].group != groups[g] || run_options_get_text(o, s[i].name, value, sizeof value, NULL) < 0) continue;
      const char *quote = s[i].type == SET_STRING ? "\"" : "";   /* numbers and booleans are bare */
      fprintf(out, "%s\"%s\":%s%s%s", sep, s[i].name, quote, value, quote);
      sep = ",";
    }
  fputc('}', out);
}

void bench_print_data(FILE *out, const RunOptions *o, int synthetic) {
  const char *corpus = o->corpus[0] ? o->corpus : synthetic ? "synthetic" : "random";
  json_t *data = json_pack("{s:s, s:i, s:I}", setting_name(SETTING_CORPUS), corpus, setting_name(SETTING_CORPUS_MAX),
                           o->corpus_max_mb, setting_name(SETTING_DATA_SEED), (json_int_t)o->data_seed);
  if (data && synthetic && !o->corpus[0])
    json_object_set_new(data, setting_name(SETTING_CORPUS_SEED), json_integer((json_int_t)o->corpus_seed));
  char *text = data ? json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  fprintf(out, "\"data\":%s", text ? text : "{}");
  free(text);
  json_decref(data);
}

void bench_print_config(FILE *out, const ModelConfig *c) {
  json_t *shape = model_config_json(c);
  char *text = shape ? json_dumps(shape, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  fprintf(out, "\"config\":%s", text ? text : "{}");
  free(text);
  json_decref(shape);
}

/* What every bench line starts with: the implementation, the model's
** shape, its parameter count and the thread count. */
static void print_head(FILE *out, const ModelConfig *cfg, int threads) {
  fputs("{\"impl\":\"tielab\",", out);
  bench_print_config(out, cfg);
  fprintf(out, ",\"params\":%zu,\"%s\":%d,", config_param_count(cfg), setting_name(SETTING_THREADS), threads);
}

/* The batches: random tokens, or a corpus tokenized as a run would. */
typedef struct BenchData {
  Dataset ds;
  int from_corpus;
  Rng rng;
} BenchData;

static int data_open(BenchData *d, const RunOptions *o, Err *err) {
  memset(d, 0, sizeof *d);
  rng_seed(&d->rng, rng_mix(o->data_seed, 1));
  if (!o->corpus[0]) return 0;
  Corpus c;
  if (corpus_read_max(&c, o->corpus, (uint64_t)o->corpus_max_mb << 20, 0, err) < 0) return -1;
  int rc = dataset_build(&d->ds, &c, o->model.vocab, 0.1, o->model.ctx, NULL, err);
  corpus_free(&c);
  if (rc < 0) return err_prefix(err, "bench: %s", o->corpus);
  d->from_corpus = 1;
  return 0;
}

/* Batch 'i': B rows of T+1 ids into 'rows', split into inputs and targets. */
static void data_batch(BenchData *d, const RunOptions *o, int i, int32_t *rows, int32_t *inputs, int32_t *targets) {
  const ModelConfig *cfg = &o->model;
  size_t n = (size_t)cfg->batch * (size_t)(cfg->ctx + 1);
  if (d->from_corpus) dataset_train_batch(&d->ds, o->data_seed, (uint64_t)i, cfg->batch, cfg->ctx, rows);
  else
    for (size_t j = 0; j < n; j++) rows[j] = (int32_t)rng_below(&d->rng, (uint64_t)cfg->vocab);
  batch_split(rows, cfg->batch, cfg->ctx, inputs, targets);
}

/* The clock when a step's forward and backward end. */
typedef struct StepClock {
  double forward_end, backward_end;
} StepClock;

static int forward_ended(void *ctx, double *loss, Err *err) {
  ((StepClock *)ctx)->forward_end = clock_seconds();
  return 0;
}

static int backward_ended(void *ctx, Model *m, long step, Err *err) {
  ((StepClock *)ctx)->backward_end = clock_seconds();
  return 0;
}

int bench_run(const RunOptions *o, int steps, int warmup, FILE *out, Err *err) {
  const ModelConfig *cfg = &o->model;
  int threads = o->threads;
  uint64_t seed = o->init_seed;
  if (steps < 1) return err_set(err, "bench: steps (%d) must be at least 1", steps);
  if (warmup < 0) return err_set(err, "bench: warmup (%d) must not be negative", warmup);
  BenchData data;
  if (data_open(&data, o, err) < 0) return -1;
  Model *m = model_create(cfg, threads, err);
  if (!m) {
    if (data.from_corpus) dataset_free(&data.ds);
    return -1;
  }
  model_init(m, seed);
  size_t n = (size_t)cfg->batch * cfg->ctx;
  int32_t *tokens = malloc((3 * n + (size_t)cfg->batch) * sizeof(int32_t));
  double *times = malloc(4 * (size_t)steps * sizeof(double));
  if (!tokens || !times) {
    free(tokens);
    free(times);
    model_free(m);
    if (data.from_corpus) dataset_free(&data.ds);
    return err_set(err, "bench: out of memory");
  }
  int32_t *inputs = tokens, *targets = tokens + n, *rows = tokens + 2 * n;
  double *t_step = times, *t_fwd = times + steps, *t_bwd = times + 2 * steps, *t_opt = times + 3 * steps;
  float loss_first = 0.0f, loss_last = 0.0f;
  int failed = 0;
  StepClock clk;
  StepHooks timing = {.ctx = &clk, .on_grad = backward_ended};
  StepPlan plan = {.inputs = inputs, .targets = targets, .rows = cfg->batch, .t = cfg->ctx,
                   .batch_rows = cfg->batch, .in_scale = (float)o->in_scale, .out_scale = (float)o->out_scale,
                   .hooks = &timing, .after_forward = forward_ended, .after_forward_ctx = &clk};
  for (int i = 0; i < warmup + steps; i++) {
    data_batch(&data, o, i, rows, inputs, targets);
    plan.optim = run_options_optim_at(o, i + 1);
    plan.step = i + 1;
    StepResult res;
    double t0 = clock_seconds();
    int rc = train_step(m, &plan, &res, err);
    double t3 = clock_seconds();
    if (rc < 0) {   /* its times would be another step's */
      failed = err_prefix(err, "bench: step %d", i + 1);
      break;
    }
    float loss = (float)res.loss;
    if (i == 0) loss_first = loss;
    loss_last = loss;
    if (i >= warmup) {
      int k = i - warmup;
      t_fwd[k] = clk.forward_end - t0;
      t_bwd[k] = clk.backward_end - clk.forward_end;
      t_opt[k] = t3 - clk.backward_end;
      t_step[k] = t3 - t0;
    }
  }
  if (failed) goto done;
  double lo = t_step[0], hi = t_step[0];
  for (int k = 1; k < steps; k++) {
    if (t_step[k] < lo) lo = t_step[k];
    if (t_step[k] > hi) hi = t_step[k];
  }
  double step = median(t_step, steps), fpt = config_flops_per_token(cfg);
  print_head(out, cfg, threads);
  fprintf(out,
          "\"steps\":%d,\"bench_warmup\":%d,"
          "\"tokens_per_step\":%zu,\"tokens_per_s\":%.1f,\"step_ms\":%.3f,\"step_ms_min\":%.3f,"
          "\"step_ms_max\":%.3f,\"fwd_ms\":%.3f,\"bwd_ms\":%.3f,\"opt_ms\":%.3f,\"flops_per_token\":%.0f,"
          "\"gflops\":%.2f,\"loss_first\":%.6f,\"loss_last\":%.6f,",
          steps, warmup, n,
          (double)n / step, step * 1e3, lo * 1e3, hi * 1e3, median(t_fwd, steps) * 1e3,
          median(t_bwd, steps) * 1e3, median(t_opt, steps) * 1e3, fpt, fpt * (double)n / step / 1e9,
          (double)loss_first, (double)loss_last);
  bench_print_optim(out, o);
  fputc(',', out);
  bench_print_data(out, o, 0);
  fputs("}\n", out);
  fflush(out);
done:
  free(tokens);
  free(times);
  model_free(m);
  if (data.from_corpus) dataset_free(&data.ds);
  return failed;
}

/* Forward passes alone: model_forward on each batch, logits and loss, the
** activations kept as always (the model has no lighter inference path). */
int bench_forward_run(const RunOptions *o, int steps, int warmup, FILE *out, Err *err) {
  const ModelConfig *cfg = &o->model;
  if (steps < 1) return err_set(err, "bench: steps (%d) must be at least 1", steps);
  if (warmup < 0) return err_set(err, "bench: warmup (%d) must not be negative", warmup);
  BenchData data;
  if (data_open(&data, o, err) < 0) return -1;
  Model *m = model_create(cfg, o->threads, err);
  if (!m) {
    if (data.from_corpus) dataset_free(&data.ds);
    return -1;
  }
  model_init(m, o->init_seed);
  size_t n = (size_t)cfg->batch * cfg->ctx;
  int32_t *tokens = malloc((3 * n + (size_t)cfg->batch) * sizeof(int32_t));
  double *t_fwd = malloc((size_t)steps * sizeof(double));
  int failed = 0;
  if (!tokens || !t_fwd) failed = err_set(err, "bench: out of memory");
  float loss = 0;
  for (int i = 0; !failed && i < warmup + steps; i++) {
    int32_t *inputs = tokens, *targets = tokens + n, *rows = tokens + 2 * n;
    data_batch(&data, o, i, rows, inputs, targets);
    double t0 = clock_seconds();
    loss = model_forward(m, inputs, targets, cfg->batch, cfg->ctx);
    double t1 = clock_seconds();
    if (loss != loss) failed = err_set(err, "bench: forward %d gave no loss (a token out of range)", i + 1);
    else if (i >= warmup) t_fwd[i - warmup] = t1 - t0;
  }
  if (!failed) {
    double lo = t_fwd[0];
    for (int k = 1; k < steps; k++) lo = t_fwd[k] < lo ? t_fwd[k] : lo;
    /* Training is three forwards' worth of FLOPs (the peer's count). */
    double fwd = median(t_fwd, steps), fpt = config_flops_per_token(cfg) / 3;
    print_head(out, cfg, o->threads);
    fprintf(out,
            "\"mode\":\"forward\",\"steps\":%d,\"bench_warmup\":%d,\"tokens_per_step\":%zu,"
            "\"tokens_per_s\":%.1f,\"fwd_ms\":%.3f,\"fwd_ms_min\":%.3f,\"flops_per_token\":%.0f,"
            "\"gflops\":%.2f,\"loss_last\":%.6f,",
            steps, warmup, n, (double)n / fwd, fwd * 1e3, lo * 1e3, fpt, fpt * (double)n / fwd / 1e9, (double)loss);
    bench_print_data(out, o, 0);
    fputs("}\n", out);
    fflush(out);
  }
  free(tokens);
  free(t_fwd);
  model_free(m);
  if (data.from_corpus) dataset_free(&data.ds);
  return failed;
}
