/*
** align.c -- see align.h: the alignment metrics between two [V,d]
** matrices, computed in double from one factorisation of each. Their
** exact definitions, and why they are computed so: docs/architecture.md.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "base/bigmem.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "lab/align.h"
#include "lab/linalg_d.h"

#define ROW_EPS 1e-8          /* the paper's norm + 1e-8 */
#define RANK_TOL 1e-10        /* eigenvalue ratio below which a direction is dropped */
#define SVCCA_KEEP 0.99       /* share of variance SVCCA keeps */
#define MAX_ELEMS (1L << 28)  /* v * d: 2 GiB of doubles per matrix */
#define BLOCK_ROWS 256        /* rows per block for the [v,2d] and [s,v] products */
#define SCAN 32               /* entries per block in the top-k scan */
#define LOAD_PARTS 16         /* row blocks whose column sums make the mean, */
                              /* fixed so the mean is the same for any thread count */

/* How much of a matrix the asked metrics need, each level including the
** ones before it: its KNN lists (any level), the centred copy, its Gram
** matrix's Frobenius norm (CKA), its eigendecomposition and whitener. */
enum { NEED_KNN = 1, NEED_CENTRED = 2, NEED_GRAM = 4, NEED_EIGH = 8 };

/* One matrix and everything the metrics need from it. */
typedef struct Side {
  const float *raw;  /* [v,d] as given */
  double *c;         /* [v,d] columns centred */
  double *cnorm;     /* [v] norms of the centred rows */
  double *evec;      /* [d,d] eigenvectors of c^T c as columns, largest first */
  double *lam;       /* [d] its eigenvalues, descending, clamped at 0 */
  double *white;     /* [d,rank] evec[:, :rank] * lam^-1/2: whitens c */
  double gram_f;     /* ||c^T c||_F */
  int rank, k99;     /* directions kept; directions holding 99% of the variance */
  int *nbr;          /* [s,k] neighbours of the sampled rows */
  unsigned have;     /* NEED_* parts computed */
} Side;

struct AlignWork {
  int v, d, k;       /* the shape and knn k the buffers are sized for */
  int s;             /* KNN query rows this call */
  Side x, y, g;      /* g: the baseline, kept while its key below holds */
  float *gauss;      /* [v,d] the baseline matrix */
  float *unit;       /* [v,d] one side's unit rows, during its KNN */
  float *query;      /* [BLOCK_ROWS,d] a block of sampled unit rows */
  float *sim;        /* [BLOCK_ROWS,v] their cosines to every row */
  int *rows;         /* [v] KNN query rows, ascending */
  double *cross;     /* [d,d] X^T Y */
  double *tmp, *blk, *gram, *u, *vt, *sv;  /* [d,d] scratch (sv [d]) */
  double *maps;      /* [d,2d] Procrustes Q | least-squares W */
  double *z;         /* [BLOCK_ROWS,2d] rows of X [Q | W] */
  int g_ready;       /* side g holds the baseline for this seed and sample: */
  uint64_t g_seed;   /* (and g.have says which of its parts) */
  int g_rows;        /* (the sample is a function of v, seed and its size) */
  double *partial;   /* [LOAD_PARTS,d] column sums of each row block */
  Pool *pool;        /* threads for the loops BLAS does not cover */
};

AlignOptions align_default_options(void) {
  AlignOptions o = {.topk = 100, .knn_k = 10, .knn_rows = 1024, .seed = 0x7469656c, .baseline = 1,
                    .metrics = ALIGN_ALL};
  return o;
}

double align_row_cosine(const float *x, const float *y, int v, int d) {
  if (v <= 0 || d <= 0) return 0;
  double sum = 0;
  for (int i = 0; i < v; i++) {
    const float *a = x + (size_t)i * d, *b = y + (size_t)i * d;
    double dot = 0, na = 0, nb = 0;
    for (int j = 0; j < d; j++) {
      dot += (double)a[j] * b[j];
      na += (double)a[j] * a[j];
      nb += (double)b[j] * b[j];
    }
    sum += dot / ((sqrt(na) + ROW_EPS) * (sqrt(nb) + ROW_EPS));
  }
  return sum / v;
}

