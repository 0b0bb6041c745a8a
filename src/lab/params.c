/*
** params.c -- a run's parameters as matrices a client reads and writes by
** name between steps (lab.h says the rules: the aliases E_in and E_out,
** 1-D tensors as columns, what a write to a tied E_out means).
**
** The model keeps E_out's shared columns as a mirror of E_in's (model.h):
** a read copies the storage as it is, which already holds the mirror; a
** write lands every shared value in E_in, then re-mirrors, so the mirror
** and E_in can never disagree.
*/
#include <math.h>
#include <string.h>

#include "lab/run.h"

#define WTE "transformer.wte.weight"
#define LM_HEAD "lm_head.weight"

int run_param_count(const Run *r) { return model_tensor_count(r->model); }

const char *run_param_name(const Run *r, int i) {
  if (i < 0 || i >= model_tensor_count(r->model)) return NULL;
  return model_tensor(r->model, i)->name;
}

/* The tensor named 'name' or by an alias; an error naming it when none. */
static const TensorInfo *find_param(const Run *r, const char *name, Err *err) {
  const char *real = strcmp(name, RUN_PARAM_E_IN) == 0    ? WTE
                     : strcmp(name, RUN_PARAM_E_OUT) == 0 ? LM_HEAD
                                                          : name;
  const TensorInfo *ti = model_find_tensor(r->model, real);
  if (!ti) err_set(err, "run '%s' has no parameter '%s'", r->opt.name, name);
  return ti;
}

/* A 1-D tensor is a column: n x 1. */
int run_param_shape(const Run *r, const char *name, int *rows, int *cols, Err *err) {
  const TensorInfo *ti = find_param(r, name, err);
  if (!ti) return -1;
  tensor_matrix_shape(ti, rows, cols);
  return 0;
}

/* The tensor 'name' when the caller's rows x cols is its shape; an error
** naming both shapes when not. */
static const TensorInfo *param_of_shape(const Run *r, const char *name, int rows, int cols, Err *err) {
  const TensorInfo *ti = find_param(r, name, err);
  if (!ti) return NULL;
  int want_rows, want_cols;
  tensor_matrix_shape(ti, &want_rows, &want_cols);
  if (rows != want_rows || cols != want_cols) {
    err_set(err, "'%s' is %dx%d, the matrix given is %dx%d", name, want_rows, want_cols, rows, cols);
    return NULL;
  }
  return ti;
}

int run_param_read(const Run *r, const char *name, float *out, int rows, int cols, Err *err) {
  const TensorInfo *ti = param_of_shape(r, name, rows, cols, err);
  if (!ti) return -1;
  memcpy(out, model_params(r->model) + ti->offset, ti->numel * sizeof *out);
  return 0;
}

/* Every entry finite, or an error naming the first that is not as
** (row, column), from 1 as a script counts. */
static int check_finite(const char *name, const float *in, int rows, int cols, Err *err) {
  for (size_t i = 0; i < (size_t)rows * cols; i++)
    if (!isfinite(in[i]))
      return err_set(err, "the matrix holds %s at (%zu, %zu); '%s' takes finite numbers only",
                     isnan(in[i]) ? "a NaN" : "an infinity", i / cols + 1, i % cols + 1, name);
  return 0;
}

/* E_out [V,d] from 'in': the first tie_k columns of each row are E_in's
** parameters and go there, the rest into lm_head's own columns. */
static void write_e_out(Model *m, const float *in) {
  const ModelConfig *c = model_config(m);
  float *w = model_params(m);
  float *e_in = w + model_find_tensor(m, WTE)->offset;
  float *e_out = w + model_find_tensor(m, LM_HEAD)->offset;
  size_t d = (size_t)c->dim, k = (size_t)c->tie_k;
  for (size_t v = 0; v < (size_t)c->vocab; v++) {
    memcpy(e_in + v * d, in + v * d, k * sizeof *in);
    memcpy(e_out + v * d + k, in + v * d + k, (d - k) * sizeof *in);
  }
}

int run_param_write(Run *r, const char *name, const float *in, int rows, int cols, Err *err) {
  const TensorInfo *ti = param_of_shape(r, name, rows, cols, err);
  if (!ti) return -1;
  if (check_finite(name, in, rows, cols, err) < 0) return -1;
  if (run_refuse_if_fitting(r, "have its weights written", err) < 0) return -1;
  if (strcmp(ti->name, LM_HEAD) == 0) write_e_out(r->model, in);
  else memcpy(model_params(r->model) + ti->offset, in, ti->numel * sizeof *in);
  model_mirror_shared(r->model);   /* a write to E_in reaches E_out's shared columns */
  r->dirty = 1;
  return 0;
}
