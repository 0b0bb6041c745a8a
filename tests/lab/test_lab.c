/*
** test_lab.c -- the lab end to end: a small model learns the synthetic
** language, checkpoints round-trip bit-exactly and resume bit-identically,
** bad checkpoints are refused cleanly, a NaN loss pauses only its run, live
** tie toggles keep training, a tied run finds its untied partner, the
** steering verbs move what they say, a save to the autosave folder
** saves every run it can, and a run's step hooks run on every step.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comma_locale.h"
#include "core/safetensors.h"
#include "lab/autosave.h"
#include "lab/run.h"
#include "lab/steer.h"
#include "live_set.h"
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
  live_number(r, "eval_every", 0, &err);
  run_step(r, &err);
  ok(m->val_step == -1 && m->lens.step == -1, "eval_every 0 turns validation and lens evaluation off");
  live_number(r, "eval_every", 1, &err);
  live_number(r, "lens_every", 0, &err);
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

/* ---- edited copies of a checkpoint */

/* A writer holding all of 'src' but tensor 'drop'; 'f' keeps the data alive. */
static StWriter *copy_except(const char *src, StFile *f, const char *drop) {
  Err err;
  if (st_read(f, src, &err) != 0) return NULL;
  StWriter *w = st_writer_new();
  for (int i = 0; i < f->n; i++) {
    const StTensor *t = &f->tensors[i];
    if (!drop || strcmp(t->name, drop) != 0) st_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, &err);
  }
  for (int i = 0; i < f->n_meta; i++) st_writer_meta(w, f->meta_keys[i], f->meta_vals[i], &err);
  return w;
}

static void write_out(StWriter *w, StFile *f, const char *dst) {
  Err err;
  if (st_writer_write(w, dst, &err) != 0) diag("write: %s", err.msg);
  st_writer_free(w);
  st_free(f);
}

static void copy_with_meta(const char *src, const char *dst, const char *key, const char *value) {
  StFile f;
  StWriter *w = copy_except(src, &f, NULL);
  Err err;
  st_writer_meta(w, key, value, &err);
  write_out(w, &f, dst);
}

/* Tensor 'name' (F32) with element k set to x, or its two dims swapped. */
static void copy_with_tensor(const char *src, const char *dst, const char *name, size_t k, float x, int transpose) {
  StFile f;
  StWriter *w = copy_except(src, &f, name);
  const StTensor *t = st_find(&f, name);
  float *buf = malloc(t->nbytes);
  memcpy(buf, t->data, t->nbytes);
  if (!transpose) buf[k] = x;
  int64_t shape[2] = {t->shape[transpose && t->ndim == 2], t->shape[!(transpose && t->ndim == 2)]};
  Err err;
  st_writer_add(w, name, ST_F32, t->ndim, shape, buf, &err);
  write_out(w, &f, dst);
  free(buf);
}

static void copy_with_extra(const char *src, const char *dst, const char *name) {
  static const float x[3] = {1, 2, 3};
  int64_t three = 3;
  StFile f;
  StWriter *w = copy_except(src, &f, NULL);
  Err err;
  st_writer_add(w, name, ST_F32, 1, &three, x, &err);
  write_out(w, &f, dst);
}

/* Loading 'path' is refused with one line that starts with it and says 'expect'. */
static void refused(Lab *lab, const char *what, const char *path, const char *expect) {
  Err err = {{0}};
  Run *r = lab_load(lab, path, "edited", &err);
  ok(!r && strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, expect) && !strchr(err.msg, '\n'),
     "%s: %s", what, r ? "LOADED" : err.msg);
  if (r) lab_remove_run(lab, r);
}

static void loads(Lab *lab, const char *what, const char *path) {
  Err err = {{0}};
  Run *r = lab_load(lab, path, "edited", &err);
  ok(r != NULL, "%s %s", what, r ? "" : err.msg);
  if (r) lab_remove_run(lab, r);
}