/* ------------------------------------------------------------ workspace */

static void side_free(Side *s) {
  free(s->c);
  free(s->cnorm);
  free(s->evec);
  free(s->lam);
  free(s->white);
  free(s->nbr);
  memset(s, 0, sizeof *s);
}

static int side_alloc(Side *s, int v, int d, int k) {
  s->c = bigmem_alloc(sizeof(double) * (size_t)v * d);
  s->cnorm = malloc(sizeof(double) * v);
  s->evec = malloc(sizeof(double) * (size_t)d * d);
  s->lam = malloc(sizeof(double) * d);
  s->white = malloc(sizeof(double) * (size_t)d * d);
  s->nbr = malloc(sizeof(int) * (size_t)v * k);
  return s->c && s->cnorm && s->evec && s->lam && s->white && s->nbr ? 0 : -1;
}

static void work_release(AlignWork *w) {
  side_free(&w->x);
  side_free(&w->y);
  side_free(&w->g);
  double *dd[] = {w->cross, w->tmp, w->blk, w->gram, w->u, w->vt, w->sv, w->maps, w->z};
  for (size_t i = 0; i < sizeof dd / sizeof dd[0]; i++) free(dd[i]);
  free(w->gauss);
  free(w->unit);
  free(w->query);
  free(w->sim);
  free(w->rows);
  free(w->partial);
  Pool *pool = w->pool;  /* the pool outlives a change of shape */
  memset(w, 0, sizeof *w);
  w->pool = pool;
}

/* What work_reserve and side_alloc take for [v,d] and knn k. */
size_t align_memory_bytes(int v, int d, int k) {
  size_t vd = (size_t)v * d, dd = (size_t)d * d;
  size_t side = sizeof(double) * (vd + v + 2 * dd + d) + sizeof(int) * (size_t)v * k;
  size_t floats = 2 * vd + (size_t)BLOCK_ROWS * d + (size_t)BLOCK_ROWS * v;
  size_t doubles = 6 * dd + d + 2 * dd + (size_t)BLOCK_ROWS * 2 * d + (size_t)LOAD_PARTS * d;
  return 3 * side + sizeof(float) * floats + sizeof(double) * doubles + sizeof(int) * (size_t)v;
}

size_t align_work_bytes(const AlignWork *w) { return w && w->v > 0 ? align_memory_bytes(w->v, w->d, w->k) : 0; }

AlignWork *align_work_new(void) { return calloc(1, sizeof(AlignWork)); }

void align_work_free(AlignWork *w) {
  if (!w) return;
  work_release(w);
  pool_free(w->pool);
  free(w);
}

/* Size every buffer for [v,d] and knn k; nothing happens when they already are. */
static int work_reserve(AlignWork *w, int v, int d, int k, Err *err) {
  if (w->v == v && w->d == d && w->k == k) return 0;
  work_release(w);
  size_t vd = (size_t)v * d, dd = (size_t)d * d;
  w->gauss = bigmem_alloc(sizeof(float) * vd);
  w->unit = bigmem_alloc(sizeof(float) * vd);
  w->partial = malloc(sizeof(double) * LOAD_PARTS * d);
  w->query = malloc(sizeof(float) * (size_t)BLOCK_ROWS * d);
  w->sim = malloc(sizeof(float) * (size_t)BLOCK_ROWS * v);
  w->rows = malloc(sizeof(int) * v);
  double **dd_bufs[] = {&w->cross, &w->tmp, &w->blk, &w->gram, &w->u, &w->vt};
  for (size_t i = 0; i < sizeof dd_bufs / sizeof dd_bufs[0]; i++) *dd_bufs[i] = malloc(sizeof(double) * dd);
  w->sv = malloc(sizeof(double) * d);
  w->maps = malloc(sizeof(double) * dd * 2);
  w->z = malloc(sizeof(double) * (size_t)BLOCK_ROWS * 2 * d);
  int ok = w->gauss && w->unit && w->partial && w->query && w->sim && w->rows && w->sv && w->maps && w->z;
  for (size_t i = 0; i < sizeof dd_bufs / sizeof dd_bufs[0]; i++) ok = ok && *dd_bufs[i];
  if (!ok || side_alloc(&w->x, v, d, k) < 0 || side_alloc(&w->y, v, d, k) < 0 ||
      side_alloc(&w->g, v, d, k) < 0) {
    work_release(w);
    return err_set(err, "align: out of memory for [%d,%d]", v, d);
  }
  w->v = v, w->d = d, w->k = k;
  return 0;
}

