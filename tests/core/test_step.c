/*
** test_step.c -- one training step (core/step.h): with no hook, train_step
** is the sequence of model.h's calls bit for bit; what 'on_hidden' adds at
** a residual position reaches the gradients below it, and only those, as
** finite differences of the loss plus its term say; what 'on_grad' adds
** reaches the update; a hook that fails, or a NaN one writes, leaves the
** weights as they were; hooks are called with the step they complete, on
** the calling thread, from the top position down.
*/
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/rng.h"
#include "core/step.h"
#include "tap.h"
#include "tiny_model.h"

/* ---- what a test's hooks do and what they saw */

typedef struct Probe {
  /* on_hidden adds aux = c * sum(h . R) + q/2 * ||h||^2 over this part's
  ** rows: dh += c*R + q*h. */
  double c, q;
  float *R;                 /* [N,d] */
  float scale;              /* dh *= scale first (1: left alone) */
  int fail_at;              /* a position whose call fails (-1: none) */
  int nan_at;               /* a position whose call writes a NaN into dh (-1: none) */
  int calls, order[8];      /* the positions called, in order */
  float *seen[8];           /* the stream each call saw, copied (where allocated) */
  int n, d;                 /* what the last call was given */
  long hidden_step;
  int off_thread;           /* a call came on another thread than the test's */
  pthread_t tester;
  /* on_grad */
  float lambda;             /* adds lambda*(E_in - E_out) to G_in and its negation to G_out */
  int grad_fail, grad_nan;
  float *grads;             /* the arena as on_grad saw it (after its change) */
  double in_norm, out_norm; /* of E_in's and E_out's slots there */
  long grad_step;
} Probe;

static void probe_init(Probe *pr) {
  memset(pr, 0, sizeof *pr);
  pr->scale = 1.0f;
  pr->fail_at = pr->nan_at = -1;
  pr->hidden_step = pr->grad_step = -1;
  pr->tester = pthread_self();
}

/* The hook's term at the stream 'h' [n,d]. */
static double term_of(const Probe *pr, const float *h, int n, int d) {
  double aux = 0.0;
  for (size_t i = 0; i < (size_t)n * d; i++) aux += pr->c * h[i] * pr->R[i] + 0.5 * pr->q * h[i] * h[i];
  return aux;
}

static int on_hidden(void *ctx, Model *m, int p, const float *h, float *dh, int n, int d, long step, double *aux,
                     Err *err) {
  Probe *pr = ctx;
  if (pr->calls < 8) pr->order[pr->calls] = p;
  pr->calls++;
  pr->n = n, pr->d = d, pr->hidden_step = step;
  pr->off_thread |= !pthread_equal(pthread_self(), pr->tester);
  if (p < 8 && pr->seen[p]) memcpy(pr->seen[p], h, (size_t)n * d * sizeof(float));
  if (p == pr->fail_at) return err_set(err, "the probe stops at position %d", p);
  if (p == pr->nan_at) dh[0] = NAN;
  if (pr->scale != 1.0f)
    for (size_t i = 0; i < (size_t)n * d; i++) dh[i] *= pr->scale;
  if (pr->R) {
    for (size_t i = 0; i < (size_t)n * d; i++) dh[i] += (float)(pr->c * pr->R[i] + pr->q * h[i]);
    *aux = term_of(pr, h, n, d);
  }
  return 0;
}

static double norm_of(const float *x, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
  return sqrt(s);
}

/* The gradient of lambda/2 * ||E_in - E_out||^2 added to G_in and G_out. */
static void pull_together(Model *m, float lambda) {
  const TensorInfo *ti = model_find_tensor(m, "transformer.wte.weight"), *to = model_find_tensor(m, "lm_head.weight");
  const float *ein = model_params(m) + ti->offset, *eout = model_params(m) + to->offset;
  float *gin = model_grads(m) + ti->offset, *gout = model_grads(m) + to->offset;
  for (size_t j = 0; j < ti->numel; j++) {
    gin[j] += lambda * (ein[j] - eout[j]);
    gout[j] += lambda * (eout[j] - ein[j]);
  }
}

