/*
** test_lens.c -- the tuned lens and the logit lens: position L through
** ln_f is the model's own output; a model whose blocks add nothing keeps
** the tuned lens at the identity; the translator gradient matches finite
** differences; on a model that learned a Markov chain, training the tuned
** lens beats the logit lens at the early positions; the state round-trips.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/rng.h"
#include "core/step.h"
#include "lab/lens.h"
#include "tap.h"

static ModelConfig shape(int V, int d, int L, int H, int T, int B, int tie_k) {
  ModelConfig c = {V, d, L, H, T, B, tie_k};
  return c;
}

static void random_tokens(Rng *rng, int32_t *x, int n, int V) {
  for (int i = 0; i < n; i++) x[i] = (int32_t)rng_below(rng, (uint64_t)V);
}

static double max_abs(const float *x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(x[i]) > m) m = fabs(x[i]);
  return m;
}

/* ---- position L: readout of the last residual is the model's output */

static void test_readout_is_output(void) {
  ModelConfig c = shape(64, 32, 2, 2, 16, 4, 0);
  Err err;
  Model *m = model_create(&c, 1, &err);
  Lens *ln = lens_new(&c, &err);
  if (!m || !ln) {
    ok(0, "create: %s", err.msg);
    return;
  }
  model_init(m, 7);
  Rng rng;
  rng_seed(&rng, 11);
  int n = c.batch * c.ctx;
  int32_t *in = malloc(n * sizeof *in), *tg = malloc(n * sizeof *tg);
  float *logits = malloc((size_t)n * c.vocab * sizeof *logits);
  float *scratch = malloc((size_t)n * c.dim * sizeof *scratch);
  random_tokens(&rng, in, n, c.vocab);
  random_tokens(&rng, tg, n, c.vocab);

  float loss = model_forward(m, in, tg, c.batch, c.ctx);
  model_forward(m, in, NULL, c.batch, c.ctx);
  model_readout(m, model_residual(m, c.layers), n, logits, scratch);
  const float *own = model_logits(m);
  double diff = 0;
  for (size_t i = 0; i < (size_t)n * c.vocab; i++)
    if (fabs(logits[i] - own[i]) > diff) diff = fabs(logits[i] - own[i]);
  ok(diff < 1e-5, "readout of residual L equals the model's logits (max diff %.3g)", diff);

  LensStats tuned, logit;
  ok(lens_eval(ln, m, in, tg, c.batch, c.ctx, 5, &tuned, &logit, &err) == 0, "lens_eval");
  int L = c.layers;
  ok(tuned.n == L + 1 && logit.n == L + 1 && tuned.step == 5, "stats cover positions 0..L");
  ok(tuned.kl[L] == 0.0 && logit.kl[L] == 0.0, "KL at position L is exactly 0 (%g, %g)",
     tuned.kl[L], logit.kl[L]);
  ok(tuned.agree[L] == 1.0 && logit.agree[L] == 1.0, "position L agrees with itself");
  double ce_bits = loss / log(2.0);
  ok(fabs(tuned.ce[L] - ce_bits) < 1e-4 * ce_bits,
     "cross-entropy at L is the model's loss in bits (%.6f vs %.6f)", tuned.ce[L], ce_bits);
  int same = 1;
  for (int i = 0; i <= L; i++) same &= tuned.kl[i] == logit.kl[i] && tuned.ce[i] == logit.ce[i];
  ok(same, "an untrained tuned lens is the logit lens");
  ok(logit.kl[0] > 0 && tuned.contrib[0] == 0 &&
         fabs(tuned.contrib[1] - (tuned.kl[0] - tuned.kl[1])) < 1e-12,
     "KL before L is positive (%.2g bits) and contributions are KL drops", logit.kl[0]);
  ok(tuned.entropy[0] > 0 && tuned.entropy[0] <= log2(c.vocab) + 1e-9,
     "entropy within 0..log2 V (%.3f)", tuned.entropy[0]);

  tg[3] = c.vocab;
  ok(lens_eval(ln, m, in, tg, c.batch, c.ctx, 5, &tuned, &logit, &err) < 0 &&
         strstr(err.msg, "targets[3]"),
     "a target outside the vocabulary is refused: %s", err.msg);
  ModelConfig c2 = shape(64, 32, 3, 2, 16, 4, 0);
  Lens *other = lens_new(&c2, &err);
  ok(other && lens_train(other, m, c.batch, c.ctx, 8, 1, &err) < 0 && strstr(err.msg, "layers"),
     "a lens of another shape is refused: %s", err.msg);
  ok(lens_train(ln, m, c.batch + 1, c.ctx, 8, 1, &err) < 0, "a batch beyond B is refused: %s",
     err.msg);
  lens_free(other);

  free(in);
  free(tg);
  free(logits);
  free(scratch);
  lens_free(ln);
  model_free(m);
}

