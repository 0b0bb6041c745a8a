/*
** lab.c -- the lab: runs by name and id, stepped in lockstep; pairing a
** tied run with an untied partner for the alignment instrument; live
** settings changes recorded as history events.
*/
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/num.h"
#include "base/sysmem.h"
#include "core/linalg.h"
#include "lab/run.h"

Lab *lab_new(Err *err) {
  Lab *lab = calloc(1, sizeof *lab);
  if (!lab) {
    err_set(err, "out of memory creating the lab");
    return NULL;
  }
  lab->next_id = 1;
  lab->workers = 1;
  return lab;
}

void lab_free(Lab *lab) {
  if (!lab) return;
  for (int i = 0; i < lab->n_runs; i++) run_destroy(lab->runs[i]);
  free(lab->runs);
  pool_free(lab->pool);
  free(lab->step_errs);
  free(lab->step_rcs);
  free(lab);
}

void lab_headroom(Lab *lab, SysMem *m) {
  sysmem_read_shared(m, lab->reducer ? lab->reducer->node_ranks : 1);
  if (!m->limit_shared) return;
  snprintf(lab->memory_note, sizeof lab->memory_note, "%s, shared by the %d ranks on this machine", m->limit,
           m->shared_by);
  m->limit = lab->memory_note;
}

void lab_set_reducer(Lab *lab, const Reducer *red) { lab->reducer = red && red->world > 1 ? red : NULL; }
void lab_set_cancel(Lab *lab, const Cancel *c) { lab->cancel = c ? *c : (Cancel){NULL, NULL}; }
int lab_rank(const Lab *lab) { return lab->reducer ? lab->reducer->rank : 0; }

int lab_world(const Lab *lab) { return lab->reducer ? lab->reducer->world : 1; }

int run_agree(Run *r, const char *verb, int rc, Err *err) {
  const Reducer *red = r->lab->reducer;
  if (!red) return rc;
  char what[160];
  snprintf(what, sizeof what, "%s of run '%s'", verb, r->opt.name);
  /* the run by the name its script gave it: one the lab named may be another's "runN" */
  uint32_t where = reduce_hash(0, verb, strlen(verb));
  if (r->name_given) where = reduce_hash(where, r->opt.name, strlen(r->opt.name));
  SumKey key = {where, 0, what, 0};
  double failed = red->rank == 0 && rc < 0;
  Err sum_err;
  int sum = red->sum(red->ctx, &key, &failed, 1, &sum_err);
  if (sum == REDUCE_KEYS_DIFFER)
    return err_set(err, "%s (%s is the job's: call it on every rank, not on rank 0 alone%s)", sum_err.msg, verb,
                   red->rank == 0 && rc == 0 ? "; rank 0 wrote the file" : "");
  if (sum < 0) {
    *err = sum_err;
    return -1;
  }
  if (failed == 0) return 0;
  if (red->rank > 0) err_set(err, "%s failed on rank 0, which writes for the job (its message is on its stderr)", what);
  return -1;
}

int lab_n_runs(const Lab *lab) { return lab->n_runs; }
long lab_max_step(const Lab *lab) {
  long step = 0;
  for (int i = 0; i < lab->n_runs; i++)
    if (run_metrics(lab->runs[i])->step > step) step = run_metrics(lab->runs[i])->step;
  return step;
}

Run *lab_run(Lab *lab, int i) { return i >= 0 && i < lab->n_runs ? lab->runs[i] : NULL; }

Run *lab_find(Lab *lab, const char *name) {
  for (int i = 0; i < lab->n_runs; i++)
    if (strcmp(lab->runs[i]->opt.name, name) == 0) return lab->runs[i];
  return NULL;
}

Run *lab_run_by_id(Lab *lab, int id) {
  for (int i = 0; i < lab->n_runs; i++)
    if (lab->runs[i]->id == id) return lab->runs[i];
  return NULL;
}

