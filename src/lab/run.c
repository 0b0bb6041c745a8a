/*
** run.c -- one run: a model, its optimizer settings, its share of the data,
** its lenses and its history, and the training step with every instrument
** that rides on it.
**
** The step order: draw batch 'step' of the data seed (or take the rows a
** script gives), then core's 'train_step' with the run's hooks (forward,
** refuse a non-finite loss before anything is updated, backward, scales,
** clip, the optimizer at the scheduled rate); then the instruments that
** are due (lens training, validation, lens evaluation, drift). The training step allocates nothing: its buffers come
** from run_create. An instrument allocates once, on first use (a history
** series, the alignment workspace), and never again.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/clock.h"
#include "base/hash.h"
#include "core/rng.h"
#include "lab/run.h"

#define LENS_POSITIONS 256        /* trained on per lens step */
#define LENS_EVAL_POSITIONS 512   /* evaluated on */

/* ---------------------------------------------------------- shared data */

static void data_key(const RunOptions *o, char *key, size_t cap) {
  if (o->corpus[0])
    snprintf(key, cap, "file:%s|%d", o->corpus, o->model.vocab);
  else
    snprintf(key, cap, "synthetic:%llu|%d", (unsigned long long)o->corpus_seed, o->model.vocab);
}

#define SYNTHETIC_BYTES (1u << 20)

static double *token_log_freq(const Dataset *ds, int vocab) {
  double *f = calloc((size_t)vocab, sizeof *f);
  if (!f) return NULL;
  for (size_t i = 0; i < ds->n_train; i++)
    if (ds->tokens[i] >= 0 && ds->tokens[i] < vocab) f[ds->tokens[i]] += 1;
  for (int i = 0; i < vocab; i++) f[i] = f[i] > 0 ? log(f[i]) : NAN;
  return f;
}

static SharedData *data_find(Lab *lab, const char *key) {
  for (SharedData *d = lab->data; d; d = d->next)
    if (strcmp(d->key, key) == 0) {
      d->refs++;
      return d;
    }
  return NULL;
}

static int read_corpus(const RunOptions *o, Corpus *c, Err *err) {
  return o->corpus[0] ? corpus_read_max(c, o->corpus, (uint64_t)o->corpus_max_mb << 20, o->corpus_nofollow, err)
                      : corpus_synthetic(c, o->corpus_seed, SYNTHETIC_BYTES, err);
}

/* A dataset just built, with its token counts, into the lab under 'key';
** 'd' freed on failure. */
static SharedData *data_adopt(Lab *lab, SharedData *d, const char *key, int vocab, Err *err) {
  if (!(d->log_freq = token_log_freq(&d->ds, vocab))) {
    dataset_free(&d->ds);
    free(d);
    err_set(err, "out of memory counting tokens");
    return NULL;
  }
  snprintf(d->key, sizeof d->key, "%s", key);
  d->refs = 1;
  lab_data_insert(lab, d);
  return d;
}

/* The corpus of 'o' read and hashed into a new SharedData, or NULL. */
static SharedData *data_read(const RunOptions *o, Corpus *c, Err *err) {
  if (read_corpus(o, c, err) < 0) return NULL;
  SharedData *d = calloc(1, sizeof *d);
  if (!d) {
    corpus_free(c);
    err_set(err, "out of memory loading the corpus");
    return NULL;
  }
  if (o->corpus[0]) sha256_hex(c->text, c->len, d->sha256);
  return d;
}

SharedData *lab_data_acquire(Lab *lab, const RunOptions *o, Err *err) {
  char key[1100];
  data_key(o, key, sizeof key);
  SharedData *d = data_find(lab, key);
  if (d) return d;
  Corpus c;
  if (!(d = data_read(o, &c, err))) return NULL;
  int rc = dataset_build(&d->ds, &c, o->model.vocab, 0.1, o->model.ctx, &lab->cancel, err);
  corpus_free(&c);
  if (rc < 0) {
    free(d);
    return NULL;
  }
  return data_adopt(lab, d, key, o->model.vocab, err);
}

SharedData *lab_data_acquire_pretrained(Lab *lab, const RunOptions *o, Tokenizer *tok, Err *err) {
  char key[1100];
  snprintf(key, sizeof key, "pretrained:%s|%s|%d", tokenizer_sha256(tok), o->corpus, o->model.vocab);
  SharedData *d = data_find(lab, key);
  Corpus c;
  if (d || !(d = data_read(o, &c, err))) {
    tokenizer_free(tok);
    return d;
  }
  int rc = dataset_build_with(&d->ds, &c, tok, 0.1, o->model.ctx, &lab->cancel, err);
  corpus_free(&c);
  if (rc < 0) {
    free(d);
    return NULL;
  }
  return data_adopt(lab, d, key, o->model.vocab, err);
}

void lab_data_insert(Lab *lab, SharedData *d) {
  d->next = lab->data;
  lab->data = d;
}

void lab_data_release(Lab *lab, SharedData *d) {
  if (!d || --d->refs > 0) return;
  for (SharedData **p = &lab->data; *p; p = &(*p)->next)
    if (*p == d) {
      *p = d->next;
      break;
    }
  dataset_free(&d->ds);
  free(d->log_freq);
  free(d);
}