static int on_grad(void *ctx, Model *m, long step, Err *err) {
  Probe *pr = ctx;
  pr->grad_step = step;
  if (pr->grad_fail) return -1;   /* no message: the step gives one */
  if (pr->lambda != 0.0f) pull_together(m, pr->lambda);
  if (pr->grad_nan) model_grads(m)[model_find_tensor(m, "lm_head.weight")->offset + 3] = NAN;
  const TensorInfo *ti = model_find_tensor(m, "transformer.wte.weight"), *to = model_find_tensor(m, "lm_head.weight");
  pr->in_norm = norm_of(model_grads(m) + ti->offset, ti->numel);
  pr->out_norm = norm_of(model_grads(m) + to->offset, to->numel);
  if (pr->grads) memcpy(pr->grads, model_grads(m), model_n_floats(m) * sizeof(float));
  return 0;
}

/* ---- helpers */

/* What a check steps: the tiny model with 'tie_k' shared columns on
** 'threads' threads, weights and batch from 'seed' (the same seed, the same
** model), and a plan for a whole-batch step of it with no hook. */
typedef struct Setup {
  ModelConfig c;
  Model *m;
  int32_t in[24], tg[24];
  StepPlan plan;
} Setup;

static void setup(Setup *s, int tie_k, int threads, uint64_t seed) {
  s->c = tiny(tie_k);
  s->m = make(&s->c, threads, seed);
  perturb(s->m, seed + 1);
  random_batch(&s->c, seed + 2, s->in, s->tg);
  s->plan = (StepPlan){.inputs = s->in, .targets = s->tg, .rows = s->c.batch, .t = s->c.ctx,
                       .batch_rows = s->c.batch, .in_scale = 1.0f, .out_scale = 1.0f, .optim = optim_default(),
                       .step = 1};
}

static StepHooks hooks_of(Probe *pr, uint64_t positions) {
  return (StepHooks){.ctx = pr, .hidden_positions = positions, .on_hidden = on_hidden, .on_grad = on_grad};
}

/* Everything a step may change: weights, moments, their step count. */
typedef struct State {
  float *p, *m, *v;
  long t;
} State;

static State state_of(Model *m) {
  size_t bytes = model_n_floats(m) * sizeof(float);
  State s = {malloc(bytes), malloc(bytes), malloc(bytes), model_adam_t(m)};
  memcpy(s.p, model_params(m), bytes);
  memcpy(s.m, model_adam_m(m), bytes);
  memcpy(s.v, model_adam_v(m), bytes);
  return s;
}

static int state_is(Model *m, const State *s) {
  size_t bytes = model_n_floats(m) * sizeof(float);
  return !memcmp(s->p, model_params(m), bytes) && !memcmp(s->m, model_adam_m(m), bytes) &&
         !memcmp(s->v, model_adam_v(m), bytes) && s->t == model_adam_t(m);
}

static void state_restore(Model *m, const State *s) {
  size_t bytes = model_n_floats(m) * sizeof(float);
  memcpy(model_params(m), s->p, bytes);
  memcpy(model_adam_m(m), s->m, bytes);
  memcpy(model_adam_v(m), s->v, bytes);
  model_set_adam_t(m, s->t);
}

static void state_free(State *s) { free(s->p), free(s->m), free(s->v); }

static float *random_floats(size_t n, uint64_t seed) {
  Rng r;
  rng_seed(&r, seed);
  float *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = (float)rng_normal(&r);
  return x;
}

/* ---- no hook: the sequence of model.h's calls, bit for bit */

/* The first half of a step by hand: forward, backward, the scales. */
static float gradient_by_hand(Setup *s, float in_scale, float out_scale, GradStats *gs) {
  float loss = model_forward(s->m, s->in, s->tg, s->c.batch, s->c.ctx);
  model_backward(s->m, gs);
  model_combine(s->m, in_scale, out_scale);
  return loss;
}

