/*
** test_lensfit.c -- the tuned lens fitted post hoc on a frozen model: on a
** small model that learned the synthetic language, a fit converges within
** its steps, its live held-out curve falls, it leaves the weights and the
** online lens alone, keeps KL 0 at position L, and beats the online lens
** on a second held-out set not used to choose the kept translators; a
** second fit from its translators is not worse there; what it reports is
** the kept lens on a second fixed set of the validation split that shares
** no token with the one it chose on, evaluated afresh, and not the numbers
** it chose by; a split too short for both is refused; a huge rate is
** reported diverged, not converged; a stopped fit leaves the fitted lens
** and its step count as they were; checkpoints keep the fitted lens bit
** for bit, files without it load without it, and misshapen or
** out-of-range ones are refused; a run without data and bad options are
** refused with messages naming what is wrong. While a fit runs (seen from
** its progress callback, where a host lends the lab), its run refuses to
** train, change its tie, be removed or start another fit, takes other
** changes, and saves the fitted lens of the last fit that ended.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/safetensors.h"
#include "lab/run.h"
#include "live_set.h"
#include "tap.h"

static RunOptions tiny(const char *name) {
  RunOptions o;
  Err err;
  run_options_default(&o);
  const char *kv[][2] = {{"vocab", "384"}, {"dim", "48"},       {"layers", "2"},       {"heads", "2"},
                         {"ctx", "32"},    {"batch", "8"},      {"lr", "0.003"},       {"threads", "1"},
                         {"lens_every", "20"}, {"eval_every", "100"}, {"align_every", "0"}, {"name", name}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (run_options_set_text(&o, kv[i][0], kv[i][1], &err) < 0) diag("setting %s: %s", kv[i][0], err.msg);
  return o;
}

static uint64_t hash_floats(const float *x, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  const unsigned char *p = (const unsigned char *)x;
  for (size_t i = 0; i < n * sizeof *x; i++) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

static uint64_t hash_model(Run *r) {
  Model *m = run_model(r);
  return hash_floats(model_params(m), model_n_floats(m)) ^ hash_floats(model_adam_m(m), model_n_floats(m)) * 3 ^
         hash_floats(model_adam_v(m), model_n_floats(m)) * 7;
}

/* A fit with the defaults; 'out' keeps its curve in 'curve'. */
static int fit(Run *r, LensFitResult *out, LensFitPoint *curve, int cap, Err *err) {
  LensFitOptions o;
  lensfit_default_options(&o);
  out->curve = curve;
  out->curve_cap = cap;
  return run_fit_lens(r, &o, out, err);
}

static int has_event(Run *r, const char *text) {
  int n;
  const HistEvent *e = history_events(run_history(r), &n);
  for (int i = 0; i < n; i++)
    if (strstr(e[i].text, text)) return 1;
  return 0;
}

/* Rows of each held-out set: about 512 positions, at most a batch. */
static int heldout_rows(const ModelConfig *c) { return 512 / c->ctx < c->batch ? 512 / c->ctx : c->batch; }

/* 'ln' on held-out batch 'index' of the validation split, drawn here (0 is
** the one the fit chooses its kept translators on, RUN_VAL_BATCHES - 1 the
** one it reports on), into 's'; the run's step as theirs. */
static int heldout_stats(Run *r, Lens *ln, int index, LensStats *s) {
  const ModelConfig *c = model_config(r->model);
  int rows = heldout_rows(c);
  Err err;
  dataset_val_batch(&r->data->ds, index, RUN_VAL_BATCHES, rows, c->ctx, r->rows);
  batch_split(r->rows, rows, c->ctx, r->inputs, r->targets);
  return lens_eval(ln, r->model, r->inputs, r->targets, rows, c->ctx, r->metrics.step, s, NULL, &err);
}

/* Mean over the translators of the KL in 's'. */
static double mean_kl(const LensStats *s) {
  int L = s->n - 1;
  double sum = 0;
  for (int i = 0; i < L; i++) sum += s->kl[i];
  return L > 0 ? sum / L : NAN;
}

