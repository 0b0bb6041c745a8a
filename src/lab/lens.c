/*
** lens.c -- see lens.h: the tuned lens's translators, their readout through
** the run's ln_f and E_out, and their SGD step. Where it follows the
** tuned-lens package and where it departs: docs/architecture.md.
*/
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "lab/lens.h"

#define LENS_MOMENTUM 0.9f
#define LENS_WEIGHT_DECAY 1e-3f
#define LENS_CLIP 1.0
#define LENS_CHUNK_FLOATS (1 << 22)   /* one [rows,V] block: at most 16 MiB */
#define LENS_LN2 0.69314718055994530942   /* nats per bit */

struct Lens {
  int vocab, dim, layers, batch, ctx;
  int chunk, max_chunk;      /* rows read out at once; scratch holds max_chunk */
  size_t per;                /* floats per translator: d*d + d */
  size_t n_floats;           /* layers * per */
  float lr;
  int threads;               /* BLAS threads for the lens's own products */
  long step;
  double last_loss;
  double acc_kl;             /* KL (nats) gathered since lens_grad_zero */
  long acc_n;                /* positions gathered since lens_grad_zero */
  float *params, *grads, *mom;          /* n_floats each */
  /* scratch, sized in lens_new */
  int *order;                /* [B*T] positions, the sample first */
  int *final_top;            /* [chunk] argmax of the final distribution */
  float *h, *hp, *dh;        /* [chunk,d] hidden, translated, its gradient */
  float *rscratch;           /* [2*chunk*d] for the readout */
  float *final, *pfinal;     /* [chunk,V] final log-probabilities, probabilities */
  float *logits;             /* [chunk,V] lens logits -> log-probs -> dlogits */
};

static void *alloc_floats(size_t n, int *failed) {
  void *p = calloc(n ? n : 1, sizeof(float));
  if (!p) *failed = 1;
  return p;
}

size_t lens_state_floats(const ModelConfig *c) {
  return (size_t)c->layers * ((size_t)c->dim * c->dim + c->dim);
}

/* Rows evaluated at once: one [rows,V] block of about LENS_CHUNK_FLOATS. */
static int lens_chunk(const ModelConfig *c) {
  int chunk = LENS_CHUNK_FLOATS / c->vocab, rows = c->batch * c->ctx;
  if (chunk < 32) chunk = 32;
  return chunk > rows ? rows : chunk;
}

size_t lens_memory_bytes(const ModelConfig *c) {
  size_t d = (size_t)c->dim, V = (size_t)c->vocab, ch = (size_t)lens_chunk(c);
  size_t floats = 3 * lens_state_floats(c) + 5 * ch * d + 3 * ch * V;   /* as lens_new allocates */
  return sizeof(Lens) + floats * sizeof(float) + ((size_t)c->batch * c->ctx + ch) * sizeof(int);
}

Lens *lens_new(const ModelConfig *c, Err *err) {
  if (config_validate(c, err) < 0) return NULL;
  Lens *ln = calloc(1, sizeof *ln);
  if (!ln) {
    err_set(err, "out of memory creating the lens");
    return NULL;
  }
  int d = c->dim, V = c->vocab, rows = c->batch * c->ctx;
  ln->vocab = V;
  ln->dim = d;
  ln->layers = c->layers;
  ln->batch = c->batch;
  ln->ctx = c->ctx;
  ln->chunk = lens_chunk(c);
  ln->max_chunk = ln->chunk;
  ln->per = (size_t)d * d + d;
  ln->n_floats = lens_state_floats(c);
  ln->lr = LENS_DEFAULT_LR;
  ln->threads = 1;
  ln->last_loss = NAN;

  size_t ch = (size_t)ln->chunk;
  int failed = 0;
  ln->params = alloc_floats(ln->n_floats, &failed);
  ln->grads = alloc_floats(ln->n_floats, &failed);
  ln->mom = alloc_floats(ln->n_floats, &failed);
  ln->order = calloc((size_t)rows, sizeof(int));
  ln->final_top = calloc(ch, sizeof(int));
  if (!ln->order || !ln->final_top) failed = 1;
  ln->h = alloc_floats(ch * d, &failed);
  ln->hp = alloc_floats(ch * d, &failed);
  ln->dh = alloc_floats(ch * d, &failed);
  ln->rscratch = alloc_floats(2 * ch * d, &failed);
  ln->final = alloc_floats(ch * V, &failed);
  ln->pfinal = alloc_floats(ch * V, &failed);
  ln->logits = alloc_floats(ch * V, &failed);
  if (failed) {
    lens_free(ln);
    err_set(err, "out of memory creating the lens (%d translators of %dx%d)", c->layers, d, d);
    return NULL;
  }
  return ln;
}

