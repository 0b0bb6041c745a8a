/*
** weights.c -- see weights.h.
**
** Names and shapes are checked against the tensor table of the shape the
** file describes before any model exists. Loading then reads every tensor
** into a scratch arena and copies it into the model only when all values
** are finite and tied columns agree, so a bad file never leaves a model
** half overwritten.
*/
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/num.h"
#include "core/settings_model.h"
#include "core/weights.h"

#define WTE "transformer.wte.weight"
#define WPE "transformer.wpe.weight"
#define LM_HEAD "lm_head.weight"

/* ---------------------------------------------------------------- config */

/* Metadata 'key' as a positive int into '*out'; 0 when absent, -1 when bad. */
static int meta_int(const StFile *f, const char *key, int *out, Err *err) {
  const char *s = st_meta(f, key);
  if (!s) return 0;
  long v;
  if (num_parse_long(s, 1, INT_MAX, &v) < 0)
    return err_set(err, "metadata %s is '%.40s', not a positive integer", key, s);
  *out = (int)v;
  return 1;
}

/* One more than the largest i in the names "transformer.h.<i>.*". */
static int count_layers(const StFile *f) {
  int n = 0;
  for (int i = 0; i < f->n; i++) {
    const char *s = f->tensors[i].name;
    if (strncmp(s, "transformer.h.", 14) != 0) continue;
    char *end;
    long v = strtol(s + 14, &end, 10);
    if (end != s + 14 && *end == '.' && v >= 0 && v < INT_MAX && v + 1 > n) n = (int)v + 1;
  }
  return n;
}

static int same_bytes(const StTensor *a, const StTensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return memcmp(a->data, b->data, a->nbytes) == 0;
}

/* A 2-D tensor's dimension 'i' into '*out', for inferring a size. */
static int infer_dim(const StFile *f, const char *name, int i, const char *key, int *out,
                     Err *err) {
  const StTensor *t = st_find(f, name);
  if (!t) return err_set(err, "no %s in the metadata and no %s to infer it from", key, name);
  if (t->ndim != 2 || t->shape[i] <= 0 || t->shape[i] > INT_MAX)
    return err_set(err, "%s is not a 2-D tensor with a usable shape", name);
  *out = (int)t->shape[i];
  return 0;
}

static int config_tie(const StFile *f, int dim, int *tie_k, Err *err) {
  const StTensor *wte = st_find(f, WTE), *lm = st_find(f, LM_HEAD);
  const char *s = st_meta(f, model_fields[MODEL_TIE].meta);
  if (!s) {
    *tie_k = !lm || (wte && same_bytes(wte, lm)) ? dim : 0;
    return 0;
  }
  if (config_parse_tie(s, dim, tie_k, err) != 0) return err_prefix(err, "metadata tie");
  if (*tie_k == dim && lm && !(wte && same_bytes(wte, lm)))
    return err_set(err, "tied model but " LM_HEAD " differs from " WTE);
  return 0;
}

int weights_config(const StFile *f, int batch, ModelConfig *cfg, Err *err) {
  memset(cfg, 0, sizeof *cfg);
  cfg->batch = batch;
  int r;
  if ((r = meta_int(f, "vocab_size", &cfg->vocab, err)) < 0) return -1;
  if (r == 0 && infer_dim(f, WTE, 0, "vocab_size", &cfg->vocab, err) != 0) return -1;
  if ((r = meta_int(f, "n_embd", &cfg->dim, err)) < 0) return -1;
  if (r == 0 && infer_dim(f, WTE, 1, "n_embd", &cfg->dim, err) != 0) return -1;
  if ((r = meta_int(f, "block_size", &cfg->ctx, err)) < 0) return -1;
  if (r == 0 && infer_dim(f, WPE, 0, "block_size", &cfg->ctx, err) != 0) return -1;
  if ((r = meta_int(f, "n_layer", &cfg->layers, err)) < 0) return -1;
  if (r == 0) cfg->layers = count_layers(f);
  if ((r = meta_int(f, "n_head", &cfg->heads, err)) < 0) return -1;
  if (r == 0)
    return err_set(err, "no n_head in the metadata: the number of heads cannot be inferred");
  return config_tie(f, cfg->dim, &cfg->tie_k, err);
}

