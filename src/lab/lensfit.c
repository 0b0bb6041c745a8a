/*
** lensfit.c -- see lensfit.h: the post-hoc fit of the tuned lens on a
** frozen run. How its defaults were chosen: docs/architecture.md.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/sysmem.h"
#include "core/rng.h"
#include "lab/linalg_d.h"
#include "lab/run.h"

#define LENSFIT_SEED_TAG 0x6c656e73666974ULL   /* "lensfit": the fit's own batches */
#define LENSFIT_LSQ_TAG 0x6c656e736c7371ULL    /* "lenslsq": the least-squares start's batches */

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
  o->patience = LENSFIT_DEFAULT_PATIENCE;
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
  if (o->patience < 1 || o->patience > LENSFIT_MAX_STEPS)
    return err_set(err, "'patience' must be an integer in [1, %d], got %d", LENSFIT_MAX_STEPS, o->patience);
  return 0;
}

/* Lens steps between held-out measurements: LENSFIT_EVAL_EVERY, or the
** patience when that is shorter, so the window is always measured. */
static int eval_every(const LensFitOptions *o) {
  return o->patience < LENSFIT_EVAL_EVERY ? o->patience : LENSFIT_EVAL_EVERY;
}

int lensfit_curve_cap(const LensFitOptions *o) { return o->steps / eval_every(o) + 2; }

static const char *const stop_names[] = {
  [LENSFIT_STOP_CONVERGED] = "converged",
  [LENSFIT_STOP_DIVERGED] = "diverged",
  [LENSFIT_STOP_MAX_STEPS] = "max_steps",
};

const char *lensfit_stop_name(LensFitStop s) {
  return (unsigned)s < sizeof stop_names / sizeof stop_names[0] ? stop_names[s] : "?";
}

/* ------------------------------------------------------------ the pieces */

/* The fitted lens is made on the first fit: check that it fits. */
static int ensure_fitted_lens(Run *r, Err *err) {
  if (r->lens_fit) return 0;
  const ModelConfig *c = model_config(r->model);
  size_t need = lensfit_memory_bytes(c);
  SysMem m;
  lab_headroom(r->lab, &m);
  char what[160];
  snprintf(what, sizeof what, "the fitted lens of run '%s'", r->opt.name);
  if (sysmem_check_in(&m, need, what, err) < 0) return -1;
  return (r->lens_fit = lensfit_new(c, err)) ? 0 : -1;
}

/* Mean over the translators (positions 0..L-1) of the KL. */
static double mean_kl(const LensStats *s) {
  int L = s->n - 1;
  double sum = 0;
  for (int i = 0; i < L; i++) sum += s->kl[i];
  return L > 0 ? sum / L : 0;
}

/* The lens on the 'rows' held-out rows now in r->inputs, r->targets. */
static int eval_rows(Run *r, Lens *ln, int rows, LensStats *s, Err *err) {
  return lens_eval(ln, r->model, r->inputs, r->targets, rows, model_config(r->model)->ctx,
                   r->metrics.step, s, NULL, err);
}

/* The lens on the fixed held-out positions of the online lens, which the
** fit chooses on: drawn from the validation split, apart from every
** position the fit trains on. */
static int eval_heldout(Run *r, Lens *ln, LensStats *s, Err *err) {
  return eval_rows(r, ln, run_lens_heldout(r), s, err);
}

/* The lens on the second held-out set, which the fit never chooses on. */
static int eval_report(Run *r, Lens *ln, LensStats *s, Err *err) {
  int rows = run_lens_report(r, err);
  return rows < 0 ? -1 : eval_rows(r, ln, rows, s, err);
}

/* The progress callback: nonzero to stop. */
static int stop_asked(const LensFitOptions *o, int done) {
  return o->progress && o->progress(o->ctx, done, o->steps);
}

/* Forward the model on batch 'j' of the fit's own training batches drawn
** from 'seed': 'b' rows of T tokens. */
static void forward_batch(Run *r, uint64_t seed, int j, int b) {
  int T = model_config(r->model)->ctx;
  dataset_train_batch(&r->data->ds, seed, (uint64_t)j, b, T, r->rows);
  batch_split(r->rows, b, T, r->inputs, r->targets);
  model_forward(r->model, r->inputs, NULL, b, T);
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
    forward_batch(r, seed, j, b);
    if (lens_grad_add(ln, r->model, b, T, n, tokens, rng_mix(seed, (uint64_t)j), err) < 0) return -1;
    done += n;
  }
  return lens_update(ln, lr, err);
}

