/*
** align.h -- how alike two embedding matrices are, as the paper's code
** measures it, computed in double precision on LAPACKE.
**
** Both inputs are [V,d] float matrices over the same tokenizer. Columns are
** centred first (except for the raw cosine and KNN, which the paper's code
** computes on the rows as given). Each metric is also computed against a
** random Gaussian matrix of the same shape (fixed seed), because with small
** V/d the linear-map and CCA-like scores inflate: always show the two side
** by side.
*/
#ifndef TIELAB_ALIGN_H
#define TIELAB_ALIGN_H

#include <stdint.h>

#include "base/err.h"

typedef struct AlignScores {
  double cos_raw;      /* mean row cosine, no map (a diagnostic only) */
  double procrustes;   /* mean row cosine of X Q to Y, Q orthogonal (Procrustes) */
  double linear;       /* mean row cosine of X W to Y, W least squares (the paper's headline) */
  double cka;          /* linear CKA */
  double cca;          /* mean canonical correlation */
  double svcca;        /* mean CCA after keeping the top singular directions (99% variance) */
  double subspace;     /* overlap of the top-k right singular subspaces, in [0,1] */
  double knn;          /* mean overlap of each row's 10 nearest neighbours (cosine) */
} AlignScores;

/* The metrics, one bit each, for AlignOptions.metrics. ALIGN_TABLE1 is the
** paper's Table 1 (linear map, Procrustes, KNN@10, CKA): asking for it alone
** skips the eigendecompositions of Y and of the baseline, CCA's products and
** the subspace overlap, which is what makes released 50k x 2048 matrices
** quick to compare. */
enum {
  ALIGN_COS_RAW = 1u << 0,
  ALIGN_PROCRUSTES = 1u << 1,
  ALIGN_LINEAR = 1u << 2,
  ALIGN_CKA = 1u << 3,
  ALIGN_CCA = 1u << 4,
  ALIGN_SVCCA = 1u << 5,
  ALIGN_SUBSPACE = 1u << 6,
  ALIGN_KNN = 1u << 7,
  ALIGN_ALL = (1u << 8) - 1,
  ALIGN_TABLE1 = ALIGN_LINEAR | ALIGN_PROCRUSTES | ALIGN_KNN | ALIGN_CKA,
};

typedef struct AlignResult {
  AlignScores score;      /* X against Y */
  AlignScores baseline;   /* X against a random matrix shaped like Y */
  int topk;               /* k used for 'subspace' (0 when not computed) */
  unsigned computed;      /* the ALIGN_* bits computed; the others' scores are NaN */
} AlignResult;

typedef struct AlignOptions {
  int topk;          /* default 100, capped at d and at both ranks */
  int knn_k;         /* default 10, at most ALIGN_MAX_KNN_K */
  int knn_rows;      /* rows sampled for KNN (0 = all; default 1024) */
  uint64_t seed;     /* baseline matrix and KNN sample */
  int baseline;      /* compute the baseline (default 1) */
  int threads;       /* BLAS threads for this call (0: leave OpenBLAS as set) */
  unsigned metrics;  /* ALIGN_* bits to compute (default ALIGN_ALL; 0 is an error) */
} AlignOptions;

#define ALIGN_MAX_KNN_K 1024

AlignOptions align_default_options(void);

/* Compare 'x' and 'y', both [v,d] row-major. Returns -1 with a message on
** bad shapes, a non-finite entry, a constant matrix or a LAPACK failure.
** 'x' is the source of the maps (X Q, X W against Y): only 'linear' depends
** on the order, and the paper maps the untied matrix (x) onto the tied one
** (y). 'opt' may be NULL for the defaults. align.c says how each metric is
** defined and where the definition comes from. */
int align_compare(const float *x, const float *y, int v, int d, const AlignOptions *opt,
                  AlignResult *out, Err *err);

/* The same with a workspace kept between calls: after the first call at a
** shape, nothing [v,d]-sized is allocated, and the baseline matrix and its
** factorization are reused while the shape, seed and KNN sample stay the
** same (the live instrument calls this every few steps). */
typedef struct AlignWork AlignWork;
AlignWork *align_work_new(void);
void align_work_free(AlignWork *w);
/* Bytes the workspace takes for [v,d] with knn k, and what 'w' holds now. */
size_t align_memory_bytes(int v, int d, int k);
size_t align_work_bytes(const AlignWork *w);
int align_compare_in(AlignWork *w, const float *x, const float *y, int v, int d,
                     const AlignOptions *opt, AlignResult *out, Err *err);

/* Mean row cosine between two [v,d] matrices, no centring (drift uses it). */
double align_row_cosine(const float *x, const float *y, int v, int d);

#endif