/* ------------------------------------------------------------ memory
** What a run will hold at most, from the same sizes its parts allocate:
** the model (weights, gradients, moments, activations), the step-0 copies
** for drift, the lens, the alignment workspace (allocated on the first
** alignment), the history and the batch rows. The corpus is the lab's,
** shared by the runs that read it: see lab_check_memory. The fitted lens
** (lensfit.h) is not counted: a run may never be fitted, and the first fit
** checks its own room before making it, so it cannot refuse a run that
** would train. */

/* Series a run records: 33 of its own (the loss, 12 of the gradient, the
** rates and scales of each step, throughput, validation, 4 of drift and
** norms, 10 of alignment) and, per layer position, kl and acc of the
** tuned and of the logit lens. */
static int run_series(const ModelConfig *c) { return 33 + 4 * (c->layers + 1); }

/* The alignment workspace a run of these options may make. */
static size_t align_planned(const RunOptions *o) {
  const ModelConfig *c = &o->model;
  AlignOptions ao = align_default_options();
  int k = ao.knn_k < c->vocab - 1 ? ao.knn_k : c->vocab - 1;
  return o->align_every > 0 ? align_memory_bytes(c->vocab, c->dim, k) : 0;
}

size_t run_memory_bytes(const RunOptions *o) {
  const ModelConfig *c = &o->model;
  size_t vd = (size_t)c->vocab * c->dim, bt = (size_t)c->batch * c->ctx;
  size_t own = sizeof(Run) + 2 * vd * sizeof(float) + (bt + (size_t)c->batch + 2 * bt) * sizeof(int32_t) +
               (size_t)(2 * c->layers + 16) * (64 + sizeof(double));   /* the per-tensor evaluation arrays */
  return model_memory_bytes(c) + own + lens_memory_bytes(c) + align_planned(o) +
         history_memory_bytes(HISTORY_DEFAULT_CAP, run_series(c));
}

/* What the run may still allocate of run_memory_bytes: an alignment
** workspace not yet made. */
size_t run_memory_pending(const Run *r) {
  size_t planned = align_planned(&r->opt), held = align_work_bytes(r->align_work);
  return planned > held ? planned - held : 0;
}

