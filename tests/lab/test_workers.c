/*
** test_workers.c -- lab_step with several workers: runs stepped at once
** end with the same bits as runs stepped one at a time; runs with step
** hooks step on the caller's thread beside runs that step at once; paused
** and removed runs are left alone; the first failing run's error is the
** step's; the number of workers is checked.
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg.h"
#include "lab/run.h"
#include "tap.h"

#define N_RUNS 4

static RunOptions small(const char *name, const char *tie, double in_scale, int threads) {
  RunOptions o;
  Err err;
  run_options_default(&o);
  char scale[32], thr[16];
  snprintf(scale, sizeof scale, "%g", in_scale);
  snprintf(thr, sizeof thr, "%d", threads);
  const char *kv[][2] = {{"vocab", "384"}, {"dim", "32"},       {"layers", "2"},       {"heads", "2"},
                         {"ctx", "16"},    {"batch", "4"},      {"tie", tie},          {"in_scale", scale},
                         {"lr", "0.003"},  {"threads", thr},    {"lens_every", "3"},   {"eval_every", "4"},
                         {"align_every", "5"}, {"name", name}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (run_options_set_text(&o, kv[i][0], kv[i][1], &err) < 0) diag("setting %s: %s", kv[i][0], err.msg);
  return o;
}

/* A lab of paper-like arms: tied, untied, tied at in_scale 2 and 5. */
static Lab *arms_lab(int workers, int threads) {
  static const struct {
    const char *name, *tie;
    double in_scale;
  } arms[N_RUNS] = {{"tied", "tied", 1}, {"untied", "untied", 1}, {"tied_x2", "tied", 2}, {"tied_x5", "tied", 5}};
  Err err;
  Lab *lab = lab_new(&err);
  if (!lab || lab_set_workers(lab, workers, &err) < 0) return NULL;
  for (int i = 0; i < N_RUNS; i++) {
    RunOptions o = small(arms[i].name, arms[i].tie, arms[i].in_scale, threads);
    if (!lab_add_run(lab, &o, &err)) {
      diag("run %s: %s", arms[i].name, err.msg);
      lab_free(lab);
      return NULL;
    }
  }
  return lab;
}

/* A lab of the arms on two workers, one thread each, or a failed check
** saying what it was for. */
static Lab *two_workers_lab(const char *what) {
  Lab *lab = arms_lab(2, 1);
  if (!lab) ok(0, "%s", what);
  return lab;
}

static int steps(Lab *lab, int n, Err *err) {
  for (int i = 0; i < n; i++)
    if (lab_step(lab, err) < 0) return -1;
  return 0;
}

static int same_weights(Run *a, Run *b) {
  size_t n = model_n_floats(run_model(a));
  return n == model_n_floats(run_model(b)) &&
         memcmp(model_params(run_model(a)), model_params(run_model(b)), n * sizeof(float)) == 0;
}

/* Runs of 'threads' kernel threads stepped 'n' times by one worker and by
** two: every run's weights, loss and alignment agree bit for bit. */
static void test_same_bits(int threads, int n) {
  Err err;
  Lab *one = arms_lab(1, threads), *two = arms_lab(2, threads);
  if (!one || !two) {
    ok(0, "labs of %d runs", N_RUNS);
    lab_free(one);
    lab_free(two);
    return;
  }
  int rc1 = steps(one, n, &err);
  linalg_set_threads(2);   /* a count other than the one the steps hold OpenBLAS at, to see it come back */
  int rc2 = steps(two, n, &err), blas_after = linalg_threads();
  linalg_set_threads(1);
  int same = 1, moved = 0;
  for (int i = 0; i < N_RUNS; i++) {
    Run *a = lab_run(one, i), *b = lab_run(two, i);
    same &= same_weights(a, b) && run_metrics(a)->loss == run_metrics(b)->loss &&
            run_metrics(a)->val_loss == run_metrics(b)->val_loss && run_metrics(b)->step == n;
    moved += run_metrics(b)->loss < log(384.0);
  }
  ok(rc1 == 0 && rc2 == 0 && same && moved == N_RUNS,
     "threads=%d: %d runs after %d steps with 2 workers hold the bits they hold with 1 (and learned)", threads,
     N_RUNS, n);
  const RunMetrics *t1 = run_metrics(lab_run(one, 0)), *t2 = run_metrics(lab_run(two, 0));
  ok(t2->align.step == 5 * (n / 5) && t2->align.vs_in.score.cka == t1->align.vs_in.score.cka,
     "the alignment after the concurrent steps compares the runs at the same step (%ld)", t2->align.step);
  ok(blas_after == 2, "OpenBLAS is back at the thread count it had before the concurrent steps (2: %d)", blas_after);
  lab_free(one);
  lab_free(two);
}

