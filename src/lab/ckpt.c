/*
** ckpt.c -- what a checkpoint holds and how it comes back: saving a run to
** one safetensors file, and loading one (or a weights-only nanoGPT file)
** that trusts nothing in it. What the file holds: docs/architecture.md.
*/
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/num.h"
#include "base/safeopen.h"
#include "core/safetensors.h"
#include "core/settings_model.h"
#include "core/weights.h"
#include "lab/run.h"

/* The fitted lens, at the end of this file. */
static int add_fitted(StWriter *w, Run *r, double *stats, Err *err);
static int check_fitted_present(const StFile *f, Err *err);
static int read_fitted(const StFile *f, Run *r, long step, Err *err);

#define CKPT_FORMAT LAB_CHECKPOINT_FORMAT
#define CKPT_VERSION "1"

/* ------------------------------------------------------------- writing */

#define FIT_STATS 6   /* kl, ce, entropy, acc, agree, contrib */

typedef struct SaveBufs {
  double fit_stats[FIT_STATS * LAB_MAX_POS];
  double *hist;
  size_t hist_n;
  char *hist_names;
} SaveBufs;

static int add_f32(StWriter *w, const char *name, const float *data, int64_t rows, int64_t cols, Err *err) {
  int64_t shape[2] = {rows, cols};
  return st_writer_add(w, name, ST_F32, cols > 0 ? 2 : 1, shape, data, err);
}

static int add_moments(StWriter *w, Model *m, Err *err) {
  char name[96];
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *t = model_tensor(m, i);
    int64_t cols = t->ndim == 2 ? t->shape[1] : 0;
    snprintf(name, sizeof name, "optim.m.%s", t->name);
    if (add_f32(w, name, model_adam_m(m) + t->offset, t->shape[0], cols, err) < 0) return -1;
    snprintf(name, sizeof name, "optim.v.%s", t->name);
    if (add_f32(w, name, model_adam_v(m) + t->offset, t->shape[0], cols, err) < 0) return -1;
  }
  return 0;
}

static int add_meta_long(StWriter *w, const char *key, long v, Err *err) {
  char buf[32];
  snprintf(buf, sizeof buf, "%ld", v);
  return st_writer_meta(w, key, buf, err);
}

static int add_settings(StWriter *w, const RunOptions *o, Err *err) {
  int n;
  const Setting *s = lab_settings(&n);
  char key[96], value[1100];
  for (int i = 0; i < n; i++) {
    if (run_options_get_text(o, s[i].name, value, sizeof value, err) < 0) return -1;
    snprintf(key, sizeof key, "opt.%s", s[i].name);
    if (st_writer_meta(w, key, value, err) < 0) return -1;
  }
  return 0;
}

/* The model's own config keys come from weights_add_to_writer. */
static int add_counters(StWriter *w, Run *r, Err *err) {
  char buf[NUM_TEXT_MAX];
  num_format(buf, sizeof buf, r->metrics.loss);
  if (st_writer_meta(w, "format", CKPT_FORMAT, err) < 0 || st_writer_meta(w, "version", CKPT_VERSION, err) < 0 ||
      add_meta_long(w, "step", r->metrics.step, err) < 0 ||
      add_meta_long(w, "adam_t", model_adam_t(r->model), err) < 0 ||
      add_meta_long(w, "lens_steps", lens_step(r->lens), err) < 0 || st_writer_meta(w, "loss", buf, err) < 0)
    return -1;
  return 0;
}

/* What stands in for the corpus when it is not found: its held-out
** tokens, the training split's token frequencies, and the corpus's hash. */
static int add_data(StWriter *w, Run *r, Err *err) {
  const Dataset *ds = &r->data->ds;
  int64_t n_val = (int64_t)(ds->n - ds->n_train), vocab = model_config(r->model)->vocab;
  if (st_writer_add(w, "data.val_tokens", ST_I32, 1, &n_val, ds->tokens + ds->n_train, err) < 0 ||
      st_writer_add(w, "data.log_freq", ST_F64, 1, &vocab, r->data->log_freq, err) < 0)
    return -1;
  return r->data->sha256[0] ? st_writer_meta(w, "data.sha256", r->data->sha256, err) : 0;
}

/* A learned tokenizer as its merges; a released model's as the bytes of
** its files, each a tensor "tokenizer.file.NAME", with its kind and where
** it was first read from in the metadata. */
#define TOKENIZER_FILE_PREFIX "tokenizer.file."

static int add_tokenizer(StWriter *w, const Tokenizer *tok, Err *err) {
  const Bpe *bpe = tokenizer_bpe(tok);
  if (bpe) {
    int nm;
    const int32_t *merges = bpe_merges(bpe, &nm);
    int64_t shape[2] = {nm, 2};
    return nm > 0 ? st_writer_add(w, "tokenizer.merges", ST_I32, 2, shape, merges, err) : 0;
  }
  TokenizerFile files[TOKENIZER_MAX_FILES];
  char name[96];
  int n = tokenizer_files(tok, files);
  for (int i = 0; i < n; i++) {
    int64_t len = (int64_t)files[i].len;
    snprintf(name, sizeof name, TOKENIZER_FILE_PREFIX "%s", files[i].name);
    if (st_writer_add(w, name, ST_U8, 1, &len, files[i].bytes, err) < 0) return -1;
  }
  if (st_writer_meta(w, "tokenizer.kind", "pretrained", err) < 0) return -1;
  return st_writer_meta(w, "tokenizer.source", tokenizer_source(tok), err);
}

