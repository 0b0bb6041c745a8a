/*
** lmatrix_ops.c -- the arithmetic of lab.matrix: scaling and adding in
** place, the product (cblas_sgemm), elementwise products, norms, sums,
** means and row cosines, and the operators + - * and unary minus.
**
** Methods named for a change (m:scale, m:add) change 'm' and return it;
** every other one returns a new owned matrix or a number. Sums of many
** floats are taken in double, so that a long row does not lose its small
** terms. Shapes are checked first, and an error names both.
*/
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "luaapi/linternal.h"

/* ------------------------------------------------------------ in place */

/* m:scale(s): m = s*m. */
static int lmatrix_scale(lua_State *L) {
  LMatrix *m = lmatrix_writable(L, 1, "m:scale");
  float s = (float)luaL_checknumber(L, 2);
  cblas_sscal((int)lmatrix_count(m), s, m->data, 1);
  lua_settop(L, 1);
  return 1;
}

/* m:add(n [, a]): m = m + a*n. */
static int lmatrix_add(lua_State *L) {
  LMatrix *m = lmatrix_writable(L, 1, "m:add");
  LMatrix *n = lmatrix_check(L, 2);
  float a = (float)luaL_optnumber(L, 3, 1);
  lmatrix_same_shape(L, m, n, "m:add");
  cblas_saxpy((int)lmatrix_count(m), a, n->data, 1, m->data, 1);
  lua_settop(L, 1);
  return 1;
}

/* ------------------------------------------------------------ new matrices */

/* Push a*b, a [r,k] . b [k,c]. */
static void product(lua_State *L, const LMatrix *a, const LMatrix *b, const char *fname) {
  if (a->cols != b->rows)
    luaL_error(L, "%s: %dx%d times %dx%d: inner sizes differ", fname, a->rows, a->cols, b->rows, b->cols);
  LMatrix *c = lmatrix_alloc(L, a->rows, b->cols, fname);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, a->rows, b->cols, a->cols, 1.0f, a->data, a->cols,
              b->data, b->cols, 0.0f, c->data, c->cols);
}

/* Push s*a. */
static void scaled(lua_State *L, const LMatrix *a, float s, const char *fname) {
  LMatrix *c = lmatrix_copy(L, a, fname);
  cblas_sscal((int)lmatrix_count(c), s, c->data, 1);
}

/* Push a + s*b, of one shape. */
static void sum_of(lua_State *L, const LMatrix *a, const LMatrix *b, float s, const char *fname) {
  lmatrix_same_shape(L, a, b, fname);
  LMatrix *c = lmatrix_copy(L, a, fname);
  cblas_saxpy((int)lmatrix_count(c), s, b->data, 1, c->data, 1);
}

static int lmatrix_mul(lua_State *L) {
  product(L, lmatrix_check(L, 1), lmatrix_check(L, 2), "m:mul");
  return 1;
}

static int lmatrix_hadamard(lua_State *L) {
  LMatrix *a = lmatrix_check(L, 1), *b = lmatrix_check(L, 2);
  lmatrix_same_shape(L, a, b, "m:hadamard");
  LMatrix *c = lmatrix_alloc(L, a->rows, a->cols, "m:hadamard");
  for (size_t k = 0; k < lmatrix_count(c); k++) c->data[k] = a->data[k] * b->data[k];
  return 1;
}

/* ------------------------------------------------------------ numbers */

static double dot_of(const float *x, const float *y, size_t n) {
  double s = 0;
  for (size_t k = 0; k < n; k++) s += (double)x[k] * y[k];
  return s;
}

static int lmatrix_dot(lua_State *L) {
  LMatrix *a = lmatrix_check(L, 1), *b = lmatrix_check(L, 2);
  lmatrix_same_shape(L, a, b, "m:dot");
  lua_pushnumber(L, dot_of(a->data, b->data, lmatrix_count(a)));
  return 1;
}

static double abs_sum(const float *x, size_t n) {
  double s = 0;
  for (size_t k = 0; k < n; k++) s += fabs(x[k]);
  return s;
}

static double frobenius(const float *x, size_t n) { return sqrt(dot_of(x, x, n)); }

/* m:norm([kind]): "fro" (the square root of the sum of squares) or "l1"
** (the sum of absolute values), over every element. */
static int lmatrix_norm(lua_State *L) {
  static const char *const kinds[] = {"fro", "l1", NULL};
  static double (*const norms[])(const float *, size_t) = {frobenius, abs_sum};
  LMatrix *m = lmatrix_check(L, 1);
  int kind = luaL_checkoption(L, 2, "fro", kinds);
  lua_pushnumber(L, norms[kind](m->data, lmatrix_count(m)));
  return 1;
}

static int lmatrix_sum(lua_State *L) {
  LMatrix *m = lmatrix_check(L, 1);
  double s = 0;
  for (size_t k = 0; k < lmatrix_count(m); k++) s += m->data[k];
  lua_pushnumber(L, s);
  return 1;
}