/* Bytes the lab's copy of a corpus takes: the text while it is tokenized,
** a token id for each byte at worst (a byte-level vocabulary), and the
** tokenizer's working set, which is no larger than the text. */
size_t data_memory_bytes(const RunOptions *o) {
  struct stat st;
  size_t bytes = SYNTHETIC_BYTES;
  if (o->corpus[0]) bytes = stat(o->corpus, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
  return bytes * (1 + sizeof(int32_t) + 1) + (size_t)o->model.vocab * sizeof(double);
}

int lab_shares_data(const Lab *lab, const RunOptions *o) {
  char key[1100];
  data_key(o, key, sizeof key);
  for (const SharedData *d = lab->data; d; d = d->next)
    if (strcmp(d->key, key) == 0) return 1;
  return 0;
}

/* ------------------------------------------------------------ lifecycle */

static int run_alloc_buffers(Run *r, Err *err) {
  const ModelConfig *c = model_config(r->model);
  size_t bt = (size_t)c->batch * c->ctx, vd = (size_t)c->vocab * c->dim;
  int nt = model_tensor_count(r->model);
  r->rows = malloc(sizeof(int32_t) * (size_t)c->batch * (c->ctx + 1));
  r->inputs = malloc(sizeof(int32_t) * bt);
  r->targets = malloc(sizeof(int32_t) * bt);
  r->e_in0 = malloc(sizeof(float) * vd);
  r->e_out0 = malloc(sizeof(float) * vd);
  r->eval_names = calloc((size_t)nt, sizeof *r->eval_names);
  r->eval_norms = calloc((size_t)nt, sizeof *r->eval_norms);
  r->hist = history_new(HISTORY_DEFAULT_CAP);
  r->align_work = align_work_new();
  if (!r->align_work || !r->rows || !r->inputs || !r->targets || !r->e_in0 || !r->e_out0 || !r->eval_names ||
      !r->eval_norms || !r->hist)
    return err_set(err, "out of memory creating run '%s'", r->opt.name);
  return 0;
}

void run_set_init_fingerprint(Run *r) {
  const ModelConfig *c = model_config(r->model);
  r->init_fingerprint = hash_fnv1a(r->e_in0, (size_t)c->vocab * c->dim * sizeof *r->e_in0, HASH_FNV_BASIS);
}

static void run_keep_step0(Run *r) {
  Model *m = r->model;
  const ModelConfig *c = model_config(m);
  size_t vd = (size_t)c->vocab * c->dim;
  const float *w = model_params(m);
  memcpy(r->e_in0, w + model_find_tensor(m, "transformer.wte.weight")->offset, vd * sizeof(float));
  memcpy(r->e_out0, w + model_find_tensor(m, "lm_head.weight")->offset, vd * sizeof(float));
  run_set_init_fingerprint(r);
}

/* Everything not yet measured reads NaN (or step -1), never a made-up 0. */
static void metrics_reset(RunMetrics *mt) {
  memset(mt, 0, sizeof *mt);
  mt->loss = mt->val_loss = mt->val_ppl = mt->aux_loss = NAN;
  mt->grad_ratio = mt->grad_ratio_act = mt->grad_ratio_l1 = mt->grad_ratio_act_l1 = NAN;
  mt->grad.in_l2 = mt->grad.in_act_l2 = mt->grad.out_l2 = NAN;
  mt->grad.in_l1 = mt->grad.in_act_l1 = mt->grad.out_l1 = NAN;
  mt->grad.rows_touched = mt->grad.total_norm = NAN;
  mt->tokens_per_s = mt->drift_in = mt->drift_out = NAN;
  mt->normfreq_in = mt->normfreq_out = NAN;
  mt->val_step = -1;
  mt->lens.step = mt->logit_lens.step = mt->fitted_lens.step = -1;
  mt->fitted.lr = mt->fitted.tol = NAN;
  mt->align.step = -1;
}

/* Takes ownership of 'model' (already initialised or loaded). */
Run *run_create(Lab *lab, const RunOptions *o, Model *model, Err *err) {
  return run_create_on(lab, o, model, NULL, err);
}

/* Under data-parallel training each rank takes batch/world rows of every
** batch: a batch that does not split evenly is refused before training. */
static int run_check_split(const Run *r, Err *err) {
  int world = lab_world(r->lab), b = model_config(r->model)->batch;
  if (b % world == 0) return 0;
  return err_set(err, "run '%s': batch %d does not split evenly across %d ranks (mpirun -np %d): give a batch "
                 "that is a multiple of %d, such as %d", r->opt.name, b, world, world, world,
                 (b / world + 1) * world);
}

Run *run_create_on(Lab *lab, const RunOptions *o, Model *model, SharedData *data, Err *err) {
  return run_create_pretrained(lab, o, model, data, NULL, err);
}

/* What stands between a run and a tokenizer that fits its model. */
static int run_check_tokenizer(const Run *r, Err *err) {
  const Tokenizer *tok = run_tok(r);
  int vocab = model_config(r->model)->vocab;
  if (tok && tokenizer_size(tok) > vocab)
    return err_set(err, "run '%s': the tokenizer has %d ids but the model only %d", r->opt.name,
                   tokenizer_size(tok), vocab);
  return 0;
}

Run *run_create_pretrained(Lab *lab, const RunOptions *o, Model *model, SharedData *data, Tokenizer *tok,
                           Err *err) {
  Run *r = calloc(1, sizeof *r);
  if (!r) {
    model_free(model);
    if (data) lab_data_release(lab, data);
    tokenizer_free(tok);
    err_set(err, "out of memory creating run '%s'", o->name);
    return NULL;
  }
  r->lab = lab;
  r->name_given = 1;   /* lab_add_run says when it picked the name */
  r->data = data;   /* released with the run, whatever fails below */
  r->own_tok = tok;
  r->opt = *o;
  r->model = model;
  metrics_reset(&r->metrics);
  if (run_alloc_buffers(r, err) < 0) goto fail;
  if (!(r->lens = lens_new(model_config(model), err))) goto fail;
  /* A byte-level tokenizer needs 256 ids: a smaller model (a weights file
  ** made for tests) can be evaluated on given tokens but not trained. A
  ** released model without a corpus has its own tokenizer and no data. */
  if (!r->data && !r->own_tok && model_config(model)->vocab >= 256 && !(r->data = lab_data_acquire(lab, o, err)))
    goto fail;
  if (run_check_tokenizer(r, err) < 0 || run_check_split(r, err) < 0) goto fail;
  run_keep_step0(r);
  r->dirty = 1;
  run_refresh_metrics(r);
  return r;
fail:
  run_destroy(r);
  return NULL;
}

const Tokenizer *run_tok(const Run *r) { return r->data ? r->data->ds.tok : r->own_tok; }

void run_destroy(Run *r) {
  if (!r) return;
  if (r->data) lab_data_release(r->lab, r->data);
  tokenizer_free(r->own_tok);
  model_free(r->model);
  lens_free(r->lens);
  lensfit_free(r->lens_fit);
  history_free(r->hist);
  align_work_free(r->align_work);
  free(r->rows);
  free(r->inputs);
  free(r->targets);
  free(r->e_in0);
  free(r->e_out0);
  free(r->eval_names);
  free(r->eval_norms);
  free(r);
}

/* ---------------------------------------------------------- accessors */

int run_id(const Run *r) { return r->id; }
const char *run_name(const Run *r) { return r->opt.name; }
const RunOptions *run_options(const Run *r) { return &r->opt; }
const RunMetrics *run_metrics(const Run *r) { return &r->metrics; }
Model *run_model(Run *r) { return r->model; }
const ModelConfig *run_config(const Run *r) { return model_config(r->model); }
int run_tensor_count(const Run *r) { return model_tensor_count(r->model); }
History *run_history(Run *r) { return r->hist; }

int run_set_paused(Run *r, int paused) {
  r->paused = paused != 0;
  r->metrics.paused = r->paused;
  return 0;
}

/* The rates of the last step taken, or of the next one before any, as
** the schedule gives them (the step uses them rounded to float). */
static void set_rates(RunMetrics *mt, const RunOptions *o) {
  double emb_factor;
  run_options_rates(o, mt->step > 0 ? mt->step : 1, &mt->lr, &emb_factor);
  mt->emb_lr = mt->lr * emb_factor;
}

/* The fields of the metrics that follow from the settings, not the step. */
void run_refresh_metrics(Run *r) {
  RunMetrics *mt = &r->metrics;
  const ModelConfig *c = model_config(r->model);
  mt->tie_k = c->tie_k;
  mt->dim = c->dim;
  mt->in_scale = r->opt.in_scale;
  mt->out_scale = r->opt.out_scale;
  set_rates(mt, &r->opt);
  mt->paused = r->paused;
  mt->lens.n = mt->logit_lens.n = mt->fitted_lens.n = c->layers + 1;
}

/* ------------------------------------------------------------ the step */

static double safe_ratio(double a, double b) { return b > 0 ? a / b : NAN; }

static void record_grad(Run *r, const GradStats *gs, long step) {
  RunMetrics *mt = &r->metrics;
  mt->grad = *gs;
  mt->grad_ratio = safe_ratio(gs->out_l2, gs->in_l2);
  mt->grad_ratio_act = safe_ratio(gs->out_l2, gs->in_act_l2);
  mt->grad_ratio_l1 = safe_ratio(gs->out_l1, gs->in_l1);
  mt->grad_ratio_act_l1 = safe_ratio(gs->out_l1, gs->in_act_l1);
  static const struct {
    const char *name;
    size_t offset;
  } series[] = {
      {"grad_in", offsetof(RunMetrics, grad.in_l2)},
      {"grad_in_act", offsetof(RunMetrics, grad.in_act_l2)},
      {"grad_out", offsetof(RunMetrics, grad.out_l2)},
      {"grad_in_l1", offsetof(RunMetrics, grad.in_l1)},
      {"grad_in_act_l1", offsetof(RunMetrics, grad.in_act_l1)},
      {"grad_out_l1", offsetof(RunMetrics, grad.out_l1)},
      {"grad_norm", offsetof(RunMetrics, grad.total_norm)},
      {"rows_touched", offsetof(RunMetrics, grad.rows_touched)},
      {"grad_ratio", offsetof(RunMetrics, grad_ratio)},
      {"grad_ratio_act", offsetof(RunMetrics, grad_ratio_act)},
      {"grad_ratio_l1", offsetof(RunMetrics, grad_ratio_l1)},
      {"grad_ratio_act_l1", offsetof(RunMetrics, grad_ratio_act_l1)},
  };
  for (size_t i = 0; i < sizeof series / sizeof series[0]; i++)
    history_push(r->hist, series[i].name, step, *(const double *)((const char *)mt + series[i].offset));
}

/* The rows of training step 'step' (1-based) of this run's data seed. */
static void run_batch_rows(const Run *r, long step, int32_t *rows) {
  const ModelConfig *c = model_config(r->model);
  dataset_train_batch(&r->data->ds, r->opt.data_seed, (uint64_t)(step - 1), c->batch, c->ctx, rows);
}

/* Is an instrument of period 'every' (0: never) due at 'step'? */
static int due(long step, int every) { return every > 0 && step % every == 0; }

/* The Reducer step 'step' shares its 'b' rows through, or NULL: one
** process, rows that do not split evenly, or a step the online lens trains
** on (it reads every row's hidden states, so every rank steps them all). */
static const Reducer *step_reducer(const Run *r, long step, int b) {
  const Reducer *red = r->lab->reducer;
  if (!red || b % red->world != 0 || due(step, r->opt.lens_every)) return NULL;
  return red;
}

/* At the first step the ranks share, and then after every
** STATE_CHECK_EVERY more, the ranks compare their weights: they must stay
** the same, and a script that changes one rank's settings alone would
** part them silently. */
#define STATE_CHECK_EVERY 32

/* The settings every rank must train a run with, as "key=value" lines
** into 'buf': all but 'threads' (which changes how fast, not what) and
** 'name' (in the key's 'where' when a script gave it), and the corpus by
** its bytes' hash: ranks on machines that hold another file under one
** name would train on other text. Returns the text's length. */
static size_t shared_settings(const Run *r, char *buf, size_t cap) {
  int n;
  const Setting *s = lab_settings(&n);
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && len < cap; i++) {
    char value[1100];
    if (s[i].local) continue;
    if (run_options_get_text(&r->opt, s[i].name, value, sizeof value, NULL) < 0) continue;
    len += (size_t)snprintf(buf + len, cap - len, "%s=%s\n", s[i].name, value);
  }
  if (len < cap && r->data && r->data->sha256[0])
    len += (size_t)snprintf(buf + len, cap - len, "corpus bytes=sha256 %.16s...\n", r->data->sha256);
  return len < cap ? len : cap - 1;
}