static int add_extras(StWriter *w, Run *r, SaveBufs *b, Err *err) {
  const ModelConfig *c = model_config(r->model);
  int64_t n = (int64_t)lens_state_size(r->lens);
  if (n > 0 && (add_f32(w, "lens.params", lens_params(r->lens), n, 0, err) < 0 ||
                add_f32(w, "lens.momentum", lens_momentum(r->lens), n, 0, err) < 0))
    return -1;
  if (add_f32(w, "drift.e_in0", r->e_in0, c->vocab, c->dim, err) < 0 ||
      add_f32(w, "drift.e_out0", r->e_out0, c->vocab, c->dim, err) < 0)
    return -1;
  if (run_tok(r) && add_tokenizer(w, run_tok(r), err) < 0) return -1;
  if (r->data && add_data(w, r, err) < 0) return -1;
  if (history_pack(r->hist, &b->hist, &b->hist_n, &b->hist_names, err) < 0) return -1;
  int64_t hn = (int64_t)b->hist_n;
  if (st_writer_add(w, "history", ST_F64, 1, &hn, b->hist, err) < 0) return -1;
  return st_writer_meta(w, "history.names", b->hist_names, err);
}

int run_save(Run *r, const char *path, Err *err) {
  if (lab_rank(r->lab) > 0) return 0;   /* rank 0 holds the same run and writes it */
  const ModelConfig *c = model_config(r->model);
  StWriter *w = st_writer_new();
  SaveBufs b = {0};
  if (!w) return err_set(err, "out of memory saving '%s'", path);
  int rc = weights_add_to_writer(r->model, w, c->tie_k < c->dim, err);
  if (rc == 0) rc = add_moments(w, r->model, err);
  if (rc == 0) rc = add_extras(w, r, &b, err);
  if (rc == 0) rc = add_fitted(w, r, b.fit_stats, err);
  if (rc == 0) rc = add_settings(w, &r->opt, err);
  if (rc == 0) rc = add_counters(w, r, err);
  if (rc == 0) rc = st_writer_write(w, path, err);
  st_writer_free(w);
  free(b.hist);
  free(b.hist_names);
  if (rc == 0) r->dirty = 0;
  return rc;
}

/* ------------------------------------------------------------- reading */

/* The namespaces a checkpoint owns besides the model's: a tensor in one of
** them that this version does not expect means a file of another shape or
** a newer format, and is refused; names elsewhere are ignored. */
static const char *const owned[] = {"optim.", "lens.", "lens_fit.", "drift.", "tokenizer.", "history.", "history",
                                    "data."};

/* A prefix ending in '.' owns a namespace; any other entry is one name. */
static int in_owned(const char *name) {
  for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) {
    size_t n = strlen(owned[i]);
    if (strncmp(name, owned[i], n) == 0 && (owned[i][n - 1] == '.' || name[n] == '\0')) return 1;
  }
  return 0;
}

/* What a tensor outside the model must look like; dim -1 is free. */
typedef struct Want {
  StDtype dtype;   /* ST_F32: any float type */
  int ndim;
  int64_t shape[2];
} Want;

static int want_of(const char *name, const ModelConfig *c, const TensorInfo *ts, int nt, Want *w) {
  int64_t V = c->vocab, d = c->dim, n = (int64_t)lens_state_floats(c);
  *w = (Want){ST_F32, 1, {n, 0}};
  if (!strcmp(name, "lens.params") || !strcmp(name, "lens.momentum") || !strcmp(name, "lens_fit.params"))
    return 1;
  *w = (Want){ST_F64, 2, {FIT_STATS, c->layers + 1}};
  if (!strcmp(name, "lens_fit.stats")) return 1;
  *w = (Want){ST_F32, 2, {V, d}};
  if (!strcmp(name, "drift.e_in0") || !strcmp(name, "drift.e_out0")) return 1;
  *w = (Want){ST_I32, 2, {-1, 2}};
  if (!strcmp(name, "tokenizer.merges")) return 1;
  *w = (Want){ST_U8, 1, {-1, 0}};
  if (!strncmp(name, TOKENIZER_FILE_PREFIX, strlen(TOKENIZER_FILE_PREFIX))) return 1;
  *w = (Want){ST_F64, 1, {-1, 0}};
  if (!strcmp(name, "history")) return 1;
  *w = (Want){ST_I32, 1, {-1, 0}};
  if (!strcmp(name, "data.val_tokens")) return 1;
  *w = (Want){ST_F64, 1, {V, 0}};
  if (!strcmp(name, "data.log_freq")) return 1;
  if (strncmp(name, "optim.m.", 8) && strncmp(name, "optim.v.", 8)) return 0;
  for (int i = 0; i < nt; i++)
    if (!strcmp(ts[i].name, name + 8)) {
      *w = (Want){ST_F32, ts[i].ndim, {ts[i].shape[0], ts[i].shape[1]}};
      return 1;
    }
  return 0;
}

static int is_float(StDtype d) { return d == ST_F32 || d == ST_F64 || d == ST_F16 || d == ST_BF16; }

static int check_want(const StTensor *t, const Want *w, Err *err) {
  int shape_ok = t->ndim == w->ndim;
  for (int i = 0; i < w->ndim && shape_ok; i++) shape_ok = w->shape[i] < 0 || t->shape[i] == w->shape[i];
  char a[200], b[64];
  if (!shape_ok)
    return err_set(err, "tensor '%s' is %s, the model needs %s", t->name, st_shape_str(a, sizeof a, t->ndim, t->shape),
                   st_shape_str(b, sizeof b, w->ndim, w->shape));
  if (w->dtype == ST_F32 ? !is_float(t->dtype) : t->dtype != w->dtype)
    return err_set(err, "tensor '%s' is %s, expected %s", t->name, st_dtype_name(t->dtype),
                   w->dtype == ST_F32 ? "a float type" : st_dtype_name(w->dtype));
  return 0;
}

/* Every tensor of the owned namespaces expected and well shaped. */
static int check_owned(const StFile *f, const ModelConfig *c, const TensorInfo *ts, int nt, Err *err) {
  Want w;
  for (int i = 0; i < f->n; i++) {
    const StTensor *t = &f->tensors[i];
    if (!in_owned(t->name)) continue;
    if (!want_of(t->name, c, ts, nt, &w)) return err_set(err, "unexpected tensor '%s'", t->name);
    if (check_want(t, &w, err) < 0) return -1;
  }
  return 0;
}