/* Mean KL over the translators of 'ln' on held-out batch 'index'. */
static double heldout_kl(Run *r, Lens *ln, int index) {
  LensStats s;
  return heldout_stats(r, ln, index, &s) < 0 ? NAN : mean_kl(&s);
}

static int stop_at_three(void *ctx, int step, int steps) {
  (void)steps;
  *(int *)ctx = step;
  return step >= 3;
}

/* The fit's own stopping rule, from its curve: the kept mean fell by less
** than tol of itself over the last 'patience' steps. */
static int stalled(const LensFitPoint *p, int n, int patience, double tol) {
  for (int i = n - 2; i >= 0; i--)
    if (p[n - 1].step - p[i].step >= patience) return p[n - 1].kept > (1 - tol) * p[i].kept;
  return 0;
}

/* Records the step it is asked at; stops at the first ask inside a step. */
static int stop_mid_step(void *ctx, int step, int steps) {
  (void)steps;
  *(int *)ctx = step;
  return 1;
}

/* ---- the fit on a trained model */

/* The two held-out sets share no token: each window of the choice set
** ends before every window of the report set starts (the windows rise
** through the split). */
static int sets_apart(Run *r) {
  const ModelConfig *c = model_config(r->model);
  const Dataset *ds = &r->data->ds;
  int rows = heldout_rows(c);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < rows; j++) {
      size_t a = dataset_val_window(ds, 0, RUN_VAL_BATCHES, rows, c->ctx, i);
      size_t b = dataset_val_window(ds, RUN_VAL_BATCHES - 1, RUN_VAL_BATCHES, rows, c->ctx, j);
      if (b <= a + (size_t)c->ctx) return 0;
    }
  return 1;
}

/* What a fit reports is the kept lens on the report set, not where it was
** chosen. 'online': the online lens on the choice set. */
static void test_report(Run *r, const LensFitResult *a, const LensFitPoint *curve, const LensStats *online) {
  int L = model_config(r->model)->layers;
  ok(sets_apart(r), "the choice and report sets share no token of the validation split");
  LensStats fresh, online_report;
  Lens *kept = lensfit_lens(r->lens_fit);
  int same = heldout_stats(r, kept, RUN_VAL_BATCHES - 1, &fresh) == 0 && fresh.n == a->stats.n;
  for (int p = 0; same && p <= L; p++)
    same &= fresh.kl[p] == a->stats.kl[p] && fresh.ce[p] == a->stats.ce[p] && fresh.acc[p] == a->stats.acc[p] &&
            fresh.entropy[p] == a->stats.entropy[p];
  ok(same, "the reported kl, ce, entropy and acc are those of the kept translators on the validation split's last "
     "fixed batch, evaluated afresh");
  int differs = a->chosen.n == L + 1;
  for (int p = 0; p < L; p++) {
    diag("position %d: kept lens %.4f bits where chosen, %.4f on the report set", p, a->chosen.kl[p],
         a->stats.kl[p]);
    differs &= a->chosen.kl[p] != a->stats.kl[p];
  }
  ok(differs, "and differ at every translator from the numbers it was chosen by");
  ok(fabs(mean_kl(&a->chosen) - curve[a->n_curve - 1].kept) < 1e-9,
     "the numbers it was chosen by are the curve's last kept mean (%.6f vs %.6f)", mean_kl(&a->chosen),
     curve[a->n_curve - 1].kept);
  /* The choice picks each translator's luckiest checkpoint on the choice
  ** set: against the online lens, chosen on neither, the kept lens gains
  ** more there than on the report set. */
  double gain_chosen = mean_kl(online) - mean_kl(&a->chosen);
  double gain_report = heldout_stats(r, r->lens, RUN_VAL_BATCHES - 1, &online_report) < 0
                           ? NAN : mean_kl(&online_report) - mean_kl(&a->stats);
  ok(gain_chosen >= gain_report, "its gain over the online lens is no larger on the report set (%.4f bits) than "
     "where it was chosen (%.4f)", gain_report, gain_chosen);
}