/* ------------------------------------------------------------ one matrix */

/* side_load's state, shared by the threads of its two loops. */
typedef struct Load {
  Side *s;
  AlignWork *w;
  unsigned need;
  int bad_row[LOAD_PARTS], bad_col[LOAD_PARTS];  /* first non-finite entry of each block, or -1 */
} Load;

/* Blocks [p0,p1): copy each row to double, sum its block's columns into
** w->partial, and write the KNN's unit row from the row as given (the
** paper normalises raw rows by norm + 1e-8). */
static void load_blocks(void *arg, int p0, int p1, int worker) {
  (void)worker;
  Load *l = arg;
  AlignWork *w = l->w;
  int v = w->v, d = w->d;
  for (int p = p0; p < p1; p++) {
    int r0, r1;
    pool_split(v, LOAD_PARTS, p, &r0, &r1);
    double *sum = w->partial + (size_t)p * d;
    memset(sum, 0, sizeof(double) * d);
    l->bad_row[p] = -1;
    for (int i = r0; i < r1; i++) {
      const float *r = l->s->raw + (size_t)i * d;
      double *u = l->s->c + (size_t)i * d, nn = 0;
      for (int j = 0; j < d; j++) nn += (double)r[j] * r[j];
      /* a float squared is finite in double: nn is finite iff the row is */
      if (!isfinite(nn)) {
        int j = 0;
        while (isfinite(r[j])) j++;
        l->bad_row[p] = i, l->bad_col[p] = j;
        break;
      }
      if (l->need & NEED_CENTRED)
        for (int j = 0; j < d; j++) u[j] = r[j], sum[j] += r[j];
      float inv = (float)(1.0 / (sqrt(nn) + ROW_EPS)), *unit = w->unit + (size_t)i * d;
      if (l->need & NEED_KNN)
        for (int j = 0; j < d; j++) unit[j] = r[j] * inv;
    }
  }
}

/* Rows [r0,r1): subtract the column means (in s->lam) and take the norms. */
static void centre_rows(void *arg, int r0, int r1, int worker) {
  (void)worker;
  Load *l = arg;
  int d = l->w->d;
  const double *mean = l->s->lam;
  for (int i = r0; i < r1; i++) {
    double *u = l->s->c + (size_t)i * d, nn = 0;
    for (int j = 0; j < d; j++) {
      u[j] -= mean[j];
      nn += u[j] * u[j];
    }
    l->s->cnorm[i] = sqrt(nn);
  }
}

