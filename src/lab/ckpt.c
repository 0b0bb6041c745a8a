/*
** ckpt.c -- what a checkpoint holds and how it comes back.
**
** A checkpoint is one safetensors file: the model under nanoGPT names
** (lm_head.weight absent when fully tied, so PyTorch can load it), the AdamW
** moments as "optim.m.<name>" and "optim.v.<name>", the lens translators and
** their momentum, the tokenizer's merges, the step-0 embeddings (for drift),
** the packed history, and in the metadata every setting of the run as
** "opt.<key>" plus the counters. A run resumed from it steps on exactly as
** one that never stopped: batches are a function of (data seed, step).
**
** 'lab_load' also accepts a weights-only nanoGPT file (no "format" key):
** it becomes a new run with default settings around those weights.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/safetensors.h"
#include "../core/weights.h"
#include "run.h"

#define CKPT_FORMAT "tielab-checkpoint"
#define CKPT_VERSION "1"

/* ------------------------------------------------------------- writing */

typedef struct SaveBufs {
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
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", r->metrics.loss);
  if (st_writer_meta(w, "format", CKPT_FORMAT, err) < 0 || st_writer_meta(w, "version", CKPT_VERSION, err) < 0 ||
      add_meta_long(w, "step", r->metrics.step, err) < 0 ||
      add_meta_long(w, "adam_t", model_adam_t(r->model), err) < 0 ||
      add_meta_long(w, "lens_steps", lens_step(r->lens), err) < 0 || st_writer_meta(w, "loss", buf, err) < 0)
    return -1;
  return 0;
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
  if (r->data) {
    int nm;
    const int32_t *merges = bpe_merges(r->data->ds.bpe, &nm);
    int64_t shape[2] = {nm, 2};
    if (nm > 0 && st_writer_add(w, "tokenizer.merges", ST_I32, 2, shape, merges, err) < 0) return -1;
  }
  if (history_pack(r->hist, &b->hist, &b->hist_n, &b->hist_names, err) < 0) return -1;
  int64_t hn = (int64_t)b->hist_n;
  if (st_writer_add(w, "history", ST_F64, 1, &hn, b->hist, err) < 0) return -1;
  return st_writer_meta(w, "history.names", b->hist_names, err);
}

int run_save(Run *r, const char *path, Err *err) {
  const ModelConfig *c = model_config(r->model);
  StWriter *w = st_writer_new();
  SaveBufs b = {0};
  if (!w) return err_set(err, "out of memory saving '%s'", path);
  int rc = weights_add_to_writer(r->model, w, c->tie_k < c->dim, err);
  if (rc == 0) rc = add_moments(w, r->model, err);
  if (rc == 0) rc = add_extras(w, r, &b, err);
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

static int read_f32(const StFile *f, const char *name, float *dst, size_t n, const char *path, Err *err) {
  const StTensor *t = st_find(f, name);
  if (!t) return err_set(err, "%s: checkpoint has no tensor '%s'", path, name);
  if (t->numel != n) return err_set(err, "%s: tensor '%s' has %zu values, expected %zu", path, name, t->numel, n);
  if (st_to_f32(t, dst, n, err) < 0) return err_prefix(err, "%s", path);
  return 0;
}

static int read_moments(const StFile *f, Model *m, const char *path, Err *err) {
  char name[96];
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *t = model_tensor(m, i);
    snprintf(name, sizeof name, "optim.m.%s", t->name);
    if (read_f32(f, name, model_adam_m(m) + t->offset, t->numel, path, err) < 0) return -1;
    snprintf(name, sizeof name, "optim.v.%s", t->name);
    if (read_f32(f, name, model_adam_v(m) + t->offset, t->numel, path, err) < 0) return -1;
  }
  return 0;
}

static int meta_long(const StFile *f, const char *key, long lo, long hi, long *out, const char *path, Err *err) {
  const char *v = st_meta(f, key);
  char *end;
  if (!v) return err_set(err, "%s: checkpoint metadata lacks '%s'", path, key);
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *v == '\0' || *end != '\0' || n < lo || n > hi)
    return err_set(err, "%s: metadata '%s' is '%s', expected a whole number in [%ld, %ld]", path, key, v, lo, hi);
  *out = n;
  return 0;
}

static int read_settings(const StFile *f, RunOptions *o, const char *path, Err *err) {
  int n;
  const Setting *s = lab_settings(&n);
  char key[96];
  run_options_default(o);
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "opt.%s", s[i].name);
    const char *v = st_meta(f, key);
    if (!v) continue;   /* a setting newer than the file: keep its default */
    if (run_options_set_text(o, s[i].name, v, err) < 0) return err_prefix(err, "%s: %s", path, key);
  }
  return run_options_check(o, err) < 0 ? err_prefix(err, "%s", path) : 0;
}

/* The tokenizer rebuilt from the corpus must be the one the run trained with. */
static int check_tokenizer(const StFile *f, Run *r, const char *path, Err *err) {
  const StTensor *t = st_find(f, "tokenizer.merges");
  if (!r->data) return 0;
  int nm;
  const int32_t *merges = bpe_merges(r->data->ds.bpe, &nm);
  size_t want = (size_t)nm * 2;
  if ((!t && nm == 0) || (t && t->dtype == ST_I32 && t->numel == want && memcmp(t->data, merges, want * 4) == 0))
    return 0;
  return err_set(err, "%s: the corpus '%s' no longer gives the tokenizer this run was trained with", path,
                 r->data->ds.name);
}