/* A copy as a tielab from before "data." wrote it, or with the held-out
** tokens changed: token k set to 'token', log frequency j to 'log_freq'. */
static void copy_data(const char *src, const char *dst, int drop, size_t k, int32_t token, int j, double log_freq) {
  StFile f;
  Err err;
  if (st_read(&f, src, &err) != 0) return;
  StWriter *w = st_writer_new();
  for (int i = 0; i < f.n; i++) {
    const StTensor *t = &f.tensors[i];
    if (strncmp(t->name, "data.", 5) != 0) st_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, &err);
  }
  for (int i = 0; i < f.n_meta; i++)
    if (!drop || strncmp(f.meta_keys[i], "data.", 5) != 0) st_writer_meta(w, f.meta_keys[i], f.meta_vals[i], &err);
  const StTensor *tv = st_find(&f, "data.val_tokens"), *tf = st_find(&f, "data.log_freq");
  int32_t *tokens = tv ? malloc(tv->nbytes) : NULL;
  double *freq = tf ? malloc(tf->nbytes) : NULL;
  if (!drop && tokens && freq) {
    memcpy(tokens, tv->data, tv->nbytes);
    memcpy(freq, tf->data, tf->nbytes);
    tokens[k] = token;
    freq[j] = log_freq;
    st_writer_add(w, "data.val_tokens", ST_I32, 1, tv->shape, tokens, &err);
    st_writer_add(w, "data.log_freq", ST_F64, 1, tf->shape, freq, &err);
  }
  write_out(w, &f, dst);
  free(tokens);
  free(freq);
}

static void test_hostile_checkpoints(const char *dir) {
  Err err;
  char good[512], bad[512];
  snprintf(good, sizeof good, "%s/ckpt.safetensors", dir);
  snprintf(bad, sizeof bad, "%s/edited.safetensors", dir);
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("keeper", "untied");   /* keeps the corpus loaded between loads */
  lab_add_run(lab, &o, &err);

  copy_with_tensor(good, bad, "optim.v.transformer.h.0.mlp.c_fc.weight", 5, -1e-6f, 0);
  refused(lab, "a negative second moment", bad, "'optim.v.transformer.h.0.mlp.c_fc.weight': element 5 is negative");
  copy_with_tensor(good, bad, "optim.m.lm_head.weight", 0, NAN, 0);
  refused(lab, "a NaN first moment", bad, "'optim.m.lm_head.weight': element 0 is NaN");
  copy_with_tensor(good, bad, "transformer.wte.weight", 9, INFINITY, 0);
  refused(lab, "an infinite weight", bad, "'transformer.wte.weight': element 9 is +infinity");
  copy_with_tensor(good, bad, "lens.momentum", 1, NAN, 0);
  refused(lab, "a NaN lens momentum", bad, "'lens.momentum': element 1 is NaN");
  copy_with_tensor(good, bad, "drift.e_in0", 2, NAN, 0);
  refused(lab, "a NaN step-0 embedding", bad, "'drift.e_in0': element 2 is NaN");
  copy_with_tensor(good, bad, "optim.m.transformer.h.1.mlp.c_proj.weight", 0, 0, 1);
  refused(lab, "a transposed moment", bad, "'optim.m.transformer.h.1.mlp.c_proj.weight' is [192, 48], the model needs [48, 192]");
  copy_with_tensor(good, bad, "drift.e_out0", 0, 0, 1);
  refused(lab, "a transposed drift reference", bad, "'drift.e_out0'");
  copy_with_tensor(good, bad, "transformer.h.0.mlp.c_fc.weight", 0, 0, 1);
  refused(lab, "a transposed weight", bad, "wrong shape: transformer.h.0.mlp.c_fc.weight is [48, 192]");
  copy_with_tensor(good, bad, "optim.m.transformer.wte.weight", 3, -0.5f, 0);
  loads(lab, "a negative first moment is legitimate:", bad);

  copy_with_extra(good, bad, "future.thing");
  loads(lab, "a tensor outside the checkpoint's namespaces is ignored:", bad);
  copy_with_extra(good, bad, "optim.s.transformer.wte.weight");
  refused(lab, "an unknown tensor in the optimizer's namespace", bad, "unexpected tensor 'optim.s.transformer.wte.weight'");
  copy_with_extra(good, bad, "lens.bias");
  refused(lab, "an unknown tensor in the lens namespace", bad, "unexpected tensor 'lens.bias'");
  copy_with_extra(good, bad, "history.extra");
  refused(lab, "an unknown tensor beside the history", bad, "unexpected tensor 'history.extra'");
  copy_with_extra(good, bad, "historyless");
  loads(lab, "a name that only starts like an owned one is ignored:", bad);
  copy_with_extra(good, bad, "optim.m.transformer.h.7.ln_1.weight");
  refused(lab, "moments of a layer the model does not have", bad, "'optim.m.transformer.h.7.ln_1.weight'");

  static const char *const meta[][3] = {
    {"n_head", "4", "metadata 'n_head' (4) disagrees with 'opt.heads' (2)"},
    {"tie", "tied", "lm_head.weight differs"},
    {"opt.heads", "4", "metadata 'n_head' (2) disagrees with 'opt.heads' (4)"},
    {"loss", "abc", "metadata 'loss' is 'abc'"},
    {"loss", "nan", "metadata 'loss' is 'nan'"},
    {"loss", "-0.5", "metadata 'loss' is '-0.5'"},
    {"loss", " 3.5", "metadata 'loss' is ' 3.5'"},
    {"adam_t", "1125899906842624", "metadata 'adam_t' (1125899906842624) is more than 'step' (12)"},
    {"adam_t", "13", "'adam_t' (13) is more than 'step' (12)"},
    {"step", "12x", "metadata 'step' is '12x'"},
    {"opt.vocab", " 384", "metadata 'opt.vocab'"},
    {"vocab_size", " 384", "metadata vocab_size is ' 384'"},
    {"opt.lr", "0,003", "metadata 'opt.lr'"},
    {"opt.seed", "0x10", "metadata 'opt.seed'"},
    {"version", "2", "checkpoint version '2'"},
  };
  for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
    char what[96];
    snprintf(what, sizeof what, "metadata %s = '%s'", meta[i][0], meta[i][1]);
    copy_with_meta(good, bad, meta[i][0], meta[i][1]);
    refused(lab, what, bad, meta[i][2]);
  }
  copy_with_meta(good, bad, "adam_t", "0");
  loads(lab, "an optimizer count below the step (moments restarted) is legitimate:", bad);
  lab_free(lab);
}