/* Copy to double and centre the columns (when 'need' has NEED_CENTRED);
** meanwhile the KNN's unit rows. Both loops run on the pool: the mean adds
** the blocks' sums in block order, so it is the same for any thread count. */
static int side_load(Side *s, AlignWork *w, const float *raw, unsigned need, const char *name, Err *err) {
  int d = w->d;
  Load l = {.s = s, .w = w, .need = need};
  s->raw = raw;
  pool_for(w->pool, LOAD_PARTS, load_blocks, &l);
  for (int p = 0; p < LOAD_PARTS; p++)
    if (l.bad_row[p] >= 0)
      return err_set(err, "%s: row %d column %d is not finite", name, l.bad_row[p], l.bad_col[p]);
  if (!(need & NEED_CENTRED)) return 0;
  double *mean = s->lam;  /* free until side_factor */
  memset(mean, 0, sizeof(double) * d);
  for (int p = 0; p < LOAD_PARTS; p++)
    for (int j = 0; j < d; j++) mean[j] += w->partial[(size_t)p * d + j];
  for (int j = 0; j < d; j++) mean[j] /= w->v;
  pool_for(w->pool, w->v, centre_rows, &l);
  return 0;
}

/* The Gram matrix's Frobenius norm; with NEED_EIGH its eigenpairs, the
** rank, the 99% count and the whitener. */
static int side_factor(Side *s, int v, int d, unsigned need, const char *name, Err *err) {
  if (!(need & NEED_GRAM)) return 0;
  linalg_d_gram(s->c, v, d, s->evec);
  double f = 0;
  for (size_t i = 0; i < (size_t)d * d; i++) f += s->evec[i] * s->evec[i];
  s->gram_f = sqrt(f);
  /* A constant matrix has a zero Gram matrix; without it CKA divides by 0. */
  if (!(f > 0)) return err_set(err, "%s is constant: no variance after centring its columns", name);
  if (!(need & NEED_EIGH)) return 0;
  if (linalg_d_eigh(s->evec, d, s->lam, err) < 0) return err_prefix(err, "%s", name);
  if (!(s->lam[0] > 0)) return err_set(err, "%s is constant: no variance after centring its columns", name);
  double total = 0, acc = 0;
  s->rank = 0;
  for (int i = 0; i < d; i++) {
    if (s->lam[i] < 0) s->lam[i] = 0;
    if (s->lam[i] > s->lam[0] * RANK_TOL) s->rank++;
  }
  for (int i = 0; i < s->rank; i++) total += s->lam[i];
  s->k99 = 0;
  while (s->k99 < s->rank && acc < SVCCA_KEEP * total) acc += s->lam[s->k99++];
  for (int i = 0; i < d; i++)
    for (int j = 0; j < s->rank; j++)
      s->white[(size_t)i * s->rank + j] = s->evec[(size_t)i * d + j] / sqrt(s->lam[j]);
  return 0;
}

/* Indices of the k largest entries of 'sim' other than 'self', best first
** (ties keep the lower index: the scan is in order and only '>' displaces).
** Most entries lose to the current k-th best, so a block is first tested
** whole, in a loop the compiler vectorises. */
static void top_k(float *sim, int v, int self, int k, int *idx) {
  float best[k];
  for (int i = 0; i < k; i++) best[i] = -INFINITY, idx[i] = -1;
  sim[self] = -INFINITY;
  for (int j0 = 0; j0 < v; j0 += SCAN) {
    float worst = best[k - 1];
    if (v - j0 >= SCAN) {
      int any = 0;
      for (int t = 0; t < SCAN; t++) any |= sim[j0 + t] > worst;
      if (!any) continue;
    }
    for (int j = j0; j < v && j < j0 + SCAN; j++) {
      float x = sim[j];
      if (!(x > best[k - 1])) continue;
      int p = k - 1;
      for (; p > 0 && x > best[p - 1]; p--) best[p] = best[p - 1], idx[p] = idx[p - 1];
      best[p] = x, idx[p] = j;
    }
  }
}