enum { SETTINGS_TEXT_MAX = 4096 };

static uint32_t settings_hash(const Run *r) {
  char text[SETTINGS_TEXT_MAX];
  return reduce_hash(0, text, shared_settings(r, text, sizeof text));
}

/* The key of step 'step''s loss sum: the run, the step, the model's size
** and the batch must be every rank's, and so must the run's settings; at
** a check, so must the weights. The run goes by the name its script gave
** it (a run only one rank made changes no other's); one named "runN" by
** the lab, which counts the runs of this rank, goes by its weights at the
** checks. */
static SumKey step_key(Run *r, long step, int b, int t, char *what, size_t cap) {
  const ModelConfig *c = model_config(r->model);
  long where[] = {step, (long)model_n_floats(r->model), b, t, c->tie_k};
  uint32_t name = r->name_given ? reduce_hash(0, r->opt.name, strlen(r->opt.name)) : 0;
  SumKey key = {reduce_hash(name, where, sizeof where), 0, what, settings_hash(r)};
  /* due from a step on, not at multiples of 32: a check due on a lens
  ** step, which shares nothing, waits for the next step that does */
  if (step >= r->next_state_check) {
    key.state = reduce_hash(0, model_params(r->model), model_n_floats(r->model) * sizeof(float));
    r->next_state_check = step + STATE_CHECK_EVERY;
  }
  snprintf(what, cap, "the loss of run '%s' at step %ld", r->opt.name, step);
  return key;
}