void lens_free(Lens *ln) {
  if (!ln) return;
  free(ln->params);
  free(ln->grads);
  free(ln->mom);
  free(ln->order);
  free(ln->final_top);
  free(ln->h);
  free(ln->hp);
  free(ln->dh);
  free(ln->rscratch);
  free(ln->final);
  free(ln->pfinal);
  free(ln->logits);
  free(ln);
}

/* ------------------------------------------------------------ pieces */

static int check_shape(const Lens *ln, const Model *m, int b, int t, Err *err) {
  const ModelConfig *c = model_config(m);
  if (c->vocab != ln->vocab || c->dim != ln->dim || c->layers != ln->layers)
    return err_set(err, "lens: model shape (vocab %d, dim %d, layers %d) differs from the "
                   "lens's (vocab %d, dim %d, layers %d)", c->vocab, c->dim, c->layers,
                   ln->vocab, ln->dim, ln->layers);
  if (b < 1 || b > ln->batch || t < 1 || t > ln->ctx)
    return err_set(err, "lens: batch %dx%d is outside the lens's 1..%d x 1..%d", b, t, ln->batch,
                   ln->ctx);
  return 0;
}

static int check_tokens(const int32_t *tok, int n, int V, const char *what, Err *err) {
  if (!tok) return err_set(err, "lens: no %s given", what);
  for (int i = 0; i < n; i++)
    if (tok[i] < 0 || tok[i] >= V)
      return err_set(err, "lens: %s[%d] = %d is outside the vocabulary 0..%d", what, i,
                     (int)tok[i], V - 1);
  return 0;
}

/* The lens's own products run on 'threads' BLAS threads; the model's
** forward, which has its own pool, runs outside these brackets. */
static int blas_threads_begin(const Lens *ln) {
  int before = openblas_get_num_threads();
  if (ln->threads != before) openblas_set_num_threads(ln->threads);
  return before;
}

static void blas_threads_end(const Lens *ln, int before) {
  if (ln->threads != before) openblas_set_num_threads(before);
}

/* Rows 'pos' of 'src' [*,d] into 'dst' [n,d]. */
static void gather(const float *src, const int *pos, int n, int d, float *dst) {
  for (int r = 0; r < n; r++)
    memcpy(dst + (size_t)r * d, src + (size_t)pos[r] * d, (size_t)d * sizeof *dst);
}

/* Translator 'l' on 'n' rows: hp = h + h A^T + b. */
static void translate(const Lens *ln, int l, const float *h, int n, float *hp) {
  int d = ln->dim;
  const float *A = ln->params + (size_t)l * ln->per, *bias = A + (size_t)d * d;
  for (int r = 0; r < n; r++)
    for (int j = 0; j < d; j++) hp[(size_t)r * d + j] = h[(size_t)r * d + j] + bias[j];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, d, d, 1.0f, h, d, A, d, 1.0f, hp, d);
}

/* Each row of x [n,V] becomes its log-softmax; top[r] (if given) its argmax. */
static void log_softmax_rows(float *x, int n, int V, int *top) {
  for (int r = 0; r < n; r++) {
    float *row = x + (size_t)r * V;
    int best = 0;
    for (int v = 1; v < V; v++)
      if (row[v] > row[best]) best = v;
    float mx = row[best];
    double s = 0;
    for (int v = 0; v < V; v++) s += expf(row[v] - mx);
    float lz = mx + (float)log(s);
    for (int v = 0; v < V; v++) row[v] -= lz;
    if (top) top[r] = best;
  }
}

