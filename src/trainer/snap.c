/*
** snap.c -- the trainer's publication: the snapshot it fills after every
** step and the UI takes, the text samples and row norms the lab's holder
** measures for it, and 'trainer_view', which reads it without waiting for
** a step. How often each part is copied: docs/architecture.md.
*/
#include "base/clock.h"
#include "base/hash.h"
#include "trainer/trainer.h"
#include "trainer/trainer_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HIST_EVERY 0.05       /* seconds between history copies at most */
#define SAMPLE_EVERY 3.0      /* seconds between text samples of a run */
#define SAMPLE_TOKENS 64
#define SAMPLE_TEMP 0.8
#define NORMS_EVERY 3.0       /* seconds between row norm measurements of a run */

/* ------------------------------------------------------------ snapshots */

TrainerSnap *trainer_snap_new(void) {
  TrainerSnap *s = calloc(1, sizeof *s);
  if (s) s->version = -1;
  return s;
}

void trainer_snap_free(TrainerSnap *s) {
  if (!s) return;
  for (int i = 0; i < s->cap_runs; i++) {
    history_free(s->runs[i].hist);
    free(s->runs[i].norms.norm_in);
  }
  free(s->runs);
  free(s);
}

const TrainerRun *trainer_snap_find(const TrainerSnap *s, int id) {
  for (int i = 0; i < s->n_runs; i++)
    if (s->runs[i].id == id) return &s->runs[i];
  return NULL;
}

long trainer_snap_step(const TrainerSnap *s) {
  long step = 0;
  for (int i = 0; i < s->n_runs; i++)
    if (s->runs[i].m.step > step) step = s->runs[i].m.step;
  return step;
}

static uint64_t mix(uint64_t h, uint64_t v) { return hash_fnv_step(h, v); }

/* A mark that changes whenever a point or an event is added: every push
** adds to the last bucket's count or starts a bucket (after a merge the
** bucket count changes too). Costs a walk over the series, not a copy. */
static uint64_t history_mark(const History *h) {
  int n;
  history_events(h, &n);
  uint64_t x = mix(mix(HASH_FNV_BASIS, (uint64_t)n), (uint64_t)history_events_dropped(h));
  int ns = history_n_series(h);
  x = mix(x, (uint64_t)ns);
  for (int i = 0; i < ns; i++) {
    const HistBucket *b = history_series(h, history_series_name(h, i), &n);
    x = mix(x, (uint64_t)n);
    if (n > 0) x = mix(mix(x, (uint64_t)b[n - 1].count), (uint64_t)b[n - 1].step_last);
  }
  return x | 1;   /* never 0: the mark of "no copy yet" */
}

/* Make 'tr->hist' a copy of 'src' unless it is one already, reusing its
** memory (a failure leaves an empty history, never a half copy). */
static void copy_history(TrainerRun *tr, const History *src) {
  uint64_t mark = history_mark(src);
  if (tr->hist && tr->hist_mark == mark) return;
  if (!tr->hist) tr->hist = history_clone(src);
  else if (history_copy(tr->hist, src) < 0) mark = 0;
  tr->hist_mark = tr->hist ? mark : 0;
}

/* ------------------------------------------------------------ samples and row norms */

/* What a run's samples are decoded with, when that is not the tokenizer its
** model was trained with (a weights file holds none): "" otherwise. */
static void sample_note(const Run *r, char *buf, size_t cap) {
  TokenizerInfo ti;
  Err err;
  buf[0] = '\0';
  if (run_tokenizer_info(r, &ti, &err) < 0 || ti.own) return;
  const char *base = strrchr(ti.source, '/');
  snprintf(buf, cap, "%.60s's tokenizer, not its own", !strcmp(ti.kind, "synthetic") ? "the synthetic language"
                                                      : base ? base + 1 : ti.source);
}

/* Room for 'cap' points, keeping none of the old ones. */
static int norms_reserve(TrainerNorms *nm, int cap) {
  if (cap <= nm->cap) return 0;
  double *b = realloc(nm->norm_in, sizeof *b * 3 * (size_t)cap);
  if (!b) return -1;
  nm->norm_in = b;
  nm->norm_out = b + cap;
  nm->log_freq = b + 2 * (size_t)cap;
  nm->cap = cap;
  return 0;
}

static void norms_copy(TrainerNorms *dst, const TrainerNorms *src) {
  dst->n = 0;
  if (norms_reserve(dst, src->n) == 0 && src->n > 0) {
    memcpy(dst->norm_in, src->norm_in, sizeof *dst->norm_in * (size_t)src->n);
    memcpy(dst->norm_out, src->norm_out, sizeof *dst->norm_out * (size_t)src->n);
    memcpy(dst->log_freq, src->log_freq, sizeof *dst->log_freq * (size_t)src->n);
    dst->n = src->n;
  }
  dst->step = src->step;
  dst->seq = src->seq;
}

