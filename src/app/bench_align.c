/*
** bench_align.c -- see bench_align.h. The matrices are x Gaussian and
** y = 0.5 x + Gaussian noise, so every score is well away from both 0 and
** 1 and the baseline reads lower than the score. Each call is a fresh
** align_compare: its allocation and the baseline's generation are part of
** what a one-off comparison of two released models costs.
*/
#include <stdlib.h>

#include <jansson.h>

#include "app/bench_align.h"
#include "base/clock.h"
#include "base/sysmem.h"
#include "core/rng.h"
#include "lab/align.h"
#include "lab/settings.h"

static const struct {
  const char *name;
  unsigned metrics;
} timed[] = {
    {"linear", ALIGN_LINEAR}, {"procrustes", ALIGN_PROCRUSTES}, {"knn", ALIGN_KNN},
    {"cka", ALIGN_CKA},       {"table1", ALIGN_TABLE1},
};

#define N_TIMED (sizeof timed / sizeof timed[0])

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int matrices_fit(int v, int d, size_t *need, Err *err) {
  *need = 2 * sizeof(float) * (size_t)v * d + align_memory_bytes(v, d, 10);
  char what[64];
  snprintf(what, sizeof what, "bench: aligning [%d,%d]", v, d);
  return sysmem_check(*need, what, err);
}

static void fill(float *x, float *y, size_t n, uint64_t seed) {
  Rng r;
  rng_seed(&r, rng_mix(seed, 7));
  for (size_t i = 0; i < n; i++) x[i] = (float)rng_normal(&r);
  for (size_t i = 0; i < n; i++) y[i] = 0.5f * x[i] + (float)rng_normal(&r);
}

static json_t *table1_json(const AlignScores *s) {
  return json_pack("{s:f, s:f, s:f, s:f}", "linear", s->linear, "procrustes", s->procrustes, "knn", s->knn, "cka",
                   s->cka);
}

/* Median milliseconds of 'reps' calls asking for 'metrics'; 'out' keeps the last answer. */
static int time_metrics(const float *x, const float *y, int v, int d, AlignOptions *o, unsigned metrics, int reps,
                        double *ms, AlignResult *out, Err *err) {
  double t[reps];
  o->metrics = metrics;
  for (int i = 0; i < reps; i++) {
    double t0 = clock_seconds();
    if (align_compare(x, y, v, d, o, out, err) < 0) return -1;
    t[i] = (clock_seconds() - t0) * 1e3;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  *ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  return 0;
}

int bench_align_run(const RunOptions *o, int reps, int warmup, FILE *out, Err *err) {
  int v = o->model.vocab, d = o->model.dim;
  size_t need, n = (size_t)v * d;
  if (reps < 1) return err_set(err, "bench: repeats (%d) must be at least 1", reps);
  if (warmup < 0) return err_set(err, "bench: warmup (%d) must not be negative", warmup);
  if (matrices_fit(v, d, &need, err) < 0) return -1;
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  json_t *ms = json_object(), *line = NULL;
  if (!x || !y || !ms) {
    free(x), free(y), json_decref(ms);
    return err_set(err, "bench: out of memory for two [%d,%d] matrices", v, d);
  }
  fill(x, y, n, o->init_seed);
  AlignOptions ao = align_default_options();
  ao.threads = o->threads;
  AlignResult res;
  int rc = 0;
  for (int i = 0; i < warmup && rc == 0; i++) rc = align_compare(x, y, v, d, &ao, &res, err);
  for (size_t i = 0; i < N_TIMED && rc == 0; i++) {
    double t = 0;
    rc = time_metrics(x, y, v, d, &ao, timed[i].metrics, reps, &t, &res, err);
    json_object_set_new(ms, timed[i].name, json_real(t));
  }
  if (rc == 0) {
    line = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:I, s:o, s:o, s:o}", "impl", "tielab", "bench", "align",
                     setting_name(SETTING_VOCAB), v, setting_name(SETTING_DIM), d, setting_name(SETTING_THREADS),
                     o->threads, "repeats", reps, "warmup_calls", warmup, "memory_bytes", (json_int_t)need, "ms",
                     json_incref(ms), "score", table1_json(&res.score), "baseline", table1_json(&res.baseline));
    char *text = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
    if (text) fprintf(out, "%s\n", text), fflush(out);
    else rc = err_set(err, "bench: out of memory for the report");
    free(text);
  }
  json_decref(line);
  json_decref(ms);
  free(x), free(y);
  return rc;
}