/* The value of the setting named by the first 'key_len' bytes of 'key' in
** 'text' ("key=value" lines), its length in *value_len; NULL when absent. */
static const char *setting_line(const char *text, const char *key, size_t key_len, size_t *value_len) {
  for (const char *p = text; *p;) {
    const char *end = strchr(p, '\n');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n > key_len && strncmp(p, key, key_len) == 0 && p[key_len] == '=') {
      *value_len = n - key_len - 1;
      return p + key_len + 1;
    }
    p += n + (end != NULL);
  }
  return NULL;
}

/* Ranks whose settings of run 'r' differ (a sum said so: every rank is
** here): each sees every rank's, and the error names each setting that
** differs with every rank's value, before the run trains a step. */
static int settings_differ(Run *r, const Reducer *red, long step, Err *err) {
  int world = red->world;
  char mine[SETTINGS_TEXT_MAX];
  memset(mine, 0, sizeof mine);
  shared_settings(r, mine, sizeof mine);
  char *all = calloc((size_t)world, SETTINGS_TEXT_MAX);
  if (!all) return err_set(err, "run '%s': the ranks' settings differ at step %ld", r->opt.name, step);
  if (red->gather(red->ctx, mine, SETTINGS_TEXT_MAX, all, err) < 0) {
    free(all);
    return -1;
  }
  char said[ERR_MSG_MAX];
  int len = snprintf(said, sizeof said, "run '%s' is not the same on every rank at step %ld:", r->opt.name, step);
  int named = 0;
  for (const char *p = mine; *p && len < (int)sizeof said;) {   /* each of this rank's lines */
    const char *eq = strchr(p, '='), *end = strchr(p, '\n');
    if (!eq || !end) break;
    size_t key_len = (size_t)(eq - p), n;
    const char *v0 = setting_line(all, p, key_len, &n);
    int same = v0 != NULL;
    for (int k = 1; k < world && same; k++) {
      size_t nk;
      const char *v = setting_line(all + (size_t)k * SETTINGS_TEXT_MAX, p, key_len, &nk);
      same = v && n == nk && memcmp(v0, v, n) == 0;
    }
    if (!same) {
      len += snprintf(said + len, sizeof said - (size_t)len, "%s %.*s is", named++ ? ";" : "", (int)key_len, p);
      for (int k = 0; k < world && len < (int)sizeof said; k++) {
        const char *v = setting_line(all + (size_t)k * SETTINGS_TEXT_MAX, p, key_len, &n);
        len += snprintf(said + len, sizeof said - (size_t)len, "%s %.*s on rank %d", k ? "," : "",
                        v ? (int)(n > 40 ? 40 : n) : 6, v ? v : "(none)", k);
      }
    }
    p = end + 1;
  }
  free(all);
  if (!named) snprintf(said + len, sizeof said - (size_t)len, " its settings differ");
  return err_set(err, "%s (start every rank with the same command line and script)", said);
}

/* A step shared with other ranks: after the forward, the loss becomes the
** mean of the ranks' means, so that every rank agrees on whether it is
** finite (the step's 'after_forward'). */
typedef struct SharedLoss {
  Run *r;
  const Reducer *red;
  long step;
  int b, t;
} SharedLoss;

static int average_loss(void *ctx, double *loss, Err *err) {
  SharedLoss *s = ctx;
  char what[128];
  SumKey key = step_key(s->r, s->step, s->b, s->t, what, sizeof what);
  int rc = s->red->sum(s->red->ctx, &key, loss, 1, err);
  if (rc == REDUCE_SETTINGS_DIFFER) settings_differ(s->r, s->red, s->step, err);
  if (rc < 0) return STEP_RANKS;
  *loss /= s->red->world;
  return 0;
}