/* ---------------------------------------------------------------- reading */

static int shape_matches(const TensorInfo *ti, const StTensor *t) {
  if (t->ndim != ti->ndim) return 0;
  for (int i = 0; i < ti->ndim; i++)
    if (t->shape[i] != ti->shape[i]) return 0;
  return 1;
}

/* A name that belongs to the model's namespaces. */
static int model_name(const char *s) {
  return strncmp(s, "transformer.", 12) == 0 || strncmp(s, "lm_head.", 8) == 0;
}

static const TensorInfo *table_find(const TensorInfo *ts, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(ts[i].name, name) == 0) return &ts[i];
  return NULL;
}

/* Names and shapes against the table of a model of shape 'c'. */
static int check_table(const TensorInfo *ts, int nt, const ModelConfig *c, const StFile *f, int strict,
                       Err *err) {
  /* The problems found, counted, and said in one line as long as an Err
  ** holds (a list that memory could not hold is still a problem). */
  Buf miss = {.max = ERR_MSG_MAX - 1}, odd = miss, shape = miss, all = miss;
  int n_miss = 0, n_odd = 0, n_shape = 0;
  for (int i = 0; i < nt; i++) {
    const TensorInfo *ti = &ts[i];
    const StTensor *t = st_find(f, ti->name);
    int64_t want[2] = {ti->shape[0], ti->shape[1]};
    char a[64], b[64];
    if (!t && !(strcmp(ti->name, LM_HEAD) == 0 && c->tie_k == c->dim))
      n_miss++, buf_item(&miss, ", ", "%s", ti->name);
    else if (t && !shape_matches(ti, t))
      n_shape++, buf_item(&shape, ", ", "%s is %s, the model needs %s", ti->name,
                          st_shape_str(a, sizeof a, t->ndim, t->shape), st_shape_str(b, sizeof b, ti->ndim, want));
  }
  for (int i = 0; i < f->n; i++) {
    const char *s = f->tensors[i].name;
    if ((strict || model_name(s)) && !table_find(ts, nt, s)) n_odd++, buf_item(&odd, ", ", "%s", s);
  }
  if (n_miss + n_odd + n_shape == 0) return 0;
  if (n_miss) buf_item(&all, "; ", "missing tensors: %s", miss.s ? miss.s : "");
  if (n_odd) buf_item(&all, "; ", "unexpected tensors: %s", odd.s ? odd.s : "");
  if (n_shape) buf_item(&all, "; ", "wrong shape: %s", shape.s ? shape.s : "");
  int rc = err_set(err, "%s", all.s ? all.s : "the tensors do not match the model");
  buf_free(&miss), buf_free(&odd), buf_free(&shape), buf_free(&all);
  return rc;
}

/* Since the tensors tile the file exactly, shapes that match mean the file
** holds every parameter: a small file cannot make a large model. */
int weights_check(const StFile *f, const ModelConfig *c, int strict, Err *err) {
  if (config_validate(c, err) < 0) return -1;
  int nt;
  TensorInfo *ts = model_tensor_table(c, &nt);
  if (!ts) return err_set(err, "out of memory");
  int rc = check_table(ts, nt, c, f, strict, err);
  free(ts);
  return rc;
}

int weights_check_finite(const char *name, const float *x, size_t n, Err *err) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return err_set(err, "tensor '%s': element %zu is %s", name, i,
                     isnan(x[i]) ? "NaN" : x[i] > 0 ? "+infinity" : "-infinity");
  return 0;
}

/* E_out's first 'k' columns must equal E_in's; 'lm' and 'wte' are [V, d]. */
static int check_shared(const float *wte, const float *lm, int V, int d, int k, Err *err) {
  for (int r = 0; r < V; r++)
    if (memcmp(wte + (size_t)r * d, lm + (size_t)r * d, (size_t)k * sizeof(float)) != 0)
      return err_set(err, "%s differs from %s in the %d shared column%s (row %d)", LM_HEAD, WTE,
                     k, k > 1 ? "s" : "", r);
  return 0;
}