/* Corpus errors say which checkpoint named the corpus; the path of the
** checkpoint comes once. */
static void test_corpus_errors(const char *dir) {
  Err err;
  char corpus[512], path[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.txt", dir);
  snprintf(path, sizeof path, "%s/withcorpus.safetensors", dir);
  FILE *c = fopen(corpus, "w");
  for (int i = 0; i < 3000; i++) fprintf(c, "the cat sat on mat number %d and the dog ran far away\n", i % 97);
  fclose(c);
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("reader", "tied");
  run_options_set_text(&o, "vocab", "256", &err);
  run_options_set_text(&o, "corpus", corpus, &err);
  Run *r = lab_add_run(lab, &o, &err);
  if (!r || run_save(r, path, &err) != 0) {
    ok(0, "a run on a corpus file: %s", err.msg);
    lab_free(lab);
    return;
  }
  char old[512];
  snprintf(old, sizeof old, "%s/old.safetensors", dir);
  copy_data(path, old, 1, 0, 0, 0, 0);
  loads(lab, "a checkpoint without the held-out data (an older tielab's) loads beside its corpus:", old);
  lab_free(lab);
  unlink(corpus);
  lab = lab_new(&err);
  refused(lab, "without its corpus, one without the held-out data", old, "holds no held-out tokens");
  copy_data(path, old, 0, 3, 1 << 20, 0, 0);
  refused(lab, "a held-out token outside the tokenizer", old, "'data.val_tokens': token 3 is 1048576");
  copy_data(path, old, 0, 0, 0, 7, -1);
  refused(lab, "a negative log frequency", old, "'data.log_freq': element 7 is -1");
  copy_data(path, old, 0, 0, 0, 7, INFINITY);
  refused(lab, "an infinite log frequency", old, "'data.log_freq': element 7 is inf");
  copy_with_meta(path, old, "data.sha256", "abc");
  refused(lab, "a malformed corpus hash", old, "metadata 'data.sha256' is 'abc'");
  Run *back = lab_load(lab, path, NULL, &err);
  int refused = back && run_step(back, &err) < 0;
  ok(refused && strstr(err.msg, corpus) && strstr(err.msg, "not found"),
     "a checkpoint whose corpus is gone loads, and stepping names the corpus: %s", back ? err.msg : "not loaded");
  LabLoadOptions lo = {.name = "elsewhere", .corpus = "/nonexistent/corpus.txt"};
  back = lab_load_with(lab, path, &lo, &err);
  const char *second = strstr(err.msg + 1, path);
  ok(!back && strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, "/nonexistent/corpus.txt") &&
         (!second || second == strstr(err.msg, "/nonexistent")),
     "a corpus pointed to that is not there is reported with the checkpoint: %s", err.msg);
  lab_free(lab);
}