/* Present: every moment, the drift reference, the lens state. */
static int check_present(const StFile *f, const TensorInfo *ts, int nt, Err *err) {
  static const char *const fixed[] = {"drift.e_in0", "drift.e_out0", "lens.params", "lens.momentum"};
  char name[96];
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (!st_find(f, fixed[i])) return err_set(err, "missing tensor '%s'", fixed[i]);
  for (int i = 0; i < nt; i++)
    for (int k = 0; k < 2; k++) {
      snprintf(name, sizeof name, "optim.%c.%s", "mv"[k], ts[i].name);
      if (!st_find(f, name)) return err_set(err, "missing tensor '%s'", name);
    }
  return 0;
}

/* Names, shapes and dtypes of everything, before anything is allocated. */
static int check_shapes(const StFile *f, const ModelConfig *c, Err *err) {
  if (weights_check(f, c, 0, err) < 0) return -1;
  int nt;
  TensorInfo *ts = model_tensor_table(c, &nt);
  if (!ts) return err_set(err, "out of memory");
  int rc = check_owned(f, c, ts, nt, err);
  if (rc == 0) rc = check_present(f, ts, nt, err);
  if (rc == 0) rc = check_fitted_present(f, err);
  free(ts);
  return rc;
}

/* A float tensor already checked for shape, as finite float32. */
static int read_f32(const StFile *f, const char *name, float *dst, size_t n, Err *err) {
  const StTensor *t = st_find(f, name);
  if (!t) return err_set(err, "missing tensor '%s'", name);
  if (st_to_f32(t, dst, n, err) < 0) return -1;
  return weights_check_finite(name, dst, n, err);
}

/* The second moment is a mean of squares: a negative one would reach sqrt. */
static int check_nonnegative(const char *name, const float *v, size_t n, Err *err) {
  for (size_t i = 0; i < n; i++)
    if (v[i] < 0) return err_set(err, "tensor '%s': element %zu is negative (%g)", name, i, (double)v[i]);
  return 0;
}

static int read_moments(const StFile *f, Model *m, Err *err) {
  char name[96];
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *t = model_tensor(m, i);
    float *v = model_adam_v(m) + t->offset;
    snprintf(name, sizeof name, "optim.m.%s", t->name);
    if (read_f32(f, name, model_adam_m(m) + t->offset, t->numel, err) < 0) return -1;
    snprintf(name, sizeof name, "optim.v.%s", t->name);
    if (read_f32(f, name, v, t->numel, err) < 0 || check_nonnegative(name, v, t->numel, err) < 0) return -1;
  }
  return 0;
}

static int meta_long(const StFile *f, const char *key, long lo, long hi, long *out, Err *err) {
  const char *v = st_meta(f, key);
  if (!v) return err_set(err, "metadata lacks '%s'", key);
  if (num_parse_long(v, lo, hi, out) < 0)
    return err_set(err, "metadata '%s' is '%.40s', expected a whole number in [%ld, %ld]", key, v, lo, hi);
  return 0;
}

static int read_settings(const StFile *f, RunOptions *o, Err *err) {
  int n;
  const Setting *s = lab_settings(&n);
  char key[96];
  run_options_default(o);
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "opt.%s", s[i].name);
    const char *v = st_meta(f, key);
    /* A setting newer than the file: its default, as the file's run trained,
    ** marked given so that a recipe named in the file does not fill it. */
    if (!v) v = s[i].deflt;
    if (run_options_set_text(o, s[i].name, v, err) < 0) return err_prefix(err, "metadata '%s'", key);
  }
  return run_options_check(o, err);
}

/* The nanoGPT config keys of the model part against the settings. */
static int check_config_keys(const StFile *f, const RunOptions *o, Err *err) {
  ModelConfig shape;
  if (weights_config(f, o->model.batch, &shape, err) < 0) return -1;
  for (int i = 0; i < N_MODEL_FIELDS; i++) {
    const ModelField *mf = &model_fields[i];
    int got = *(const int *)((const char *)&shape + mf->offset);
    int want = *(const int *)((const char *)&o->model + mf->offset);
    if (mf->meta && got != want)
      return err_set(err, "metadata '%s' (%d) disagrees with 'opt.%s' (%d)", mf->meta, got, mf->name, want);
  }
  return 0;
}

/* The corpus read must be the bytes the run trained on (files from before
** the hash was kept are checked by their tokenizer alone). */
static int check_corpus_hash(const StFile *f, const Run *r, Err *err) {
  const char *want = st_meta(f, "data.sha256");
  if (!want || !r->data || r->data->held_out_only || !r->data->sha256[0] || !strcmp(want, r->data->sha256)) return 0;
  return err_set(err, "the corpus '%s' is not the text this run was trained on: its SHA-256 is %.16s..., the "
                 "checkpoint's %.16s...", r->data->ds.name, r->data->sha256, want);
}

/* The tokenizer rebuilt from the corpus must be the one the run trained with. */
static int check_tokenizer(const StFile *f, Run *r, Err *err) {
  const StTensor *t = st_find(f, "tokenizer.merges");
  if (check_corpus_hash(f, r, err) < 0) return -1;
  /* A released model's tokenizer came from the file itself. */
  if (!r->data || !tokenizer_bpe(r->data->ds.tok)) return 0;
  int nm;
  const int32_t *merges = bpe_merges(tokenizer_bpe(r->data->ds.tok), &nm);
  size_t want = (size_t)nm * 2;
  if ((!t && nm == 0) || (t && t->numel == want && memcmp(t->data, merges, want * 4) == 0)) return 0;
  return err_set(err, "the corpus '%s' no longer gives the tokenizer this run was trained with",
                 r->data->ds.name);
}