/* Every tensor of the file that is in the model, as finite float32. */
static int convert_all(Model *m, const StFile *f, float *scratch, int *lm_in_file, Err *err) {
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *ti = model_tensor(m, i);
    const StTensor *t = st_find(f, ti->name);
    if (!t) continue;   /* lm_head of a fully tied model: mirrored later */
    float *dst = scratch + ti->offset;
    if (st_to_f32(t, dst, ti->numel, err) != 0 || weights_check_finite(ti->name, dst, ti->numel, err) != 0)
      return -1;
    if (strcmp(ti->name, LM_HEAD) == 0) *lm_in_file = 1;
  }
  return 0;
}

static int read_tensors(Model *m, const StFile *f, int strict, Err *err) {
  const ModelConfig *c = model_config(m);
  if (weights_check(f, c, strict, err) != 0) return -1;
  size_t n = model_n_floats(m);
  float *scratch = malloc(n * sizeof(float));
  if (!scratch) return err_set(err, "out of memory (%zu floats)", n);
  int lm_in_file = 0, rc = convert_all(m, f, scratch, &lm_in_file, err);
  float *wte = scratch + model_find_tensor(m, WTE)->offset;
  float *lm = scratch + model_find_tensor(m, LM_HEAD)->offset;
  if (rc == 0 && lm_in_file) rc = check_shared(wte, lm, c->vocab, c->dim, c->tie_k, err);
  if (rc == 0) {
    memcpy(model_params(m), scratch, n * sizeof(float));
    model_mirror_shared(m);   /* a fully tied file has no lm_head.weight */
  }
  free(scratch);
  return rc;
}

int weights_read_into(Model *m, const StFile *f, Err *err) {
  return read_tensors(m, f, 0, err);
}

static Model *load_from(const StFile *f, int threads, int batch, Err *err) {
  ModelConfig cfg;
  if (weights_config(f, batch, &cfg, err) != 0 || weights_check(f, &cfg, 1, err) != 0) return NULL;
  Model *m = model_create(&cfg, threads, err);
  if (m && read_tensors(m, f, 1, err) != 0) {
    model_free(m);
    m = NULL;
  }
  return m;
}

Model *weights_load(const char *path, int threads, int batch, Err *err) {
  StFile f;
  if (st_read(&f, path, err) != 0) return NULL;
  Model *m = load_from(&f, threads, batch, err);
  st_free(&f);
  if (!m) err_prefix(err, "%s", path);
  return m;
}

/* ---------------------------------------------------------------- writing */

static int add_meta_int(StWriter *w, const char *key, int v, Err *err) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", v);
  return st_writer_meta(w, key, buf, err);
}

int weights_add_to_writer(Model *m, StWriter *w, int with_lm_head, Err *err) {
  const ModelConfig *c = model_config(m);
  float *p = model_params(m);
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *ti = model_tensor(m, i);
    int64_t shape[2] = {ti->shape[0], ti->shape[1]};
    if (strcmp(ti->name, LM_HEAD) == 0 && c->tie_k == c->dim && !with_lm_head) continue;
    if (st_writer_add(w, ti->name, ST_F32, ti->ndim, shape, p + ti->offset, err) != 0) return -1;
  }
  /* The shape under nanoGPT's keys, then the tie mode as text. */
  for (int i = 0; i < N_MODEL_FIELDS; i++)
    if (i != MODEL_TIE && model_fields[i].meta &&
        add_meta_int(w, model_fields[i].meta, *(const int *)((const char *)c + model_fields[i].offset), err) != 0)
      return -1;
  char tie[16];
  return st_writer_meta(w, model_fields[MODEL_TIE].meta, config_tie_name(c->tie_k, c->dim, tie), err);
}

int weights_save(Model *m, const char *path, Err *err) {
  StWriter *w = st_writer_new();
  if (!w) return err_set(err, "%s: out of memory", path);
  int rc = weights_add_to_writer(m, w, 0, err);
  if (rc != 0) err_prefix(err, "%s", path);
  else rc = st_writer_write(w, path, err);
  st_writer_free(w);
  return rc;
}
