/*
** lensfit.c -- see lensfit.h: the post-hoc fit of the tuned lens on a
** frozen run. How its defaults were chosen: docs/architecture.md.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sysmem.h"
#include "core/rng.h"
#include "lab/run.h"

#define LENSFIT_SEED_TAG 0x6c656e73666974ULL   /* "lensfit": the fit's own batches */

struct LensFit {
  Lens *lens;
  float *best;     /* [n] the kept translators */
  float *start;    /* [n] the translators the fit started from, restored on a stop */
  long start_step; /* the lens-step count then (it seeds the batches), restored with them */
};

static size_t state_bytes(const ModelConfig *c) { return lens_state_floats(c) * sizeof(float); }

size_t lensfit_memory_bytes(const ModelConfig *c) {
  return sizeof(LensFit) + lens_memory_bytes(c) + 2 * state_bytes(c);
}

LensFit *lensfit_new(const ModelConfig *c, Err *err) {
  LensFit *f = calloc(1, sizeof *f);
  if (f) {
    f->lens = lens_new(c, err);
    f->best = malloc(state_bytes(c) ? state_bytes(c) : 1);
    f->start = malloc(state_bytes(c) ? state_bytes(c) : 1);
  }
  if (!f || !f->lens || !f->best || !f->start) {
    lensfit_free(f);
    err_set(err, "out of memory creating the fitted lens");
    return NULL;
  }
  return f;
}

void lensfit_free(LensFit *f) {
  if (!f) return;
  lens_free(f->lens);
  free(f->best);
  free(f->start);
  free(f);
}

Lens *lensfit_lens(LensFit *f) { return f->lens; }

/* ------------------------------------------------------------ the run held */

int run_fitting(const Run *r) { return r && r->fitting; }

int run_refuse_if_fitting(const Run *r, const char *what, Err *err) {
  if (!run_fitting(r)) return 0;
  return err_set(err, "run '%s' is fitting its lens: it cannot %s until the fit ends (Ctrl-C stops the fit)",
                 r->opt.name, what);
}

const float *lensfit_saved_params(const Run *r, long *lens_steps) {
  LensFit *f = r->lens_fit;
  *lens_steps = r->fitting ? f->start_step : lens_step(f->lens);
  return r->fitting ? f->start : lens_params(f->lens);
}

/* ------------------------------------------------------------ options */

void lensfit_default_options(LensFitOptions *o) {
  memset(o, 0, sizeof *o);
  o->steps = LENSFIT_DEFAULT_STEPS;
  o->lr = LENSFIT_DEFAULT_LR;
  o->tokens_per_step = LENSFIT_DEFAULT_TOKENS;
  o->tol = LENSFIT_DEFAULT_TOL;
}

#define LENSFIT_MAX_STEPS 1000000
#define LENSFIT_MAX_TOKENS (1 << 18)   /* the package's own step; more is minutes a step */

int lensfit_check_options(const LensFitOptions *o, Err *err) {
  if (o->steps < 1 || o->steps > LENSFIT_MAX_STEPS)
    return err_set(err, "'steps' must be an integer in [1, %d], got %d", LENSFIT_MAX_STEPS, o->steps);
  if (!(o->lr > 0) || !isfinite(o->lr)) return err_set(err, "'lr' must be a number > 0, got %g", o->lr);
  if (o->tokens_per_step < 1 || o->tokens_per_step > LENSFIT_MAX_TOKENS)
    return err_set(err, "'tokens_per_step' must be an integer in [1, %d], got %d", LENSFIT_MAX_TOKENS,
                   o->tokens_per_step);
  if (!(o->tol > 0) || !isfinite(o->tol)) return err_set(err, "'tol' must be a number > 0, got %g", o->tol);
  return 0;
}

int lensfit_curve_cap(int steps) { return steps / LENSFIT_EVAL_EVERY + 2; }

/* ------------------------------------------------------------ the pieces */

/* The fitted lens is made on the first fit: check that it fits. */
static int ensure_fitted_lens(Run *r, Err *err) {
  if (r->lens_fit) return 0;
  const ModelConfig *c = model_config(r->model);
  size_t need = lensfit_memory_bytes(c);
  SysMem m;
  lab_headroom(r->lab, &m);
  if (need > m.headroom)
    return err_set(err, "the fitted lens of run '%s' needs about %.1f MiB, but this process can get only "
                   "%.1f MiB more (%s)", r->opt.name, need / 1048576.0, m.headroom / 1048576.0, m.limit);
  return (r->lens_fit = lensfit_new(c, err)) ? 0 : -1;
}

/* Mean over the translators (positions 0..L-1) of the KL. */
static double mean_kl(const LensStats *s) {
  int L = s->n - 1;
  double sum = 0;
  for (int i = 0; i < L; i++) sum += s->kl[i];
  return L > 0 ? sum / L : 0;
}

