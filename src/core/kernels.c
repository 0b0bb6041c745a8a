/*
** kernels.c -- see kernels.h.
**
** Every loop walks its data W floats at a time; a short tail is loaded into
** a padded vector ('load_n') and stored back partially ('store_n'), so each
** formula is written once. On x86-64 the hot functions are compiled three
** times (AVX-512, AVX2+FMA, baseline) and the loader picks one for the CPU
** at hand ('target_clones').
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/kernels.h"

#if defined(__GNUC__) && !defined(__clang__)
/* Returning a 64-byte vector from a static helper in a baseline build
** draws a warning about the x86 ABI; the helpers are always inlined and
** never called across modules. */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KERNEL __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KERNEL
#endif

/* The vector helpers are always inlined into the kernels, so they take the
** kernel's instruction set and never exist as functions of their own. */
#define INLINE inline __attribute__((always_inline))

/* 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones. */
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
enum { W = 16 };

static INLINE vf vset(float x) { return (vf){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }

/* Vectors go into helpers by address: a 64-byte vector passed by value
** has a different ABI in a baseline build, which GCC reports. */
static INLINE vf load(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

static INLINE void store(float *p, const vf *v) { memcpy(p, v, sizeof *v); }

/* The first n (<= W) floats of p, the other lanes 'fill'. */
static INLINE vf load_n(const float *p, int n, float fill) {
  if (n == W) return load(p);
  vf v = vset(fill);
  memcpy(&v, p, (size_t)n * sizeof(float));
  return v;
}

static INLINE void store_n(float *p, const vf *v, int n) {
  if (n == W) store(p, v);
  else memcpy(p, v, (size_t)n * sizeof(float));
}

static INLINE int lanes(size_t n, size_t i) { return n - i < W ? (int)(n - i) : W; }

static INLINE vf vmax(const vf *a, const vf *b) {
  vi m = *a > *b;
  return (vf)(((vi)*a & m) | ((vi)*b & ~m));
}

static INLINE vf vclamp(const vf *x, float lo, float hi) {
  vf l = vset(lo), h = vset(hi), a = vmax(x, &l);
  return (vf)(((vi)a & (a < h)) | ((vi)h & ~(a < h)));
}

static INLINE vf vabs(const vf *x) { return (vf)((vi)*x & 0x7fffffff); }

/* Lanes n..W-1 set to 0. */
static INLINE vf vfirst(const vf *x, int n) {
  const vi lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return (vf)((vi)*x & (lane < n));
}

static INLINE float hsum(const vf *v) {
  float s = 0.0f;
  for (int j = 0; j < W; j++) s += (*v)[j];
  return s;
}

static INLINE float hmax(const vf *v) {
  float m = (*v)[0];
  for (int j = 1; j < W; j++) m = (*v)[j] > m ? (*v)[j] : m;
  return m;
}

/* exp on [-87, 88] (clamped): n = round(x/ln2) by the 1.5*2^23 trick,
** a degree-6 polynomial on the remainder (Cephes expf), times 2^n built
** in the exponent bits. About 1 ulp. */
static INLINE vf vexp(const vf *in) {
  vf x = vclamp(in, -87.0f, 88.0f);
  vf t = x * 1.44269504088896341f + 12582912.0f;
  vf n = t - 12582912.0f;
  vf r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  vf p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  vi e = ((vi)t - 0x4B400000 + 127) << 23;
  return p * (vf)e;
}

/* tanh as a 13/6 rational function on [-7.9, 7.9] (Eigen's float tanh):
** a few ulp, and exactly +-1 in float beyond. */
static INLINE vf vtanh(const vf *in) {
  vf x = vclamp(in, -7.90531110763549805f, 7.90531110763549805f);
  vf x2 = x * x;
  vf p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  vf q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}

/* sqrt of a >= 0 as a * rsqrt(a): a bit-level first guess and three Newton
** steps reach float precision (sqrtf does not vectorize without
** -fno-math-errno). 0 stays 0. */
static INLINE vf vsqrt(const vf *in) {
  vf a = *in;
  vf y = (vf)(0x5f3759df - ((vi)a >> 1));
  vf h = a * 0.5f;
  y = y * (1.5f - h * y * y);
  y = y * (1.5f - h * y * y);
  y = y * (1.5f - h * y * y);
  return a * y;
}

/* ---- LayerNorm */

static INLINE void layernorm_stats(const float *x, int d, float *mean, float *rstd) {
  vf s = vset(0.0f);
  for (int i = 0; i < d; i += W) s += load_n(x + i, lanes((size_t)d, (size_t)i), 0.0f);
  float mu = hsum(&s) / (float)d;
  vf q = vset(0.0f);
  for (int i = 0; i < d; i += W) {
    vf c = load_n(x + i, lanes((size_t)d, (size_t)i), mu) - mu;   /* padding lanes give 0 */
    q += c * c;
  }
  *mean = mu;
  *rstd = 1.0f / sqrtf(hsum(&q) / (float)d + 1e-5f);
}

KERNEL void kern_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                                   const float *b, int rows, int d) {
  for (int r = 0; r < rows; r++) {
    const float *x = inp + (size_t)r * d;
    float *o = out + (size_t)r * d;
    float mu, rs;
    layernorm_stats(x, d, &mu, &rs);
    for (int i = 0; i < d; i += W) {
      int n = lanes((size_t)d, (size_t)i);
      vf y = (load_n(x + i, n, 0.0f) - mu) * rs * load_n(w + i, n, 0.0f) + load_n(b + i, n, 0.0f);
      store_n(o + i, &y, n);
    }
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

KERNEL void kern_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                                    const float *mean, const float *rstd, const float *w, int rows, int d,
                                    int accumulate) {
  for (int r = 0; r < rows; r++) {
    const float *x = inp + (size_t)r * d, *dy = dout + (size_t)r * d;
    float *dx = dinp + (size_t)r * d;
    float mu, rs;
    if (mean && rstd) mu = mean[r], rs = rstd[r];
    else layernorm_stats(x, d, &mu, &rs);
    /* Two means over the row: of dnorm = dy*w and of dnorm*xhat. */
    vf s1 = vset(0.0f), s2 = vset(0.0f);
    for (int i = 0; i < d; i += W) {
      int n = lanes((size_t)d, (size_t)i);
      vf xhat = (load_n(x + i, n, mu) - mu) * rs;
      vf gy = load_n(dy + i, n, 0.0f);
      vf dn = gy * load_n(w + i, n, 0.0f);
      s1 += dn;
      s2 += dn * xhat;
      if (dw) {
        vf acc = load_n(dw + i, n, 0.0f) + gy * xhat;
        store_n(dw + i, &acc, n);
      }
      if (db) {
        vf acc = load_n(db + i, n, 0.0f) + gy;
        store_n(db + i, &acc, n);
      }
    }
    float m1 = hsum(&s1) / (float)d, m2 = hsum(&s2) / (float)d;
    for (int i = 0; i < d; i += W) {
      int n = lanes((size_t)d, (size_t)i);
      vf xhat = (load_n(x + i, n, mu) - mu) * rs;
      vf dn = load_n(dy + i, n, 0.0f) * load_n(w + i, n, 0.0f);
      vf g = (dn - m1 - xhat * m2) * rs;
      if (accumulate) g += load_n(dx + i, n, 0.0f);
      store_n(dx + i, &g, n);
    }
  }
}

/* ---- residual rows, GELU */

KERNEL void kern_rows_init(float *out, const float *resid, const float *bias, int rows, int c) {
  for (int r = 0; r < rows; r++) {
    float *o = out + (size_t)r * c;
    const float *x = resid ? resid + (size_t)r * c : NULL;
    for (int i = 0; i < c; i += W) {
      int n = lanes((size_t)c, (size_t)i);
      vf y = vset(0.0f);
      if (x) y += load_n(x + i, n, 0.0f);
      if (bias) y += load_n(bias + i, n, 0.0f);
      store_n(o + i, &y, n);
    }
  }
}

#define GELU_BETA 0.7978845608028654f   /* sqrt(2/pi) */
#define GELU_KAPPA 0.044715f

KERNEL void kern_gelu_forward(float *out, float *grad, const float *bias, int rows, int c) {
  for (int r = 0; r < rows; r++) {
    float *g = grad + (size_t)r * c, *y = out + (size_t)r * c;
    for (int i = 0; i < c; i += W) {
      int n = lanes((size_t)c, (size_t)i);
      vf x = load_n(g + i, n, 0.0f) + load_n(bias + i, n, 0.0f);
      vf x2 = x * x;
      vf u = GELU_BETA * (x + GELU_KAPPA * x2 * x);
      vf t = vtanh(&u);
      vf gelu = 0.5f * x * (1.0f + t);
      vf dgelu = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_BETA * (1.0f + 3.0f * GELU_KAPPA * x2);
      store_n(y + i, &gelu, n);
      store_n(g + i, &dgelu, n);
    }
  }
}

KERNEL void kern_mul(float *y, const float *x, size_t count) {
  for (size_t i = 0; i < count; i += W) {
    int n = lanes(count, i);
    vf r = load_n(y + i, n, 0.0f) * load_n(x + i, n, 0.0f);
    store_n(y + i, &r, n);
  }
}

/* ---- softmax */

/* In place: x[0..n) = exp(x - max) / sum; returns the sum (of exp(x - max))
** and the max in '*max'. */
static INLINE double softmax_inplace(float *x, int len, float *max) {
  vf mv = vset(-INFINITY);
  for (int j = 0; j < len; j += W) {
    vf v = load_n(x + j, lanes((size_t)len, (size_t)j), -INFINITY);
    mv = vmax(&mv, &v);
  }
  float mx = hmax(&mv);
  vf s = vset(0.0f);
  for (int j = 0; j < len; j += W) {
    int n = lanes((size_t)len, (size_t)j);
    vf z = load_n(x + j, n, mx) - mx;
    vf e = vexp(&z);
    if (n < W) e = vfirst(&e, n);
    store_n(x + j, &e, n);
    s += e;
  }
  double sum = hsum(&s);
  float inv = (float)(1.0 / sum);
  for (int j = 0; j < len; j += W) {
    int n = lanes((size_t)len, (size_t)j);
    vf p = load_n(x + j, n, 0.0f) * inv;
    store_n(x + j, &p, n);
  }
  *max = mx;
  return sum;
}

KERNEL void kern_causal_softmax(float *att, int ld, int i0, int i1, int width) {
  for (int i = i0; i < i1; i++) {
    float *row = att + (size_t)i * ld, mx;
    softmax_inplace(row, i + 1, &mx);
    if (width > i + 1) memset(row + i + 1, 0, (size_t)(width - i - 1) * sizeof(float));
  }
}

KERNEL void kern_causal_softmax_backward(float *datt, const float *att, int ld, int i0, int i1, int width) {
  for (int i = i0; i < i1; i++) {
    float *dp = datt + (size_t)i * ld;
    const float *p = att + (size_t)i * ld;
    int len = i + 1;
    vf s = vset(0.0f);
    for (int j = 0; j < len; j += W) {
      int n = lanes((size_t)len, (size_t)j);
      s += load_n(p + j, n, 0.0f) * load_n(dp + j, n, 0.0f);
    }
    float dot = hsum(&s);
    for (int j = 0; j < len; j += W) {
      int n = lanes((size_t)len, (size_t)j);
      vf g = load_n(p + j, n, 0.0f) * (load_n(dp + j, n, 0.0f) - dot);
      store_n(dp + j, &g, n);
    }
    if (width > len) memset(dp + len, 0, (size_t)(width - len) * sizeof(float));
  }
}

KERNEL double kern_softmax_xent(float *logits, float *dlogits, int target, int v, float scale) {
  float picked = target >= 0 ? logits[target] : 0.0f, mx;
  double sum = softmax_inplace(logits, v, &mx);
  if (dlogits) {
    for (int j = 0; j < v; j += W) {
      int n = lanes((size_t)v, (size_t)j);
      vf g = load_n(logits + j, n, 0.0f) * scale;
      store_n(dlogits + j, &g, n);
    }
    if (target >= 0) dlogits[target] -= scale;
  }
  if (target < 0) return 0.0;
  return log(sum) + (double)mx - (double)picked;
}

/* ---- optimizer and norms */

/* One Adam update of n entries. The decay is decoupled (AdamW: the weight
** shrinks by 1 - lr*wd first) or, with 'l2' (a constant where it is
** inlined, so each kernel keeps only its own branch), added to the
** gradient as wd*p (Adam). */
static INLINE void adam_update(float *p, const float *g, float *m, float *v, size_t count, const AdamStep *s,
                               int l2) {
  float keep = 1.0f - s->decay, b1 = 1.0f - s->beta1, b2 = 1.0f - s->beta2;
  float inv_bc2 = 1.0f / s->bc2_sqrt;
  for (size_t i = 0; i < count; i += W) {
    int n = lanes(count, i);
    vf gi = load_n(g + i, n, 0.0f);
    vf mi = load_n(m + i, n, 0.0f);
    vf vi_ = load_n(v + i, n, 0.0f);
    vf pi = load_n(p + i, n, 0.0f);
    if (l2) gi = gi + s->decay * pi;
    else pi = pi * keep;
    mi = mi + b1 * (gi - mi);
    vi_ = vi_ * s->beta2 + b2 * gi * gi;
    vf denom = vsqrt(&vi_) * inv_bc2 + s->eps;
    pi = pi - s->step_size * mi / denom;
    store_n(p + i, &pi, n);
    store_n(m + i, &mi, n);
    store_n(v + i, &vi_, n);
  }
}

KERNEL void kern_adamw(float *p, const float *g, float *m, float *v, size_t count, const AdamStep *s) {
  adam_update(p, g, m, v, count, s, 0);
}

KERNEL void kern_adam(float *p, const float *g, float *m, float *v, size_t count, const AdamStep *s) {
  adam_update(p, g, m, v, count, s, 1);
}

KERNEL void kern_sgd(float *p, const float *g, float *buf, size_t count, const SgdStep *s) {
  /* The first step starts the buffer at the gradient. With no momentum
  ** torch keeps no buffer: it is left as it was (zero, or the last one of a
  ** stretch with momentum), so momentum turned on later starts from it as
  ** torch's does (from g_t when there never was any). */
  float mu = s->first ? 0.0f : s->momentum;
  int keep = s->momentum != 0.0f;
  for (size_t i = 0; i < count; i += W) {
    int n = lanes(count, i);
    vf pi = load_n(p + i, n, 0.0f);
    vf gi = load_n(g + i, n, 0.0f) + s->decay * pi;
    vf bi = gi;
    if (keep && mu != 0.0f) bi = load_n(buf + i, n, 0.0f) * mu + gi;
    vf d = s->nesterov ? gi + s->momentum * bi : bi;
    pi = pi - s->lr * d;
    store_n(p + i, &pi, n);
    if (keep) store_n(buf + i, &bi, n);
  }
}

KERNEL int kern_norms(const float *x, size_t count, double *sumsq, double *sumabs) {
  double q = 0.0, a = 0.0;
  /* Float partial sums over blocks of 512, added in double. */
  for (size_t b = 0; b < count; b += 512) {
    size_t e = b + 512 < count ? b + 512 : count;
    vf sq = vset(0.0f), ab = vset(0.0f);
    for (size_t i = b; i < e; i += W) {
      vf v = load_n(x + i, lanes(e, i), 0.0f);
      sq += v * v;
      ab += vabs(&v);
    }
    q += hsum(&sq);
    a += hsum(&ab);
  }
  *sumsq = q;
  *sumabs = a;
  return a > 0.0;
}

KERNEL double kern_sumsq(const float *x, size_t count) {
  double q = 0.0;
  for (size_t b = 0; b < count; b += 512) {
    size_t e = b + 512 < count ? b + 512 : count;
    vf sq = vset(0.0f);
    for (size_t i = b; i < e; i += W) {
      vf v = load_n(x + i, lanes(e, i), 0.0f);
      sq += v * v;
    }
    q += hsum(&sq);
  }
  return q;
}

KERNEL void kern_scale(float *x, size_t count, float s) {
  for (size_t i = 0; i < count; i += W) {
    int n = lanes(count, i);
    vf y = load_n(x + i, n, 0.0f) * s;
    store_n(x + i, &y, n);
  }
}

KERNEL void kern_axpby(float *y, const float *x, size_t count, float a, float b) {
  for (size_t i = 0; i < count; i += W) {
    int n = lanes(count, i);
    vf r = a * load_n(x + i, n, 0.0f) + b * load_n(y + i, n, 0.0f);
    store_n(y + i, &r, n);
  }
}