/* A hook that notes where and how often it is called. */
typedef struct ThreadProbe {
  pthread_t expected;
  int calls, elsewhere, fail;
} ThreadProbe;

static int note_grad(void *ctx, Model *m, long step, Err *err) {
  ThreadProbe *p = ctx;
  p->calls++;
  p->elsewhere += !pthread_equal(p->expected, pthread_self());
  return p->fail ? err_set(err, "the probe refuses step %ld", step) : 0;
}

static void test_hooks_beside(void) {
  Err err;
  Lab *ref = arms_lab(1, 1), *lab = arms_lab(2, 1);
  if (!ref || !lab) {
    ok(0, "labs for the hooks");
    return;
  }
  ThreadProbe probe = {.expected = pthread_self()};
  StepHooks hooks = {.ctx = &probe, .on_grad = note_grad};
  lab_run_set_hooks(lab_run(lab, 1), &hooks);
  lab_run_set_hooks(lab_run(ref, 1), &hooks);
  int rc = steps(lab, 6, &err) | steps(ref, 6, &err);
  ok(rc == 0 && probe.calls == 12 && probe.elsewhere == 0,
     "a run's on_grad is called on every step (%d calls), always on the thread that called lab_step", probe.calls);
  int same = 1;
  for (int i = 0; i < N_RUNS; i++) same &= same_weights(lab_run(ref, i), lab_run(lab, i));
  ok(same, "the hooked run and the runs stepped beside it hold the bits of one worker's");
  probe.fail = 1;
  rc = lab_step(lab, &err);
  ok(rc < 0 && strstr(err.msg, "untied") && strstr(err.msg, "the probe refuses step 7") &&
         run_metrics(lab_run(lab, 1))->paused && run_metrics(lab_run(lab, 0))->step == 7,
     "a failing hook pauses its run alone and is the step's error: %s", err.msg);
  lab_free(ref);
  lab_free(lab);
}

/* A hook that gives another run hooks mid-step (as a script's hook may). */
typedef struct Spreader {
  Run *other;
  StepHooks *give;
} Spreader;

static int spread_hooks(void *ctx, Model *m, long step, Err *err) {
  Spreader *s = ctx;
  lab_run_set_hooks(s->other, s->give);
  return 0;
}

static void test_hooks_added_mid_step(void) {
  Err err;
  Lab *lab = two_workers_lab("a lab for hooks added mid-step");
  if (!lab) return;
  ThreadProbe probe = {.expected = pthread_self()};
  StepHooks counted = {.ctx = &probe, .on_grad = note_grad};
  Run *later = lab_run(lab, 3);
  Spreader spreader = {later, &counted};
  StepHooks spreading = {.ctx = &spreader, .on_grad = spread_hooks};
  lab_run_set_hooks(lab_run(lab, 0), &spreading);
  int rc = lab_step(lab, &err);
  ok(rc == 0 && run_metrics(later)->step == 1 && probe.calls == 0,
     "a run that stepped at once and gets hooks from an earlier run's hook steps once (step %ld)",
     run_metrics(later)->step);
  rc = lab_step(lab, &err);
  ok(rc == 0 && run_metrics(later)->step == 2 && probe.calls == 1 && probe.elsewhere == 0,
     "and its hooks run from the next step on, on the caller's thread");
  lab_free(lab);
}