static int read_history(const StFile *f, Run *r, Err *err) {
  const StTensor *h = st_find(f, "history");
  const char *names = st_meta(f, "history.names");
  if (!h) return 0;
  if (!names) return err_set(err, "tensor 'history' without metadata 'history.names'");
  /* Copy out: the file buffer need not be aligned for doubles. */
  double *buf = malloc(h->nbytes ? h->nbytes : 1);
  if (!buf) return err_set(err, "out of memory reading the history");
  memcpy(buf, h->data, h->nbytes);
  History *hist = history_unpack(buf, h->numel, names, err);
  free(buf);
  if (!hist) return -1;
  history_free(r->hist);
  r->hist = hist;
  return 0;
}

static int read_extras(const StFile *f, Run *r, Err *err) {
  const ModelConfig *c = model_config(r->model);
  size_t vd = (size_t)c->vocab * c->dim, n = lens_state_size(r->lens);
  if (read_f32(f, "drift.e_in0", r->e_in0, vd, err) < 0 || read_f32(f, "drift.e_out0", r->e_out0, vd, err) < 0)
    return -1;
  run_set_init_fingerprint(r);   /* of the real step 0, not of the loaded weights */
  if (read_f32(f, "lens.params", lens_params(r->lens), n, err) < 0 ||
      read_f32(f, "lens.momentum", lens_momentum(r->lens), n, err) < 0 || read_history(f, r, err) < 0)
    return -1;
  return check_tokenizer(f, r, err);
}

/* The loss of the last step: finite and >= 0 once a step was taken; before
** the first step there is none ("nan"). */
static int read_loss(const StFile *f, long step, double *loss, Err *err) {
  const char *s = st_meta(f, "loss");
  if (!s) return err_set(err, "metadata lacks 'loss'");
  if (step == 0 && (!strcmp(s, "nan") || !strcmp(s, "-nan"))) {
    *loss = NAN;
    return 0;
  }
  if (num_parse(s, loss) < 0 || *loss < 0)
    return err_set(err, "metadata 'loss' is '%.40s', expected a finite number >= 0%s", s,
                   step == 0 ? " or nan" : "");
  return 0;
}

#define COUNT_MAX (1L << 50)

/* A run resumed steps on as one that never stopped: each step made at most
** one AdamW update (a step whose gradient is not finite makes none and is
** not counted), so the optimizer's count cannot exceed the step. */
typedef struct Counters {
  long step, adam_t, lens_steps;
  double loss;
} Counters;

static int read_counters(const StFile *f, Counters *k, Err *err) {
  if (meta_long(f, "step", 0, COUNT_MAX, &k->step, err) < 0 ||
      meta_long(f, "lens_steps", 0, COUNT_MAX, &k->lens_steps, err) < 0 ||
      meta_long(f, "adam_t", 0, COUNT_MAX, &k->adam_t, err) < 0)
    return -1;
  if (k->adam_t > k->step)
    return err_set(err, "metadata 'adam_t' (%ld) is more than 'step' (%ld): one update per step at most", k->adam_t,
                   k->step);
  return read_loss(f, k->step, &k->loss, err);
}

/* A released model's tokenizer: its kind, its source and its files come
** together, and never with learned merges. */
static int check_tokenizer_meta(const StFile *f, Err *err) {
  const char *kind = st_meta(f, "tokenizer.kind");
  int files = 0;
  for (int i = 0; i < f->n; i++)
    if (!strncmp(f->tensors[i].name, TOKENIZER_FILE_PREFIX, strlen(TOKENIZER_FILE_PREFIX))) {
      if (!kind) return err_set(err, "tensor '%s' without metadata 'tokenizer.kind'", f->tensors[i].name);
      files++;
    }
  if (!kind) return 0;
  if (strcmp(kind, "pretrained") != 0)
    return err_set(err, "metadata 'tokenizer.kind' is '%.40s', expected 'pretrained'", kind);
  if (files == 0 || files > TOKENIZER_MAX_FILES)
    return err_set(err, "metadata 'tokenizer.kind' is 'pretrained' with %d '" TOKENIZER_FILE_PREFIX "' tensors, "
                   "expected 1 or %d", files, TOKENIZER_MAX_FILES);
  if (st_find(f, "tokenizer.merges")) return err_set(err, "a pretrained tokenizer and 'tokenizer.merges' both");
  if (!st_meta(f, "tokenizer.source")) return err_set(err, "metadata lacks 'tokenizer.source'");
  return 0;
}

/* The released model's tokenizer the file holds (check_tokenizer_meta
** passed), read as from the model's folder. */
static Tokenizer *checkpoint_tokenizer(const StFile *f, Err *err) {
  TokenizerFile files[TOKENIZER_MAX_FILES];
  int n = 0;
  for (int i = 0; i < f->n && n < TOKENIZER_MAX_FILES; i++) {
    const StTensor *t = &f->tensors[i];
    if (strncmp(t->name, TOKENIZER_FILE_PREFIX, strlen(TOKENIZER_FILE_PREFIX))) continue;
    files[n++] = (TokenizerFile){t->name + strlen(TOKENIZER_FILE_PREFIX), t->data, t->nbytes};
  }
  Tokenizer *tok = tokenizer_from_files(files, n, st_meta(f, "tokenizer.source"), err);
  if (!tok) err_prefix(err, "its tokenizer");
  return tok;
}

static int is_pretrained(const StFile *f) { return st_meta(f, "tokenizer.kind") != NULL; }