static void check_same_as_by_hand(int tie_k, int threads, const char *what) {
  Setup a, b;
  setup(&a, tie_k, threads, 5), setup(&b, tie_k, threads, 5);
  OptimConfig *oc = &a.plan.optim;
  oc->grad_scale = 1.5f, oc->clip = 0.5f;
  a.plan.in_scale = 2.0f, a.plan.out_scale = 0.5f;
  int same = 1;
  for (int s = 1; s <= 3; s++) {
    random_batch(&a.c, 7 + s, a.in, a.tg);
    random_batch(&b.c, 7 + s, b.in, b.tg);
    a.plan.step = s;
    StepResult res;
    int rc = train_step(a.m, &a.plan, &res, NULL);
    GradStats gs;
    float loss = gradient_by_hand(&b, 2.0f, 0.5f, &gs);
    gs.total_norm = model_clip_scaled(b.m, oc->grad_scale, oc->clip);
    model_update(b.m, oc);
    same &= rc == STEP_OK && res.loss == loss && !memcmp(&res.grad, &gs, sizeof gs) && res.aux_loss == 0.0 &&
            !res.aux_reported;
  }
  State sb = state_of(b.m);
  ok(same && state_is(a.m, &sb), "%s: three steps of train_step are the hand-made sequence bit for bit (loss, "
     "GradStats, weights, moments)", what);
  state_free(&sb);
  model_free(b.m), model_free(a.m);
}

/* gradient_only: forward, backward and combine, the weights untouched. */
static void check_gradient_only(void) {
  Setup a, b;
  setup(&a, 5, 1, 15), setup(&b, 5, 1, 15);
  a.plan.in_scale = 3.0f, a.plan.gradient_only = 1;
  State before = state_of(a.m);
  StepResult res;
  int rc = train_step(a.m, &a.plan, &res, NULL);
  GradStats gs;
  float loss = gradient_by_hand(&b, 3.0f, 1.0f, &gs);
  ok(rc == STEP_OK && res.loss == loss && !memcmp(&res.grad, &gs, sizeof gs) &&
         !memcmp(model_grads(a.m), model_grads(b.m), model_n_floats(a.m) * sizeof(float)) && state_is(a.m, &before),
     "gradient_only: the combined gradient of the hand-made sequence, the weights untouched");
  state_free(&before);
  model_free(b.m), model_free(a.m);
}

/* ---- on_hidden */

/* Whether tensor 'name' lies above residual position p (its gradient is
** done before the hook at p runs): the head, ln_f and blocks >= p. */
static int above(const char *name, int p) {
  int l;
  if (sscanf(name, "transformer.h.%d.", &l) == 1) return l >= p;
  return strcmp(name, "transformer.wte.weight") != 0 && strcmp(name, "transformer.wpe.weight") != 0;
}

/* The loss plus the hook's term at position p, at the current weights. */
static double objective(Setup *s, const Probe *pr, int p) {
  double loss = loss_of(s->m, s->in, s->tg);
  return loss + term_of(pr, model_residual(s->m, p), s->c.batch * s->c.ctx, s->c.dim);
}

/* Directional differences of loss + term, one random direction per tensor,
** against <g,u> of the gradient 'g'; a five-point stencil, errors against
** the tensor's gradient norm (as test_model.c measures them). Returns the
** worst relative error. */
static double worst_fd_error(Setup *s, const Probe *pr, int p, const float *g) {
  Model *m = s->m;
  size_t bytes = model_n_floats(m) * sizeof(float);
  float *p0 = malloc(bytes);
  memcpy(p0, model_params(m), bytes);
  double worst = 0.0;
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *t = model_tensor(m, i);
    float *u = random_floats(t->numel, rng_mix(31 + (uint64_t)p, (uint64_t)i));
    double an = 0.0, norm = norm_of(g + t->offset, t->numel);
    for (size_t j = 0; j < t->numel; j++) an += (double)g[t->offset + j] * u[j];
    float eps = (float)(0.04 / sqrt((double)t->numel));
    const float steps[4] = {2, 1, -1, -2};
    double f[4];
    for (int k = 0; k < 4; k++) {
      for (size_t j = 0; j < t->numel; j++) model_params(m)[t->offset + j] += steps[k] * eps * u[j];
      f[k] = objective(s, pr, p);
      memcpy(model_params(m), p0, bytes);
    }
    double fd = (-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / (12.0 * eps);
    double rel = fabs(fd - an) / fmax(norm, 1e-3);
    if (rel > 1e-3) diag("  p=%d %-40s <g,u> %9.6f fd %9.6f |g| %.4f err %.1e", p, t->name, an, fd, norm, rel);
    worst = fmax(worst, rel);
    free(u);
  }
  free(p0);
  return worst;
}