static Sample *sample_for(Trainer *t, int id) {
  for (int i = 0; i < t->n_samples; i++)
    if (t->samples[i].id == id) return &t->samples[i];
  Sample *s = realloc(t->samples, sizeof *s * (size_t)(t->n_samples + 1));
  if (!s) return NULL;
  t->samples = s;
  s = &t->samples[t->n_samples++];
  memset(s, 0, sizeof *s);
  s->id = id;
  s->step = -1;
  s->norms.step = -1;
  return s;
}

/* Drop the caches of removed runs, with their row norm buffers. */
static void forget_removed(Trainer *t) {
  for (int i = 0; i < t->n_samples;) {
    if (lab_run_by_id(t->lab, t->samples[i].id)) {
      i++;
      continue;
    }
    free(t->samples[i].norms.norm_in);
    t->samples[i] = t->samples[--t->n_samples];
  }
}

/* Let each run write some text now and then, or at once when 'now_' (the
** trainer thread, the lab in its hand: a sample is a forward pass per
** token, which a holder of the lab should not wait for). */
static void refresh_samples(Trainer *t, int now_) {
  double now = clock_seconds();
  forget_removed(t);
  for (int i = 0; i < lab_n_runs(t->lab); i++) {
    Run *r = lab_run(t->lab, i);
    Sample *s = sample_for(t, run_id(r));
    long step = run_metrics(r)->step;
    if (!s || step == s->step) continue;
    if (s->step >= 0 && !now_ && now - s->when < SAMPLE_EVERY) {
      t->stale = 1;
      continue;
    }
    if (run_sample_bytes(r, NULL, SAMPLE_TOKENS, SAMPLE_TEMP, (uint64_t)step, s->text, sizeof s->text,
                         &s->text_len, NULL) < 0)
      s->text_len = 0;
    s->step = step;
    s->when = now;
  }
}

/* Measure each run's row norms when it has none yet, or when it stepped
** and the last measurement is a few seconds old, or at once when 'now_'
** (the lab's holder). */
static void refresh_norms(Trainer *t, int now_) {
  double now = clock_seconds();
  for (int i = 0; i < lab_n_runs(t->lab); i++) {
    Run *r = lab_run(t->lab, i);
    Sample *s = sample_for(t, run_id(r));
    long step = run_metrics(r)->step;
    if (!s || (s->norms.seq && step == s->norms.step)) continue;
    if (s->norms.seq && !now_ && now - s->norms_when < NORMS_EVERY) {
      t->stale = 1;
      continue;
    }
    int vocab = run_options(r)->model.vocab, n = -1;
    if (norms_reserve(&s->norms, vocab) == 0)
      n = run_row_norms(r, s->norms.norm_in, s->norms.norm_out, s->norms.log_freq, vocab, NULL);
    s->norms.n = n > 0 ? n : 0;   /* a run without training data has no frequencies */
    s->norms.step = step;
    s->norms.seq = ++t->norms_seq;
    s->norms_when = now;
  }
}

/* Each run's sample and row norms, when they lag its step by a few
** seconds or at once when 'now_'; 'stale' tells whether one still lags,
** so that a paused lab is brought up to date when the trainer idles. */
void snap_refresh(Trainer *t, int now_) {
  t->stale = 0;
  refresh_samples(t, now_);
  refresh_norms(t, now_);
}

/* The row norms alone, for a holder releasing the lab: quick, and what a
** changed lab shows first; samples are the trainer's. */
void snap_refresh_norms(Trainer *t) {
  refresh_norms(t, 0);
  /* A holder that stepped a run leaves its sample behind: the idle
  ** trainer takes it. Only then, or a release would wake it for nothing. */
  for (int i = 0; i < lab_n_runs(t->lab); i++) {
    Run *r = lab_run(t->lab, i);
    const Sample *s = sample_for(t, run_id(r));
    if (s && s->step != run_metrics(r)->step) t->stale = 1;
  }
}

/* ------------------------------------------------------------ publishing */

static int runs_changed(const TrainerSnap *s, Lab *lab) {
  if (s->n_runs != lab_n_runs(lab)) return 1;
  for (int i = 0; i < s->n_runs; i++)
    if (s->runs[i].id != run_id(lab_run(lab, i))) return 1;
  return 0;
}

static int snap_reserve(TrainerSnap *s, int n) {
  if (n <= s->cap_runs) return 0;
  TrainerRun *r = realloc(s->runs, sizeof *r * (size_t)n);
  if (!r) return -1;
  memset(r + s->cap_runs, 0, sizeof *r * (size_t)(n - s->cap_runs));
  for (int i = s->cap_runs; i < n; i++) r[i].id = -1;
  s->runs = r;
  s->cap_runs = n;
  return 0;
}

/* The progress of the job in progress, if one runs, into 's'. */
static void job_progress(const Trainer *t, TrainerSnap *s) {
  s->job[0] = '\0';
  s->job_done = s->job_total = 0;
  for (int i = 0; i < N_TICKETS; i++) {
    const Ticket *k = &t->tickets[i];
    if (k->id < 0 || !k->fn || !k->running) continue;
    snprintf(s->job, sizeof s->job, "%s", k->what);
    s->job_done = k->done;
    s->job_total = k->total;
  }
}

