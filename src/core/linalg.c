/* linalg.c -- see linalg.h. */
#include <cblas.h>

#include "core/linalg.h"

static CBLAS_TRANSPOSE trans(int t) { return t ? CblasTrans : CblasNoTrans; }

void linalg_mm_fwd(float *out, int ldo, const float *inp, int ldi, const float *w, int ldw,
                   int n, int i, int o, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, o, i, 1.0f, inp, ldi, w, ldw, beta, out, ldo);
}

void linalg_mm_dinp(float *dinp, int lddi, const float *dout, int lddo, const float *w, int ldw,
                    int n, int i, int o, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, i, o, 1.0f, dout, lddo, w, ldw, beta, dinp,
              lddi);
}

void linalg_mm_dw(float *dw, int lddw, const float *dout, int lddo, const float *inp, int ldi,
                  int n, int i, int o, float beta) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, o, i, n, 1.0f, dout, lddo, inp, ldi, beta, dw, lddw);
}

void linalg_gemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc) {
  cblas_sgemm(CblasRowMajor, trans(ta), trans(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void linalg_colsum(float *y, const float *a, int lda, int n, int c, const float *ones) {
  cblas_sgemv(CblasRowMajor, CblasTrans, n, c, 1.0f, a, lda, ones, 1, 0.0f, y, 1);
}

void linalg_set_threads(int n) { openblas_set_num_threads(n < 1 ? 1 : n); }
int linalg_threads(void) { return openblas_get_num_threads(); }