/* A run without a name gets the first free "run1", "run2", ... */
static void pick_name(Lab *lab, RunOptions *o) {
  if (o->name[0]) return;
  for (int i = 1;; i++) {
    snprintf(o->name, sizeof o->name, "run%d", i);
    if (!lab_find(lab, o->name)) return;
  }
}

static int lab_insert(Lab *lab, Run *r, Err *err) {
  if (lab->n_runs == lab->cap_runs) {
    int cap = lab->cap_runs ? 2 * lab->cap_runs : 8;
    Run **runs = realloc(lab->runs, sizeof *runs * (size_t)cap);
    if (!runs) return err_set(err, "out of memory adding run '%s'", r->opt.name);
    lab->runs = runs;
    lab->cap_runs = cap;
  }
  r->id = lab->next_id++;
  lab->runs[lab->n_runs++] = r;
  return 0;
}

Run *lab_adopt(Lab *lab, Run *r, Err *err) {
  if (!r) return NULL;
  if (lab_find(lab, r->opt.name)) {
    err_set(err, "a run named '%s' already exists", r->opt.name);
    run_destroy(r);
    return NULL;
  }
  if (lab_insert(lab, r, err) < 0) {
    run_destroy(r);
    return NULL;
  }
  history_event(r->hist, 0, HISTORY_EVENT_CREATED);
  return r;
}

/* Checkpoints keep the corpus path: an absolute one still works when the
** lab is reopened from another folder. */
static void absolute_corpus(RunOptions *o) {
  char *full = o->corpus[0] ? realpath(o->corpus, NULL) : NULL;
  if (full && strlen(full) < sizeof o->corpus) snprintf(o->corpus, sizeof o->corpus, "%s", full);
  free(full);
}

/* ------------------------------------------------------------ memory */

/* What the lab's corpora take. */
size_t lab_memory_need(Lab *lab, const RunOptions *o) {
  RunOptions canon = *o;
  absolute_corpus(&canon);   /* as the run will name it, so a shared corpus is found */
  return run_memory_bytes(&canon) + (lab && lab_shares_data(lab, &canon) ? 0 : data_memory_bytes(&canon));
}