/* ---- blocks that add nothing: every position is the final one */

static void zero_tensor(Model *m, const char *name) {
  const TensorInfo *ti = model_find_tensor(m, name);
  if (ti) memset(model_params(m) + ti->offset, 0, ti->numel * sizeof(float));
}

static void test_identity_blocks(void) {
  ModelConfig c = shape(64, 32, 3, 2, 16, 4, 32);
  Err err;
  Model *m = model_create(&c, 1, &err);
  Lens *ln = lens_new(&c, &err);
  if (!m || !ln) {
    ok(0, "create: %s", err.msg);
    return;
  }
  model_init(m, 3);
  char name[96];
  for (int i = 0; i < c.layers; i++) {
    const char *parts[] = {"attn.c_proj.weight", "attn.c_proj.bias", "mlp.c_proj.weight",
                           "mlp.c_proj.bias"};
    for (int k = 0; k < 4; k++) {
      snprintf(name, sizeof name, "transformer.h.%d.%s", i, parts[k]);
      zero_tensor(m, name);
    }
  }
  Rng rng;
  rng_seed(&rng, 5);
  int n = c.batch * c.ctx;
  int32_t *in = malloc(n * sizeof *in), *tg = malloc(n * sizeof *tg);
  for (int s = 0; s < 30; s++) {
    random_tokens(&rng, in, n, c.vocab);
    model_forward(m, in, NULL, c.batch, c.ctx);
    lens_train(ln, m, c.batch, c.ctx, 32, (uint64_t)s, &err);
  }
  double pmax = max_abs(lens_params(ln), lens_state_size(ln));
  ok(lens_step(ln) == 30 && pmax < 1e-6, "translators stay at the identity (max |A|,|b| = %.3g)",
     pmax);
  ok(lens_last_loss(ln) < 1e-6, "training loss ~ 0 (%.3g bits)", lens_last_loss(ln));
  random_tokens(&rng, in, n, c.vocab);
  random_tokens(&rng, tg, n, c.vocab);
  LensStats tuned, logit;
  lens_eval(ln, m, in, tg, c.batch, c.ctx, 30, &tuned, &logit, &err);
  double worst = 0, agree = 1;
  for (int i = 0; i <= c.layers; i++) {
    worst = fmax(worst, fmax(fabs(tuned.kl[i]), fabs(logit.kl[i])));
    agree = fmin(agree, fmin(tuned.agree[i], logit.agree[i]));
  }
  ok(worst < 1e-6 && agree == 1.0, "every position matches the final layer (max KL %.3g bits)",
     worst);
  free(in);
  free(tg);
  lens_free(ln);
  model_free(m);
}

/* ---- the translator gradient against central differences of the loss */

static void test_gradient(void) {
  ModelConfig c = shape(48, 16, 2, 2, 8, 2, 0);
  Err err;
  Model *m = model_create(&c, 1, &err);
  Lens *ln = lens_new(&c, &err);
  if (!m || !ln) {
    ok(0, "create: %s", err.msg);
    return;
  }
  model_init(m, 21);
  /* Logits of order 1, so that the loss has a shape worth differentiating. */
  const TensorInfo *head = model_find_tensor(m, "lm_head.weight");
  for (size_t i = 0; i < head->numel; i++) model_params(m)[head->offset + i] *= 50;
  Rng rng;
  rng_seed(&rng, 8);
  int n = c.batch * c.ctx;
  int32_t *in = malloc(n * sizeof *in);
  random_tokens(&rng, in, n, c.vocab);
  float *p = lens_params(ln);
  for (size_t i = 0; i < lens_state_size(ln); i++) p[i] = (float)(0.1 * rng_normal(&rng));
  model_forward(m, in, NULL, c.batch, c.ctx);
  lens_set_lr(ln, 0);   /* measure only: the parameters do not move */
  lens_train(ln, m, c.batch, c.ctx, n, 1, &err);
  size_t nf = lens_state_size(ln);
  float *g = malloc(nf * sizeof *g);
  memcpy(g, lens_grads(ln), nf * sizeof *g);
  /* lens_last_loss is the mean over translators in bits; the gradient is
  ** that of the sum in nats. */
  double unit = c.layers * log(2.0), worst = 0;
  size_t d = (size_t)c.dim, per = d * d + d;
  size_t probe[] = {0, 5, d * d + 3, per + 17, per + d * d + 1, 2 * per - 1};
  for (int k = 0; k < 6; k++) {
    size_t i = probe[k];
    float keep = p[i], h = 1e-2f;
    p[i] = keep + h;
    lens_train(ln, m, c.batch, c.ctx, n, 1, &err);
    double up = lens_last_loss(ln);
    p[i] = keep - h;
    lens_train(ln, m, c.batch, c.ctx, n, 1, &err);
    double down = lens_last_loss(ln);
    p[i] = keep;
    double fd = (up - down) / (2 * h) * unit;
    double rel = fabs(fd - g[i]) / fmax(1e-3, fabs(fd) + fabs(g[i]));
    if (rel > worst) worst = rel;
    diag("param %zu: analytic %.6g, numeric %.6g", i, g[i], fd);
  }
  ok(worst < 0.02, "translator gradient matches central differences (worst rel %.3g)", worst);
  free(g);
  free(in);
  lens_free(ln);
  model_free(m);
}