static long owed_steps(const Trainer *t) {
  long n = 0;
  for (int i = 0; i < N_TICKETS; i++)
    if (t->tickets[i].id >= 0 && t->tickets[i].state == 0) n += t->tickets[i].left;
  return n;
}

/* Fill 'pub' from the lab; 'full' copies the histories whatever their age.
** Called by the lab's holder, with 'mu' locked. */
void snap_fill(Trainer *t, double now, int full) {
  TrainerSnap *s = t->pub;
  int n = lab_n_runs(t->lab);
  full = full || t->pub_stale || runs_changed(s, t->lab) || now - t->last_hist >= HIST_EVERY;
  if (snap_reserve(s, n) < 0) n = s->cap_runs;
  t->n_active = 0;
  for (int i = 0; i < n; i++) {
    Run *r = lab_run(t->lab, i);
    TrainerRun *tr = &s->runs[i];
    if (tr->id != run_id(r)) {
      history_free(tr->hist);
      tr->hist = NULL;
      tr->hist_mark = 0;
      tr->id = run_id(r);
      tr->norms.n = 0;
      tr->norms.step = -1;
      tr->norms.seq = 0;
    }
    snprintf(tr->name, sizeof tr->name, "%s", run_name(r));
    tr->m = *run_metrics(r);
    const RunOptions *o = run_options(r);
    tr->lens_every = o->lens_every;
    tr->eval_every = o->eval_every;
    tr->align_every = o->align_every;
    tr->opt = *o;
    if (!tr->m.paused) t->n_active++;
    if (full) copy_history(tr, run_history(r));
    sample_note(r, tr->sample_note, sizeof tr->sample_note);
    Sample *sm = sample_for(t, tr->id);
    if (sm) {
      memcpy(tr->sample, sm->text, sizeof tr->sample);
      tr->sample_len = sm->text_len;
      tr->sample_step = sm->step;
      if (tr->norms.seq != sm->norms.seq) norms_copy(&tr->norms, &sm->norms);
    }
  }
  for (int i = n; i < s->cap_runs; i++) {
    history_free(s->runs[i].hist);
    s->runs[i].hist = NULL;
    s->runs[i].hist_mark = 0;
    s->runs[i].id = -1;
    s->runs[i].norms.n = 0;
    s->runs[i].norms.seq = 0;
  }
  s->n_runs = n;
  if (full) {
    t->last_hist = now;
    t->pub_stale = 0;
  }
  s->version = ++t->version;
  s->lab_steps = t->lab_steps;
  s->running = t->running;
  s->owed = owed_steps(t);
  s->holding = t->hold;
  s->steps_per_s = t->rate;
  job_progress(t, s);
  s->msg_seq = t->msg_seq;
  memcpy(s->msg, t->msg, sizeof s->msg);
}

void snap_publish(Trainer *t, int full) {
  double now = clock_seconds();
  pthread_mutex_lock(&t->mu);
  snap_fill(t, now, full);
  pthread_mutex_unlock(&t->mu);
  wake(t, 0);
}

int trainer_take(Trainer *t, TrainerSnap **snap) {
  int got = 0;
  /* Drain first: a byte written after this is for a publication this take
  ** may miss, and must stay to wake the UI again (drained after clearing
  ** 'wake_pending', it would be lost, and no byte would come again). */
  trainer_drain(t);
  pthread_mutex_lock(&t->mu);
  if (t->pub->version > (*snap)->version) {
    TrainerSnap *s = t->pub;
    t->pub = *snap;
    *snap = s;
    t->pub_stale = 1;   /* the next publication copies the histories again */
    t->handed = s;
    got = 1;
  }
  atomic_store(&t->wake_pending, 0);
  pthread_mutex_unlock(&t->mu);
  return got;
}

void trainer_drain(Trainer *t) {
  char buf[64];
  while (read(t->wake[0], buf, sizeof buf) > 0) {
  }
}

int trainer_wake_fd(const Trainer *t) { return t->wake[0]; }

/* ------------------------------------------------------------ reading */

/* The newest publication: 'pub', unless the UI took it and nothing was
** filled since. Called with 'mu' locked. */
static const TrainerSnap *newest(const Trainer *t) {
  return t->handed && t->handed->version > t->pub->version ? t->handed : t->pub;
}

int trainer_view(Trainer *t, int id, HostViewFn fn, void *ctx) {
  int seen = 0;
  pthread_mutex_lock(&t->mu);
  const TrainerSnap *s = newest(t);
  for (int i = 0; i < s->n_runs; i++) {
    const TrainerRun *r = &s->runs[i];
    if (id >= 0 && r->id != id) continue;
    HostRunView v = {r->id, r->name, &r->m, &r->opt, r->hist};
    if (fn) fn(ctx, &v);
    seen++;
  }
  pthread_mutex_unlock(&t->mu);
  return seen;
}
