/*
** kernels.h -- the loops of a model step that are not matrix products:
** LayerNorm, GELU, the causal softmax of attention, softmax cross-entropy,
** the AdamW, Adam and SGD updates and gradient norms, each on a range of rows so that callers can
** split the work between threads.
**
** They are written on 16-float vectors (GCC vector extensions), with a
** vectorizable exp and tanh, because these loops run over every activation
** every step and would otherwise cost as much as the products. Results do
** not depend on how the rows are split.
*/
#ifndef TIELAB_KERNELS_H
#define TIELAB_KERNELS_H

#include <stddef.h>

/* out[r,:] = (inp[r,:] - mean) * rstd * w + b over 'rows' rows of d;
** 'mean' and 'rstd' [rows] are written when not NULL. eps is 1e-5. */
void kern_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                            const float *b, int rows, int d);

/* Backward of the above: dinp[r,:] (+)= the input gradient (added when
** 'accumulate', else written); dw[d] and db[d] += the parameter gradients
** when not NULL. 'mean'/'rstd' may be NULL: they are then recomputed. */
void kern_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                             const float *mean, const float *rstd, const float *w, int rows, int d,
                             int accumulate);

/* out[r,:] = resid[r,:] + bias (either may be NULL: then 0). */
void kern_rows_init(float *out, const float *resid, const float *bias, int rows, int c);

/* GELU with the tanh approximation over rows of c, bias added first: on
** entry 'grad' holds the pre-activation without bias; on exit out = GELU(x)
** and grad = GELU'(x), which is all backward needs. */
void kern_gelu_forward(float *out, float *grad, const float *bias, int rows, int c);

/* y *= x, elementwise over n (the backward of GELU, given GELU'). */
void kern_mul(float *y, const float *x, size_t n);

/* Rows [i0,i1) of a causal score matrix 'att' (row stride ld) become
** softmax over columns 0..i, and 0 in columns i+1..width-1. */
void kern_causal_softmax(float *att, int ld, int i0, int i1, int width);

/* datt holds dLoss/dP on entry and dLoss/dScores on exit, for the rows and
** columns 'kern_causal_softmax' wrote. */
void kern_causal_softmax_backward(float *datt, const float *att, int ld, int i0, int i1, int width);

/* Softmax of one row of 'v' logits in place (they become probabilities),
** and dlogits = (probs - onehot(target)) * scale when 'dlogits' is not
** NULL. Returns the cross-entropy -log p[target] (0 when target < 0). */
double kern_softmax_xent(float *logits, float *dlogits, int target, int v, float scale);

/* One AdamW update of n entries as torch.optim.AdamW does it. */
typedef struct AdamStep {
  float lr, beta1, beta2, eps;
  float decay;                          /* AdamW: lr*weight_decay; Adam: weight_decay; or 0 */
  float step_size;                      /* lr / (1 - beta1^t) */
  float bc2_sqrt;                       /* sqrt(1 - beta2^t) */
} AdamStep;
void kern_adamw(float *p, const float *g, float *m, float *v, size_t n, const AdamStep *s);

/* The same as torch.optim.Adam does it: decay*p added to the gradient. */
void kern_adam(float *p, const float *g, float *m, float *v, size_t n, const AdamStep *s);

/* One update as torch.optim.SGD does it (dampening 0): g += decay*p;
** buf = g on the first step or with no momentum, else momentum*buf + g;
** p -= lr * (nesterov ? g + momentum*buf : buf). */
typedef struct SgdStep {
  float lr, decay, momentum;
  int nesterov, first;
} SgdStep;
void kern_sgd(float *p, const float *g, float *buf, size_t n, const SgdStep *s);

/* Sum of squares and of absolute values of x[n]; returns non-zero when
** some entry is non-zero. */
int kern_norms(const float *x, size_t n, double *sumsq, double *sumabs);

/* Sum of squares only. */
double kern_sumsq(const float *x, size_t n);

/* x *= s */
void kern_scale(float *x, size_t n, float s);

/* y = a*x + b*y */
void kern_axpby(float *y, const float *x, size_t n, float a, float b);

#endif