/* What tells one released tokenizer's held-out tokens from another's: the
** SHA-256 of its files ("" for a learned one, which the corpus and the
** vocabulary decide). */
static const char *tokenizer_files_hash(const StFile *f, char out[SHA256_HEX]) {
  Sha256 s;
  uint8_t d[32];
  out[0] = '\0';
  if (!is_pretrained(f)) return out;
  sha256_begin(&s);
  for (int i = 0; i < f->n; i++)
    if (!strncmp(f->tensors[i].name, TOKENIZER_FILE_PREFIX, strlen(TOKENIZER_FILE_PREFIX))) {
      sha256_add(&s, f->tensors[i].name, strlen(f->tensors[i].name) + 1);
      sha256_add(&s, f->tensors[i].data, f->tensors[i].nbytes);
    }
  sha256_end(&s, d);
  for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
  return out;
}

/* Everything about the file that needs no allocation. */
static int check_checkpoint(const StFile *f, RunOptions *o, Counters *k, Err *err) {
  const char *version = st_meta(f, "version");
  if (!version || strcmp(version, CKPT_VERSION) != 0)
    return err_set(err, "checkpoint version '%.20s', this tielab reads version " CKPT_VERSION,
                   version ? version : "(none)");
  if (read_settings(f, o, err) < 0 || check_config_keys(f, o, err) < 0 || read_counters(f, k, err) < 0 ||
      check_tokenizer_meta(f, err) < 0)
    return -1;
  return check_shapes(f, &o->model, err);
}

int load_corpus_policy(RunOptions *o, const LabLoadOptions *lo, Err *err) {
  if (!o->corpus[0] || !lo || !lo->corpus_allowed || lo->corpus_allowed(lo->ctx, o->corpus, sizeof o->corpus)) return 0;
  return err_set(err, "the corpus '%.900s' is not allowed here", o->corpus);
}

static Model *read_model(const StFile *f, const RunOptions *o, Err *err) {
  Model *m = model_create(&o->model, o->threads, err);
  if (m && (weights_read_into(m, f, err) < 0 || read_moments(f, m, err) < 0)) {
    model_free(m);
    return NULL;
  }
  return m;
}

/* Every held-out token one the tokenizer makes; each frequency the log of
** a count, or NaN for none. */
static int check_held_out(const SharedData *d, int vocab, Err *err) {
  for (size_t i = 0; i < d->ds.n; i++)
    if (d->ds.tokens[i] < 0 || d->ds.tokens[i] >= tokenizer_size(d->ds.tok))
      return err_set(err, "tensor 'data.val_tokens': token %zu is %d, outside the tokenizer's [0, %d)", i,
                     d->ds.tokens[i], tokenizer_size(d->ds.tok));
  for (int i = 0; i < vocab; i++)
    if (!isnan(d->log_freq[i]) && !(d->log_freq[i] >= 0 && isfinite(d->log_freq[i])))
      return err_set(err, "tensor 'data.log_freq': element %d is %g, expected a log count >= 0 or NaN", i,
                     d->log_freq[i]);
  return 0;
}

/* The checkpoint's tokenizer: a released model's, or the BPE of its
** merges (none: the bytes alone). */
static int read_merges(const StFile *f, const StTensor *tm, Tokenizer **tok, Err *err) {
  if (is_pretrained(f)) return (*tok = checkpoint_tokenizer(f, err)) ? 0 : -1;
  int32_t *merges = malloc(tm ? tm->nbytes : 1);   /* copied out: the file need not be aligned */
  if (!merges) return err_set(err, "out of memory");
  if (tm) memcpy(merges, tm->data, tm->nbytes);
  *tok = tokenizer_from_bpe(bpe_from_merges(merges, tm ? (int)(tm->numel / 2) : 0, err), err);
  free(merges);
  return *tok ? 0 : err_prefix(err, "tensor 'tokenizer.merges'");
}

/* The checkpoint's data tensors as a dataset of held-out tokens only. */
static int read_held_out(const StFile *f, const RunOptions *o, SharedData *d, Err *err) {
  const StTensor *tv = st_find(f, "data.val_tokens"), *tf = st_find(f, "data.log_freq");
  const StTensor *tm = st_find(f, "tokenizer.merges");
  int vocab = o->model.vocab;
  if (!tv || !tf)
    return err_set(err, "its corpus '%s' is not there, and this checkpoint, from an older tielab, holds no "
                   "held-out tokens to stand in for it: load it with lab.load(path, {corpus = FILE})", o->corpus);
  if (tv->numel < (size_t)o->model.ctx + 1)
    return err_set(err, "tensor 'data.val_tokens' holds %zu tokens, fewer than ctx+1 = %d", tv->numel, o->model.ctx + 1);
  if (read_merges(f, tm, &d->ds.tok, err) < 0) return -1;
  d->ds.tokens = malloc(tv->nbytes);
  d->log_freq = malloc(sizeof *d->log_freq * (size_t)vocab);
  if (!d->ds.tokens || !d->log_freq) return err_set(err, "out of memory");
  memcpy(d->ds.tokens, tv->data, tv->nbytes);
  memcpy(d->log_freq, tf->data, sizeof *d->log_freq * (size_t)vocab);
  d->ds.n = tv->numel, d->ds.n_train = 0;
  if (check_held_out(d, vocab, err) < 0) return -1;
  const char *hash = st_meta(f, "data.sha256");
  if (hash && (strlen(hash) != SHA256_HEX - 1 || strspn(hash, "0123456789abcdef") != SHA256_HEX - 1))
    return err_set(err, "metadata 'data.sha256' is '%.70s', expected 64 hex digits", hash);
  snprintf(d->sha256, sizeof d->sha256, "%s", hash ? hash : "");
  snprintf(d->ds.name, sizeof d->ds.name, "%.255s", o->corpus);
  return 0;
}