/* A term added at position p: what the hook reports, which gradients it
** reaches, and that they are the gradients of loss + term. */
static void check_hidden_at(int p) {
  Setup s;
  setup(&s, 0, 1, 21);   /* untied: each embedding's gradient is its slot's */
  int n = s.c.batch * s.c.ctx;
  size_t nf = model_n_floats(s.m);
  State before = state_of(s.m);
  /* The step without the hook, its gradient as on_grad saw it. */
  Probe plain;
  probe_init(&plain);
  plain.grads = malloc(nf * sizeof(float));
  StepHooks hp = hooks_of(&plain, 0);
  s.plan.hooks = &hp;
  StepResult r0;
  train_step(s.m, &s.plan, &r0, NULL);
  state_restore(s.m, &before);
  /* With it: a term about as large as the loss's own gradient there. */
  Probe pr;
  probe_init(&pr);
  pr.c = 1.0 / n, pr.q = 0.5 / n;
  pr.R = random_floats((size_t)n * s.c.dim, 24 + (uint64_t)p);
  pr.grads = malloc(nf * sizeof(float));
  StepHooks hk = hooks_of(&pr, (uint64_t)1 << p);
  s.plan.hooks = &hk;
  StepResult r1;
  int rc = train_step(s.m, &s.plan, &r1, NULL);
  state_restore(s.m, &before);
  double aux = term_of(&pr, model_residual(s.m, p), n, s.c.dim);   /* the step's forward's stream still */
  ok(rc == STEP_OK && pr.calls == 1 && pr.order[0] == p && pr.n == n && pr.d == s.c.dim && r1.aux_reported &&
         r1.aux_loss == aux && aux != 0.0,
     "on_hidden at position %d: called once with n=%d d=%d, its term %.6f reported as aux_loss", p, pr.n, pr.d,
     r1.aux_loss);
  int above_same = 1, below_changed = 1;
  for (int i = 0; i < model_tensor_count(s.m); i++) {
    const TensorInfo *t = model_tensor(s.m, i);
    int same = !memcmp(pr.grads + t->offset, plain.grads + t->offset, t->numel * sizeof(float));
    if (above(t->name, p)) above_same &= same;
    else below_changed &= !same;
  }
  ok(above_same, "position %d: the gradients above it (head, ln_f, blocks >= %d) are bit-identical to the "
     "step without the hook", p, p);
  ok(below_changed, "position %d: every gradient below it (blocks < %d, wpe, wte) changed", p, p);
  double worst = worst_fd_error(&s, &pr, p, pr.grads);
  ok(worst < 1e-3, "position %d: every tensor's gradient is that of loss + term by finite differences "
     "(worst %.1e of the gradient norm)", p, worst);
  state_free(&before);
  free(pr.R), free(pr.grads), free(plain.grads);
  model_free(s.m);
}