static void test_fit(Run *r) {
  Err err;
  const ModelConfig *c = model_config(run_model(r));
  LensFitOptions defaults;
  lensfit_default_options(&defaults);
  int L = c->layers, cap = lensfit_curve_cap(&defaults);
  LensFitPoint *curve = calloc((size_t)cap, sizeof *curve);
  const RunMetrics *mt = run_metrics(r);
  ok(mt->fitted_lens.step == -1 && r->lens_fit == NULL, "before a fit there is no fitted lens");
  size_t pending = run_memory_pending(r);
  ok(run_measure(r, &err) == 0, "the online lens measured on the held-out positions");
  LensStats online = mt->lens;
  uint64_t weights = hash_model(r);
  uint64_t online_lens = hash_floats(lens_params(r->lens), lens_state_size(r->lens));
  long online_steps = lens_step(r->lens);

  LensFitResult a;
  if (fit(r, &a, curve, cap, &err) < 0) {
    ok(0, "the fit: %s", err.msg);
    free(curve);
    return;
  }
  for (int i = a.n_curve > 6 ? a.n_curve - 6 : 0; i < a.n_curve; i++) diag("  step %d: live %.4f kept %.4f", curve[i].step, curve[i].kl, curve[i].kept);
  diag("fit: %ld steps, converged %d, mean KL %.4f -> %.4f over %d points", a.info.steps, a.info.converged,
       curve[0].kl, curve[a.n_curve - 1].kl, a.n_curve);
  int stall = stalled(curve, a.n_curve, LENSFIT_DEFAULT_PATIENCE, LENSFIT_DEFAULT_TOL);
  ok(a.info.converged && stall && !a.diverged && a.info.stopped == LENSFIT_STOP_CONVERGED &&
         a.info.steps < LENSFIT_DEFAULT_STEPS,
     "at the defaults the fit converges before its limit (%ld of %d steps, %s): the kept held-out KL fell by less "
     "than tol over the last %d steps", a.info.steps, LENSFIT_DEFAULT_STEPS, lensfit_stop_name(a.info.stopped),
     LENSFIT_DEFAULT_PATIENCE);
  ok(a.info.seconds > 0 && a.info.patience == LENSFIT_DEFAULT_PATIENCE, "the fit's wall time (%.2f s) and patience",
     a.info.seconds);
  ok(hash_model(r) == weights, "the model's weights and moments are unchanged (hash)");
  ok(hash_floats(lens_params(r->lens), lens_state_size(r->lens)) == online_lens && lens_step(r->lens) == online_steps,
     "the online lens is unchanged");
  ok(a.stats.kl[L] == 0.0, "KL at position L is exactly 0 for the fitted lens (%g)", a.stats.kl[L]);
  int below = 1;
  for (int p = 0; p < L; p++) {
    diag("position %d: online %.4f bits, fitted %.4f bits there", p, online.kl[p], a.chosen.kl[p]);
    below &= a.chosen.n == L + 1 && a.chosen.kl[p] <= online.kl[p];
  }
  ok(below, "on the online lens's held-out positions (where it was chosen) the fitted KL is at no position above "
     "the online one");
  ok(a.chosen.kl[0] < 0.9 * online.kl[0], "the fit improves position 0 (%.4f vs online %.4f)", a.chosen.kl[0],
     online.kl[0]);
  int lsq_beats_logit = a.lsq.n == L + 1, kept_below_start = a.start.n == L + 1;
  for (int p = 0; p < L; p++) {
    diag("position %d: logit lens %.4f, start %.4f, least squares %.4f, fitted %.4f bits", p, mt->logit_lens.kl[p],
         a.start.kl[p], a.lsq.kl[p], a.chosen.kl[p]);
    lsq_beats_logit &= a.lsq.kl[p] < 0.5 * mt->logit_lens.kl[p];
    kept_below_start &= a.chosen.kl[p] <= a.start.kl[p] && a.chosen.kl[p] <= a.lsq.kl[p];
  }
  ok(lsq_beats_logit, "the least-squares start alone has under half the identity translator's KL at every position");
  ok(kept_below_start, "on the positions it was chosen on, the kept KL is at no position above either start (the "
     "one found, least squares)");
  test_report(r, &a, curve, &online);
  double online_other = heldout_kl(r, r->lens, 1), fitted_other = heldout_kl(r, lensfit_lens(r->lens_fit), 1);
  ok(fitted_other < 0.9 * online_other,
     "on a second held-out set, not used to choose them, the kept translators beat the online lens (%.4f vs %.4f)",
     fitted_other, online_other);
  int rising = a.n_curve >= 2 && curve[0].step == 0;
  for (int i = 1; i < a.n_curve; i++) rising &= curve[i].step > curve[i - 1].step;
  ok(rising && curve[a.n_curve - 1].step == a.info.steps, "the curve starts at step 0 and ends at the last step");
  ok(mt->fitted_lens.step == mt->step && memcmp(&mt->fitted_lens, &a.stats, sizeof a.stats) == 0 &&
         mt->fitted.steps == a.info.steps && mt->fitted.converged == a.info.converged,
     "the metrics hold the fit, stamped with the run's step (%ld)", mt->fitted_lens.step);
  ok(has_event(r, "lens fitted: ") && has_event(r, "converged"), "the fit is an event in the history");
  ok(run_memory_pending(r) == pending, "the fitted lens is not part of the run's memory reservation");

  /* A stopped fit leaves the fitted lens and the metrics as they were. */
  uint64_t fitted = hash_floats(lens_params(lensfit_lens(r->lens_fit)), lens_state_size(r->lens));
  LensFitOptions o;
  lensfit_default_options(&o);
  int seen = 0;
  o.progress = stop_at_three;
  o.ctx = &seen;
  LensFitResult b = {.curve = curve, .curve_cap = cap};
  long fitted_steps = lens_step(lensfit_lens(r->lens_fit));
  ok(run_fit_lens(r, &o, &b, &err) < 0 && b.cancelled && seen == 3 && strstr(err.msg, "stopped at lens step 3"),
     "the progress callback stops a fit: %s", err.msg);
  ok(hash_floats(lens_params(lensfit_lens(r->lens_fit)), lens_state_size(r->lens)) == fitted &&
         lens_step(lensfit_lens(r->lens_fit)) == fitted_steps && memcmp(&mt->fitted_lens, &a.stats, sizeof a.stats) == 0,
     "and the fitted lens, its step count (%ld) and its results are as before", fitted_steps);

  /* A step of many forwards is stopped between them, before its update. */
  o.tokens_per_step = 8 * c->ctx * c->batch;
  seen = -1;
  o.progress = stop_mid_step;
  ok(run_fit_lens(r, &o, &b, &err) < 0 && b.cancelled && b.info.steps == 0 && seen == 0 &&
         lens_step(lensfit_lens(r->lens_fit)) == fitted_steps,
     "a stop asked during the first step's forwards ends the fit inside it: %s", err.msg);

  /* Fitting again from the fitted translators: a converged fit barely moves. */
  LensFitResult again;
  if (fit(r, &again, curve, cap, &err) < 0) {
    ok(0, "the second fit: %s", err.msg);
  } else {
    double worst = 0;
    for (int p = 0; p < L; p++) {
      double moved = fabs(again.stats.kl[p] - a.stats.kl[p]) / a.stats.kl[p];
      if (moved > worst) worst = moved;
    }
    ok(worst <= 0.05, "fitting again changes no position's KL by more than 5%% (at most %.2f%%)", 100 * worst);
    double again_other = heldout_kl(r, lensfit_lens(r->lens_fit), 1);
    ok(again_other <= 1.02 * fitted_other, "and is not worse on the second held-out set (%.4f vs %.4f)", again_other,
       fitted_other);
  }
  /* Capped at two steps: stopped by its limit, not converged. */
  LensFitOptions capped;
  lensfit_default_options(&capped);
  capped.steps = 2;
  LensFitResult cp = {.curve = curve, .curve_cap = cap};
  ok(run_fit_lens(r, &capped, &cp, &err) == 0 && cp.info.steps == 2 && !cp.info.converged &&
         cp.info.stopped != LENSFIT_STOP_CONVERGED && !mt->fitted.converged && has_event(r, "2 steps, not converged ("),
     "a fit capped at 2 steps says not converged (%s)", lensfit_stop_name(cp.info.stopped));
  /* A rate far too high: the live lens blows up; never called converged. */
  LensFitOptions hot;
  lensfit_default_options(&hot);
  hot.lr = 1000;
  LensFitResult h = {.curve = curve, .curve_cap = cap};
  if (run_fit_lens(r, &hot, &h, &err) < 0) {
    ok(0, "the fit at lr 1000: %s", err.msg);
  } else {
    diag("lr 1000: %ld steps, live %.4f, kept %.4f", h.info.steps, curve[h.n_curve - 1].kl, curve[h.n_curve - 1].kept);
    ok(!h.info.converged && h.diverged && !mt->fitted.converged && has_event(r, "(diverged)"),
       "a fit at lr 1000 is reported diverged, not converged (live %.4f, kept %.4f)", curve[h.n_curve - 1].kl,
       curve[h.n_curve - 1].kept);
  }
  ok(hash_model(r) == weights, "after both fits the weights are still unchanged");
  free(curve);
}