/* The lens on the fixed held-out positions of the online lens. */
static int eval_heldout(Run *r, Lens *ln, LensStats *s, Err *err) {
  int rows = run_lens_heldout(r);
  return lens_eval(ln, r->model, r->inputs, r->targets, rows, model_config(r->model)->ctx,
                   r->metrics.step, s, NULL, err);
}

/* The progress callback: nonzero to stop. */
static int stop_asked(const LensFitOptions *o, int done) {
  return o->progress && o->progress(o->ctx, done, o->steps);
}

/* Lens step 'k': 'tokens' positions of the fit's own training batches,
** forwarded at most B rows at a time (the callback asked between
** forwards, so a large step can be stopped), then the update at rate
** 'lr'. Returns 1 when stopped. */
static int fit_step(Run *r, Lens *ln, const LensFitOptions *o, int k, float lr, Err *err) {
  const ModelConfig *c = model_config(r->model);
  int T = c->ctx, tokens = o->tokens_per_step;
  uint64_t seed = rng_mix(r->opt.data_seed ^ LENSFIT_SEED_TAG, (uint64_t)lens_step(ln));
  lens_grad_zero(ln);
  for (int done = 0, j = 0; done < tokens; j++) {
    if (j > 0 && stop_asked(o, k)) return 1;
    int left = tokens - done, b = (left + T - 1) / T;
    if (b > c->batch) b = c->batch;
    int n = left < b * T ? left : b * T;
    dataset_train_batch(&r->data->ds, seed, (uint64_t)j, b, T, r->rows);
    batch_split(r->rows, b, T, r->inputs, r->targets);
    model_forward(r->model, r->inputs, NULL, b, T);
    if (lens_grad_add(ln, r->model, b, T, n, tokens, rng_mix(seed, (uint64_t)j), err) < 0) return -1;
    done += n;
  }
  return lens_update(ln, lr, err);
}

/* Keep each translator whose held-out KL is the lowest yet. */
static void keep_best(LensFit *f, const LensStats *s, double *best_kl) {
  int L = lens_n_translators(f->lens);
  size_t per = L > 0 ? lens_state_size(f->lens) / (size_t)L : 0;
  for (int l = 0; l < L; l++)
    if (s->kl[l] < best_kl[l]) {
      best_kl[l] = s->kl[l];
      memcpy(f->best + (size_t)l * per, lens_params(f->lens) + (size_t)l * per, per * sizeof(float));
    }
}

/* Mean over the translators of the lowest KL each has had. */
static double kept_mean(const double *best_kl, int L) {
  double sum = 0;
  for (int l = 0; l < L; l++) sum += best_kl[l];
  return L > 0 ? sum / L : 0;
}

static void add_point(LensFitResult *out, int step, double kl, double kept) {
  if (out->n_curve < out->curve_cap) out->curve[out->n_curve++] = (LensFitPoint){step, kl, kept};
}

/* The live curve's relative change over the last LENSFIT_STRETCH steps:
** the slope of the least-squares line through its points there, times the
** stretch, over their mean (the line smooths the noise of the single
** measurements). Sets '*ok' to 0 while the curve is shorter than that. */
static double live_change(const LensFitResult *out, int *ok) {
  const LensFitPoint *now = &out->curve[out->n_curve - 1];
  int first = out->n_curve - 1;
  while (first > 0 && now->step - out->curve[first].step < LENSFIT_STRETCH) first--;
  *ok = now->step - out->curve[first].step >= LENSFIT_STRETCH;
  double n = out->n_curve - first, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = first; i < out->n_curve; i++) {
    double x = out->curve[i].step, y = out->curve[i].kl;
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double var = sxx - sx * sx / n, mean = sy / n;
  if (!*ok || !(var > 0)) return 0;
  return (sxy - sx * sy / n) / var * LENSFIT_STRETCH / fmax(mean, 1e-12);
}

/* The live lens ended well above the translators kept: the rate was too
** high for the fit to hold the best point it passed. */
static int diverged(const LensFitPoint *end) { return end->kl > (1 + LENSFIT_DIVERGED_GAP) * end->kept; }

/* Converged: the live curve moved by less than 'tol' of itself over the
** last stretch, in either direction, and has not left the kept
** translators behind. The kept mean alone would not do: it only falls, so
** it goes flat also when the live lens blows up. */
static int settled(const LensFitResult *out, double tol) {
  int ok;
  double change = live_change(out, &ok);
  return ok && fabs(change) <= tol && !diverged(&out->curve[out->n_curve - 1]);
}