/* Neighbours of the sampled rows among all rows, by cosine of the unit
** rows side_load left in w->unit. */
static void side_knn(Side *s, AlignWork *w) {
  int v = w->v, d = w->d;
  for (int b0 = 0; b0 < w->s; b0 += BLOCK_ROWS) {
    int nb = w->s - b0 < BLOCK_ROWS ? w->s - b0 : BLOCK_ROWS;
    const float *q = w->unit + (size_t)b0 * d;  /* all rows: a plain slice */
    if (w->s < v) {
      for (int r = 0; r < nb; r++)
        memcpy(w->query + (size_t)r * d, w->unit + (size_t)w->rows[b0 + r] * d, sizeof(float) * d);
      q = w->query;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, v, d, 1.0f, q, d, w->unit, d, 0.0f, w->sim, v);
    for (int r = 0; r < nb; r++)
      top_k(w->sim + (size_t)r * v, v, w->rows[b0 + r], w->k, s->nbr + (size_t)(b0 + r) * w->k);
  }
}

static int side_init(Side *s, AlignWork *w, const float *raw, unsigned need, const char *name, Err *err) {
  s->have = 0;
  if (side_load(s, w, raw, need, name, err) < 0 || side_factor(s, w->v, w->d, need, name, err) < 0) return -1;
  if (need & NEED_KNN) side_knn(s, w);
  s->have = need;
  return 0;
}

/* ------------------------------------------------------------ one pair */

/* Mean of the singular values of an [m,n] block (stride lda), each clamped
** to [0,1] since they are cosines; 0 for an empty block. */
static int mean_cosines(AlignWork *w, const double *a, int m, int n, int lda, double *out, Err *err) {
  int k = m < n ? m : n;
  *out = 0;
  if (k == 0) return 0;
  if (linalg_d_svdvals(a, m, n, lda, w->sv, w->gram, err) < 0) return -1;
  double sum = 0;
  for (int i = 0; i < k; i++) sum += w->sv[i] > 1 ? 1 : w->sv[i];
  *out = sum / k;
  return 0;
}

/* CCA and SVCCA from the whitened cross product white_x^T (X^T Y) white_y:
** its leading block over the 99% directions is SVCCA's, because the
** directions are ordered by variance. */
static int score_cca(AlignWork *w, const Side *x, const Side *y, unsigned metrics, AlignScores *sc, Err *err) {
  int d = w->d, rx = x->rank, ry = y->rank;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, ry, d, 1.0, w->cross, d, y->white, ry, 0.0,
              w->tmp, ry);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, rx, ry, d, 1.0, x->white, rx, w->tmp, ry, 0.0,
              w->blk, ry);
  if ((metrics & ALIGN_CCA) && mean_cosines(w, w->blk, rx, ry, ry, &sc->cca, err) < 0) return -1;
  return metrics & ALIGN_SVCCA ? mean_cosines(w, w->blk, x->k99, y->k99, ry, &sc->svcca, err) : 0;
}

/* k is capped at either rank: beyond it the singular vectors are arbitrary. */
static int subspace_k(const Side *x, const Side *y, int topk) {
  int k = topk < x->rank ? topk : x->rank;
  return k < y->rank ? k : y->rank;
}

static int score_subspace(AlignWork *w, const Side *x, const Side *y, int topk, AlignScores *sc, Err *err) {
  int d = w->d, k = subspace_k(x, y, topk);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, k, d, 1.0, x->evec, d, y->evec, d, 0.0, w->blk, k);
  return mean_cosines(w, w->blk, k, k, k, &sc->subspace, err);
}