/* The final distribution of 'n' rows of hidden states 'hL': log-probs
** and probabilities (computed once, used by every position), argmaxes. */
static void final_rows(Lens *ln, const Model *m, const float *hL, int n, int *top) {
  size_t nv = (size_t)n * ln->vocab;
  model_readout(m, hL, n, ln->final, ln->rscratch);
  log_softmax_rows(ln->final, n, ln->vocab, top);
  for (size_t i = 0; i < nv; i++) ln->pfinal[i] = expf(ln->final[i]);
}

/* ------------------------------------------------------------ training */

/* The first 'n' entries of ln->order become a sample of 0..bt-1 without
** replacement (a partial Fisher-Yates shuffle); all of them, in order, when
** n == bt. */
static void sample_positions(Lens *ln, int bt, int n, uint64_t seed) {
  for (int i = 0; i < bt; i++) ln->order[i] = i;
  if (n >= bt) return;
  Rng rng;
  rng_seed(&rng, seed);
  for (int i = 0; i < n; i++) {
    int j = i + (int)rng_below(&rng, (uint64_t)(bt - i));
    int tmp = ln->order[i];
    ln->order[i] = ln->order[j];
    ln->order[j] = tmp;
  }
}

/* KL(final || lens) summed over 'n' rows of log-probabilities; 'lens'
** becomes its gradient with respect to the lens logits, (q - p) * scale. */
static double kl_and_grad(const Lens *ln, float *lens, int n, float scale) {
  const float *logp = ln->final, *p = ln->pfinal;
  double kl = 0;
  for (size_t i = 0; i < (size_t)n * ln->vocab; i++) {
    kl += (double)p[i] * (logp[i] - lens[i]);
    lens[i] = (expf(lens[i]) - p[i]) * scale;
  }
  return kl;
}

/* dA += dh^T h, db += column sums of dh, for translator 'l'. */
static void accumulate_grads(Lens *ln, int l, int n) {
  int d = ln->dim;
  float *gA = ln->grads + (size_t)l * ln->per, *gb = gA + (size_t)d * d;
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, n, 1.0f, ln->dh, d, ln->h, d, 1.0f,
              gA, d);
  for (int r = 0; r < n; r++)
    for (int j = 0; j < d; j++) gb[j] += ln->dh[(size_t)r * d + j];
}

/* Forward and backward of every translator on the rows 'pos'; returns the
** sum over translators and rows of the KL, in nats. */
static double train_rows(Lens *ln, const Model *m, const int *pos, int n, int n_total) {
  int d = ln->dim, V = ln->vocab;
  gather(model_residual(m, ln->layers), pos, n, d, ln->h);
  final_rows(ln, m, ln->h, n, NULL);
  double kl = 0;
  for (int l = 0; l < ln->layers; l++) {
    gather(model_residual(m, l), pos, n, d, ln->h);
    translate(ln, l, ln->h, n, ln->hp);
    model_readout(m, ln->hp, n, ln->logits, ln->rscratch);
    log_softmax_rows(ln->logits, n, V, NULL);
    kl += kl_and_grad(ln, ln->logits, n, 1.0f / (float)n_total);
    model_readout_backward(m, ln->hp, ln->logits, n, ln->dh, ln->rscratch);
    accumulate_grads(ln, l, n);
  }
  return kl;
}

static double grad_norm(const Lens *ln) {
  double ss = 0;
  for (size_t i = 0; i < ln->n_floats; i++) ss += (double)ln->grads[i] * ln->grads[i];
  return sqrt(ss);
}

/* Clip the global norm as torch's clip_grad_norm_ does, then one step of
** torch's SGD with weight decay and Nesterov momentum. The gradient buffer
** is left as computed. */
static void sgd_step(Lens *ln, double norm, float lr) {
  double coef = LENS_CLIP / (norm + 1e-6);
  float scale = coef < 1.0 ? (float)coef : 1.0f;
  const float mu = LENS_MOMENTUM, wd = LENS_WEIGHT_DECAY;
  for (size_t i = 0; i < ln->n_floats; i++) {
    float g = ln->grads[i] * scale + wd * ln->params[i];
    ln->mom[i] = mu * ln->mom[i] + g;
    ln->params[i] -= lr * (g + mu * ln->mom[i]);
  }
}

