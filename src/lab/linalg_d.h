/*
** linalg_d.h -- the few double-precision factorizations the lab's
** instruments need, on OpenBLAS and LAPACKE, with LAPACK's workspace and
** error codes handled here once.
**
** Matrices are row-major and dense. Callers pass every output and scratch
** buffer; only LAPACKE allocates, for LAPACK's own workspace.
*/
#ifndef TIELAB_LINALG_D_H
#define TIELAB_LINALG_D_H

#include "base/err.h"

/* s = a^T a for a [m,n]: the full symmetric [n,n] matrix (both triangles). */
void linalg_d_gram(const double *a, int m, int n, double *s);

/* c = a^T b for a [m,n] and b [m,p]: c is [n,p]. */
void linalg_d_cross(const double *a, const double *b, int m, int n, int p, double *c);

/* Eigenpairs of the symmetric [n,n] matrix 's', largest first: lam[n]
** descending, and 's' overwritten with the eigenvectors as its columns. */
int linalg_d_eigh(double *s, int n, double *lam, Err *err);

/* Singular values of a [m,n] block with row stride 'lda' (a is not changed),
** largest first, into sv[min(m,n)]; 'work' holds min(m,n)^2 doubles. */
int linalg_d_svdvals(const double *a, int m, int n, int lda, double *sv, double *work, Err *err);

/* Thin SVD of the [n,n] matrix 'a' (destroyed): a = u diag(sv) vt. */
int linalg_d_svd_square(double *a, int n, double *u, double *sv, double *vt, Err *err);

/* The orthogonal polar factor of the [n,n] matrix 'a' (not changed): q =
** u vt where a = u diag(sv) vt, into q with row stride 'ldq', from the
** eigendecomposition of a^T a = V L V^T as q = a V L^-1/2 V^T. That is
** two to three times faster than the SVD. Its error grows with the square
** of a's condition number (eigenvalues of a^T a are sv^2), so below
** sv_min / sv_max = LINALG_POLAR_MIN (where it is still within ~1e-8 of the
** SVD's) it returns 1, computing nothing, and the caller takes the SVD.
** 's' and 't' are [n,n] scratch, 'lam' [n]. */
#define LINALG_POLAR_MIN 1e-4
int linalg_d_polar(const double *a, int n, double *q, int ldq, double *s, double *t, double *lam, Err *err);

/* Least squares: x [n,p] minimising |a x - b| for a [m,n] (destroyed) and
** b [max(m,n),p], by LAPACK's SVD solver (dgelsd): singular values below
** 'rcond' times the largest count as zero, so a rank-deficient 'a' gets the
** minimum-norm solution. x overwrites the first n rows of b; '*rank' (may
** be NULL) is the rank found. */
int linalg_d_lstsq(double *a, int m, int n, double *b, int p, double rcond, int *rank, Err *err);

#endif