/* m:row_norms(): rows x 1, the L2 norm of each row. */
static int lmatrix_row_norms(lua_State *L) {
  LMatrix *m = lmatrix_check(L, 1);
  LMatrix *out = lmatrix_alloc(L, m->rows, 1, "m:row_norms");
  for (int i = 0; i < m->rows; i++) out->data[i] = (float)frobenius(m->data + (size_t)i * m->cols, (size_t)m->cols);
  return 1;
}

/* Push the 1 x cols mean of the rows of 'm', summed in double. */
static LMatrix *push_mean_row(lua_State *L, const LMatrix *m, const char *fname) {
  double *acc = lmatrix_scratch(L, (size_t)m->cols * sizeof(double), fname);
  memset(acc, 0, (size_t)m->cols * sizeof(double));
  for (int i = 0; i < m->rows; i++) {
    const float *row = m->data + (size_t)i * m->cols;
    for (int j = 0; j < m->cols; j++) acc[j] += row[j];
  }
  LMatrix *mean = lmatrix_alloc(L, 1, m->cols, fname);
  for (int j = 0; j < m->cols; j++) mean->data[j] = (float)(acc[j] / m->rows);
  lua_remove(L, -2);   /* the scratch */
  return mean;
}

static int lmatrix_mean_rows(lua_State *L) {
  push_mean_row(L, lmatrix_check(L, 1), "m:mean_rows");
  return 1;
}

/* m:center(): a new matrix, each row minus the mean row. */
static int lmatrix_center(lua_State *L) {
  LMatrix *m = lmatrix_check(L, 1);
  LMatrix *mean = push_mean_row(L, m, "m:center");
  LMatrix *c = lmatrix_copy(L, m, "m:center");
  for (int i = 0; i < c->rows; i++) cblas_saxpy(c->cols, -1.0f, mean->data, 1, c->data + (size_t)i * c->cols, 1);
  return 1;
}

/* m:cosine_rows(n): rows x 1, the cosine of row i of m with row i of n
** (0 when either row is all zeros). */
static int lmatrix_cosine_rows(lua_State *L) {
  LMatrix *a = lmatrix_check(L, 1), *b = lmatrix_check(L, 2);
  lmatrix_same_shape(L, a, b, "m:cosine_rows");
  LMatrix *out = lmatrix_alloc(L, a->rows, 1, "m:cosine_rows");
  size_t n = (size_t)a->cols;
  for (int i = 0; i < a->rows; i++) {
    const float *x = a->data + i * n, *y = b->data + i * n;
    double xx = dot_of(x, x, n), yy = dot_of(y, y, n);
    out->data[i] = xx > 0 && yy > 0 ? (float)(dot_of(x, y, n) / sqrt(xx * yy)) : 0.0f;
  }
  return 1;
}

/* ------------------------------------------------------------ operators */

/* Both operands of 'op' ("m + n"), which must be matrices. */
static void both_matrices(lua_State *L, const char *op, LMatrix **a, LMatrix **b) {
  for (int k = 1; k <= 2; k++)
    if (!lmatrix_test(L, k)) luaL_error(L, "%s: both sides must be matrices, not a %s", op, luaL_typename(L, k));
  *a = lmatrix_check(L, 1);
  *b = lmatrix_check(L, 2);
}

static int lmatrix_op_add(lua_State *L) {
  LMatrix *a, *b;
  both_matrices(L, "m + n", &a, &b);
  sum_of(L, a, b, 1.0f, "m + n");
  return 1;
}

static int lmatrix_op_sub(lua_State *L) {
  LMatrix *a, *b;
  both_matrices(L, "m - n", &a, &b);
  sum_of(L, a, b, -1.0f, "m - n");
  return 1;
}

/* m * n: the product; s * m and m * s: a scaled copy. */
static int lmatrix_op_mul(lua_State *L) {
  for (int k = 1; k <= 2; k++) {
    int other = 3 - k;
    if (lua_type(L, k) == LUA_TNUMBER) {
      scaled(L, lmatrix_check(L, other), (float)lua_tonumber(L, k), "m * s");
      return 1;
    }
    if (!lmatrix_test(L, k)) return luaL_error(L, "m * n: a matrix times a matrix or a number, not a %s", luaL_typename(L, k));
  }
  product(L, lmatrix_check(L, 1), lmatrix_check(L, 2), "m * n");
  return 1;
}

static int lmatrix_op_unm(lua_State *L) {
  scaled(L, lmatrix_check(L, 1), -1.0f, "-m");
  return 1;
}

const luaL_Reg lmatrix_ops_methods[] = {
  {"scale", lmatrix_scale},         {"add", lmatrix_add},           {"mul", lmatrix_mul},
  {"hadamard", lmatrix_hadamard},   {"dot", lmatrix_dot},           {"norm", lmatrix_norm},
  {"row_norms", lmatrix_row_norms}, {"sum", lmatrix_sum},           {"mean_rows", lmatrix_mean_rows},
  {"center", lmatrix_center},       {"cosine_rows", lmatrix_cosine_rows},
  {NULL, NULL}};

const luaL_Reg lmatrix_ops_meta[] = {
  {"__add", lmatrix_op_add}, {"__sub", lmatrix_op_sub}, {"__mul", lmatrix_op_mul}, {"__unm", lmatrix_op_unm},
  {NULL, NULL}};