/* ---- checkpoints */

/* Copy the checkpoint 'src' to 'dst', with tensor 'name' cut to its first
** 'keep' rows ('keep' 0: left out), metadata 'drop' left out and, when
** 'negate' >= 0, row 'negate' of "lens_fit.stats" made negative at
** position 0. */
static int rewrite(const char *src, const char *dst, const char *name, int64_t keep, const char *drop, int negate) {
  StFile f;
  Err err;
  if (st_read(&f, src, &err) < 0) return -1;
  StWriter *w = st_writer_new();
  int rc = 0;
  for (int i = 0; i < f.n && rc == 0; i++) {
    StTensor *t = &f.tensors[i];
    int64_t shape[ST_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    if (name && !strcmp(t->name, name)) {
      if (keep == 0) continue;
      shape[0] = keep;
    }
    if (negate >= 0 && !strcmp(t->name, "lens_fit.stats")) {
      double v;
      unsigned char *at = (unsigned char *)t->data + (size_t)negate * t->shape[1] * sizeof v;
      memcpy(&v, at, sizeof v);
      v = -0.5 - v;
      memcpy(at, &v, sizeof v);
    }
    rc = st_writer_add(w, t->name, t->dtype, t->ndim, shape, t->data, &err);
  }
  for (int i = 0; i < f.n_meta && rc == 0; i++)
    if (!drop || strcmp(f.meta_keys[i], drop)) rc = st_writer_meta(w, f.meta_keys[i], f.meta_vals[i], &err);
  if (rc == 0) rc = st_writer_write(w, dst, &err);
  st_writer_free(w);
  st_free(&f);
  return rc;
}

static void test_checkpoint(Lab *lab, Run *r, const char *dir) {
  Err err;
  char path[512], bad[512];
  snprintf(path, sizeof path, "%s/fitted.safetensors", dir);
  snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
  ok(run_save(r, path, &err) == 0, "a run with a fitted lens saves (%s)", err.msg);
  Run *back = lab_load(lab, path, "back", &err);
  if (!back) {
    ok(0, "and loads: %s", err.msg);
    return;
  }
  Lens *a = lensfit_lens(r->lens_fit), *b = back->lens_fit ? lensfit_lens(back->lens_fit) : NULL;
  ok(b && memcmp(lens_params(a), lens_params(b), lens_state_size(a) * sizeof(float)) == 0 &&
         lens_step(a) == lens_step(b),
     "the fitted translators come back bit for bit, with their step count");
  const RunMetrics *m0 = run_metrics(r), *m1 = run_metrics(back);
  ok(memcmp(&m0->fitted_lens, &m1->fitted_lens, sizeof m0->fitted_lens) == 0 &&
         m0->fitted.steps == m1->fitted.steps && m0->fitted.converged == m1->fitted.converged &&
         m0->fitted.lr == m1->fitted.lr && m0->fitted.tol == m1->fitted.tol &&
         m0->fitted.tokens_per_step == m1->fitted.tokens_per_step,
     "and so do its results (step %ld, %ld steps, converged %d)", m1->fitted_lens.step, m1->fitted.steps,
     m1->fitted.converged);
  lab_remove_run(lab, back);

  ok(rewrite(path, bad, "lens_fit.params", 7, NULL, -1) == 0 && !lab_load(lab, bad, "bad", &err) &&
         strstr(err.msg, "lens_fit.params") && strstr(err.msg, "[7]"),
     "fitted translators of the wrong shape are refused: %s", err.msg);
  ok(rewrite(path, bad, "lens_fit.stats", 2, NULL, -1) == 0 && !lab_load(lab, bad, "bad", &err) &&
         strstr(err.msg, "lens_fit.stats"),
     "fitted results of the wrong shape are refused: %s", err.msg);
  ok(rewrite(path, bad, NULL, 1, NULL, 0) == 0 && !lab_load(lab, bad, "bad", &err) && strstr(err.msg, "kl at position"),
     "a negative fitted KL is refused: %s", err.msg);
  ok(rewrite(path, bad, NULL, 1, NULL, 2) == 0 && !lab_load(lab, bad, "bad", &err) && strstr(err.msg, "entropy at position"),
     "a negative fitted entropy is refused: %s", err.msg);
  ok(rewrite(path, bad, NULL, 0, "lens_fit.lr", -1) == 0 && !lab_load(lab, bad, "bad", &err) &&
         strstr(err.msg, "lens_fit.lr"),
     "fitted results without their metadata are refused: %s", err.msg);
  ok(rewrite(path, bad, "lens_fit.stats", 0, NULL, -1) == 0 && !lab_load(lab, bad, "bad", &err) &&
         strstr(err.msg, "lens_fit.params"),
     "fitted translators without their results are refused: %s", err.msg);
  unlink(bad);
  unlink(path);
}

/* A checkpoint from before any fit loads with no fitted lens. */
static void test_old_checkpoint(Lab *lab, Run *r, const char *dir) {
  Err err;
  char path[512];
  snprintf(path, sizeof path, "%s/old.safetensors", dir);
  StFile f;
  int has = 0;
  if (run_save(r, path, &err) == 0 && st_read(&f, path, &err) == 0) {
    for (int i = 0; i < f.n; i++) has |= strncmp(f.tensors[i].name, "lens_fit.", 9) == 0;
    st_free(&f);
  }
  Run *back = lab_load(lab, path, "old", &err);
  ok(!has && back && !back->lens_fit && run_metrics(back)->fitted_lens.step == -1,
     "a checkpoint without a fitted lens loads with none (%s)", back ? "ok" : err.msg);
  if (back) lab_remove_run(lab, back);
  unlink(path);
}

/* ---- refusals */

/* Under an address-space limit just above what the process holds, the
** fitted lens does not fit: the first fit is refused before allocating. */
static void test_no_room(Run *r) {
  if (TAP_UNDER_ASAN) {
    skip("RLIMIT_AS means nothing under AddressSanitizer");
    return;
  }
  struct rlimit old, lim;
  getrlimit(RLIMIT_AS, &old);
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0;
  if (!f || fscanf(f, "%ld", &pages) != 1) pages = 0;
  if (f) fclose(f);
  lim = old;
  lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + lensfit_memory_bytes(model_config(r->model)) / 4;
  if (old.rlim_max != RLIM_INFINITY && lim.rlim_cur > old.rlim_max) lim.rlim_cur = old.rlim_max;
  setrlimit(RLIMIT_AS, &lim);
  Err err = {""};
  LensFitOptions o;
  lensfit_default_options(&o);
  LensFitPoint curve[LENSFIT_DEFAULT_STEPS / LENSFIT_EVAL_EVERY + 2];
  LensFitResult out = {.curve = curve, .curve_cap = lensfit_curve_cap(&o)};
  int rc = run_fit_lens(r, &o, &out, &err);
  setrlimit(RLIMIT_AS, &old);
  ok(rc < 0 && strstr(err.msg, "the fitted lens of run 'fit' needs ") && !r->lens_fit &&
         run_metrics(r)->fitted_lens.step == -1,
     "a fitted lens that does not fit in memory is refused cleanly: %s", err.msg);
}

static void test_refusals(Lab *lab, Run *r) {
  Err err;
  LensFitPoint curve[LENSFIT_DEFAULT_STEPS / LENSFIT_EVAL_EVERY + 2];
  LensFitResult out = {.curve = curve, .curve_cap = (int)(sizeof curve / sizeof curve[0])};
  static const struct {
    const char *key;
    int steps, tokens;
    double lr, tol;
  } bad[] = {
    {"'steps'", 0, 64, 0.1, 1e-3},
    {"'tokens_per_step'", 5, 0, 0.1, 1e-3},
    {"'lr'", 5, 64, 0, 1e-3},
    {"'tol'", 5, 64, 0.1, -1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    LensFitOptions o;
    lensfit_default_options(&o);
    o.steps = bad[i].steps;
    o.tokens_per_step = bad[i].tokens;
    o.lr = bad[i].lr;
    o.tol = bad[i].tol;
    ok(run_fit_lens(r, &o, &out, &err) < 0 && strstr(err.msg, bad[i].key), "a bad %s is refused: %s", bad[i].key,
       err.msg);
  }
  ModelConfig c = {64, 32, 2, 2, 16, 4, 0};
  RunOptions o = tiny("nodata");
  o.model = c;
  Model *m = model_create(&c, 1, &err);
  Run *nodata = m ? run_create(lab, &o, m, &err) : NULL;
  if (nodata) model_init(run_model(nodata), 1);
  LensFitOptions fo;
  lensfit_default_options(&fo);
  ok(nodata && run_fit_lens(nodata, &fo, &out, &err) < 0 && strstr(err.msg, "no training data") &&
         !nodata->lens_fit && run_metrics(nodata)->fitted_lens.step == -1,
     "a run with no data is refused cleanly: %s", err.msg);
  run_destroy(nodata);
}

/* A validation split too short for two held-out sets apart: 4100 bytes of
** corpus (the least a corpus may be) at the byte vocabulary hold 410
** validation tokens, where windows of 257 tokens at its two ends overlap. */
static void test_short_split(Lab *lab, const char *dir) {
  Err err;
  char corpus[512];
  snprintf(corpus, sizeof corpus, "%s/short.txt", dir);
  FILE *fp = fopen(corpus, "w");
  for (int i = 0; fp && i < 4100; i++) fputc("the cat sat on the mat\n"[i % 23], fp);
  if (fp) fclose(fp);
  RunOptions o = tiny("short");
  run_options_set_text(&o, "vocab", "256", &err);
  run_options_set_text(&o, "corpus", corpus, &err);
  run_options_set_text(&o, "ctx", "256", &err);
  Run *r = lab_add_run(lab, &o, &err);
  LensFitPoint curve[LENSFIT_DEFAULT_STEPS / LENSFIT_EVAL_EVERY + 2];
  LensFitResult out = {.curve = curve, .curve_cap = (int)(sizeof curve / sizeof curve[0])};
  LensFitOptions fo;
  lensfit_default_options(&fo);
  ok(r && run_fit_lens(r, &fo, &out, &err) < 0 && strstr(err.msg, "too short for two held-out sets") &&
         !r->lens_fit && run_metrics(r)->fitted_lens.step == -1,
     "a validation split too short for a report set apart from the choice set is refused: %s", err.msg);
  if (r) lab_remove_run(lab, r);
  unlink(corpus);
}

/* What a fit in progress lets in, tried once from its progress callback. */
typedef struct Midway {
  Lab *lab;
  Run *r;
  const char *path;     /* saved here midway */
  int tried;
  int step_refused, train_refused, tie_refused, remove_refused, refit_refused, lr_taken, saved;
  uint64_t midway_hash;   /* the translators midway, and their step count */
  long midway_steps;
  char msg[ERR_MSG_MAX];
} Midway;

static int try_midway(void *ctx, int step, int steps) {
  Midway *m = ctx;
  (void)steps;
  if (m->tried || step < 3) return 0;
  m->tried = 1;
  Err err;
  Run *r = m->r;
  Lens *ln = lensfit_lens(r->lens_fit);
  m->midway_hash = hash_floats(lens_params(ln), lens_state_size(ln));
  m->midway_steps = lens_step(ln);
  m->step_refused = run_step(r, &err) < 0 && strstr(err.msg, "is fitting its lens: it cannot train");
  snprintf(m->msg, sizeof m->msg, "%s", err.msg);
  int32_t rows[2 * 33] = {0};
  m->train_refused = run_train_on(r, rows, 2, 32, &err) < 0 && strstr(err.msg, "cannot train");
  m->tie_refused = live_text(r, "tie", "untied", &err) < 0 && strstr(err.msg, "cannot change its tie") &&
                   model_config(run_model(r))->tie_k == model_config(run_model(r))->dim;
  m->remove_refused = lab_remove_run(m->lab, r) < 0 && lab_run_by_id(m->lab, run_id(r)) == r;
  LensFitOptions o;
  lensfit_default_options(&o);
  LensFitPoint curve[8];
  LensFitResult out = {.curve = curve, .curve_cap = 8};
  o.steps = 1;
  m->refit_refused = run_fit_lens(r, &o, &out, &err) < 0 && strstr(err.msg, "cannot start another fit");
  double lr = run_options(r)->lr;
  m->lr_taken = live_number(r, "lr", lr * 2, &err) == 0 && live_number(r, "lr", lr, &err) == 0;
  m->saved = run_save(r, m->path, &err) == 0;
  return 0;
}

static void test_midway(Lab *lab, Run *r, const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/midway.safetensors", dir);
  Lens *ln = lensfit_lens(r->lens_fit);
  uint64_t before = hash_floats(lens_params(ln), lens_state_size(ln));
  long before_steps = lens_step(ln);
  uint64_t weights = hash_model(r);
  Midway m = {.lab = lab, .r = r, .path = path};
  LensFitOptions o;
  lensfit_default_options(&o);
  o.steps = 20;
  o.progress = try_midway;
  o.ctx = &m;
  LensFitPoint curve[64];
  LensFitResult out = {.curve = curve, .curve_cap = 64};
  Err err;
  int rc = run_fit_lens(r, &o, &out, &err);
  ok(rc == 0 && m.tried, "a fit with a callback that tries what a lent lab may do (%s)", rc ? err.msg : "ok");
  ok(m.step_refused, "midway, the run refuses a step: %s", m.msg);
  ok(m.train_refused && m.tie_refused && m.remove_refused && m.refit_refused,
     "and r:train_on, a tie change, its removal and another fit (%d %d %d %d)", m.train_refused, m.tie_refused,
     m.remove_refused, m.refit_refused);
  ok(m.lr_taken && !run_fitting(r), "a change that does not touch the fit is taken; after it the run is free");
  ok(hash_model(r) == weights, "the weights are as before the fit");
  Run *back = m.saved ? lab_load(lab, path, "midway", &err) : NULL;
  Lens *bl = back && back->lens_fit ? lensfit_lens(back->lens_fit) : NULL;
  if (!bl) diag("saved %d, loaded: %s", m.saved, back ? "without a fitted lens" : err.msg);
  ok(bl && hash_floats(lens_params(bl), lens_state_size(bl)) == before && lens_step(bl) == before_steps &&
     m.midway_hash != before && m.midway_steps > before_steps,
     "saved midway, the checkpoint holds the fitted lens of the last fit that ended, not the half-way one");
  if (back) lab_remove_run(lab, back);
  unlink(path);
}

int main(void) {
  Err err;
  char dir[] = "/tmp/tielab-lensfit.XXXXXX";
  if (!mkdtemp(dir)) return bail_out("cannot create a temporary folder in %s", dir);
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("fit");
  Run *r = lab ? lab_add_run(lab, &o, &err) : NULL;
  if (!r) {
    ok(0, "a tiny run: %s", err.msg);
    return tap_done();
  }
  for (int i = 0; i < 200; i++)
    if (run_step(r, &err) < 0) break;
  ok(run_metrics(r)->step == 200, "the tiny run trained 200 steps (loss %.3f)", run_metrics(r)->loss);
  test_refusals(lab, r);
  test_short_split(lab, dir);
  test_no_room(r);
  test_old_checkpoint(lab, r, dir);
  test_fit(r);
  if (r->lens_fit) test_checkpoint(lab, r, dir);
  if (r->lens_fit) test_midway(lab, r, dir);
  lab_free(lab);
  rmdir(dir);
  return tap_done();
}