/* The backward below p is linear in the gradient at p: doubled there (an
** exact scaling in float), every gradient below doubles exactly; zeroed
** (a stop-gradient), every one below is zero. Either way those above stay
** as they were. This holds only if 'dh' is the whole gradient at p. */
static void check_hidden_scaled(int p, float scale) {
  Setup s;
  setup(&s, 0, 2, 91);
  s.plan.gradient_only = 1;
  size_t nf = model_n_floats(s.m);
  Probe plain, pr;
  probe_init(&plain), probe_init(&pr);
  plain.grads = malloc(nf * sizeof(float)), pr.grads = malloc(nf * sizeof(float));
  pr.scale = scale;
  StepHooks hp = hooks_of(&plain, 0), hk = hooks_of(&pr, (uint64_t)1 << p);
  StepResult res;
  s.plan.hooks = &hp;
  train_step(s.m, &s.plan, &res, NULL);
  s.plan.hooks = &hk;
  train_step(s.m, &s.plan, &res, NULL);
  int exact = 1;
  for (int i = 0; i < model_tensor_count(s.m); i++) {
    const TensorInfo *t = model_tensor(s.m, i);
    int up = above(t->name, p);
    for (size_t j = t->offset; j < t->offset + t->numel; j++)
      exact &= pr.grads[j] == (up ? plain.grads[j] : scale * plain.grads[j]);
  }
  ok(exact, "dh x %g at position %d: every gradient below it is exactly x %g, those above unchanged", scale, p,
     scale);
  free(plain.grads), free(pr.grads);
  model_free(s.m);
}

/* What the hook sees: the forward's stream at each position, from the top
** down, on the test's thread with two threads in the pool. */
static void check_hidden_calls(void) {
  Setup s;
  setup(&s, 16, 2, 41);
  int n = s.c.batch * s.c.ctx, d = s.c.dim, L = s.c.layers;
  s.plan.gradient_only = 1;
  s.plan.step = 41;
  Probe pr;
  probe_init(&pr);
  float *seen[3];
  for (int p = 0; p <= L; p++) pr.seen[p] = seen[p] = malloc((size_t)n * d * sizeof(float));
  StepHooks hk = hooks_of(&pr, ~(uint64_t)0);
  s.plan.hooks = &hk;
  StepResult res;
  int rc = train_step(s.m, &s.plan, &res, NULL);
  ok(rc == STEP_OK && pr.calls == L + 1 && pr.order[0] == 2 && pr.order[1] == 1 && pr.order[2] == 0 && !pr.off_thread,
     "every position asked for is called once, from L down to 0, on the calling thread (%d calls)", pr.calls);
  ok(pr.hidden_step == 41 && pr.grad_step == 41, "both hooks are given the plan's step (%ld, %ld)", pr.hidden_step,
     pr.grad_step);
  ok(res.aux_reported && res.aux_loss == 0.0, "a hook that adds no term reports 0");

  /* The same forward again: the model's stream at p is what the hook saw. */
  model_forward(s.m, s.in, NULL, s.c.batch, s.c.ctx);
  int same = 1;
  for (int p = 0; p <= L; p++) same &= !memcmp(seen[p], model_residual(s.m, p), (size_t)n * d * sizeof(float));
  const float *wte = model_params(s.m) + model_find_tensor(s.m, "transformer.wte.weight")->offset;
  const float *wpe = model_params(s.m) + model_find_tensor(s.m, "transformer.wpe.weight")->offset;
  for (int r = 0; r < n; r++)
    for (int j = 0; j < d; j++) same &= seen[0][r * d + j] == wte[s.in[r] * d + j] + wpe[(r % s.c.ctx) * d + j];
  float *logits = malloc((size_t)n * s.c.vocab * sizeof(float)), *scratch = malloc((size_t)n * d * sizeof(float));
  model_readout(s.m, seen[L], n, logits, scratch);
  double far = 0.0;
  for (size_t i = 0; i < (size_t)n * s.c.vocab; i++) far = fmax(far, fabs((double)logits[i] - model_logits(s.m)[i]));
  ok(same && far < 1e-5, "h is the forward's residual stream: the embeddings' sum at 0, the logits' input at L "
     "(read out: %.1e off)", far);
  free(logits), free(scratch);

  probe_init(&pr);
  hk = hooks_of(&pr, (uint64_t)1 << 1);
  train_step(s.m, &s.plan, &res, NULL);
  ok(pr.calls == 1 && pr.order[0] == 1 && res.aux_reported, "only the positions asked for are called");
  probe_init(&pr);
  hk = hooks_of(&pr, (uint64_t)1 << (L + 3));
  train_step(s.m, &s.plan, &res, NULL);
  ok(pr.calls == 0 && !res.aux_reported, "a position past L is never called, and no aux_loss is reported");
  for (int p = 0; p <= L; p++) free(seen[p]);
  model_free(s.m);
}