/* Under a decimal-comma LC_NUMERIC (a script's os.setlocale) checkpoints
** still hold "0.003", and load. */
static void test_comma_locale(const char *dir) {
  int comma = comma_locale_on();
  if (comma <= 0) {
    if (comma == 0) skip("no decimal-comma locale on this machine (install 'locales' for localedef)");
    else ok(0, "localedef could not make a decimal-comma locale (de_DE.UTF-8) here");
    return;
  }
  Err err;
  char path[512];
  snprintf(path, sizeof path, "%s/comma.safetensors", dir);
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("comma", "tied");
  Run *r = lab_add_run(lab, &o, &err);
  for (int i = 0; r && i < 3; i++) run_step(r, &err);
  int saved = r && run_save(r, path, &err) == 0;
  StFile f;
  int read = saved && st_read(&f, path, &err) == 0;
  const char *lr = read ? st_meta(&f, "opt.lr") : NULL, *loss = read ? st_meta(&f, "loss") : NULL;
  ok(lr && strcmp(lr, "0.003") == 0 && loss && !strchr(loss, ','), "under a comma locale opt.lr is '%s', loss '%s'",
     lr ? lr : "?", loss ? loss : "?");
  if (read) st_free(&f);
  Run *back = saved ? lab_load(lab, path, "comma-again", &err) : NULL;
  ok(back && run_options(back)->lr == 0.003 && run_metrics(back)->loss == run_metrics(r)->loss,
     "and the checkpoint loads with the same numbers %s", back ? "" : err.msg);
  char csv[512];
  snprintf(csv, sizeof csv, "%s/comma.csv", dir);
  FILE *e = r && run_export(r, csv, &err) == 0 ? fopen(csv, "r") : NULL;
  char line[600];
  int commas_ok = e != NULL;
  while (e && fgets(line, sizeof line, e))
    if (strncmp(line, "loss,", 5) == 0 && strchr(line, '.') == NULL) commas_ok = 0;
  if (e) fclose(e);
  ok(commas_ok, "history export writes decimal points");
  comma_locale_off();
  lab_free(lab);
}

/* Saves and exports never replace what is not a regular file. */
static void test_save_targets(const char *dir) {
  Err err;
  char fifo[512];
  snprintf(fifo, sizeof fifo, "%s/pipe.csv", dir);
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("saver", "tied");
  Run *r = lab_add_run(lab, &o, &err);
  struct stat sb;
  int made = r && mkfifo(fifo, 0600) == 0;
  ok(made && run_save(r, fifo, &err) < 0 && strncmp(err.msg, fifo, strlen(fifo)) == 0 && strstr(err.msg, "FIFO") &&
         lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode),
     "run_save onto a FIFO is refused and the FIFO stays: %s", err.msg);
  ok(made && run_export(r, fifo, &err) < 0 && strncmp(err.msg, fifo, strlen(fifo)) == 0 && lstat(fifo, &sb) == 0 &&
         S_ISFIFO(sb.st_mode),
     "run_export onto a FIFO too: %s", err.msg);
  unlink(fifo);
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
  ok(live_number(a, "in_scale", NAN, &err) < 0, "in_scale NaN is refused: %s", err.msg);
  ok(live_text(a, "dim", "64", &err) < 0 && strstr(err.msg, "dim"), "a fixed setting cannot change live: %s",
     err.msg);
  lab_free(lab);
}

/* A run's step hooks: what they see and report, on every path a step takes. */
typedef struct LabProbe {
  int hidden_calls, grad_calls, fail;
  long last_step;
} LabProbe;

static int probe_hidden(void *ctx, Model *m, int p, const float *h, float *dh, int n, int d, long step,
                        double *aux, Err *err) {
  LabProbe *pr = ctx;
  pr->hidden_calls++;
  *aux = 0.25;
  return 0;
}

static int probe_grad(void *ctx, Model *m, long step, Err *err) {
  LabProbe *pr = ctx;
  pr->grad_calls++;
  pr->last_step = step;
  return pr->fail ? err_set(err, "the probe says no") : 0;
}