/* Training in parts: one step's gradient may gather positions from many
** forwards (a fit over more positions than one batch holds). */
void lens_grad_zero(Lens *ln) {
  memset(ln->grads, 0, ln->n_floats * sizeof *ln->grads);
  ln->acc_kl = 0;
  ln->acc_n = 0;
}

int lens_grad_add(Lens *ln, Model *m, int b, int t, int n_positions, int n_total, uint64_t seed,
                  Err *err) {
  if (check_shape(ln, m, b, t, err) < 0) return -1;
  if (n_positions < 1 || n_total < 1)
    return err_set(err, "lens: n_positions and n_total must be at least 1, got %d and %d",
                   n_positions, n_total);
  if (ln->layers == 0) return 0;
  int bt = b * t, n = n_positions < bt ? n_positions : bt;
  sample_positions(ln, bt, n, seed);
  int before = blas_threads_begin(ln);
  for (int r0 = 0; r0 < n; r0 += ln->chunk) {
    int rows = n - r0 < ln->chunk ? n - r0 : ln->chunk;
    ln->acc_kl += train_rows(ln, m, ln->order + r0, rows, n_total);
  }
  blas_threads_end(ln, before);
  ln->acc_n += n;
  return 0;
}

int lens_update(Lens *ln, float lr, Err *err) {
  if (ln->layers == 0) return 0;
  if (ln->acc_n > 0) ln->last_loss = ln->acc_kl / ((double)ln->acc_n * ln->layers * LENS_LN2);
  double norm = grad_norm(ln);
  /* A non-finite gradient would stay in the momentum for good: skip it. */
  if (!isfinite(norm))
    return err_set(err, "lens: gradient not finite at lens step %ld; update skipped", ln->step);
  sgd_step(ln, norm, lr);
  ln->step++;
  return 0;
}

int lens_train(Lens *ln, Model *m, int b, int t, int n_positions, uint64_t seed, Err *err) {
  if (check_shape(ln, m, b, t, err) < 0) return -1;
  if (n_positions < 1)
    return err_set(err, "lens: n_positions must be at least 1, got %d", n_positions);
  if (ln->layers == 0) return 0;
  int bt = b * t, n = n_positions < bt ? n_positions : bt;
  lens_grad_zero(ln);
  if (lens_grad_add(ln, m, b, t, n, n, seed, err) < 0) return -1;
  return lens_update(ln, ln->lr, err);
}

/* ------------------------------------------------------------ evaluation */

/* Add the measures of 'n' rows of lens log-probabilities 'q' against the
** final distribution into position 'i' of 's' (sums; lens_eval divides). */
static void tally_rows(const Lens *ln, const float *q, int n, const int32_t *targets,
                       LensStats *s, int i) {
  int V = ln->vocab;
  for (int r = 0; r < n; r++) {
    const float *logp = ln->final + (size_t)r * V, *p = ln->pfinal + (size_t)r * V;
    const float *qr = q + (size_t)r * V;
    double kl = 0, ent = 0;
    int best = 0;
    for (int v = 0; v < V; v++) {
      kl += (double)p[v] * (logp[v] - qr[v]);
      ent -= (double)expf(qr[v]) * qr[v];
      if (qr[v] > qr[best]) best = v;
    }
    s->kl[i] += kl;
    s->entropy[i] += ent;
    s->ce[i] -= qr[targets[r]];
    s->acc[i] += best == targets[r];
    s->agree[i] += best == ln->final_top[r];
  }
}

/* Both lenses at every position for rows r0..r0+n-1 of the last forward. */
static void eval_rows(Lens *ln, const Model *m, int r0, int n, const int32_t *targets,
                      LensStats *tuned, LensStats *logit) {
  int d = ln->dim, V = ln->vocab, L = ln->layers;
  final_rows(ln, m, model_residual(m, L) + (size_t)r0 * d, n, ln->final_top);
  /* Position L has no translator, in either lens: its distribution is the
  ** final one, the same numbers from the same code, so its KL is exactly 0. */
  tally_rows(ln, ln->final, n, targets, tuned, L);
  if (logit) tally_rows(ln, ln->final, n, targets, logit, L);
  for (int l = 0; l < L; l++) {
    const float *h = model_residual(m, l) + (size_t)r0 * d;
    if (logit) {
      model_readout(m, h, n, ln->logits, ln->rscratch);
      log_softmax_rows(ln->logits, n, V, NULL);
      tally_rows(ln, ln->logits, n, targets, logit, l);
    }
    translate(ln, l, h, n, ln->hp);
    model_readout(m, ln->hp, n, ln->logits, ln->rscratch);
    log_softmax_rows(ln->logits, n, V, NULL);
    tally_rows(ln, ln->logits, n, targets, tuned, l);
  }
}

