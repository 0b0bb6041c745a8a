/*
** test_lab.c -- the lab end to end: a small model learns the synthetic
** language, checkpoints round-trip bit-exactly and resume bit-identically,
** bad checkpoints are refused cleanly, a NaN loss pauses only its run, live
** tie toggles keep training, and a tied run finds its untied partner.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab/run.h"
#include "tap.h"

static RunOptions tiny(const char *name, const char *tie) {
  RunOptions o;
  Err err;
  run_options_default(&o);
  const char *kv[][2] = {{"vocab", "384"}, {"dim", "48"}, {"layers", "2"}, {"heads", "2"}, {"ctx", "32"},
                         {"batch", "8"},   {"tie", tie},   {"lr", "0.003"}, {"threads", "1"}, {"lens_every", "5"},
                         {"eval_every", "25"}, {"align_every", "10"}, {"name", name}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (run_options_set_text(&o, kv[i][0], kv[i][1], &err) < 0) diag("setting %s: %s", kv[i][0], err.msg);
  return o;
}

static double unigram_entropy(const Run *r) {
  const Dataset *ds = &r->data->ds;
  int v = model_config(r->model)->vocab;
  double *count = calloc((size_t)v, sizeof *count), h = 0;
  for (size_t i = 0; i < ds->n_train; i++) count[ds->tokens[i]] += 1;
  for (int i = 0; i < v; i++)
    if (count[i] > 0) {
      double p = count[i] / (double)ds->n_train;
      h -= p * log(p);
    }
  free(count);
  return h;
}

static void test_unmeasured_is_nan(void) {
  Err err;
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("fresh", "tied");
  Run *r = lab_add_run(lab, &o, &err);
  if (!r) {
    ok(0, "a fresh run: %s", err.msg);
    return;
  }
  const RunMetrics *m = run_metrics(r);
  ok(isnan(m->loss) && isnan(m->grad_ratio) && isnan(m->tokens_per_s) && isnan(m->val_loss) && isnan(m->drift_in),
     "before any step nothing reads as a measured 0");
  run_set_number(r, "eval_every", 0, &err);
  run_step(r, &err);
  ok(m->val_step == -1 && m->lens.step == -1, "eval_every 0 turns validation and lens evaluation off");
  run_set_number(r, "eval_every", 1, &err);
  run_set_number(r, "lens_every", 0, &err);
  run_step(r, &err);
  ok(m->val_step == 2 && m->logit_lens.step == 2 && m->lens.step == -1,
     "with lens training off only the logit lens is reported");
  lab_free(lab);
}

static void test_learns(void) {
  Err err;
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("learner", "tied");
  Run *r = lab_add_run(lab, &o, &err);
  ok(r != NULL, "a tiny run is created (%s)", r ? "ok" : err.msg);
  if (!r) return;
  double h = unigram_entropy(r), first = 0;
  for (int i = 0; i < 300; i++) {
    if (run_step(r, &err) < 0) break;
    if (i == 0) first = run_metrics(r)->loss;
  }
  const RunMetrics *m = run_metrics(r);
  diag("unigram entropy %.3f nats; loss %.3f at step 1, %.3f at step %ld; val %.3f", h, first, m->loss, m->step,
       m->val_loss);
  ok(m->step == 300, "300 steps taken");
  ok(m->val_loss < h - 0.5, "validation loss %.3f falls well below the unigram entropy %.3f", m->val_loss, h);
  ok(m->lens.step > 0 && m->lens.n == 3, "lens evaluated at %ld over %d positions", m->lens.step, m->lens.n);
  ok(m->lens.kl[2] == 0.0, "tuned lens at the last position equals the model (KL %g)", m->lens.kl[2]);
  ok(m->grad.in_l2 > 0 && m->grad.out_l2 > 0 && m->grad.in_act_l2 > 0, "gradient flow measured");
  ok(m->drift_in < 1.0 && m->drift_in > -1.0, "drift of E_in from step 0 measured (%.3f)", m->drift_in);
  static double ni[384], no[384], lf[384];
  int nr = run_row_norms(r, ni, no, lf, 384, &err);
  ok(nr > 100 && ni[0] > 0 && no[0] > 0, "row norms against log frequency for %d seen tokens", nr);
  ok(m->normfreq_in >= -1 && m->normfreq_in <= 1 && m->normfreq_out >= -1 && m->normfreq_out <= 1,
     "row norm / log frequency correlation: E_in %.3f, E_out %.3f", m->normfreq_in, m->normfreq_out);
  char text[512];
  ok(run_sample(r, "The", 20, 0.8, 7, text, sizeof text, &err) == 0 && strlen(text) > 0, "sampled text: %.60s",
     text);
  int n;
  const HistBucket *b = history_series(run_history(r), "loss", &n);
  ok(b && n > 0 && b[0].step_first == 1, "history keeps the loss from step 1 (%d buckets)", n);
  lab_free(lab);
}

static int same_floats(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

static void test_checkpoint_resume(const char *dir) {
  Err err;
  char path[512];
  snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("a", "untied");
  Run *a = lab_add_run(lab, &o, &err);
  if (!a) {
    ok(0, "run for the checkpoint test: %s", err.msg);
    return;
  }
  for (int i = 0; i < 12; i++) run_step(a, &err);
  int saved = run_save(a, path, &err);
  ok(saved == 0, "checkpoint saved (%s)", saved == 0 ? path : err.msg);
  Run *b = lab_load(lab, path, "b", &err);
  ok(b != NULL, "checkpoint loaded as a second run (%s)", b ? "ok" : err.msg);
  if (!b) return;
  Model *ma = run_model(a), *mb = run_model(b);
  size_t n = model_n_floats(ma);
  ok(n == model_n_floats(mb) && same_floats(model_params(ma), model_params(mb), n) &&
         same_floats(model_adam_m(ma), model_adam_m(mb), n) && same_floats(model_adam_v(ma), model_adam_v(mb), n),
     "weights and both moments round-trip bit-exactly");
  ok(run_metrics(b)->step == 12 && model_adam_t(mb) == model_adam_t(ma), "step and optimizer count restored");
  int identical = 1;
  for (int i = 0; i < 15; i++) {
    run_step(a, &err);
    run_step(b, &err);
    if (run_metrics(a)->loss != run_metrics(b)->loss) identical = 0;
  }
  ok(identical, "a resumed run gives bit-identical losses (%.9g vs %.9g)", run_metrics(a)->loss,
     run_metrics(b)->loss);
  int nh;
  ok(history_series(run_history(b), "loss", &nh) && nh >= 27, "history travels with the checkpoint");
  ok(lab_load(lab, path, "b", &err) == NULL && strstr(err.msg, "already exists"), "a duplicate name is refused: %s",
     err.msg);
  lab_free(lab);
}

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

static void write_prefix(const char *src, const char *dst, long n) {
  FILE *f = fopen(src, "rb"), *g = fopen(dst, "wb");
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  fwrite(buf, 1, got, g);
  free(buf);
  fclose(f);
  fclose(g);
}

static void test_bad_checkpoints(const char *dir) {
  Err err;
  char good[512], bad[512];
  snprintf(good, sizeof good, "%s/ckpt.safetensors", dir);
  snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
  Lab *lab = lab_new(&err);
  long size = file_size(good);
  const double cuts[] = {0.0, 0.001, 0.3, 0.7, 0.999};
  int clean = 1;
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    write_prefix(good, bad, (long)(cuts[i] * (double)size));
    Run *r = lab_load(lab, bad, NULL, &err);
    if (r || !strstr(err.msg, "bad.safetensors")) clean = 0;
    diag("cut at %.1f%%: %s", 100 * cuts[i], r ? "LOADED" : err.msg);
  }
  ok(clean, "truncated checkpoints are refused with a message naming the file");
  ok(lab_load(lab, "/nonexistent/x.safetensors", NULL, &err) == NULL && strstr(err.msg, "x.safetensors"),
     "a missing file is refused: %s", err.msg);
  ok(lab_n_runs(lab) == 0, "nothing half-loaded is left in the lab");
  lab_free(lab);
}

static void test_nan_pauses(void) {
  Err err;
  Lab *lab = lab_new(&err);
  RunOptions o1 = tiny("sick", "tied"), o2 = tiny("well", "tied");
  Run *a = lab_add_run(lab, &o1, &err), *b = lab_add_run(lab, &o2, &err);
  if (!a || !b) {
    ok(0, "runs for the NaN test: %s", err.msg);
    return;
  }
  lab_step(lab, &err);
  Model *m = run_model(a);
  const TensorInfo *wte = model_find_tensor(m, "transformer.wte.weight");
  float *w = model_params(m) + wte->offset;
  for (size_t i = 0; i < wte->numel; i++) w[i] = NAN;
  int rc = lab_step(lab, &err);
  ok(rc < 0 && strstr(err.msg, "step 2") && strstr(err.msg, "sick"), "a NaN loss is reported with the run and step: %s",
     err.msg);
  ok(run_metrics(a)->paused && run_metrics(a)->step == 1, "the sick run is paused at step 1");
  ok(run_metrics(b)->step == 2 && !run_metrics(b)->paused, "the other run stepped on");
  ok(run_set_number(a, "in_scale", NAN, &err) < 0, "in_scale NaN is refused: %s", err.msg);
  ok(run_set_text(a, "dim", "64", &err) < 0 && strstr(err.msg, "dim"), "a fixed setting cannot change live: %s",
     err.msg);
  lab_free(lab);
}

static void test_toggles_and_partner(void) {
  Err err;
  Lab *lab = lab_new(&err);
  RunOptions o1 = tiny("tied", "tied"), o2 = tiny("untied", "untied");
  Run *t = lab_add_run(lab, &o1, &err), *u = lab_add_run(lab, &o2, &err);
  if (!t || !u) {
    ok(0, "runs for the toggle test: %s", err.msg);
    return;
  }
  for (int i = 0; i < 60; i++) lab_step(lab, &err);
  const RunMetrics *m = run_metrics(t);
  ok(m->align.step == 60 && strcmp(m->align.partner, "untied") == 0, "the tied run aligned with '%s' at step %ld",
     m->align.partner, m->align.step);
  ok(m->align.partner_shares_init, "same init seed: the partner is marked as sharing the init");
  diag("linear cosine vs E_in %.3f (random %.3f), vs E_out %.3f (random %.3f)", m->align.vs_in.score.linear,
       m->align.vs_in.baseline.linear, m->align.vs_out.score.linear, m->align.vs_out.baseline.linear);
  ok(m->align.partner_step == 60, "the partner is compared at the same step (%ld)", m->align.partner_step);
  char path[] = "/tmp/tielab-test-share-XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  AlignStats again;
  Run *t2 = run_save(t, path, &err) == 0 ? lab_load(lab, path, "tied-again", &err) : NULL;
  ok(t2 && lab_align(t2, u, &again, &err) == 0 && again.partner_shares_init,
     "after a save and load the partner is still known to share the init");
  if (t2) lab_remove_run(lab, t2);
  remove(path);
  double before = m->loss;
  const char *modes[] = {"untied", "tied", "24", "tied"};
  int steady = 1;
  for (int k = 0; k < 4; k++) {
    if (run_set_text(t, "tie", modes[k], &err) < 0) {
      diag("tie %s: %s", modes[k], err.msg);
      steady = 0;
    }
    run_step(t, &err);
    if (fabs(run_metrics(t)->loss - before) > 0.5) steady = 0;
    diag("after tie=%s loss %.4f (before %.4f)", modes[k], run_metrics(t)->loss, before);
  }
  ok(steady, "tie toggles keep the loss within step-to-step noise");
  int ne;
  const HistEvent *ev = history_events(run_history(t), &ne);
  ok(ne >= 5 && strstr(ev[ne - 1].text, "tie"), "toggles are events in the history (last: %s)",
     ne ? ev[ne - 1].text : "none");
  EvalResult er;
  int32_t rows[2 * 9];
  for (int i = 0; i < 18; i++) rows[i] = (i * 37) % 384;
  ok(run_evaluate(t, rows, 2, 8, &er, &err) == 0 && er.loss > 0 && er.n_tensors > 0, "evaluate on given rows: loss %.3f",
     er.loss);
  rows[3] = 9999;
  ok(run_evaluate(t, rows, 2, 8, &er, &err) < 0 && strstr(err.msg, "9999"), "a bad token id is refused: %s",
     err.msg);
  lab_free(lab);
}

int main(void) {
  char dir[] = "/tmp/tielab-test-lab-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  test_unmeasured_is_nan();
  test_learns();
  test_checkpoint_resume(dir);
  test_bad_checkpoints(dir);
  test_nan_pauses();
  test_toggles_and_partner();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) diag("could not remove %s", dir);
  return tap_done();
}