/* ------------------------------------------------------------ the least-squares start
** For each position l the affine map that best carries the residual
** stream there onto the final one (before ln_f), in the least-squares
** sense, over LENSFIT_LSQ_POSITIONS positions of the fit's own training
** batches: h_L ~ W h_l + c. As a translator h' = h + A h + b that is
** A = W - I, b = c. The columns are centred first (the intercept then
** comes from the means), which keeps the problem well conditioned. */

/* Positions of the start: at least LENSFIT_LSQ_POSITIONS, and 8 per
** unknown of a translator's row. */
static int lsq_positions(const ModelConfig *c) {
  int n = 8 * (c->dim + 1);
  return n > LENSFIT_LSQ_POSITIONS ? n : LENSFIT_LSQ_POSITIONS;
}

static size_t lsq_bytes(const ModelConfig *c) {
  size_t n = (size_t)lsq_positions(c), d = (size_t)c->dim;
  return (size_t)(c->layers + 1) * n * d * sizeof(float) + 2 * (n + 1) * d * sizeof(double);
}

/* The residual streams at every position 0..L of 'n' positions, into
** h [(L+1), n, d]. Returns 1 when stopped. */
static int lsq_gather(Run *r, const LensFitOptions *o, float *h, int n) {
  const ModelConfig *c = model_config(r->model);
  int d = c->dim, L = c->layers, per = c->batch * c->ctx;
  uint64_t seed = rng_mix(r->opt.data_seed ^ LENSFIT_LSQ_TAG, (uint64_t)lens_step(lensfit_lens(r->lens_fit)));
  for (int done = 0, j = 0; done < n; j++) {
    if (stop_asked(o, 0)) return 1;
    forward_batch(r, seed, j, c->batch);
    int take = n - done < per ? n - done : per;
    for (int l = 0; l <= L; l++)
      memcpy(h + ((size_t)l * n + done) * d, model_residual(r->model, l), (size_t)take * d * sizeof(float));
    done += take;
  }
  return 0;
}

/* x - its column means, in double, into 'out' [n, d]; the means into 'mean'. */
static void centre(const float *x, int n, int d, double *out, double *mean) {
  for (int j = 0; j < d; j++) mean[j] = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < d; j++) mean[j] += x[(size_t)i * d + j];
  for (int j = 0; j < d; j++) mean[j] /= n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < d; j++) out[(size_t)i * d + j] = x[(size_t)i * d + j] - mean[j];
}

/* Translator 'l' of 'params' from the residual streams 'h' gathered by
** lsq_gather: the least-squares map from position l onto position L.
** Scratch: a and b [n, d], xm [2d] (the column means). */
static int lsq_translator(const float *h, int n, int d, int L, int l, float *params, double *a, double *b,
                          double *xm, Err *err) {
  double *ym = xm + d;
  centre(h + (size_t)l * n * d, n, d, a, xm);
  centre(h + (size_t)L * n * d, n, d, b, ym);
  if (linalg_d_lstsq(a, n, d, b, d, LENSFIT_LSQ_RCOND, NULL, err) < 0) return -1;
  /* b's first d rows are W^T [in, out]; A is [out, in] */
  float *A = params + (size_t)l * ((size_t)d * d + d), *bias = A + (size_t)d * d;
  for (int o = 0; o < d; o++) {
    double c = ym[o];
    for (int i = 0; i < d; i++) {
      double w = b[(size_t)i * d + o];
      A[(size_t)o * d + i] = (float)(w - (i == o));
      c -= w * xm[i];
    }
    bias[o] = (float)c;
  }
  return 0;
}