/* ---- on_grad */

/* A pull of E_in and E_out towards each other changes the update as the
** same change made by hand does; no other tensor moves otherwise. */
static void check_grad_pull(void) {
  Setup a, b, plain;
  setup(&a, 0, 1, 51), setup(&b, 0, 1, 51), setup(&plain, 0, 1, 51);
  a.plan.optim.clip = plain.plan.optim.clip = 0.0f;   /* no clip: each element follows its own gradient */
  const OptimConfig *oc = &a.plan.optim;
  Probe pr;
  probe_init(&pr);
  pr.lambda = 0.5f;
  StepHooks hk = hooks_of(&pr, 0);
  a.plan.hooks = &hk;
  StepResult res;
  int rc = train_step(a.m, &a.plan, &res, NULL);
  model_forward(b.m, b.in, b.tg, b.c.batch, b.c.ctx);
  model_backward(b.m, NULL);
  pull_together(b.m, 0.5f);
  model_combine(b.m, 1.0f, 1.0f);
  model_clip_scaled(b.m, oc->grad_scale, oc->clip);
  model_update(b.m, oc);
  train_step(plain.m, &plain.plan, &res, NULL);
  size_t bytes = model_n_floats(a.m) * sizeof(float);
  ok(rc == STEP_OK && !memcmp(model_params(a.m), model_params(b.m), bytes),
     "on_grad's pull of E_in and E_out: the weights are those of the same change made by hand");
  int emb_moved = 1, rest_same = 1;
  for (int i = 0; i < model_tensor_count(a.m); i++) {
    const TensorInfo *t = model_tensor(a.m, i);
    int same = !memcmp(model_params(a.m) + t->offset, model_params(plain.m) + t->offset, t->numel * sizeof(float));
    if (!strcmp(t->name, "transformer.wte.weight") || !strcmp(t->name, "lm_head.weight")) emb_moved &= !same;
    else rest_same &= same;
  }
  ok(emb_moved && rest_same, "against the step without it, E_in and E_out moved otherwise and nothing else did");
  model_free(plain.m), model_free(b.m), model_free(a.m);
}

/* Tied: on_grad still sees G_in and G_out apart, as the GradStats measure them. */
static void check_grad_apart(void) {
  Setup s;
  setup(&s, 16, 1, 61);
  Probe pr;
  probe_init(&pr);
  StepHooks hk = hooks_of(&pr, 0);
  s.plan.hooks = &hk;
  StepResult res;
  int rc = train_step(s.m, &s.plan, &res, NULL);
  double din = fabs(pr.in_norm - res.grad.in_l2) / res.grad.in_l2;
  double dout = fabs(pr.out_norm - res.grad.out_l2) / res.grad.out_l2;
  ok(rc == STEP_OK && pr.out_norm > 0 && din < 1e-5 && dout < 1e-5,
     "tied: on_grad sees G_in (%.6f) and G_out (%.6f) apart, the GradStats' in_l2 (%.6f) and out_l2 (%.6f)",
     pr.in_norm, pr.out_norm, res.grad.in_l2, res.grad.out_l2);
  model_free(s.m);
}

/* ---- hooks that fail, NaNs they write */

/* One step of 's' with the probe's hooks at 'positions': its code. */
static int step_with(Setup *s, Probe *pr, uint64_t positions, StepResult *res, Err *err) {
  StepHooks hk = hooks_of(pr, positions);
  s->plan.hooks = &hk;
  int rc = train_step(s->m, &s->plan, res, err);
  s->plan.hooks = NULL;
  return rc;
}