/* One step on the 'b' rows of t+1 tokens in r->rows, with the run's hooks:
** stops before touching the weights when the loss or the gradient is not
** finite (STEP_NOT_FINITE), a rank sharing the step is gone (STEP_RANKS) or
** a hook failed (STEP_HOOK). The rates are those the schedule gives the
** next step. */
static int train_rows(Run *r, int b, int t, StepResult *res, Err *err) {
  long step = r->metrics.step;
  batch_split(r->rows, b, t, r->inputs, r->targets);
  const Reducer *red = step_reducer(r, step + 1, b);
  int rows = red ? b / red->world : b;
  size_t first = red ? (size_t)red->rank * rows * t : 0;
  SharedLoss shared = {r, red, step + 1, b, t};
  StepPlan plan = {.inputs = r->inputs + first, .targets = r->targets + first, .rows = rows, .t = t,
                   .batch_rows = b, .in_scale = (float)r->opt.in_scale, .out_scale = (float)r->opt.out_scale,
                   .optim = run_options_optim_at(&r->opt, step + 1), .red = red, .step = step + 1,
                   .hooks = r->hooks, .after_forward = red ? average_loss : NULL, .after_forward_ctx = &shared};
  int rc = train_step(r->model, &plan, res, err);
  if (rc == STEP_NOT_FINITE && !isfinite(res->loss))
    err_set(err, "run '%s': loss is %s at step %ld; run paused, weights kept from step %ld", r->opt.name,
            isnan(res->loss) ? "NaN" : "infinite", step + 1, step);
  else if (rc == STEP_NOT_FINITE)
    err_set(err, "run '%s': gradient is not finite at step %ld; run paused, weights kept", r->opt.name, step + 1);
  else if (rc == STEP_HOOK)
    err_prefix(err, "run '%s' paused, weights kept from step %ld", r->opt.name, step);
  return rc;
}

static void validate(Run *r) {
  const ModelConfig *c = model_config(r->model);
  double sum = 0;
  for (int i = 0; i < RUN_VAL_BATCHES; i++) {
    dataset_val_batch(&r->data->ds, i, RUN_VAL_BATCHES, c->batch, c->ctx, r->rows);
    batch_split(r->rows, c->batch, c->ctx, r->inputs, r->targets);
    sum += model_forward(r->model, r->inputs, r->targets, c->batch, c->ctx);
  }
  RunMetrics *mt = &r->metrics;
  /* A step measured twice (periodically, then asked for) is one point. */
  int fresh = mt->val_step != mt->step;
  mt->val_loss = sum / RUN_VAL_BATCHES;
  mt->val_ppl = exp(mt->val_loss);
  mt->val_step = mt->step;
  if (fresh) history_push(r->hist, "val_loss", mt->step, mt->val_loss);
}

static void push_lens_series(Run *r, const char *prefix, const LensStats *ls) {
  char name[64];
  for (int i = 0; i < ls->n; i++) {
    snprintf(name, sizeof name, "%s.kl.%d", prefix, i);
    history_push(r->hist, name, ls->step, ls->kl[i]);
    snprintf(name, sizeof name, "%s.acc.%d", prefix, i);
    history_push(r->hist, name, ls->step, ls->acc[i]);
  }
}

/* Rows of each set of held-out lens positions: about 512 positions, where
** the per-layer means are steady to a few hundredths of a bit; more would
** cost the training step. */
static int lens_heldout_rows(const ModelConfig *c) {
  int rows = LENS_EVAL_POSITIONS / c->ctx;
  return rows < 1 ? 1 : rows > c->batch ? c->batch : rows;
}

/* Fixed validation batch 'index' of lens_heldout_rows rows into r->inputs,
** r->targets; returns the rows. */
static int lens_heldout_batch(Run *r, int index) {
  const ModelConfig *c = model_config(r->model);
  int rows = lens_heldout_rows(c);
  dataset_val_batch(&r->data->ds, index, RUN_VAL_BATCHES, rows, c->ctx, r->rows);
  batch_split(r->rows, rows, c->ctx, r->inputs, r->targets);
  return rows;
}

/* The online lens's (and a fit's choice) is the split's first batch; a
** fit's report is its last, at the split's far end. */
#define LENS_CHOICE_BATCH 0
#define LENS_REPORT_BATCH (RUN_VAL_BATCHES - 1)

int run_lens_heldout(Run *r) { return lens_heldout_batch(r, LENS_CHOICE_BATCH); }

int run_lens_report(Run *r, Err *err) {
  const ModelConfig *c = model_config(r->model);
  const Dataset *ds = &r->data->ds;
  int rows = lens_heldout_rows(c);
  size_t n_val = ds->n - ds->n_train;
  /* The windows rise through the split: the sets share no token when the
  ** report's first window starts after the choice's last one ends. */
  size_t choice_end = dataset_val_window(ds, LENS_CHOICE_BATCH, RUN_VAL_BATCHES, rows, c->ctx, rows - 1) + c->ctx;
  size_t report_start = dataset_val_window(ds, LENS_REPORT_BATCH, RUN_VAL_BATCHES, rows, c->ctx, 0);
  if (choice_end >= n_val || report_start <= choice_end)
    return err_set(err, "run '%s': its validation split of %zu tokens is too short for two held-out sets of %d "
                   "rows of %d+1 tokens that share no token (the fitted lens is chosen on one and measured on "
                   "the other)", r->opt.name, n_val, rows, c->ctx);
  return lens_heldout_batch(r, LENS_REPORT_BATCH);
}

static void evaluate_lenses(Run *r) {
  const ModelConfig *c = model_config(r->model);
  Err err;
  int rows = run_lens_heldout(r);
  RunMetrics *mt = &r->metrics;
  if (lens_eval(r->lens, r->model, r->inputs, r->targets, rows, c->ctx, mt->step, &mt->lens,
                &mt->logit_lens, &err) == 0) {
    /* With lens training off the translators stay the identity: their
    ** numbers would be the logit lens's shown under the tuned lens's name. */
    if (r->opt.lens_every > 0 || lens_step(r->lens) > 0) push_lens_series(r, "lens", &mt->lens);
    else mt->lens.step = -1;
    push_lens_series(r, "logit_lens", &mt->logit_lens);
  }
}

