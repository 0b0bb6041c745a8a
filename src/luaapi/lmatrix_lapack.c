/*
** lmatrix_lapack.c -- the decompositions of lab.matrix on LAPACKE: the
** thin SVD (sgesdd) and least squares (sgelsd, which also answers a
** system of lower rank, with the solution of least norm).
**
** LAPACK reads matrices by columns, lab.matrix stores them by rows. The
** column-major routines (the _work ones) are called on buffers laid out
** here, with LAPACK's workspace asked for first: every buffer is a Lua
** userdata, so that what a decomposition takes counts against --lua-mem
** and an error half-way leaks nothing (LAPACKE's row-major entry points
** would malloc copies behind the heap's back).
*/
#include <limits.h>
#include <math.h>
#include <string.h>

#include <lapacke.h>

#include "luaapi/linternal.h"

/* Raise when a LAPACK routine failed. */
static void check_info(lua_State *L, lapack_int info, const char *routine, const char *fname) {
  if (info > 0) luaL_error(L, "%s: LAPACK's %s did not converge (info %d)", fname, routine, (int)info);
  if (info < 0) luaL_error(L, "%s: LAPACK's %s refused its argument %d", fname, routine, (int)-info);
}

/* The workspace a query answered, in floats. LAPACK gives the size as a
** float, which may round a large one down: ask for a little more. */
static lapack_int work_size(lua_State *L, float query, const char *fname) {
  double n = ceil((double)query * (1 + 1e-6)) + 1;
  if (!(n <= INT_MAX)) luaL_error(L, "%s: LAPACK asks for a workspace of %f floats, more than it can have", fname, (double)query);
  return (lapack_int)n;
}

/* LAPACK's routines stop on a NaN or an infinity by printing to stdout
** (over the lab's screen) and failing: refuse them first, by name. */
static void check_finite(lua_State *L, const LMatrix *m, const char *which, const char *fname) {
  for (size_t k = 0; k < lmatrix_count(m); k++)
    if (!isfinite(m->data[k]))
      luaL_error(L, "%s: %s holds %s at (%d, %d), which LAPACK cannot take", fname, which,
                 isnan(m->data[k]) ? "a NaN" : "an infinity", (int)(k / m->cols) + 1, (int)(k % m->cols) + 1);
}

static float *floats(lua_State *L, size_t n, const char *fname) { return lmatrix_scratch(L, n * sizeof(float), fname); }

/* ------------------------------------------------------------ m:svd() */

/* Column-major, the rows of 'a' (r x c) are the columns of a^T (c x r).
** sgesdd gives a^T = U' S V'^T, so a = V' S U'^T: U is V', and V'^T,
** which sgesdd writes k x r by columns, is U (r x k) by rows; V is U'
** (c x k by columns), transposed on the way out. */
static int lmatrix_svd(lua_State *L) {
  const char *fname = "m:svd";
  LMatrix *a = lmatrix_check(L, 1);
  check_finite(L, a, "m", fname);
  lua_settop(L, 1);
  int r = a->rows, c = a->cols, k = r < c ? r : c;
  LMatrix *u = lmatrix_alloc(L, r, k, fname);   /* 2 */
  LMatrix *s = lmatrix_alloc(L, k, 1, fname);   /* 3 */
  LMatrix *v = lmatrix_alloc(L, c, k, fname);   /* 4 */
  float *at = floats(L, lmatrix_count(a), fname);
  memcpy(at, a->data, lmatrix_count(a) * sizeof(float));
  float *v_cols = floats(L, (size_t)c * k, fname);
  lapack_int *iwork = lmatrix_scratch(L, 8 * (size_t)k * sizeof(lapack_int), fname);
  float query;
  lapack_int info = LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, 'S', c, r, at, c, s->data, v_cols, c, u->data, k, &query,
                                        -1, iwork);
  check_info(L, info, "sgesdd", fname);
  lapack_int lwork = work_size(L, query, fname);
  float *work = floats(L, (size_t)lwork, fname);
  info = LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, 'S', c, r, at, c, s->data, v_cols, c, u->data, k, work, lwork, iwork);
  check_info(L, info, "sgesdd", fname);
  for (int i = 0; i < c; i++)
    for (int j = 0; j < k; j++) v->data[(size_t)i * k + j] = v_cols[i + (size_t)j * c];
  lua_settop(L, 4);
  return 3;
}

/* ------------------------------------------------------------ m:lstsq(b) */

/* x (c x p) minimising |a x - b| for a (r x c) and b (r x p). sgelsd
** takes a by columns and b by columns in an array of max(r, c) rows, whose
** first c rows hold x when it returns. */
static int lmatrix_lstsq(lua_State *L) {
  const char *fname = "m:lstsq";
  LMatrix *a = lmatrix_check(L, 1), *b = lmatrix_check(L, 2);
  lua_settop(L, 2);
  if (b->rows != a->rows)
    luaL_error(L, "%s: %dx%d and %dx%d: b needs as many rows as m", fname, a->rows, a->cols, b->rows, b->cols);
  check_finite(L, a, "m", fname);
  check_finite(L, b, "b", fname);
  int r = a->rows, c = a->cols, p = b->cols, ldb = r > c ? r : c;
  LMatrix *x = lmatrix_alloc(L, c, p, fname);   /* 3 */
  float *a_cols = floats(L, lmatrix_count(a), fname);
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++) a_cols[i + (size_t)j * r] = a->data[(size_t)i * c + j];
  float *b_cols = floats(L, (size_t)ldb * p, fname);
  memset(b_cols, 0, (size_t)ldb * p * sizeof(float));
  for (int i = 0; i < r; i++)
    for (int j = 0; j < p; j++) b_cols[i + (size_t)j * ldb] = b->data[(size_t)i * p + j];
  float *sv = floats(L, (size_t)(r < c ? r : c), fname);
  float query;
  lapack_int rank, iquery;
  lapack_int info = LAPACKE_sgelsd_work(LAPACK_COL_MAJOR, r, c, p, a_cols, r, b_cols, ldb, sv, -1.0f, &rank, &query,
                                        -1, &iquery);
  check_info(L, info, "sgelsd", fname);
  lapack_int lwork = work_size(L, query, fname);
  float *work = floats(L, (size_t)lwork, fname);
  lapack_int *iwork = lmatrix_scratch(L, (size_t)(iquery > 1 ? iquery : 1) * sizeof(lapack_int), fname);
  info = LAPACKE_sgelsd_work(LAPACK_COL_MAJOR, r, c, p, a_cols, r, b_cols, ldb, sv, -1.0f, &rank, work, lwork, iwork);
  check_info(L, info, "sgelsd", fname);
  for (int i = 0; i < c; i++)
    for (int j = 0; j < p; j++) x->data[(size_t)i * p + j] = b_cols[i + (size_t)j * ldb];
  lua_settop(L, 3);
  return 1;
}

const luaL_Reg lmatrix_lapack_methods[] = {{"svd", lmatrix_svd}, {"lstsq", lmatrix_lstsq}, {NULL, NULL}};