static void test_pause_and_remove(void) {
  Err err;
  Lab *lab = two_workers_lab("a lab to pause and remove in");
  if (!lab) return;
  Run *paused = lab_run(lab, 2);
  run_set_paused(paused, 1);
  int rc = steps(lab, 3, &err);
  ok(rc == 0 && run_metrics(paused)->step == 0 && run_metrics(lab_run(lab, 0))->step == 3 &&
         run_metrics(lab_run(lab, 3))->step == 3,
     "a paused run stays at step 0 while the others step at once");
  run_set_paused(paused, 0);
  int removed = lab_remove_run(lab, lab_run(lab, 0)) == 0 && lab_remove_run(lab, lab_run(lab, 2)) == 0;
  RunOptions o = small("late", "untied", 1, 1);
  Run *late = lab_add_run(lab, &o, &err);
  rc = steps(lab, 2, &err);
  ok(removed && late && rc == 0 && lab_n_runs(lab) == 3 && run_metrics(lab_run(lab, 0))->step == 5 &&
         run_metrics(paused)->step == 2 && run_metrics(late)->step == 2,
     "runs removed between steps are gone and a run added after is stepped (%d runs)", lab_n_runs(lab));
  lab_free(lab);
}

static void poison(Run *r) {
  Model *m = run_model(r);
  const TensorInfo *wte = model_find_tensor(m, "transformer.wte.weight");
  float *w = model_params(m) + wte->offset;
  for (size_t i = 0; i < wte->numel; i++) w[i] = NAN;
}

static void test_errors(void) {
  Err err;
  Lab *lab = arms_lab(3, 1);
  if (!lab) {
    ok(0, "a lab for the errors");
    return;
  }
  Run *second = lab_run(lab, 1), *last = lab_run(lab, 3);
  int rc0 = lab_step(lab, &err);
  poison(last);
  poison(second);
  int rc = lab_step(lab, &err);
  ok(rc0 == 0 && rc < 0 && strstr(err.msg, "run 'untied'") && strstr(err.msg, "step 2"),
     "two runs fail at once: the step reports the first in the lab's order: %s", err.msg);
  ok(run_metrics(second)->paused && run_metrics(last)->paused && run_metrics(second)->step == 1 &&
         run_metrics(last)->step == 1 && run_metrics(lab_run(lab, 0))->step == 2 &&
         run_metrics(lab_run(lab, 2))->step == 2,
     "both failing runs are paused at step 1; the others stepped");
  rc = lab_step(lab, &err);
  ok(rc == 0 && run_metrics(lab_run(lab, 0))->step == 3, "the next step goes on without them");
  lab_free(lab);
}

static void test_workers_checked(void) {
  Err err;
  Lab *lab = lab_new(&err);
  int low = lab_set_workers(lab, 0, &err);
  ok(low < 0 && strstr(err.msg, "1 to 256") && strstr(err.msg, "not 0"), "0 workers are refused: %s", err.msg);
  int high = lab_set_workers(lab, LAB_WORKERS_MAX + 1, &err);
  ok(high < 0 && strstr(err.msg, "not 257"), "257 workers are refused: %s", err.msg);
  ok(lab_workers(lab) == 1 && lab_set_workers(lab, 8, &err) == 0 && lab_workers(lab) == 8,
     "the default is 1; 8 is taken");
  RunOptions o = small("alone", "tied", 1, 1);
  Run *r = lab_add_run(lab, &o, &err);
  ok(r && steps(lab, 2, &err) == 0 && run_metrics(r)->step == 2, "8 workers step a lab of one run");
  ok(lab_set_workers(lab, 2, &err) == 0 && steps(lab, 1, &err) == 0 && run_metrics(r)->step == 3,
     "the workers change between steps");
  lab_free(lab);
}

int main(void) {
  test_same_bits(1, 12);
  test_same_bits(2, 6);
  test_hooks_beside();
  test_hooks_added_mid_step();
  test_pause_and_remove();
  test_errors();
  test_workers_checked();
  return tap_done();
}