static double row_norm(const float *w, int d) {
  double s = 0;
  for (int j = 0; j < d; j++) s += (double)w[j] * w[j];
  return sqrt(s);
}

int run_row_norms(Run *r, double *norm_in, double *norm_out, double *log_freq, int cap, Err *err) {
  if (run_refuse_no_corpus(r, "count its tokens", err) < 0) return -1;
  if (!r->data) return err_set(err, "run '%s' has no token frequencies (no training data)", r->opt.name);
  Model *m = r->model;
  const ModelConfig *c = model_config(m);
  const float *w = model_params(m);
  const float *e_in = w + model_find_tensor(m, "transformer.wte.weight")->offset;
  const float *e_out = w + model_find_tensor(m, "lm_head.weight")->offset;
  int n = 0;
  for (int i = 0; i < c->vocab && n < cap; i++) {
    if (isnan(r->data->log_freq[i])) continue;
    norm_in[n] = row_norm(e_in + (size_t)i * c->dim, c->dim);
    norm_out[n] = row_norm(e_out + (size_t)i * c->dim, c->dim);
    log_freq[n++] = r->data->log_freq[i];
  }
  return n;
}

/* Pearson correlation of row norms with log frequency over seen tokens. */
static double norm_freq_corr(const float *w, const double *log_freq, int v, int d) {
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  long n = 0;
  for (int i = 0; i < v; i++) {
    if (isnan(log_freq[i])) continue;
    double x = row_norm(w + (size_t)i * d, d), y = log_freq[i];
    sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y, n++;
  }
  double cov = sxy - sx * sy / n, vx = sxx - sx * sx / n, vy = syy - sy * sy / n;
  return n > 1 && vx > 0 && vy > 0 ? cov / sqrt(vx * vy) : NAN;
}

static void measure_drift(Run *r) {
  Model *m = r->model;
  const ModelConfig *c = model_config(m);
  const float *w = model_params(m);
  RunMetrics *mt = &r->metrics;
  mt->drift_in = align_row_cosine(w + model_find_tensor(m, "transformer.wte.weight")->offset,
                                  r->e_in0, c->vocab, c->dim);
  mt->drift_out = align_row_cosine(w + model_find_tensor(m, "lm_head.weight")->offset,
                                   r->e_out0, c->vocab, c->dim);
  history_push(r->hist, "drift_in", mt->step, mt->drift_in);
  history_push(r->hist, "drift_out", mt->step, mt->drift_out);
  const float *e_in = w + model_find_tensor(m, "transformer.wte.weight")->offset;
  const float *e_out = w + model_find_tensor(m, "lm_head.weight")->offset;
  mt->normfreq_in = norm_freq_corr(e_in, r->data->log_freq, c->vocab, c->dim);
  mt->normfreq_out = norm_freq_corr(e_out, r->data->log_freq, c->vocab, c->dim);
  history_push(r->hist, "normfreq_in", mt->step, mt->normfreq_in);
  history_push(r->hist, "normfreq_out", mt->step, mt->normfreq_out);
}

static void measure_all(Run *r) {
  validate(r);
  evaluate_lenses(r);
  measure_drift(r);
}

int run_measure(Run *r, Err *err) {
  if (run_refuse_no_corpus(r, "measure its validation loss", err) < 0) return -1;
  if (!r->data) return err_set(err, "run '%s' has no validation data", r->opt.name);
  measure_all(r);
  return 0;
}

int run_measure_val(Run *r, Err *err) {
  if (run_refuse_no_corpus(r, "measure its validation loss", err) < 0) return -1;
  if (!r->data)
    return err_set(err, "run '%s' has no held-out text to measure a validation loss on: a vocabulary of %d "
                   "is below the 256 byte ids, so no corpus was tokenized for it", r->opt.name,
                   model_config(r->model)->vocab);
  if (run_refuse_if_fitting(r, "measure its validation loss", err) < 0) return -1;
  validate(r);
  r->dirty = 1;
  return 0;
}

const char *run_val_text(const RunMetrics *m, double v, int decimals, char *buf, size_t cap) {
  if (!isfinite(v) || m->val_step < 0) snprintf(buf, cap, "-");
  else if (m->val_step == m->step) snprintf(buf, cap, "%.*f", decimals, v);
  else snprintf(buf, cap, "%.*f@%ld", decimals, v, m->val_step);
  return buf;
}

/* The instruments due after a step on 'b' rows of 't' tokens. */
static void run_instruments(Run *r, int b, int t) {
  RunMetrics *mt = &r->metrics;
  Err err;
  /* The lens learns from this step's forward, so it runs before anything
  ** else overwrites the activations. */
  if (due(mt->step, r->opt.lens_every))
    lens_train(r->lens, r->model, b, t, LENS_POSITIONS,
               rng_mix(r->opt.data_seed ^ 0x6c656e73ULL, (uint64_t)mt->step), &err);
  /* Step 1 too, so that graphs start at the beginning; 0 turns it off. */
  if (r->data && r->opt.eval_every > 0 && (due(mt->step, r->opt.eval_every) || mt->step == 1)) measure_all(r);
}