/* The fit's steps until it settles, reaches its limit or is stopped;
** returns 1 when stopped by the callback. */
static int fit_loop(Run *r, LensFit *f, const LensFitOptions *o, LensFitResult *out, double *best_kl,
                    Err *err) {
  LensStats s;
  for (int k = 0; k < o->steps; k++) {
    float lr = (float)(o->lr * (1.0 - (double)k / o->steps));
    int rc = fit_step(r, f->lens, o, k, lr, err);
    if (rc != 0) return rc;
    out->info.steps = k + 1;
    if (stop_asked(o, k + 1)) return 1;
    if ((k + 1) % LENSFIT_EVAL_EVERY != 0 && k + 1 != o->steps) continue;
    if (eval_heldout(r, f->lens, &s, err) < 0) return -1;
    keep_best(f, &s, best_kl);
    add_point(out, k + 1, mean_kl(&s), kept_mean(best_kl, s.n - 1));
    if ((out->info.converged = settled(out, o->tol))) break;
  }
  out->diverged = diverged(&out->curve[out->n_curve - 1]);
  return 0;
}

/* The translators a fit starts from: the online lens's on the first fit,
** the last fit's after; the momentum from zero. */
static int fit_start(Run *r, LensFit *f, Err *err) {
  if (r->metrics.fitted_lens.step < 0 && lens_copy_translators(f->lens, r->lens, err) < 0) return -1;
  size_t bytes = lens_state_size(f->lens) * sizeof(float);
  memcpy(f->start, lens_params(f->lens), bytes);
  memcpy(f->best, lens_params(f->lens), bytes);
  f->start_step = lens_step(f->lens);
  lens_clear_momentum(f->lens);
  lens_set_threads(f->lens, r->opt.threads);
  return 0;
}

static void record_fit(Run *r, const LensFitResult *out) {
  RunMetrics *mt = &r->metrics;
  mt->fitted_lens = out->stats;
  mt->fitted = out->info;
  char text[96];
  snprintf(text, sizeof text, HISTORY_EVENT_LENS_FIT ": %ld steps, %s", out->info.steps,
           out->info.converged ? "converged" : out->diverged ? "not converged (diverged)" : "not converged");
  history_event(r->hist, mt->step, text);
  r->dirty = 1;
}

/* ------------------------------------------------------------ the fit */

/* A fit that failed or was stopped: the fitted lens as it started. */
static void fit_undo(LensFit *f) {
  memcpy(lens_params(f->lens), f->start, lens_state_size(f->lens) * sizeof(float));
  lens_set_step(f->lens, f->start_step);
}

/* The fit proper, from the translators 'fit_start' set up. */
static int fit_run(Run *r, LensFit *f, const LensFitOptions *o, LensFitResult *out, Err *err) {
  double best_kl[LAB_MAX_POS];
  LensStats s;
  if (eval_heldout(r, f->lens, &s, err) < 0) return -1;
  for (int l = 0; l < LAB_MAX_POS; l++) best_kl[l] = l < s.n - 1 ? s.kl[l] : INFINITY;
  add_point(out, 0, mean_kl(&s), mean_kl(&s));
  int rc = fit_loop(r, f, o, out, best_kl, err);
  if (rc > 0) {
    out->cancelled = 1;
    err_set(err, "lens fit stopped at lens step %ld of %d; the fitted lens is as before", out->info.steps,
            o->steps);
  }
  if (rc == 0) {
    memcpy(lens_params(f->lens), f->best, lens_state_size(f->lens) * sizeof(float));
    if (eval_heldout(r, f->lens, &out->stats, err) < 0) rc = -1;
  }
  if (rc != 0) {
    fit_undo(f);
    return -1;
  }
  return 0;
}

int run_fit_lens(Run *r, const LensFitOptions *o, LensFitResult *out, Err *err) {
  out->n_curve = 0;
  out->cancelled = 0;
  out->diverged = 0;
  out->info = (LensFitInfo){0, 0, o->lr, o->tol, o->tokens_per_step};
  if (lensfit_check_options(o, err) < 0 || run_refuse_if_fitting(r, "start another fit", err) < 0) return -1;
  if (!out->curve || out->curve_cap < lensfit_curve_cap(o->steps))
    return err_set(err, "lens fit: a curve of %d points is needed for %d steps, got %d", lensfit_curve_cap(o->steps),
                   o->steps, out->curve ? out->curve_cap : 0);
  if (!r->data)
    return err_set(err, "run '%s' has no training data to fit its lens on (a vocabulary of %d is below "
                   "the 256 byte ids)", r->opt.name, model_config(r->model)->vocab);
  if (ensure_fitted_lens(r, err) < 0 || fit_start(r, r->lens_fit, err) < 0) return -1;
  LensFit *f = r->lens_fit;
  r->fitting = 1;   /* until it ends: the host may serve others between lens steps */
  int rc = fit_run(r, f, o, out, err);
  r->fitting = 0;
  if (rc < 0) return -1;
  record_fit(r, out);
  return 0;
}