/* ---- a model that learned a Markov chain: the tuned lens beats the logit lens */

enum { CHAIN_NEXT = 2 };

/* Each token has two successors, taken with probability 0.8 and 0.2. */
static void markov_rows(Rng *rng, const int32_t next[][CHAIN_NEXT], int V, int b, int t,
                        int32_t *in, int32_t *tg) {
  for (int s = 0; s < b; s++) {
    int32_t x = (int32_t)rng_below(rng, (uint64_t)V);
    for (int j = 0; j <= t; j++) {
      if (j < t) in[s * t + j] = x;
      if (j > 0) tg[s * t + j - 1] = x;
      x = next[x][rng_uniform(rng) < 0.8 ? 0 : 1];
    }
  }
}

static void test_learned_model(Lens **trained, Model **model) {
  ModelConfig c = shape(48, 32, 3, 2, 16, 8, 0);
  Err err;
  Model *m = model_create(&c, 1, &err);
  Lens *ln = lens_new(&c, &err);
  if (!m || !ln) {
    ok(0, "create: %s", err.msg);
    return;
  }
  model_init(m, 1);
  Rng rng;
  rng_seed(&rng, 1234);
  int32_t next[48][CHAIN_NEXT];
  for (int v = 0; v < c.vocab; v++)
    for (int k = 0; k < CHAIN_NEXT; k++) next[v][k] = (int32_t)rng_below(&rng, (uint64_t)c.vocab);
  int n = c.batch * c.ctx;
  int32_t *in = malloc(n * sizeof *in), *tg = malloc(n * sizeof *tg);
  OptimConfig oc = optim_default();
  oc.lr = 3e-3f;
  float first = 0, loss = 0;
  StepPlan plan = {.inputs = in, .targets = tg, .rows = c.batch, .t = c.ctx, .batch_rows = c.batch,
                   .in_scale = 1, .out_scale = 1, .optim = oc};
  for (int s = 0; s < 200; s++) {
    markov_rows(&rng, next, c.vocab, c.batch, c.ctx, in, tg);
    StepResult res;
    train_step(m, &plan, &res, &err);
    loss = (float)res.loss;
    if (s == 0) first = loss;
  }
  ok(loss < first - 1.0, "the model learned the chain (loss %.3f -> %.3f nats)", first, loss);

  Rng held;
  rng_seed(&held, 99);
  int32_t *vin = malloc(n * sizeof *vin), *vtg = malloc(n * sizeof *vtg);
  markov_rows(&held, next, c.vocab, c.batch, c.ctx, vin, vtg);
  LensStats before, tuned, logit;
  lens_eval(ln, m, vin, vtg, c.batch, c.ctx, 0, &before, &logit, &err);
  for (int s = 0; s < 300; s++) {
    markov_rows(&rng, next, c.vocab, c.batch, c.ctx, in, tg);
    model_forward(m, in, NULL, c.batch, c.ctx);
    lens_train(ln, m, c.batch, c.ctx, 64, (uint64_t)s, &err);
  }
  lens_eval(ln, m, vin, vtg, c.batch, c.ctx, 300, &tuned, &logit, &err);
  for (int i = 0; i <= c.layers; i++)
    diag("position %d: KL tuned %.3f (untrained %.3f) logit %.3f bits; acc tuned %.2f logit %.2f",
         i, tuned.kl[i], before.kl[i], logit.kl[i], tuned.acc[i], logit.acc[i]);
  ok(tuned.kl[0] < 0.5 * logit.kl[0] && tuned.kl[1] < 0.5 * logit.kl[1],
     "trained tuned lens halves the logit lens's KL at positions 0 and 1");
  ok(tuned.kl[0] < before.kl[0], "training lowered the tuned lens's own KL");
  ok(isfinite(lens_last_loss(ln)) && lens_last_loss(ln) < before.kl[0],
     "training loss (%.3f bits) is below the untrained KL", lens_last_loss(ln));
  free(vin);
  free(vtg);
  free(in);
  free(tg);
  *trained = ln;
  *model = m;
}