static void stats_clear(LensStats *s, int n, long step) {
  memset(s, 0, sizeof *s);
  s->n = n;
  s->step = step;
}

/* Sums over 'count' positions into means, nats into bits, contributions.
** A KL is never negative; a lens that matches the final distribution to
** float rounding (a least-squares translator on a near-linear layer) can
** sum to a hair below 0, which is 0. */
static void stats_finish(LensStats *s, int count) {
  for (int i = 0; i < s->n; i++) {
    s->kl[i] = fmax(s->kl[i] / (count * LENS_LN2), 0.0);
    s->ce[i] /= count * LENS_LN2;
    s->entropy[i] /= count * LENS_LN2;
    s->acc[i] /= count;
    s->agree[i] /= count;
    s->contrib[i] = i == 0 ? 0 : s->kl[i - 1] - s->kl[i];
  }
}

int lens_eval(Lens *ln, Model *m, const int32_t *inputs, const int32_t *targets, int b, int t,
              long step, LensStats *tuned, LensStats *logit, Err *err) {
  if (check_shape(ln, m, b, t, err) < 0) return -1;
  int bt = b * t, L = ln->layers;
  if (check_tokens(inputs, bt, ln->vocab, "inputs", err) < 0) return -1;
  if (check_tokens(targets, bt, ln->vocab, "targets", err) < 0) return -1;
  model_forward(m, inputs, NULL, b, t);
  stats_clear(tuned, L + 1, step);
  if (logit) stats_clear(logit, L + 1, step);
  int before = blas_threads_begin(ln);
  for (int r0 = 0; r0 < bt; r0 += ln->chunk) {
    int rows = bt - r0 < ln->chunk ? bt - r0 : ln->chunk;
    eval_rows(ln, m, r0, rows, targets + r0, tuned, logit);
  }
  blas_threads_end(ln, before);
  stats_finish(tuned, bt);
  if (logit) stats_finish(logit, bt);
  return 0;
}

/* ------------------------------------------------------------ state */

int lens_set_chunk(Lens *ln, int rows) {
  ln->chunk = rows < 1 ? 1 : rows > ln->max_chunk ? ln->max_chunk : rows;
  return ln->chunk;
}

float lens_lr(const Lens *ln) { return ln->lr; }
void lens_set_lr(Lens *ln, float lr) { ln->lr = lr; }
double lens_last_loss(const Lens *ln) { return ln->last_loss; }
size_t lens_state_size(const Lens *ln) { return ln->n_floats; }
int lens_n_translators(const Lens *ln) { return ln->layers; }
float *lens_params(Lens *ln) { return ln->params; }
float *lens_momentum(Lens *ln) { return ln->mom; }
const float *lens_grads(const Lens *ln) { return ln->grads; }
long lens_step(const Lens *ln) { return ln->step; }
void lens_set_step(Lens *ln, long step) { ln->step = step; }

/* ------------------------------------------------------------ between lenses */

int lens_copy_translators(Lens *dst, const Lens *src, Err *err) {
  if (dst->n_floats != src->n_floats || dst->dim != src->dim)
    return err_set(err, "lens: cannot copy %d translators of %dx%d into %d of %dx%d", src->layers,
                   src->dim, src->dim, dst->layers, dst->dim, dst->dim);
  memcpy(dst->params, src->params, src->n_floats * sizeof *dst->params);
  return 0;
}

void lens_clear_momentum(Lens *ln) { memset(ln->mom, 0, ln->n_floats * sizeof *ln->mom); }

void lens_set_threads(Lens *ln, int threads) { ln->threads = threads < 1 ? 1 : threads; }