/* The rates and scales step 'step' trained with, each step a point: a
** schedule shows in full, where its changes as events would be capped
** (HISTORY_MAX_EVENTS) and say nothing of a rate that follows a curve. */
static void record_schedule(Run *r, long step) {
  RunMetrics *mt = &r->metrics;
  set_rates(mt, &r->opt);
  history_push(r->hist, setting_name(SETTING_LR), step, mt->lr);
  history_push(r->hist, "emb_lr", step, mt->emb_lr);
  history_push(r->hist, setting_name(SETTING_IN_SCALE), step, r->opt.in_scale);
  history_push(r->hist, setting_name(SETTING_OUT_SCALE), step, r->opt.out_scale);
}

/* One training step on the 'b' rows of t+1 tokens in r->rows and the
** instruments due; tokens/s counts the training step alone, so that
** instruments never read as a slower model. */
static int step_on_rows(Run *r, int b, int t, Err *err) {
  double t0 = clock_seconds();
  StepResult res;
  int rc = train_rows(r, b, t, &res, err);
  /* The other ranks are gone: nothing to pause for. A failed hook pauses
  ** the run as a NaN does: the experiment it was is not what would go on. */
  if (rc == STEP_RANKS) return -1;
  if (rc < 0) {
    run_set_paused(r, 1);
    history_event(r->hist, r->metrics.step, rc == STEP_HOOK ? "paused: a step hook failed" : "paused: loss not finite");
    return -1;
  }
  double dt = clock_seconds() - t0;
  RunMetrics *mt = &r->metrics;
  mt->step++;
  mt->loss = res.loss;
  history_push(r->hist, "loss", mt->step, res.loss);
  mt->aux_loss = res.aux_reported ? res.aux_loss : NAN;
  if (res.aux_reported) history_push(r->hist, "aux_loss", mt->step, res.aux_loss);
  record_grad(r, &res.grad, mt->step);
  record_schedule(r, mt->step);
  r->step_seconds_ema = r->step_seconds_ema > 0 ? 0.9 * r->step_seconds_ema + 0.1 * dt : dt;
  mt->tokens_per_s = (double)b * t / r->step_seconds_ema;
  history_push(r->hist, "tokens_per_s", mt->step, mt->tokens_per_s);
  run_instruments(r, b, t);
  r->dirty = 1;
  return 0;
}

/* Training needs the corpus itself; a checkpoint holds only its held-out part. */
static int run_refuse_held_out_only(const Run *r, Err *err) {
  if (!r->data || !r->data->held_out_only) return 0;
  return err_set(err, "run '%s' cannot train: its corpus '%s' %s when it was loaded (the checkpoint "
                 "holds its tokenizer and held-out tokens, not its training text); load it again with "
                 "lab.load(path, {corpus = FILE}) naming where that corpus is now", r->opt.name, r->opt.corpus,
                 r->data->held_out_why);
}

int run_refuse_no_corpus(const Run *r, const char *what, Err *err) {
  if (r->data || !r->own_tok) return 0;
  return err_set(err, "run '%s' needs a corpus to %s: it was loaded from the model '%s' alone; load it with "
                 "lab.load(path, {corpus = FILE}) naming a text to read with the model's tokenizer", r->opt.name,
                 what, r->origin);
}

int run_step_alone(Run *r, Err *err) {
  if (run_refuse_if_fitting(r, "train", err) < 0 || run_refuse_no_corpus(r, "train", err) < 0) return -1;
  if (!r->data)
    return err_set(err, "run '%s' has no training data: a vocabulary of %d is below the 256 byte ids",
                   r->opt.name, model_config(r->model)->vocab);
  if (run_refuse_held_out_only(r, err) < 0) return -1;
  const ModelConfig *c = model_config(r->model);
  run_batch_rows(r, r->metrics.step + 1, r->rows);
  return step_on_rows(r, c->batch, c->ctx, err);
}

int run_step(Run *r, Err *err) {
  if (run_step_alone(r, err) < 0) return -1;
  lab_align_if_due(r->lab, r);
  return 0;
}

int run_train_on(Run *r, const int32_t *rows, int b, int t, Err *err) {
  if (run_refuse_if_fitting(r, "train", err) < 0) return -1;
  if (run_check_rows(r, rows, b, t, err) < 0) return -1;
  memcpy(r->rows, rows, sizeof *rows * (size_t)b * (size_t)(t + 1));
  if (step_on_rows(r, b, t, err) < 0) return -1;
  lab_align_if_due(r->lab, r);
  return 0;
}

void lab_run_set_hooks(Run *r, const StepHooks *hooks) { r->hooks = hooks; }

int run_batch(Run *r, long step, int32_t *rows, Err *err) {
  if (run_refuse_no_corpus(r, "draw batches", err) < 0) return -1;
  if (!r->data) return err_set(err, "run '%s' has no training data to draw batches from", r->opt.name);
  if (run_refuse_held_out_only(r, err) < 0) return -1;
  if (step < 1) return err_set(err, "step %ld: training steps count from 1", step);
  run_batch_rows(r, step, rows);
  return 0;
}