/* 'need' more bytes for 'what' against what this process can still get,
** less what the lab's runs may still allocate (an alignment workspace not
** yet made); a NULL lab is one not made yet. 'advice' (or NULL) follows
** the refusal. */
static int fits(Lab *lab, size_t need, const char *what, const char *advice, Err *err) {
  SysMem m;
  size_t pending = 0;
  if (lab) {
    for (int i = 0; i < lab->n_runs; i++) pending += run_memory_pending(lab->runs[i]);
    lab_headroom(lab, &m);
  } else
    sysmem_read(&m);
  m.headroom = m.headroom > pending ? m.headroom - pending : 0;
  if (sysmem_check_in(&m, need, what, err) == 0) return 0;
  if (advice && err) {
    char msg[ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    err_set(err, "%.400s; %s", msg, advice);
  }
  return -1;
}

int lab_check_memory(Lab *lab, const RunOptions *o, size_t budget, Err *err) {
  char advice[128];
  snprintf(advice, sizeof advice, "lower '%s', '%s', '%s', '%s' or '%s'", setting_name(SETTING_VOCAB),
           setting_name(SETTING_DIM), setting_name(SETTING_LAYERS), setting_name(SETTING_CTX),
           setting_name(SETTING_BATCH));
  return lab_check_memory_advising(lab, o, budget, advice, err);
}

int lab_check_memory_advising(Lab *lab, const RunOptions *o, size_t budget, const char *advice, Err *err) {
  char name[128];
  if (o->name[0]) snprintf(name, sizeof name, "run '%s'", o->name);
  else
    snprintf(name, sizeof name, "a run of vocab %d, dim %d, layers %d, ctx %d, batch %d", o->model.vocab,
             o->model.dim, o->model.layers, o->model.ctx, o->model.batch);
  size_t need = lab_memory_need(lab, o);
  char a[NUM_TEXT_MAX], b[NUM_TEXT_MAX];
  if (budget && need > budget)
    return err_set(err, "%s needs about %s, more than the %s it may have", name, num_bytes(a, sizeof a, need),
                   num_bytes(b, sizeof b, budget));
  return fits(lab, need, name, advice, err);
}

int lab_check_change(Run *r, const RunOptions *next, const char *key, Err *err) {
  size_t now = run_memory_bytes(&r->opt), then = run_memory_bytes(next);
  if (then <= now) return 0;
  char value[64], what[192];
  if (run_options_get_text(next, key, value, sizeof value, err) < 0) return -1;
  snprintf(what, sizeof what, "the change %s=%s of run '%s'", key, value, r->opt.name);
  return fits(r->lab, then - now, what, NULL, err);
}

Run *lab_add_run(Lab *lab, const RunOptions *o, Err *err) { return lab_add_run_within(lab, o, 0, err); }

Run *lab_add_run_within(Lab *lab, const RunOptions *o, size_t budget, Err *err) {
  RunOptions opt = *o;
  pick_name(lab, &opt);
  absolute_corpus(&opt);
  if (run_options_check(&opt, err) < 0) return NULL;
  if (lab_find(lab, opt.name)) {
    err_set(err, "a run named '%s' already exists", opt.name);
    return NULL;
  }
  if (lab_check_memory(lab, &opt, budget, err) < 0) return NULL;
  Model *m = model_create(&opt.model, opt.threads, err);
  if (!m) return NULL;
  model_init(m, opt.init_seed);
  Run *r = lab_adopt(lab, run_create(lab, &opt, m, err), err);
  if (r) r->name_given = o->name[0] != '\0';
  return r;
}

int lab_remove_run(Lab *lab, Run *r) {
  if (run_fitting(r)) return -1;
  for (int i = 0; i < lab->n_runs; i++)
    if (lab->runs[i] == r) {
      memmove(lab->runs + i, lab->runs + i + 1, sizeof *lab->runs * (size_t)(lab->n_runs - i - 1));
      lab->n_runs--;
      run_destroy(r);
      return 0;
    }
  return -1;
}

/* ------------------------------------------------------------ stepping */

int lab_workers(const Lab *lab) { return lab->workers; }

int lab_set_workers(Lab *lab, int workers, Err *err) {
  if (workers < 1 || workers > LAB_WORKERS_MAX)
    return err_set(err, "workers must be a whole number from 1 to %d, not %d", LAB_WORKERS_MAX, workers);
  if (lab->pool && pool_threads(lab->pool) != workers) {
    pool_free(lab->pool);
    lab->pool = NULL;
  }
  lab->workers = workers;
  return 0;
}

/* A run that may step beside others: its hooks would call into the one
** thread that serves them, and a shared batch sums with the other ranks in
** the order every rank steps its runs. */
static int steps_concurrently(const Lab *lab, const Run *r) { return !r->hooks && !lab->reducer; }

/* The pool and a result slot per run, for a concurrent step; -1 when
** they cannot be had (the runs then step one at a time). */
static int concurrent_ready(Lab *lab, Err *err) {
  if (!lab->pool && !(lab->pool = pool_create(lab->workers, err))) return -1;
  if (lab->cap_step >= lab->n_runs) return 0;
  Err *errs = realloc(lab->step_errs, sizeof *errs * (size_t)lab->n_runs);
  if (errs) lab->step_errs = errs;
  int *rcs = realloc(lab->step_rcs, sizeof *rcs * (size_t)lab->n_runs);
  if (rcs) lab->step_rcs = rcs;
  if (!errs || !rcs) return err_set(err, "out of memory stepping %d runs at once", lab->n_runs);
  lab->cap_step = lab->n_runs;
  return 0;
}

/* What a concurrent step does with each run, decided before any steps (a
** hook may add hooks to a run that has stepped already): kept in its result
** slot until its result replaces it. */
enum { RUN_RESTS = 0, RUN_AT_ONCE = 1, RUN_AFTER = 2 };

/* The runs of a concurrent step, taken by the pool's threads one at a
** time as each finishes its last, so that a large run does not hold back
** the small ones queued behind it on the same thread. */
typedef struct StepQueue {
  Lab *lab;
  atomic_int next;
} StepQueue;

static void step_queued(void *arg, int part, int parts) {
  StepQueue *q = arg;
  Lab *lab = q->lab;
  for (int i; (i = atomic_fetch_add(&q->next, 1)) < lab->n_runs;)
    if (lab->step_rcs[i] == RUN_AT_ONCE) lab->step_rcs[i] = run_step_alone(lab->runs[i], &lab->step_errs[i]);
}

/* Every unpaused run once: those that may, at once on the lab's pool with
** OpenBLAS on one thread; then the others in order on this thread. Each
** run's result into step_rcs/step_errs. */
static void step_concurrently(Lab *lab) {
  for (int i = 0; i < lab->n_runs; i++) {
    Run *r = lab->runs[i];
    lab->step_rcs[i] = r->paused ? RUN_RESTS : steps_concurrently(lab, r) ? RUN_AT_ONCE : RUN_AFTER;
  }
  int blas = linalg_threads();
  linalg_set_threads(1);
  StepQueue q = {lab, 0};
  pool_run(lab->pool, step_queued, &q);
  linalg_set_threads(blas);
  for (int i = 0; i < lab->n_runs; i++)
    if (lab->step_rcs[i] == RUN_AFTER)
      lab->step_rcs[i] = lab->runs[i]->paused ? 0 : run_step_alone(lab->runs[i], &lab->step_errs[i]);
}

int lab_step(Lab *lab, Err *err) {
  int rc = 0;
  Err one;
  if (lab->workers > 1) {
    /* the worker count asked for is not quietly dropped: no threads, no step */
    if (concurrent_ready(lab, &one) < 0) {
      if (err) err_set(err, "cannot step %d runs at once: %s", lab->workers, one.msg);
      return -1;
    }
    step_concurrently(lab);
    for (int i = 0; i < lab->n_runs && rc == 0; i++)
      if (lab->step_rcs[i] < 0) {
        rc = -1;
        if (err) *err = lab->step_errs[i];
      }
  } else {
    for (int i = 0; i < lab->n_runs; i++) {
      Run *r = lab->runs[i];
      if (r->paused) continue;
      if (run_step_alone(r, &one) < 0 && rc == 0) {
        rc = -1;
        if (err) *err = one;
      }
    }
  }
  for (int i = 0; i < lab->n_runs; i++)
    if (!lab->runs[i]->paused) lab_align_if_due(lab, lab->runs[i]);
  lab->steps++;
  return rc;
}

/* ------------------------------------------------------------ alignment */

static const float *embedding(Run *r, const char *name) {
  return model_params(r->model) + model_find_tensor(r->model, name)->offset;
}

/* The alignment workspace is made on the first alignment: check it fits. */
static int align_fits(Run *a, Err *err) {
  const ModelConfig *c = model_config(a->model);
  AlignOptions ao = align_default_options();
  if (align_work_bytes(a->align_work) > 0) return 0;
  size_t need = align_memory_bytes(c->vocab, c->dim, ao.knn_k < c->vocab - 1 ? ao.knn_k : c->vocab - 1);
  SysMem m;
  lab_headroom(a->lab, &m);
  char what[96];
  snprintf(what, sizeof what, "align: the workspace for [%d,%d]", c->vocab, c->dim);
  return sysmem_check_in(&m, need, what, err);
}

int lab_align(Run *a, Run *b, AlignStats *out, Err *err) {
  const ModelConfig *ca = model_config(a->model), *cb = model_config(b->model);
  if (ca->vocab != cb->vocab || ca->dim != cb->dim)
    return err_set(err, "cannot align '%s' [%d,%d] with '%s' [%d,%d]: shapes differ", a->opt.name,
                   ca->vocab, ca->dim, b->opt.name, cb->vocab, cb->dim);
  if (a->data != b->data)
    return err_set(err, "cannot align '%s' with '%s': different tokenizers (corpus or vocab)",
                   a->opt.name, b->opt.name);
  /* As the paper's code does: the partner's matrix is mapped onto the tied
  ** one (source x = partner, target y = ours). */
  AlignOptions opt = align_default_options();
  /* The paper's top-100 subspace is 5-13% of its models' widths; a fixed 100
  ** would be the whole space of a small model, so k scales with d. */
  opt.topk = ca->dim / 10 > 2 ? ca->dim / 10 : 2;
  opt.threads = a->opt.threads;
  if (align_fits(a, err) < 0) return -1;
  AlignWork *w = a->align_work;
  const float *y = embedding(a, "transformer.wte.weight");
  if (align_compare_in(w, embedding(b, "transformer.wte.weight"), y, ca->vocab, ca->dim, &opt, &out->vs_in, err) < 0 ||
      align_compare_in(w, embedding(b, "lm_head.weight"), y, ca->vocab, ca->dim, &opt, &out->vs_out, err) < 0)
    return -1;
  out->step = a->metrics.step;
  out->partner_step = b->metrics.step;
  snprintf(out->partner, sizeof out->partner, "%s", b->opt.name);
  out->partner_shares_init = a->init_fingerprint == b->init_fingerprint;
  return 0;
}

/* The partner of a tied run: the one named in its options, else the first
** untied run on the same data and shape. */
static Run *find_partner(Lab *lab, Run *r) {
  if (r->opt.partner[0]) return lab_find(lab, r->opt.partner);
  const ModelConfig *c = model_config(r->model);
  for (int i = 0; i < lab->n_runs; i++) {
    Run *p = lab->runs[i];
    const ModelConfig *pc = model_config(p->model);
    if (p != r && pc->tie_k == 0 && p->data == r->data && pc->vocab == c->vocab && pc->dim == c->dim)
      return p;
  }
  return NULL;
}

void lab_align_if_due(Lab *lab, Run *r) {
  RunMetrics *mt = &r->metrics;
  if (r->opt.align_every <= 0 || mt->step % r->opt.align_every != 0) return;
  if (model_config(r->model)->tie_k == 0) return;
  Run *p = find_partner(lab, r);
  Err err;
  if (!p || lab_align(r, p, &mt->align, &err) < 0) return;
  static const struct {
    const char *name;
    size_t offset;
  } series[] = {
      {"align.linear_in", offsetof(AlignStats, vs_in.score.linear)},
      {"align.linear_out", offsetof(AlignStats, vs_out.score.linear)},
      {"align.procrustes_in", offsetof(AlignStats, vs_in.score.procrustes)},
      {"align.procrustes_out", offsetof(AlignStats, vs_out.score.procrustes)},
      {"align.cka_in", offsetof(AlignStats, vs_in.score.cka)},
      {"align.cka_out", offsetof(AlignStats, vs_out.score.cka)},
      {"align.linear_in_base", offsetof(AlignStats, vs_in.baseline.linear)},
      {"align.linear_out_base", offsetof(AlignStats, vs_out.baseline.linear)},
      {"align.procrustes_in_base", offsetof(AlignStats, vs_in.baseline.procrustes)},
      {"align.procrustes_out_base", offsetof(AlignStats, vs_out.baseline.procrustes)},
  };
  for (size_t i = 0; i < sizeof series / sizeof series[0]; i++)
    history_push(r->hist, series[i].name, mt->step,
                 *(const double *)((const char *)&mt->align + series[i].offset));
}