/* The asked maps side by side in maps [d,n*d]: Q = U V^T (Procrustes, the
** polar factor of X^T Y, by its SVD when ill-conditioned), then W = white_x white_x^T X^T Y (least squares,
** minimum norm). */
static int build_maps(AlignWork *w, const Side *x, int procrustes, int linear, Err *err) {
  int d = w->d, rx = x->rank, n = procrustes + linear;
  double *q = w->maps, *lin = w->maps + (procrustes ? d : 0);
  if (procrustes) {
    int rc = linalg_d_polar(w->cross, d, q, n * d, w->blk, w->u, w->sv, err);
    if (rc < 0) return -1;
    if (rc > 0) {  /* too ill-conditioned for the fast way: the SVD */
      memcpy(w->blk, w->cross, sizeof(double) * (size_t)d * d);
      if (linalg_d_svd_square(w->blk, d, w->u, w->sv, w->vt, err) < 0) return -1;
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, w->u, d, w->vt, d, 0.0, q, n * d);
    }
  }
  if (linear) {
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, rx, d, d, 1.0, x->white, rx, w->cross, d, 0.0, w->tmp,
                d);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, rx, 1.0, x->white, rx, w->tmp, d, 0.0, lin,
                n * d);
  }
  return 0;
}

/* Per-row cosine with the paper's epsilon; nb is the norm of b. */
static double row_cosine(const double *a, const double *b, int d, double nb) {
  double dot = 0, na = 0;
  for (int j = 0; j < d; j++) {
    dot += a[j] * b[j];
    na += a[j] * a[j];
  }
  return dot / ((sqrt(na) + ROW_EPS) * (nb + ROW_EPS));
}

/* Mean row cosine of X Q and of X W (those asked) to centred Y, a block of
** rows at a time. */
static int score_maps(AlignWork *w, const Side *x, const Side *y, unsigned metrics, AlignScores *sc, Err *err) {
  int v = w->v, d = w->d, procrustes = (metrics & ALIGN_PROCRUSTES) != 0, linear = (metrics & ALIGN_LINEAR) != 0;
  int n = procrustes + linear;
  if (n == 0) return 0;
  if (build_maps(w, x, procrustes, linear, err) < 0) return -1;
  double sum[2] = {0, 0};
  for (int b0 = 0; b0 < v; b0 += BLOCK_ROWS) {
    int nb = v - b0 < BLOCK_ROWS ? v - b0 : BLOCK_ROWS;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, n * d, d, 1.0, x->c + (size_t)b0 * d, d,
                w->maps, n * d, 0.0, w->z, n * d);
    for (int r = 0; r < nb; r++) {
      const double *zr = w->z + (size_t)r * n * d, *yr = y->c + (size_t)(b0 + r) * d;
      for (int m = 0; m < n; m++) sum[m] += row_cosine(zr + (size_t)m * d, yr, d, y->cnorm[b0 + r]);
    }
  }
  if (procrustes) sc->procrustes = sum[0] / v;
  if (linear) sc->linear = sum[procrustes] / v;
  return 0;
}

static double score_knn(const AlignWork *w, const Side *x, const Side *y) {
  long hits = 0;
  for (int r = 0; r < w->s; r++) {
    const int *a = x->nbr + (size_t)r * w->k, *b = y->nbr + (size_t)r * w->k;
    for (int i = 0; i < w->k; i++)
      for (int j = 0; j < w->k; j++) hits += a[i] == b[j];
  }
  return (double)hits / ((double)w->s * w->k);
}

/* Every score of 'sc' is NaN until computed, so a metric not asked for
** can never be read as a number. */
static void scores_unknown(AlignScores *sc) {
  double *f[] = {&sc->cos_raw, &sc->procrustes, &sc->linear, &sc->cka, &sc->cca, &sc->svcca, &sc->subspace, &sc->knn};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) *f[i] = NAN;
}

/* The metrics that use X^T Y, the centred cross product. */
#define ALIGN_CROSS (ALIGN_PROCRUSTES | ALIGN_LINEAR | ALIGN_CKA | ALIGN_CCA | ALIGN_SVCCA)