/* Every translator of 'ln' set to its least-squares map. Returns 1 when
** stopped (the translators then as they were), LSQ_SKIPPED when the
** residual streams it gathers would not fit in the memory the process may
** still take (then the fit starts from the translators it found alone). */
#define LSQ_SKIPPED 2
static int lsq_start(Run *r, Lens *ln, const LensFitOptions *o, Err *err) {
  const ModelConfig *c = model_config(r->model);
  int n = lsq_positions(c), d = c->dim, L = c->layers;
  SysMem m;
  lab_headroom(r->lab, &m);
  if (lsq_bytes(c) > m.headroom) return LSQ_SKIPPED;   /* a large model: the fit starts from what it has */
  float *h = malloc((size_t)(L + 1) * n * d * sizeof *h);
  double *a = malloc((size_t)n * d * sizeof *a), *b = malloc((size_t)n * d * sizeof *b);
  double *means = malloc(2 * (size_t)d * sizeof *means);
  int rc = !h || !a || !b || !means ? err_set(err, "out of memory for the least-squares start of the lens fit") : 0;
  if (rc == 0) rc = lsq_gather(r, o, h, n);
  for (int l = 0; rc == 0 && l < L; l++) rc = lsq_translator(h, n, d, L, l, lens_params(ln), a, b, means, err);
  free(h);
  free(a);
  free(b);
  free(means);
  return rc;
}

/* ------------------------------------------------------------ what is kept */

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

/* ------------------------------------------------------------ when to stop */

/* The live lens ended well above the translators kept, relatively and by
** more than the held-out noise: the rate was too high for the fit to hold
** the best point it passed. */
static int diverged(const LensFitPoint *end) {
  if (!isfinite(end->kl)) return 1;   /* blown up to inf or NaN, which no comparison catches */
  return end->kl > (1 + LENSFIT_DIVERGED_GAP) * end->kept && end->kl > end->kept + LENSFIT_DIVERGED_FLOOR;
}

/* The held-out KL no longer improves: the kept mean is above (1 - tol)
** times what it was 'patience' lens steps ago (the last point at least
** that far back, from point 'from' on: the last restart). 0 while that
** stretch is shorter than the patience. */
static int stalled(const LensFitResult *out, const LensFitOptions *o, int from) {
  const LensFitPoint *now = &out->curve[out->n_curve - 1];
  for (int i = out->n_curve - 2; i >= from; i--)
    if (now->step - out->curve[i].step >= o->patience) return now->kept > (1 - o->tol) * out->curve[i].kept;
  return 0;
}

/* Back to the kept translators with the momentum cleared (the caller
** halves the rate): the stall is judged again from the curve's last point,
** whose kept mean is where this stretch starts. */
static void restart_from_kept(LensFit *f, const LensFitResult *out, int *from) {
  memcpy(lens_params(f->lens), f->best, lens_state_size(f->lens) * sizeof(float));
  lens_clear_momentum(f->lens);
  *from = out->n_curve - 1;
}

/* The fit's steps until its held-out KL stalls with the live lens holding
** the kept one, the rate has been halved LENSFIT_BACKOFFS times in vain,
** it reaches its limit or is stopped; returns 1 when stopped by the
** callback. */
static int fit_loop(Run *r, LensFit *f, const LensFitOptions *o, LensFitResult *out, double *best_kl,
                    Err *err) {
  LensStats s;
  int every = eval_every(o), stall = 0, from = 0, backoffs = 0;
  double rate = o->lr;
  for (int k = 0; k < o->steps && !stall; k++) {
    float lr = (float)(rate * (1.0 - (double)k / o->steps));
    int rc = fit_step(r, f->lens, o, k, lr, err);
    if (rc != 0) return rc;
    out->info.steps = k + 1;
    if (stop_asked(o, k + 1)) return 1;
    if ((k + 1) % every != 0 && k + 1 != o->steps) continue;
    if (eval_heldout(r, f->lens, &s, err) < 0) return -1;
    keep_best(f, &s, best_kl);
    double kept = kept_mean(best_kl, s.n - 1);
    add_point(out, k + 1, mean_kl(&s), kept);
    stall = stalled(out, o, from);
    if (stall && diverged(&out->curve[out->n_curve - 1]) && backoffs < LENSFIT_BACKOFFS) {
      backoffs++;
      rate /= 2;
      restart_from_kept(f, out, &from);
      stall = 0;
    }
  }
  out->diverged = diverged(&out->curve[out->n_curve - 1]);
  out->info.converged = stall && !out->diverged;
  out->info.stopped = out->diverged ? LENSFIT_STOP_DIVERGED : stall ? LENSFIT_STOP_CONVERGED : LENSFIT_STOP_MAX_STEPS;
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
           out->info.converged ? "converged" : out->diverged ? "not converged (diverged)"
                                                            : "not converged (max_steps)");
  history_event(r->hist, mt->step, text);
  r->dirty = 1;
}