static void test_step_hooks(void) {
  Err err;
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("hooked", "untied");
  Run *r = lab_add_run(lab, &o, &err);
  if (!r) {
    ok(0, "a run for the hooks: %s", err.msg);
    return;
  }
  LabProbe pr = {0};
  StepHooks hooks = {.ctx = &pr, .hidden_positions = 1, .on_hidden = probe_hidden, .on_grad = probe_grad};
  lab_run_set_hooks(r, &hooks);
  int32_t rows[8 * 33];
  int good = run_step(r, &err) == 0;
  good &= run_batch(r, 2, rows, &err) == 0 && run_train_on(r, rows, 8, 32, &err) == 0;
  good &= lab_step(lab, &err) == 0;
  int n = 0;
  const HistBucket *b = history_series(run_history(r), "aux_loss", &n);
  ok(good && pr.hidden_calls == 3 && pr.grad_calls == 3 && pr.last_step == 3 && run_metrics(r)->aux_loss == 0.25,
     "r:step, r:train_on and lab_step each run the hooks (%d, %d calls), with the step they complete; aux_loss "
     "%.2f", pr.hidden_calls, pr.grad_calls, run_metrics(r)->aux_loss);
  ok(b && n > 0 && b[n - 1].step_last == 3 && b[0].step_first == 1 && b[n - 1].last == 0.25,
     "the history has an aux_loss series from step 1");
  lab_run_set_hooks(r, NULL);
  good = run_step(r, &err) == 0;
  b = history_series(run_history(r), "aux_loss", &n);
  ok(good && pr.grad_calls == 3 && isnan(run_metrics(r)->aux_loss) && b[n - 1].step_last == 3,
     "hooks cleared: none runs, aux_loss is NaN and its series gets no point");
  pr.fail = 1;
  lab_run_set_hooks(r, &hooks);
  size_t bytes = model_n_floats(run_model(r)) * sizeof(float);
  float *before = malloc(bytes);
  memcpy(before, model_params(run_model(r)), bytes);
  int rc = run_step(r, &err);
  ok(rc < 0 && strstr(err.msg, "hooked") && strstr(err.msg, "the probe says no") && run_metrics(r)->paused &&
         run_metrics(r)->step == 4 && !memcmp(before, model_params(run_model(r)), bytes),
     "a failing hook: the step is refused with its message (%s), weights kept, the run paused", err.msg);
  free(before);
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
    if (live_text(t, "tie", modes[k], &err) < 0) {
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

/* The verb of steer.h named 'name'. */
static const SteerVerb *verb(const char *name) {
  int n;
  const SteerVerb *v = steer_verbs(&n);
  for (int i = 0; i < n; i++)
    if (strcmp(steer_verb_name(&v[i]), name) == 0) return &v[i];
  return NULL;
}

/* Scale setting 'key' of 'r' by 'f' as ui.scale does. */
static int scale(Run *r, const char *key, double f, Err *err) {
  SteerArgs a = {.key = key, .factor = f};
  SteerPlan p;
  return steer_do(r, verb("scale"), &a, "x", &p, err);
}

/* The moves of the keys: the tie cycle, a setting scaled, the ladder. */
static void test_steer(void) {
  Err err;
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("steered", "tied");
  Run *r = lab_add_run(lab, &o, &err);
  const char *want[] = {"untied", "half", "tied"};
  for (int i = 0; r && i < 3; i++) {
    SteerArgs none = {0};
    SteerPlan p;
    int rc = steer_do(r, verb("cycle_tie"), &none, "x", &p, &err);
    const RunMetrics *m = run_metrics(r);
    int k = m->tie_k, d = m->dim;
    int is = i == 0 ? k == 0 : i == 1 ? k == d / 2 : k == d;
    ok(rc == 0 && is, "t cycles to %s (tie_k %d of %d): %s", want[i], k, d, p.note);
  }
  ok(r && scale(r, "in_scale", 4, &err) == 0 && run_options(r)->in_scale == 4, "in_scale times 4");
  ok(r && scale(r, "lr", 0.5, &err) == 0 && run_options(r)->lr == o.lr * 0.5, "lr times 1/2");
  ok(r && scale(r, "dim", 2, &err) < 0 && strcmp(err.msg, "invalid option 'dim'") == 0,
     "a setting fixed at creation is no factor to scale: %s", err.msg);
  ok(r && scale(r, "in_scale", -1, &err) < 0 && strcmp(err.msg, "must be a positive number") == 0,
     "a negative factor is refused: %s", err.msg);
  static const struct {
    double from;
    int dir;
    double to;
  } moves[] = {{1, 1, 2}, {2, 1, 3}, {3, 1, 5}, {4, 1, 5}, {4, -1, 3}, {1, -1, 0.5}, {0.5, -1, 1.0 / 3},
               {1.0 / 3, 1, 0.5}, {50, 1, 100}, {500, 1, 1000}, {1000, 1, 0}, {1.0 / 50, -1, 0}, {60, -1, 50}, {0.001, 1, 1.0 / 50}};
  for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
    double got = steer_ladder_next(moves[i].from, moves[i].dir);
    ok(fabs(got - moves[i].to) < 1e-12, "ladder from %g %s: %g (want %g)", moves[i].from,
       moves[i].dir > 0 ? "up" : "down", got, moves[i].to);
  }
  lab_free(lab);
}

/* ---- the optimizer's settings in checkpoints */

/* A copy of 'src' without the metadata of settings newer than the file
** format's first version: what an older tielab wrote. */
static const char *const optimizer_keys[] = {"warmup", "schedule", "decay_steps", "lr_min", "eps", "beta1",
                                             "beta2", "weight_decay", "decay_all", "optimizer", "momentum",
                                             "nesterov", "clip", "grad_scale", "emb_lr_scale", "emb_warmup",
                                             "recipe"};
#define N_OPTIMIZER_KEYS (sizeof optimizer_keys / sizeof optimizer_keys[0])

static void copy_as_older(const char *src, const char *dst) {
  StFile f;
  Err err;
  if (st_read(&f, src, &err) != 0) return;
  StWriter *w = st_writer_new();
  for (int i = 0; i < f.n; i++) {
    const StTensor *t = &f.tensors[i];
    st_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, &err);
  }
  for (int i = 0; i < f.n_meta; i++) {
    int newer = 0;
    for (size_t k = 0; k < N_OPTIMIZER_KEYS; k++)
      if (strncmp(f.meta_keys[i], "opt.", 4) == 0 && strcmp(f.meta_keys[i] + 4, optimizer_keys[k]) == 0) newer = 1;
    if (!newer) st_writer_meta(w, f.meta_keys[i], f.meta_vals[i], &err);
  }
  write_out(w, &f, dst);
}