static void check_refusals(void) {
  Setup s;
  setup(&s, 5, 1, 71);
  s.plan.step = 9;
  State before = state_of(s.m);
  Probe pr;
  StepResult res;
  Err err;

  probe_init(&pr);
  pr.fail_at = 1;
  int rc = step_with(&s, &pr, 7, &res, &err);
  ok(rc == STEP_HOOK && strstr(err.msg, "stops at position 1") && pr.calls == 2 && pr.grad_step == -1 &&
         state_is(s.m, &before),
     "on_hidden returns -1: STEP_HOOK with its message ('%s'), nothing after it runs, weights untouched", err.msg);
  probe_init(&pr);
  pr.grad_fail = 1;
  rc = step_with(&s, &pr, 0, &res, &err);
  ok(rc == STEP_HOOK && strstr(err.msg, "step 9") && state_is(s.m, &before),
     "on_grad returns -1 without a message: STEP_HOOK, one given ('%s'), weights untouched", err.msg);
  probe_init(&pr);
  pr.grad_nan = 1;
  rc = step_with(&s, &pr, 0, &res, &err);
  ok(rc == STEP_NOT_FINITE && isnan(res.grad.total_norm) && state_is(s.m, &before),
     "on_grad writes a NaN into G_out: STEP_NOT_FINITE at the clip ('%s'), weights untouched", err.msg);
  probe_init(&pr);
  pr.nan_at = 0;
  rc = step_with(&s, &pr, 1, &res, &err);
  ok(rc == STEP_NOT_FINITE && isnan(res.grad.in_act_l2) && state_is(s.m, &before),
     "on_hidden writes a NaN into dh: the GradStats show it, STEP_NOT_FINITE, weights untouched");
  rc = train_step(s.m, &s.plan, &res, &err);
  ok(rc == STEP_OK && !state_is(s.m, &before), "and the same step without hooks goes through");
  state_free(&before);
  model_free(s.m);
}

/* A loss that is not finite stops the step before the backward;
** after_forward sees the loss first and may stop it with its own code. */
static int poison_loss(void *ctx, double *loss, Err *err) {
  *loss = NAN;
  return 0;
}

static int refuse_loss(void *ctx, double *loss, Err *err) {
  *(double *)ctx = *loss;
  return err_set(err, "a rank is gone"), STEP_RANKS;
}

static void check_after_forward(void) {
  Setup s;
  setup(&s, 5, 1, 81);
  Probe pr;
  probe_init(&pr);
  State before = state_of(s.m);
  StepResult res;
  Err err;
  s.plan.after_forward = poison_loss;
  int rc = step_with(&s, &pr, ~(uint64_t)0, &res, &err);
  ok(rc == STEP_NOT_FINITE && isnan(res.loss) && pr.calls == 0 && state_is(s.m, &before),
     "a loss that is not finite stops the step before the backward ('%s')", err.msg);
  double seen = 0;
  s.plan.after_forward = refuse_loss;
  s.plan.after_forward_ctx = &seen;
  rc = step_with(&s, &pr, ~(uint64_t)0, &res, &err);
  ok(rc == STEP_RANKS && seen > 0 && seen == res.loss && pr.calls == 0 && state_is(s.m, &before),
     "after_forward sees the loss (%.4f) and its code stops the step", seen);
  state_free(&before);
  model_free(s.m);
}

int main(void) {
  check_same_as_by_hand(5, 1, "partial K=5");
  check_same_as_by_hand(16, 2, "tied, two threads");
  check_same_as_by_hand(0, 1, "untied");
  check_gradient_only();
  for (int p = 0; p <= 2; p++) check_hidden_at(p);
  for (int p = 0; p <= 2; p++) check_hidden_scaled(p, 2.0f);
  check_hidden_scaled(1, 0.0f);
  check_hidden_calls();
  check_grad_pull();
  check_grad_apart();
  check_refusals();
  check_after_forward();
  return tap_done();
}
