/*
** linalg.h -- the dense products of the model, named after what they do,
** on OpenBLAS. This is the only part of core that sees cblas.h.
**
** Matrices are row-major. A Linear layer with weight W [o,i] (PyTorch's
** layout) has three products:
**   forward        out [n,o]  = inp [n,i] . W^T        'linalg_mm_fwd'
**   input grad     dinp [n,i] = dout [n,o] . W          'linalg_mm_dinp'
**   weight grad    dW [o,i]   = dout^T [o,n] . inp      'linalg_mm_dw'
** Each takes the leading dimensions of its operands, so a caller can hand
** it a block of rows (or a head's columns) of a larger matrix, and 'beta'
** (0 overwrites, 1 accumulates into the output).
*/
#ifndef TIELAB_LINALG_H
#define TIELAB_LINALG_H

/* out[n,o] = inp[n,i] . W[o,i]^T + beta*out */
void linalg_mm_fwd(float *out, int ldo, const float *inp, int ldi, const float *w, int ldw,
                   int n, int i, int o, float beta);

/* dinp[n,i] = dout[n,o] . W[o,i] + beta*dinp */
void linalg_mm_dinp(float *dinp, int lddi, const float *dout, int lddo, const float *w, int ldw,
                    int n, int i, int o, float beta);

/* dW[o,i] = dout[n,o]^T . inp[n,i] + beta*dW */
void linalg_mm_dw(float *dw, int lddw, const float *dout, int lddo, const float *inp, int ldi,
                  int n, int i, int o, float beta);

/* c[m,n] = alpha * a[m,k] . b[k,n] + beta*c, either operand possibly
** transposed ('ta'/'tb' non-zero: the stored matrix is the transpose).
** For the products that are not a Linear layer (attention). */
void linalg_gemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);

/* y[c] = sum over the n rows of a[n,c] (column sums: a bias gradient). */
void linalg_colsum(float *y, const float *a, int lda, int n, int c, const float *ones);

/* Threads OpenBLAS itself may use for one call (process-wide), and how
** many it may use now. */
void linalg_set_threads(int n);
int linalg_threads(void);

#endif
