/* linalg_d.c -- see linalg_d.h. */
#include <math.h>
#include <stdlib.h>

#include <cblas.h>
#include <lapacke.h>

#include "lab/linalg_d.h"

static int lapack_failed(Err *err, const char *routine, lapack_int info) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
    return err_set(err, "%s: out of memory", routine);
  if (info > 0) return err_set(err, "%s did not converge (info %d)", routine, (int)info);
  return err_set(err, "%s: bad argument %d", routine, (int)-info);
}

void linalg_d_gram(const double *a, int m, int n, double *s) {
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, n, m, 1.0, a, n, 0.0, s, n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) s[(size_t)i * n + j] = s[(size_t)j * n + i];
}

void linalg_d_cross(const double *a, const double *b, int m, int n, int p, double *c) {
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, p, m, 1.0, a, n, b, p, 0.0, c, p);
}

int linalg_d_eigh(double *s, int n, double *lam, Err *err) {
  lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', n, s, n, lam);
  if (info != 0) return lapack_failed(err, "dsyevd", info);
  /* LAPACK answers in ascending order; reverse values and columns. */
  for (int j = 0; j < n / 2; j++) {
    int k = n - 1 - j;
    double t = lam[j];
    lam[j] = lam[k];
    lam[k] = t;
    for (int i = 0; i < n; i++) {
      double *row = s + (size_t)i * n;
      t = row[j];
      row[j] = row[k];
      row[k] = t;
    }
  }
  return 0;
}

int linalg_d_svdvals(const double *a, int m, int n, int lda, double *sv, double *work, Err *err) {
  /* The square roots of the eigenvalues of the smaller Gram matrix: about
  ** twice as fast as a bidiagonal SVD at these sizes, and exact to ~1e-8
  ** absolute at worst (a value near 0), ~1e-16 near the largest. */
  int k = m < n ? m : n;
  if (k == 0) return 0;
  if (m >= n)
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, n, m, 1.0, a, lda, 0.0, work, n);
  else
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, m, n, 1.0, a, lda, 0.0, work, m);
  lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'U', k, work, k, sv);
  if (info != 0) return lapack_failed(err, "dsyevd", info);
  for (int i = 0; i < k / 2; i++) {
    double t = sv[i];
    sv[i] = sv[k - 1 - i], sv[k - 1 - i] = t;
  }
  for (int i = 0; i < k; i++) sv[i] = sv[i] > 0 ? sqrt(sv[i]) : 0;
  return 0;
}

int linalg_d_svd_square(double *a, int n, double *u, double *sv, double *vt, Err *err) {
  lapack_int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'A', n, n, a, n, sv, u, n, vt, n);
  return info != 0 ? lapack_failed(err, "dgesdd", info) : 0;
}

int linalg_d_polar(const double *a, int n, double *q, int ldq, double *s, double *t, double *lam, Err *err) {
  linalg_d_gram(a, n, n, s);
  if (linalg_d_eigh(s, n, lam, err) < 0) return -1;
  /* lam is descending: its last is the smallest squared singular value. */
  if (!(lam[n - 1] > lam[0] * LINALG_POLAR_MIN * LINALG_POLAR_MIN)) return 1;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, s, n, 0.0, t, n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) t[(size_t)i * n + j] /= sqrt(lam[j]);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, t, n, s, n, 0.0, q, ldq);
  return 0;
}

int linalg_d_lstsq(double *a, int m, int n, double *b, int p, double rcond, int *rank, Err *err) {
  double *sv = malloc(sizeof *sv * (size_t)(m < n ? m : n));
  if (!sv) return err_set(err, "dgelsd: out of memory");
  lapack_int r = 0;
  lapack_int info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, m, n, p, a, n, b, p, sv, rcond, &r);
  free(sv);
  if (info != 0) return lapack_failed(err, "dgelsd", info);
  if (rank) *rank = (int)r;
  return 0;
}