/* ---- checkpoint state: a copy continues exactly as the original */

static void test_state_round_trip(Lens *ln, Model *m) {
  const ModelConfig *c = model_config(m);
  Err err;
  Lens *copy = lens_new(c, &err);
  size_t nf = lens_state_size(ln);
  ok(nf == (size_t)c->layers * ((size_t)c->dim * c->dim + c->dim) &&
         lens_n_translators(ln) == c->layers,
     "state is one translator [d,d]+[d] per position 0..L-1 (%zu floats)", nf);
  memcpy(lens_params(copy), lens_params(ln), nf * sizeof(float));
  memcpy(lens_momentum(copy), lens_momentum(ln), nf * sizeof(float));
  lens_set_step(copy, lens_step(ln));
  lens_set_lr(copy, lens_lr(ln));
  ok(lens_lr(ln) == LENS_DEFAULT_LR, "learning rate is the default %.2f", lens_lr(ln));
  Rng rng;
  rng_seed(&rng, 77);
  int n = c->batch * c->ctx;
  int32_t *in = malloc(n * sizeof *in);
  random_tokens(&rng, in, n, c->vocab);
  model_forward(m, in, NULL, c->batch, c->ctx);
  lens_train(ln, m, c->batch, c->ctx, 50, 9, &err);
  lens_train(copy, m, c->batch, c->ctx, 50, 9, &err);
  ok(memcmp(lens_params(ln), lens_params(copy), nf * sizeof(float)) == 0 &&
         memcmp(lens_momentum(ln), lens_momentum(copy), nf * sizeof(float)) == 0 &&
         lens_step(ln) == lens_step(copy),
     "restored state trains on bit-exactly");
  free(in);
  lens_free(copy);
}

/* ---- reading out a few rows at a time changes nothing */

static double stats_diff(const LensStats *a, const LensStats *b) {
  double w = 0;
  for (int i = 0; i < a->n; i++) {
    const double x[] = {a->kl[i], a->ce[i], a->entropy[i], a->acc[i], a->agree[i], a->contrib[i]};
    const double y[] = {b->kl[i], b->ce[i], b->entropy[i], b->acc[i], b->agree[i], b->contrib[i]};
    for (int k = 0; k < 6; k++) w = fmax(w, fabs(x[k] - y[k]));
  }
  return w;
}

static void test_chunks(Lens *ln, Model *m) {
  const ModelConfig *c = model_config(m);
  Err err;
  Lens *small = lens_new(c, &err);
  size_t nf = lens_state_size(ln);
  memcpy(lens_params(small), lens_params(ln), nf * sizeof(float));
  memcpy(lens_momentum(small), lens_momentum(ln), nf * sizeof(float));
  ok(lens_set_chunk(small, 7) == 7 && lens_set_chunk(small, 1 << 30) == c->batch * c->ctx,
     "chunk is clamped to what lens_new sized");
  lens_set_chunk(small, 7);
  Rng rng;
  rng_seed(&rng, 31);
  int n = c->batch * c->ctx;
  int32_t *in = malloc(n * sizeof *in), *tg = malloc(n * sizeof *tg);
  random_tokens(&rng, in, n, c->vocab);
  random_tokens(&rng, tg, n, c->vocab);
  LensStats t1, l1, t2, l2;
  lens_eval(ln, m, in, tg, c->batch, c->ctx, 1, &t1, &l1, &err);
  lens_eval(small, m, in, tg, c->batch, c->ctx, 1, &t2, &l2, &err);
  double w = fmax(stats_diff(&t1, &t2), stats_diff(&l1, &l2));
  ok(w < 1e-5 && t2.kl[c->layers] == 0.0, "evaluation in chunks of 7 rows agrees (max diff %.3g)",
     w);
  lens_train(ln, m, c->batch, c->ctx, 50, 4, &err);
  lens_train(small, m, c->batch, c->ctx, 50, 4, &err);
  double pd = 0;
  for (size_t i = 0; i < nf; i++) pd = fmax(pd, fabs(lens_params(ln)[i] - lens_params(small)[i]));
  ok(pd < 1e-6, "training in chunks of 7 rows agrees (max diff %.3g)", pd);
  free(in);
  free(tg);
  lens_free(small);
}

int main(void) {
  test_readout_is_output();
  test_identity_blocks();
  test_gradient();
  Lens *ln = NULL;
  Model *m = NULL;
  test_learned_model(&ln, &m);
  if (ln) {
    test_chunks(ln, m);
    test_state_round_trip(ln, m);
  }
  lens_free(ln);
  model_free(m);
  return tap_done();
}