static int score_pair(AlignWork *w, const Side *x, const Side *y, int topk, unsigned metrics, AlignScores *sc,
                      Err *err) {
  int d = w->d;
  scores_unknown(sc);
  if (metrics & ALIGN_CROSS) linalg_d_cross(x->c, y->c, w->v, d, d, w->cross);
  if (metrics & ALIGN_CKA) {
    double f = 0;
    for (size_t i = 0; i < (size_t)d * d; i++) f += w->cross[i] * w->cross[i];
    sc->cka = f / (x->gram_f * y->gram_f);
  }
  if (metrics & ALIGN_COS_RAW) sc->cos_raw = align_row_cosine(x->raw, y->raw, w->v, d);
  if (metrics & ALIGN_KNN) sc->knn = score_knn(w, x, y);
  if ((metrics & (ALIGN_CCA | ALIGN_SVCCA)) && score_cca(w, x, y, metrics, sc, err) < 0) return -1;
  if ((metrics & ALIGN_SUBSPACE) && score_subspace(w, x, y, topk, sc, err) < 0) return -1;
  return score_maps(w, x, y, metrics, sc, err);
}

/* ------------------------------------------------------------ the entry */

static int check_args(const float *x, const float *y, int v, int d, const AlignOptions *o, Err *err) {
  if (!x || !y) return err_set(err, "align: missing matrix");
  if (v < 2 || d < 1) return err_set(err, "align: need at least 2 rows and 1 column, got [%d,%d]", v, d);
  if ((long)v * d > MAX_ELEMS) return err_set(err, "align: [%d,%d] is too large", v, d);
  if (o->topk < 1) return err_set(err, "align: topk must be at least 1, got %d", o->topk);
  if (o->knn_k < 1 || o->knn_k > ALIGN_MAX_KNN_K)
    return err_set(err, "align: knn_k must be between 1 and %d, got %d", ALIGN_MAX_KNN_K, o->knn_k);
  if (o->knn_rows < 0) return err_set(err, "align: knn_rows must be 0 (all) or more, got %d", o->knn_rows);
  if (o->metrics == 0 || (o->metrics & ~(unsigned)ALIGN_ALL))
    return err_set(err, "align: metrics must be a non-empty set of ALIGN_* bits, got 0x%x", o->metrics);
  return 0;
}