/* The held-out data of a checkpoint whose corpus is gone, as a reference
** for its run: shared with a run loaded from the same corpus before. */
static SharedData *held_out_data(Lab *lab, const StFile *f, const RunOptions *o, const char *why, Err *err) {
  char key[sizeof ((SharedData *)0)->key];
  const char *hash = st_meta(f, "data.sha256");
  char tok_hash[SHA256_HEX];
  snprintf(key, sizeof key, "held-out:%s|%d|%s|%s", o->corpus, o->model.vocab, hash ? hash : "",
           tokenizer_files_hash(f, tok_hash));
  for (SharedData *d = lab->data; d; d = d->next)
    if (strcmp(d->key, key) == 0) {
      d->refs++;
      return d;
    }
  SharedData *d = calloc(1, sizeof *d);
  if (!d) {
    err_set(err, "out of memory");
    return NULL;
  }
  if (read_held_out(f, o, d, err) < 0) {
    dataset_free(&d->ds);
    free(d->log_freq);
    free(d);
    return NULL;
  }
  snprintf(d->key, sizeof d->key, "%s", key);
  snprintf(d->held_out_why, sizeof d->held_out_why, "%s", why);
  d->held_out_only = 1;
  d->refs = 1;
  lab_data_insert(lab, d);
  return d;
}

/* The corpus of 'o' read as the run's own would be: with the tokenizer the
** checkpoint holds when it is a released model's, else learned. */
static SharedData *acquire_data(Lab *lab, const StFile *f, const RunOptions *o, Err *err) {
  if (!is_pretrained(f)) return lab_data_acquire(lab, o, err);
  Tokenizer *tok = checkpoint_tokenizer(f, err);
  return tok ? lab_data_acquire_pretrained(lab, o, tok, err) : NULL;
}