/* ------------------------------------------------------------ the fit */

/* A fit that failed or was stopped: the fitted lens as it started. */
static void fit_undo(LensFit *f) {
  memcpy(lens_params(f->lens), f->start, lens_state_size(f->lens) * sizeof(float));
  lens_set_step(f->lens, f->start_step);
}

/* Where the fit starts, per translator: the better on the held-out
** positions of the translators it found ('out->start') and their
** least-squares maps ('out->lsq'). Returns 1 when stopped. */
static int fit_begin(Run *r, LensFit *f, const LensFitOptions *o, LensFitResult *out, double *best_kl, Err *err) {
  if (eval_heldout(r, f->lens, &out->start, err) < 0) return -1;
  for (int l = 0; l < LAB_MAX_POS; l++) best_kl[l] = l < out->start.n - 1 ? out->start.kl[l] : INFINITY;
  int rc = lsq_start(r, f->lens, o, err);
  if (rc == LSQ_SKIPPED) {
    out->lsq.n = 0;   /* no least-squares start: the table has no lsq_kl */
  } else {
    if (rc != 0) return rc;
    if (eval_heldout(r, f->lens, &out->lsq, err) < 0) return -1;
    keep_best(f, &out->lsq, best_kl);
  }
  memcpy(lens_params(f->lens), f->best, lens_state_size(f->lens) * sizeof(float));
  double kept = kept_mean(best_kl, out->start.n - 1);
  add_point(out, 0, kept, kept);   /* per position the lens now is the kept one */
  return 0;
}

/* The fit proper, from the translators 'fit_start' set up. */
static int fit_run(Run *r, LensFit *f, const LensFitOptions *o, LensFitResult *out, Err *err) {
  double best_kl[LAB_MAX_POS];
  int rc = fit_begin(r, f, o, out, best_kl, err);
  if (rc == 0) rc = fit_loop(r, f, o, out, best_kl, err);
  if (rc > 0) {
    out->cancelled = 1;
    err_set(err, "lens fit stopped at lens step %ld of %d; the fitted lens is as before", out->info.steps,
            o->steps);
  }
  if (rc == 0) {
    memcpy(lens_params(f->lens), f->best, lens_state_size(f->lens) * sizeof(float));
    if (eval_heldout(r, f->lens, &out->chosen, err) < 0 || eval_report(r, f->lens, &out->stats, err) < 0) rc = -1;
  }
  if (rc != 0) {
    fit_undo(f);
    return -1;
  }
  return 0;
}

int run_fit_lens(Run *r, const LensFitOptions *o, LensFitResult *out, Err *err) {
  double t0 = clock_seconds();
  out->n_curve = 0;
  out->cancelled = 0;
  out->diverged = 0;
  out->info = (LensFitInfo){.lr = o->lr, .tol = o->tol, .tokens_per_step = o->tokens_per_step,
                            .patience = o->patience, .stopped = LENSFIT_STOP_MAX_STEPS};
  out->start.n = out->lsq.n = out->chosen.n = 0;
  if (lensfit_check_options(o, err) < 0 || run_refuse_if_fitting(r, "start another fit", err) < 0) return -1;
  if (!out->curve || out->curve_cap < lensfit_curve_cap(o))
    return err_set(err, "lens fit: a curve of %d points is needed for %d steps, got %d", lensfit_curve_cap(o),
                   o->steps, out->curve ? out->curve_cap : 0);
  if (run_refuse_no_corpus(r, "fit its lens on", err) < 0) return -1;
  if (!r->data)
    return err_set(err, "run '%s' has no training data to fit its lens on (a vocabulary of %d is below "
                   "the 256 byte ids)", r->opt.name, model_config(r->model)->vocab);
  /* Both held-out sets must fit in the split before the fit starts. */
  if (run_lens_report(r, err) < 0) return -1;
  if (ensure_fitted_lens(r, err) < 0 || fit_start(r, r->lens_fit, err) < 0) return -1;
  LensFit *f = r->lens_fit;
  r->fitting = 1;   /* until it ends: the host may serve others between lens steps */
  int rc = fit_run(r, f, o, out, err);
  r->fitting = 0;
  out->info.seconds = clock_seconds() - t0;
  if (rc < 0) return -1;
  record_fit(r, out);
  return 0;
}