static int by_index(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The KNN query rows: all of them, or a seeded sample in ascending order. */
static void pick_rows(AlignWork *w, int want, uint64_t seed) {
  int v = w->v, *all = w->rows;
  w->s = want <= 0 || want >= v ? v : want;
  for (int i = 0; i < v; i++) all[i] = i;
  if (w->s == v) return;
  Rng r;
  rng_seed(&r, rng_mix(seed, 2));
  for (int i = 0; i < w->s; i++) {
    int j = i + (int)rng_below(&r, (uint64_t)(v - i)), t = all[i];
    all[i] = all[j], all[j] = t;
  }
  qsort(all, (size_t)w->s, sizeof(int), by_index);
}

/* Standard normal entries by Marsaglia's polar method, two per logarithm;
** each attempt draws both uniforms from one 64-bit word (32 bits each is
** plenty for a random baseline). */
static void gaussian(float *g, size_t n, uint64_t seed) {
  Rng r;
  rng_seed(&r, rng_mix(seed, 1));
  for (size_t i = 0; i < n;) {
    double a, b, q;
    do {
      uint64_t u = rng_u64(&r);
      a = (int32_t)(uint32_t)(u >> 32) * 0x1.0p-31;
      b = (int32_t)(uint32_t)u * 0x1.0p-31;
      q = a * a + b * b;
    } while (q >= 1 || q == 0);
    double f = sqrt(-2 * log(q) / q);
    g[i++] = (float)(a * f);
    if (i < n) g[i++] = (float)(b * f);
  }
}

/* What each side needs for 'metrics': the partner side (Y or the
** baseline) is decomposed only for CCA, SVCCA and the subspace overlap,
** the mapped side X also for the linear map's whitener. */
static unsigned side_needs(unsigned metrics, int mapped) {
  unsigned eigh = ALIGN_CCA | ALIGN_SVCCA | ALIGN_SUBSPACE | (mapped ? ALIGN_LINEAR : 0);
  unsigned need = metrics & ALIGN_KNN ? NEED_KNN : 0;
  if (metrics & ALIGN_CROSS) need |= NEED_CENTRED;
  if (metrics & (ALIGN_CKA | eigh)) need |= NEED_CENTRED | NEED_GRAM;
  if (metrics & eigh) need |= NEED_EIGH;
  return need;
}

/* The baseline side depends only on the shape, the seed and the KNN
** sample, so a workspace keeps it between calls while it holds what is
** needed. */
static int baseline_side(AlignWork *w, const AlignOptions *o, unsigned need, Err *err) {
  if (w->g_ready && w->g_seed == o->seed && w->g_rows == w->s && (w->g.have & need) == need) return 0;
  w->g_ready = 0;
  gaussian(w->gauss, (size_t)w->v * w->d, o->seed);
  if (side_init(&w->g, w, w->gauss, need, "baseline", err) < 0) return -1;
  w->g_ready = 1, w->g_seed = o->seed, w->g_rows = w->s;
  return 0;
}

static int compare_in(AlignWork *w, const float *x, const float *y, int v, int d, const AlignOptions *opt,
                      AlignResult *out, Err *err);

/* The workspace's pool, of as many threads as BLAS has for this call. */
static int work_pool(AlignWork *w, int threads, Err *err) {
  if (threads < 1) threads = 1;
  if (w->pool && pool_threads(w->pool) == threads) return 0;
  pool_free(w->pool);
  w->pool = pool_create(threads, err);
  return w->pool ? 0 : -1;
}

/* The model keeps OpenBLAS at one thread (its pool splits the work itself);
** the factorisations here are large enough to use the run's threads. */
int align_compare_in(AlignWork *w, const float *x, const float *y, int v, int d, const AlignOptions *opt,
                     AlignResult *out, Err *err) {
  int before = openblas_get_num_threads(), want = opt ? opt->threads : 0;
  if (want > 0) openblas_set_num_threads(want);
  int rc = work_pool(w, want > 0 ? want : before, err);
  if (rc == 0) rc = compare_in(w, x, y, v, d, opt, out, err);
  if (want > 0) openblas_set_num_threads(before);
  return rc;
}

static int compare_in(AlignWork *w, const float *x, const float *y, int v, int d, const AlignOptions *opt,
                      AlignResult *out, Err *err) {
  AlignOptions o = opt ? *opt : align_default_options();
  memset(out, 0, sizeof *out);
  scores_unknown(&out->score);
  scores_unknown(&out->baseline);
  if (check_args(x, y, v, d, &o, err) < 0) return -1;
  if (work_reserve(w, v, d, o.knn_k < v - 1 ? o.knn_k : v - 1, err) < 0) return -1;
  pick_rows(w, o.knn_rows, o.seed);
  unsigned m = o.metrics, partner = side_needs(m, 0);
  if (side_init(&w->x, w, x, side_needs(m, 1), "x", err) < 0 || side_init(&w->y, w, y, partner, "y", err) < 0 ||
      score_pair(w, &w->x, &w->y, o.topk, m, &out->score, err) < 0)
    return -1;
  if (o.baseline &&
      (baseline_side(w, &o, partner, err) < 0 || score_pair(w, &w->x, &w->g, o.topk, m, &out->baseline, err) < 0))
    return -1;
  out->topk = m & ALIGN_SUBSPACE ? subspace_k(&w->x, &w->y, o.topk) : 0;
  out->computed = m;
  return 0;
}

int align_compare(const float *x, const float *y, int v, int d, const AlignOptions *opt, AlignResult *out,
                  Err *err) {
  AlignWork *w = align_work_new();
  if (!w) return err_set(err, "align: out of memory");
  int rc = align_compare_in(w, x, y, v, d, opt, out, err);
  align_work_free(w);
  return rc;
}