/* Every optimizer setting as text, for comparing two runs' options. */
static int same_optimizer_settings(const RunOptions *a, const RunOptions *b, char *differs, size_t cap) {
  differs[0] = '\0';
  for (size_t k = 0; k < N_OPTIMIZER_KEYS; k++) {
    char x[64], y[64];
    run_options_get_text(a, optimizer_keys[k], x, sizeof x, NULL);
    run_options_get_text(b, optimizer_keys[k], y, sizeof y, NULL);
    if (strcmp(x, y) != 0) snprintf(differs, cap, "%s: %s vs %s", optimizer_keys[k], x, y);
  }
  return differs[0] == '\0';
}

static void test_optimizer_checkpoint(const char *dir) {
  Err err;
  char path[512], older[512], differs[160];
  snprintf(path, sizeof path, "%s/recipe.safetensors", dir);
  snprintf(older, sizeof older, "%s/older.safetensors", dir);
  Lab *lab = lab_new(&err);
  RunOptions o = tiny("sgdrun", "tied");
  const char *kv[][2] = {{"recipe", "olmo"},    {"optimizer", "sgd"},   {"momentum", "0.9"},
                         {"nesterov", "true"},  {"decay_all", "false"}, {"grad_scale", "2.5"},
                         {"emb_lr_scale", "0.5"}, {"emb_warmup", "7"},  {"decay_steps", "3000"},
                         {"schedule", "linear"}, {"clip", "0"}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (run_options_set_text(&o, kv[i][0], kv[i][1], &err) < 0) diag("%s: %s", kv[i][0], err.msg);
  Run *a = lab_add_run(lab, &o, &err);
  for (int i = 0; a && i < 3; i++) run_step(a, &err);
  ok(a && run_save(a, path, &err) == 0, "a run with the optimizer settings saved %s", a ? "" : err.msg);
  Run *b = a ? lab_load(lab, path, "sgdback", &err) : NULL;
  ok(b && same_optimizer_settings(run_options(a), run_options(b), differs, sizeof differs),
     "every optimizer setting, booleans too, round-trips through the checkpoint %s", b ? differs : err.msg);
  ok(b && run_options(b)->nesterov == 1 && run_options(b)->decay_all == 0 && run_options(b)->warmup == 1000,
     "nesterov true, decay_all false over the recipe, the recipe's warmup");
  int same_weights = b && memcmp(model_params(run_model(a)), model_params(run_model(b)),
                                 model_n_floats(run_model(a)) * sizeof(float)) == 0;
  ok(same_weights && b && run_step(a, &err) == 0 && run_step(b, &err) == 0 &&
         run_metrics(a)->loss == run_metrics(b)->loss &&
         memcmp(model_adam_m(run_model(a)), model_adam_m(run_model(b)), model_n_floats(run_model(a)) * sizeof(float)) == 0,
     "the resumed SGD run steps on bit for bit, momentum buffer included");
  if (a) copy_as_older(path, older);
  Run *c = a ? lab_load(lab, older, "older", &err) : NULL;
  RunOptions defaults;
  run_options_default(&defaults);
  ok(c && same_optimizer_settings(run_options(c), &defaults, differs, sizeof differs),
     "a checkpoint without the optimizer settings loads with their defaults %s", c ? differs : err.msg);
  lab_free(lab);
}

/* What a save told of each run. */
typedef struct Told {
  int saved, failed;
  char why[ERR_MSG_MAX];
} Told;

static void told(void *ctx, Run *r, const Err *failed) {
  Told *t = ctx;
  if (failed) snprintf(t->why, sizeof t->why, "%s", failed->msg);
  *(failed ? &t->failed : &t->saved) += 1;
}

static int is_file(const char *dir, const char *name) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

/* One run that cannot be saved leaves the others saved, each failure
** told; only a save of every run prunes the checkpoints of runs gone. */
static void test_autosave(const char *tmp) {
  char state[4096], dir[4096], blocked[4400], stale[4400], a_file[64];
  Err err;
  snprintf(state, sizeof state, "%s/state", tmp);
  setenv("XDG_STATE_HOME", state, 1);
  Lab *lab = lab_new(&err);
  RunOptions oa = tiny("a", "tied"), ob = tiny("b", "untied");
  Run *a = lab_add_run(lab, &oa, &err), *b = a ? lab_add_run(lab, &ob, &err) : NULL;
  if (!b || autosave_dir(dir, sizeof dir, &err) < 0) {
    ok(0, "two runs and an autosave folder: %s", err.msg);
    lab_free(lab);
    return;
  }
  snprintf(a_file, sizeof a_file, "a-%d" AUTOSAVE_EXT, run_id(a));
  snprintf(blocked, sizeof blocked, "%s/%s", dir, a_file);   /* a folder where a's checkpoint goes */
  snprintf(stale, sizeof stale, "%s/gone-99" AUTOSAVE_EXT, dir);
  int ready = mkdir(blocked, 0700) == 0;
  FILE *f = fopen(stale, "w");
  if (f) fclose(f);
  Told t = {0};
  char where[4096];
  int rc = autosave_lab(lab, where, sizeof where, told, &t, &err);
  ok(ready && rc < 0 && t.failed == 1 && t.saved == 1 && strcmp(err.msg, t.why) == 0,
     "a run that cannot be saved is told, and the other is saved still (%d saved, %d failed: %s)", t.saved, t.failed,
     err.msg);
  ok(strcmp(where, dir) == 0 && is_file(dir, "gone-99" AUTOSAVE_EXT), "a save cut short prunes nothing");
  rmdir(blocked);
  t = (Told){0};
  rc = autosave_lab(lab, where, sizeof where, told, &t, &err);
  ok(rc == 0 && t.saved == 2 && t.failed == 0 && is_file(dir, a_file) && !is_file(dir, "gone-99" AUTOSAVE_EXT),
     "a whole save saves every run and prunes the run gone (%d saved)", t.saved);
  autosave_release();
  lab_free(lab);
}

int main(void) {
  char dir[] = "/tmp/tielab-test-lab-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  test_unmeasured_is_nan();
  test_learns();
  test_checkpoint_resume(dir);
  test_bad_checkpoints(dir);
  test_hostile_checkpoints(dir);
  test_corpus_errors(dir);
  test_comma_locale(dir);
  test_save_targets(dir);
  test_nan_pauses();
  test_step_hooks();
  test_toggles_and_partner();
  test_steer();
  test_optimizer_checkpoint(dir);
  test_autosave(dir);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) diag("could not remove %s", dir);
  return tap_done();
}