/* The data a loaded run works on, in '*data': its corpus, read (and
** hashed) as any run's, or, when that corpus is gone from its path or is no
** longer the text the run trained on, the held-out tokens the checkpoint
** keeps, so that it evaluates and samples but does not train. A corpus
** pointed to by the caller ('pointed') is taken as it is, and checked by
** its hash once the run exists. NULL for a checkpoint from before the
** held-out tokens were kept: the run reads its corpus itself; and for a
** released model's run that had no corpus. */
static int checkpoint_data(Lab *lab, const StFile *f, const RunOptions *o, int pointed, SharedData **data,
                           Err *err) {
  struct stat st;
  const char *want = st_meta(f, "data.sha256");
  *data = NULL;
  if (!o->corpus[0]) return 0;
  if (pointed) return !is_pretrained(f) ? 0 : (*data = acquire_data(lab, f, o, err)) ? 0 : -1;
  if (stat(o->corpus, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
    return (*data = held_out_data(lab, f, o, "was not found", err)) ? 0 : -1;
  if (!is_pretrained(f) && (!want || !st_find(f, "data.val_tokens")))
    return 0;   /* an older checkpoint: the corpus decides */
  Err read_err;
  SharedData *d = acquire_data(lab, f, o, &read_err);
  if (d && want && strcmp(d->sha256, want) == 0) {
    *data = d;
    return 0;
  }
  char why[sizeof d->held_out_why];
  if (d) snprintf(why, sizeof why, "holds other bytes than the text it was trained on (its SHA-256 differs)");
  else snprintf(why, sizeof why, "could not be read (%.200s)", read_err.msg);
  if (d) lab_data_release(lab, d);
  return (*data = held_out_data(lab, f, o, why, err)) ? 0 : -1;
}

static Run *load_checkpoint(Lab *lab, const StFile *f, const LabLoadOptions *lo, Err *err) {
  RunOptions o;
  Counters k;
  if (check_checkpoint(f, &o, &k, err) < 0) return NULL;
  if (lo && lo->corpus && *lo->corpus) {
    if (!o.corpus[0]) {
      err_set(err, "this run was trained on the built-in synthetic language: it has no corpus to point to");
      return NULL;
    }
    snprintf(o.corpus, sizeof o.corpus, "%s", lo->corpus);
  }
  if (load_corpus_policy(&o, lo, err) < 0) return NULL;
  o.corpus_nofollow = lo && lo->corpus_nofollow;
  if (lo && lo->name && *lo->name) snprintf(o.name, sizeof o.name, "%s", lo->name);
  if (lab_check_memory(lab, &o, lo ? lo->budget : 0, err) < 0) return NULL;
  SharedData *data = NULL;
  if (o.model.vocab >= 256 && checkpoint_data(lab, f, &o, lo && lo->corpus && *lo->corpus, &data, err) < 0)
    return NULL;
  /* A released model's run without a corpus holds its tokenizer itself. */
  Tokenizer *own = NULL;
  if (is_pretrained(f) && !data && !(own = checkpoint_tokenizer(f, err))) return NULL;
  Model *m = read_model(f, &o, err);
  if (!m) {
    if (data) lab_data_release(lab, data);
    tokenizer_free(own);
    return NULL;
  }
  Run *r = run_create_pretrained(lab, &o, m, data, own, err);
  if (!r) return NULL;
  if (read_extras(f, r, err) < 0 || read_fitted(f, r, k.step, err) < 0) {
    run_destroy(r);
    return NULL;
  }
  r->metrics.step = k.step;
  r->metrics.loss = k.loss;
  model_set_adam_t(r->model, k.adam_t);
  lens_set_step(r->lens, k.lens_steps);
  run_refresh_metrics(r);   /* the rates of the step it was saved at */
  r->dirty = 0;
  if (!(r = lab_adopt(lab, r, err))) return NULL;
  if (r->data) run_measure(r, err);   /* fresh validation, lenses and drift for the loaded weights */
  return r;
}

/* A weights-only nanoGPT file: default settings around its shapes, checked
** (memory included) before the model exists. */
static Run *load_weights_only(Lab *lab, const StFile *f, const char *path, const LabLoadOptions *lo, Err *err) {
  RunOptions o;
  run_options_default(&o);
  if (weights_config(f, o.model.batch, &o.model, err) < 0 || weights_check(f, &o.model, 1, err) < 0 ||
      run_options_check(&o, err) < 0)
    return NULL;
  /* The file holds no tokenizer: one is learned from the corpus named, or
  ** from the synthetic language, at the file's vocabulary. */
  if (lo && lo->corpus && *lo->corpus) snprintf(o.corpus, sizeof o.corpus, "%s", lo->corpus);
  if (load_corpus_policy(&o, lo, err) < 0) return NULL;
  o.corpus_nofollow = lo && lo->corpus_nofollow;
  snprintf(o.tie_text, sizeof o.tie_text, "%d", o.model.tie_k);
  o.tie_given = 1;
  if (lo && lo->name && *lo->name) snprintf(o.name, sizeof o.name, "%s", lo->name);
  else {
    const char *base = strrchr(path, '/');
    snprintf(o.name, sizeof o.name, "%s", base ? base + 1 : path);
    char *dot = strrchr(o.name, '.');
    if (dot && dot != o.name) *dot = '\0';
  }
  if (lab_check_memory(lab, &o, lo ? lo->budget : 0, err) < 0) return NULL;
  Model *m = model_create(&o.model, o.threads, err);
  if (!m) return NULL;
  if (weights_read_into(m, f, err) < 0) {
    model_free(m);
    return NULL;
  }
  Run *r = run_create(lab, &o, m, err);
  if (r) r->weights_only = 1;
  return r ? lab_adopt(lab, r, err) : NULL;
}

/* A file of tielab's, or a weights-only one: a batch is the released
** model's alone to be given (a checkpoint keeps its own, a weights file
** takes the default). */
static Run *load_file(Lab *lab, const char *path, const LabLoadOptions *lo, Err *err) {
  StFile f;
  int flags = lo && lo->nofollow ? SAFEOPEN_NOFOLLOW : 0;
  if (lo && lo->batch) {
    err_set(err, "'batch' is for a released model's folder; a checkpoint or weights file keeps its own");
    return NULL;
  }
  if (st_read_flags(&f, path, flags, err) < 0) return NULL;   /* its messages name the file */
  const char *format = st_meta(&f, "format");
  Run *r = format && strcmp(format, CKPT_FORMAT) == 0 ? load_checkpoint(lab, &f, lo, err)
                                                      : load_weights_only(lab, &f, path, lo, err);
  st_free(&f);
  return r;
}

Run *lab_load_with(Lab *lab, const char *path, const LabLoadOptions *lo, Err *err) {
  int flags = lo && lo->nofollow ? SAFEOPEN_NOFOLLOW : 0;
  int released = !(lo && lo->checkpoint_only) && lab_is_released_model(path, flags);
  Run *r = released ? lab_load_released(lab, path, lo, err)
                                               : load_file(lab, path, lo, err);
  if (r) snprintf(r->origin, sizeof r->origin, "%s", path);
  if (!r) {
    if (err && strncmp(err->msg, path, strlen(path)) != 0) err_prefix(err, "%s", path);   /* the file named once */
    err_one_line(err);
  }
  return r;
}

Run *lab_load(Lab *lab, const char *path, const char *name, Err *err) {
  LabLoadOptions lo = {.name = name};
  return lab_load_with(lab, path, &lo, err);
}

/* ------------------------------------------------------------- the fitted lens
** Saved once a fit has completed: its translators as "lens_fit.params" (in
** the layout of "lens.params"; no momentum, a fit starts its own), its
** results on the report set (lensfit.h) as "lens_fit.stats" [6, L+1] float64
** (rows kl, ce, entropy, acc, agree, contrib), and in the metadata the run
** step it was fitted at, how the fit went and the fitted lens's own step
** count (which seeds the batches of the next fit). A file without them
** loads with no fitted lens. */

static double *stat_row(LensStats *s, int k) {
  double *rows[FIT_STATS] = {s->kl, s->ce, s->entropy, s->acc, s->agree, s->contrib};
  return rows[k];
}

static int add_meta_num(StWriter *w, const char *key, double v, Err *err) {
  char buf[NUM_TEXT_MAX];
  return st_writer_meta(w, key, num_format(buf, sizeof buf, v), err);
}

static int add_fitted(StWriter *w, Run *r, double *stats, Err *err) {
  RunMetrics *mt = &r->metrics;
  if (!r->lens_fit || mt->fitted_lens.step < 0) return 0;
  Lens *ln = lensfit_lens(r->lens_fit);
  long lens_steps;   /* a fit in progress is saved as it was before it */
  const float *params = lensfit_saved_params(r, &lens_steps);
  int n = mt->fitted_lens.n;
  for (int k = 0; k < FIT_STATS; k++) memcpy(stats + (size_t)k * n, stat_row(&mt->fitted_lens, k), n * sizeof *stats);
  int64_t shape[2] = {FIT_STATS, n};
  if ((lens_state_size(ln) > 0 && add_f32(w, "lens_fit.params", params, (int64_t)lens_state_size(ln), 0, err) < 0) ||
      st_writer_add(w, "lens_fit.stats", ST_F64, 2, shape, stats, err) < 0 ||
      add_meta_long(w, "lens_fit.lens_steps", lens_steps, err) < 0 ||
      add_meta_long(w, "lens_fit.step", mt->fitted_lens.step, err) < 0 ||
      add_meta_long(w, "lens_fit.steps", mt->fitted.steps, err) < 0 ||
      add_meta_long(w, "lens_fit.converged", mt->fitted.converged, err) < 0 ||
      add_meta_long(w, "lens_fit.tokens_per_step", mt->fitted.tokens_per_step, err) < 0 ||
      add_meta_num(w, "lens_fit.lr", mt->fitted.lr, err) < 0 || add_meta_num(w, "lens_fit.tol", mt->fitted.tol, err) < 0 ||
      add_meta_long(w, "lens_fit.patience", mt->fitted.patience, err) < 0 ||
      add_meta_long(w, "lens_fit.stopped", mt->fitted.stopped, err) < 0 ||
      add_meta_num(w, "lens_fit.seconds", mt->fitted.seconds, err) < 0)
    return -1;
  return 0;
}

/* The stats tensor and the metadata come together or not at all (the
** translators too, unless the model has no translators). */
static int check_fitted_present(const StFile *f, Err *err) {
  static const char *const keys[] = {"lens_fit.lens_steps", "lens_fit.step", "lens_fit.steps", "lens_fit.converged",
                                     "lens_fit.tokens_per_step", "lens_fit.lr", "lens_fit.tol"};
  int has = st_find(f, "lens_fit.stats") != NULL;
  if (!has && st_find(f, "lens_fit.params")) return err_set(err, "tensor 'lens_fit.params' without 'lens_fit.stats'");
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (has != (st_meta(f, keys[i]) != NULL))
      return err_set(err, has ? "metadata lacks '%s'" : "metadata '%s' without tensor 'lens_fit.stats'", keys[i]);
  return 0;
}

static int meta_positive(const StFile *f, const char *key, double *out, Err *err) {
  const char *v = st_meta(f, key);
  if (!v || num_parse(v, out) < 0 || !(*out > 0))
    return err_set(err, "metadata '%s' is '%.40s', expected a number > 0", key, v ? v : "(none)");
  return 0;
}

/* Why the fit stopped, its patience and wall time: absent from files
** written before fits stopped early, whose fits ran to their limit unless
** converged (patience 0 and the time NaN: not known). */
static int read_fit_stop(const StFile *f, LensFitInfo *fi, Err *err) {
  long stopped = fi->converged ? LENSFIT_STOP_CONVERGED : LENSFIT_STOP_MAX_STEPS, patience = 0;
  fi->seconds = NAN;
  if (st_meta(f, "lens_fit.stopped") &&
      meta_long(f, "lens_fit.stopped", LENSFIT_STOP_CONVERGED, LENSFIT_STOP_MAX_STEPS, &stopped, err) < 0)
    return -1;
  if (st_meta(f, "lens_fit.patience") && meta_long(f, "lens_fit.patience", 1, COUNT_MAX, &patience, err) < 0)
    return -1;
  if (st_meta(f, "lens_fit.seconds") && meta_positive(f, "lens_fit.seconds", &fi->seconds, err) < 0) return -1;
  if ((stopped == LENSFIT_STOP_CONVERGED) != fi->converged)
    return err_set(err, "metadata 'lens_fit.stopped' (%ld) contradicts 'lens_fit.converged' (%d)", stopped,
                   fi->converged);
  fi->stopped = (LensFitStop)stopped;
  fi->patience = (int)patience;
  return 0;
}

/* How the fit went, each counter in its range. */
static int read_fit_meta(const StFile *f, long step, long *lens_steps, long *at, LensFitInfo *fi, Err *err) {
  long conv, tokens;
  if (meta_long(f, "lens_fit.lens_steps", 1, COUNT_MAX, lens_steps, err) < 0 ||
      meta_long(f, "lens_fit.step", 0, step, at, err) < 0 ||
      meta_long(f, "lens_fit.steps", 1, *lens_steps, &fi->steps, err) < 0 ||
      meta_long(f, "lens_fit.converged", 0, 1, &conv, err) < 0 ||
      meta_long(f, "lens_fit.tokens_per_step", 1, 1L << 30, &tokens, err) < 0 ||
      meta_positive(f, "lens_fit.lr", &fi->lr, err) < 0 || meta_positive(f, "lens_fit.tol", &fi->tol, err) < 0)
    return -1;
  fi->converged = (int)conv;
  fi->tokens_per_step = (int)tokens;
  return read_fit_stop(f, fi, err);
}

/* The rows of "lens_fit.stats" in stat_row's order, with the range each
** value must lie in: KL, cross-entropy and entropy are never negative,
** accuracy and agreement are shares, a contribution is a difference of KLs. */
static const struct {
  const char *name;
  double lo, hi;
} fit_rows[FIT_STATS] = {
  {"kl", 0, INFINITY},      {"ce", 0, INFINITY}, {"entropy", 0, INFINITY},
  {"acc", 0, 1},            {"agree", 0, 1},     {"contrib", -INFINITY, INFINITY},
};

/* The per-position results: finite, each in its row's range. */
static int read_fit_stats(const StTensor *t, LensStats *s, Err *err) {
  int n = (int)t->shape[1];
  for (int k = 0; k < FIT_STATS; k++) {
    double *row = stat_row(s, k);
    memcpy(row, t->data + (size_t)k * n * sizeof *row, (size_t)n * sizeof *row);   /* unaligned in the file */
    for (int i = 0; i < n; i++)
      if (!isfinite(row[i]) || row[i] < fit_rows[k].lo || row[i] > fit_rows[k].hi)
        return err_set(err, "tensor 'lens_fit.stats': %s at position %d is %g, outside [%g, %g]", fit_rows[k].name,
                       i, row[i], fit_rows[k].lo, fit_rows[k].hi);
  }
  s->n = n;
  return 0;
}

static int read_fitted(const StFile *f, Run *r, long step, Err *err) {
  const StTensor *t = st_find(f, "lens_fit.stats");
  if (!t) return 0;
  LensStats s;
  LensFitInfo fi;
  long lens_steps, at;
  memset(&s, 0, sizeof s);
  if (read_fit_meta(f, step, &lens_steps, &at, &fi, err) < 0 || read_fit_stats(t, &s, err) < 0) return -1;
  if (!(r->lens_fit = lensfit_new(model_config(r->model), err))) return -1;
  Lens *ln = lensfit_lens(r->lens_fit);
  size_t n = lens_state_size(ln);
  if (n > 0 && read_f32(f, "lens_fit.params", lens_params(ln), n, err) < 0) return -1;
  lens_set_step(ln, lens_steps);
  s.step = at;
  r->metrics.fitted_lens = s;
  r->metrics.fitted = fi;
  return 0;
}