static int read_extras(const StFile *f, Run *r, const char *path, Err *err) {
  const ModelConfig *c = model_config(r->model);
  size_t vd = (size_t)c->vocab * c->dim, n = lens_state_size(r->lens);
  if (read_f32(f, "drift.e_in0", r->e_in0, vd, path, err) < 0 ||
      read_f32(f, "drift.e_out0", r->e_out0, vd, path, err) < 0)
    return -1;
  run_set_init_fingerprint(r);   /* of the real step 0, not of the loaded weights */
  if (n > 0 && (read_f32(f, "lens.params", lens_params(r->lens), n, path, err) < 0 ||
                read_f32(f, "lens.momentum", lens_momentum(r->lens), n, path, err) < 0))
    return -1;
  const StTensor *h = st_find(f, "history");
  const char *names = st_meta(f, "history.names");
  if (h && names && h->dtype == ST_F64) {
    /* Copy out: the file buffer need not be aligned for doubles. */
    double *buf = malloc(h->nbytes ? h->nbytes : 1);
    if (!buf) return err_set(err, "%s: out of memory reading the history", path);
    memcpy(buf, h->data, h->nbytes);
    History *hist = history_unpack(buf, h->numel, names, err);
    free(buf);
    if (!hist) return err_prefix(err, "%s: history", path);
    history_free(r->hist);
    r->hist = hist;
  }
  return check_tokenizer(f, r, path, err);
}

static int read_counters(const StFile *f, Run *r, const char *path, Err *err) {
  long step, adam_t, lens_n;
  if (meta_long(f, "step", 0, 1L << 50, &step, path, err) < 0 ||
      meta_long(f, "adam_t", 0, 1L << 50, &adam_t, path, err) < 0 ||
      meta_long(f, "lens_steps", 0, 1L << 50, &lens_n, path, err) < 0)
    return -1;
  r->metrics.step = step;
  model_set_adam_t(r->model, adam_t);
  lens_set_step(r->lens, lens_n);
  const char *loss = st_meta(f, "loss");
  if (loss) r->metrics.loss = strtod(loss, NULL);
  return 0;
}

static Run *load_checkpoint(Lab *lab, const StFile *f, const char *path, const char *name, Err *err) {
  RunOptions o;
  if (read_settings(f, &o, path, err) < 0) return NULL;
  if (name && *name) snprintf(o.name, sizeof o.name, "%s", name);
  /* The tensors must fit the settings before anything is allocated. */
  ModelConfig shape;
  if (weights_config(f, o.model.batch, &shape, err) < 0) {
    err_prefix(err, "%s", path);
    return NULL;
  }
  if (shape.vocab != o.model.vocab || shape.dim != o.model.dim || shape.layers != o.model.layers ||
      shape.ctx != o.model.ctx) {
    err_set(err, "%s: tensors are %d x %d with %d layers and ctx %d, but the settings say %d x %d, %d, %d", path,
            shape.vocab, shape.dim, shape.layers, shape.ctx, o.model.vocab, o.model.dim, o.model.layers,
            o.model.ctx);
    return NULL;
  }
  Model *m = model_create(&o.model, o.threads, err);
  if (!m) return NULL;
  if (weights_read_into(m, f, err) < 0 || read_moments(f, m, path, err) < 0) {
    err_prefix(err, "%s", path);
    model_free(m);
    return NULL;
  }
  Run *r = run_create(lab, &o, m, err);
  if (!r) return NULL;
  if (read_extras(f, r, path, err) < 0 || read_counters(f, r, path, err) < 0) {
    run_destroy(r);
    return NULL;
  }
  r->dirty = 0;
  if (!(r = lab_adopt(lab, r, err))) return NULL;
  if (r->data) run_measure(r, err);   /* fresh validation, lenses and drift for the loaded weights */
  return r;
}

/* A weights-only nanoGPT file: default settings around its shapes. */
static Run *load_weights_only(Lab *lab, const char *path, const char *name, Err *err) {
  RunOptions o;
  run_options_default(&o);
  Model *m = weights_load(path, o.threads, o.model.batch, err);
  if (!m) return NULL;
  o.model = *model_config(m);
  snprintf(o.tie_text, sizeof o.tie_text, "%d", o.model.tie_k);
  o.tie_given = 1;
  if (name && *name) snprintf(o.name, sizeof o.name, "%s", name);
  else {
    const char *base = strrchr(path, '/');
    snprintf(o.name, sizeof o.name, "%s", base ? base + 1 : path);
    char *dot = strrchr(o.name, '.');
    if (dot && dot != o.name) *dot = '\0';
  }
  Run *r = run_create(lab, &o, m, err);
  return r ? lab_adopt(lab, r, err) : NULL;
}

Run *lab_load(Lab *lab, const char *path, const char *name, Err *err) {
  StFile f;
  if (st_read(&f, path, err) < 0) return NULL;
  const char *format = st_meta(&f, "format");
  Run *r;
  if (format && strcmp(format, CKPT_FORMAT) == 0) {
    r = load_checkpoint(lab, &f, path, name, err);
    st_free(&f);
    return r;
  }
  st_free(&f);
  return load_weights_only(lab, path, name, err);
}
