/*
** trainer.c -- the training thread, its queue and its snapshots.
**
** Who may touch the lab: the trainer thread while 'stepping' is set, or the
** thread that acquired it while 'held' is set; never both (the mutex 'mu'
** guards the two flags, the queue, the tickets and the published snapshot).
** The thread waits on 'cv' whenever the lab is held, someone waits to hold
** it, or there is nothing to do; acquirers wait on the same 'cv' for the
** step in progress to end. So an acquirer waits at most one step.
**
** Snapshots are double-buffered: the trainer fills 'pub' in place under the
** mutex after every step and the UI swaps it for its own old one. Metrics
** and options are copied every time; histories (the large part) only when
** they changed since the copy in hand (a cheap mark tells), and then when
** the UI has just taken 'pub' away, before the trainer goes idle, when a
** ticket or a holder of the lab is done, or every HIST_EVERY seconds: while
** training runs flat out, a snapshot's histories may lag its metrics by
** that much. Ticket states change in the same locked section that fills
** 'pub', so whoever sees a ticket done sees its steps published.
**
** Text samples and row norms are measured by the lab's holder every few
** seconds into a per-run cache ('Sample'), outside the mutex; 'fill' copies
** a run's row norms into a snapshot only when it holds an older measurement
** (a sequence number tells), into memory allocated on first use.
**
** The newest publication is 'pub', or, right after a take and until the
** next fill, the snapshot the UI took ('handed', which only the UI's next
** take changes). 'trainer_view' reads whichever is newer under the mutex:
** that is how the Lua layer reads the lab without waiting for a step.
** The UI is woken by one byte on a pipe, written only when no wake-up is
** pending yet, so a trainer that steps a thousand times a second does not
** wake the UI a thousand times.
**
** Handing over: while the Lua layer has on_step callbacks ('handover'
** set), every step is handed to the Lua thread before the next one is
** taken. The step is published, the UI woken, and the trainer waits (idle,
** so the lab can be acquired meanwhile) until 'trainer_handover_done' says
** the callbacks ran; the ticket whose last step that was reads as done
** only then, so a script that waits for it sees every callback run first.
** Holding ('hold') keeps every ticket waiting: a paused script's steps.
**
** Jobs: a ticket may carry a job (host.h) instead of steps. It is served
** in the tickets' order, never while the lab is held, a holder waits for it
** or a step waits for its callbacks, and never held back by the throttle;
** the thread runs it as it runs a step ('stepping' set, the mutex free).
** At each of its reports the job lends the lab: queued commands run and
** acquirers hold it, 'stepping' cleared meanwhile, so nobody waits for a
** whole job (the job's run refuses what would disturb it). A job told to
** stop lends nothing: the quit path stops jobs first ('trainer_stop_jobs')
** so that its save sees the lab as it was before. A journal turns lending
** off ('trainer_set_lending'): its replay runs a job whole. Holding keeps a job from starting; one
** that started runs on (it cannot stop halfway without failing). While it
** runs, the ticket reads as waiting whatever happens to it: a cancel only
** sets 'stop', which the job's next report sees, and the ticket ends when
** the job returns, so whoever reads the job's memory after 'poll' said it
** ended reads it alone. Each report also publishes the job's progress
** (what, done, total: the snapshot's 'job'), at most every JOB_PUBLISH
** seconds. The memory belongs to the ticket: 'trainer_drop_job' marks it
** dropped (and stops the job), and it is freed by whoever comes last, the
** dropper after the end or the thread at the end after a drop; a slot is
** not reused while it holds memory. A job that fails with nobody left to
** read its error makes it the snapshot's message.
*/
#include "base/clock.h"
#include "trainer/trainer.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_TICKETS 64
#define N_COMMANDS 64
#define HIST_EVERY 0.05       /* seconds between history copies at most */
#define SAMPLE_EVERY 3.0      /* seconds between text samples of a run */
#define SAMPLE_TOKENS 64
#define SAMPLE_TEMP 0.8
#define NORMS_EVERY 3.0       /* seconds between row norm measurements of a run */
#define JOB_PUBLISH 0.1       /* seconds between publications of a job's progress */

typedef struct Ticket {
  long id;        /* -1: slot never used */
  int run_id;     /* -1: lockstep */
  long left;
  int state;      /* 0 waiting, 1 done, -1 failed */
  char err[ERR_MSG_MAX];
  /* A job instead of steps (fn NULL: steps). */
  HostJobFn fn;
  void *arg;                /* the job's memory, until freed (see the header) */
  HostJobFree free_arg;
  int running, stop, dropped;
  char what[64];            /* its last report */
  long done, total;
} Ticket;

typedef struct Command {
  TrainerFn fn;
  size_t n;
  unsigned char arg[TRAINER_ARG_MAX];
} Command;

/* What the holder measures now and then, per run. */
typedef struct Sample {
  int id;
  long step;
  double when;
  char text[TRAINER_SAMPLE_MAX];   /* raw bytes: the panel shows bad ones escaped */
  size_t text_len;
  TrainerNorms norms;
  double norms_when;
} Sample;

struct Trainer {
  Watchdog *watchdog;            /* told of the waits of trainer_acquire (may be NULL) */
  Lab *lab;
  pthread_t thread;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t cv;

  int quit, running, stepping, held, waiters, publish_req;
  int handover;                  /* hand every step to the Lua thread */
  long handover_seq, handover_ack;   /* steps handed over, and acknowledged */
  long handover_step;            /* the lab-wide step of the last one */
  long handover_ticket;          /* the ticket it ended (-1: none) */
  int hold;                      /* tickets wait: a script is paused */
  pthread_t holder;
  int n_active;                  /* runs not paused, at the last publication */

  Ticket tickets[N_TICKETS];
  long next_ticket;
  Command cmds[N_COMMANDS];
  int cmd_head, cmd_n;

  TrainerSnap *pub;
  TrainerSnap *handed;           /* the snapshot last taken, NULL before */
  int pub_stale;                 /* 'pub' came back from the UI: its histories are old */
  long version, lab_steps;
  double last_hist, last_step_time, rate;
  char msg[ERR_MSG_MAX];
  long msg_seq;

  int wake[2];
  atomic_int wake_pending;

  Sample *samples;               /* by run id; only the lab's holder touches them */
  int n_samples;
  uint64_t norms_seq;            /* row norm measurements so far */
  int norms_stale;               /* a run stepped since its last measurement */

  double last_job_pub;           /* when a job's progress was last published */
  int lend;                      /* a job lends the lab at its reports (serve_between) */

  _Atomic double speed;          /* lab steps a second at most, 0: flat out */
  double next_step_at;           /* the throttle lets the next step start then */
};

static void wake(Trainer *t, int force) {
  if (atomic_exchange(&t->wake_pending, 1) && !force) return;
  char b = 1;
  ssize_t n = write(t->wake[1], &b, 1);   /* EAGAIN: a byte is waiting already */
  (void)n;
}

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

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211u; }

/* A mark that changes whenever a point or an event is added: every push
** adds to the last bucket's count or starts a bucket (after a merge the
** bucket count changes too). Costs a walk over the series, not a copy. */
static uint64_t history_mark(const History *h) {
  int n;
  history_events(h, &n);
  uint64_t x = mix(mix(14695981039346656037u, (uint64_t)n), (uint64_t)history_events_dropped(h));
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

/* Let each run write some text now and then (the trainer thread, lab in hand). */
static void refresh_samples(Trainer *t) {
  double now = clock_seconds();
  forget_removed(t);
  for (int i = 0; i < lab_n_runs(t->lab); i++) {
    Run *r = lab_run(t->lab, i);
    Sample *s = sample_for(t, run_id(r));
    long step = run_metrics(r)->step;
    if (!s || step == s->step || (s->step >= 0 && now - s->when < SAMPLE_EVERY)) continue;
    if (run_sample_bytes(r, NULL, SAMPLE_TOKENS, SAMPLE_TEMP, (uint64_t)step, s->text, sizeof s->text,
                         &s->text_len, NULL) < 0)
      s->text_len = 0;
    s->step = step;
    s->when = now;
  }
}

/* Measure each run's row norms when it has none yet, or when it stepped
** and the last measurement is a few seconds old, or at once when 'now_'
** (the lab's holder). 'norms_stale' tells whether a run stepped since. */
static void refresh_norms(Trainer *t, int now_) {
  double now = clock_seconds();
  t->norms_stale = 0;
  for (int i = 0; i < lab_n_runs(t->lab); i++) {
    Run *r = lab_run(t->lab, i);
    Sample *s = sample_for(t, run_id(r));
    long step = run_metrics(r)->step;
    if (!s || (s->norms.seq && step == s->norms.step)) continue;
    if (s->norms.seq && !now_ && now - s->norms_when < NORMS_EVERY) {
      t->norms_stale = 1;
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

/* A step was handed over and its callbacks have not run yet. */
static int awaiting_handover(const Trainer *t) { return t->handover && t->handover_ack < t->handover_seq; }

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
static void fill(Trainer *t, double now, int full) {
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

static void publish(Trainer *t, int full) {
  double now = clock_seconds();
  pthread_mutex_lock(&t->mu);
  fill(t, now, full);
  pthread_mutex_unlock(&t->mu);
  wake(t, 0);
}

static void set_message(Trainer *t, const char *msg) {
  snprintf(t->msg, sizeof t->msg, "%s", msg);
  t->msg_seq++;
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

/* ------------------------------------------------------------ tickets */

static Ticket *next_ticket(Trainer *t) {
  Ticket *best = NULL;
  if (t->hold) return NULL;
  for (int i = 0; i < N_TICKETS; i++) {
    Ticket *k = &t->tickets[i];
    if (k->id >= 0 && k->state == 0 && !k->running && (!best || k->id < best->id)) best = k;
  }
  return best;
}

long trainer_submit(Trainer *t, int id, long n, Err *err) {
  pthread_mutex_lock(&t->mu);
  long tid = t->next_ticket;
  Ticket *k = &t->tickets[tid % N_TICKETS];
  if (k->id >= 0 && (k->state == 0 || k->arg)) {
    pthread_mutex_unlock(&t->mu);
    return err_set(err, "too many step requests in flight (%d)", N_TICKETS);
  }
  t->next_ticket++;
  *k = (Ticket){.id = tid, .run_id = id, .left = n, .state = n > 0 ? 0 : 1};
  t->publish_req = 1;   /* the steps owed show at once, even held */
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  return tid;
}

int trainer_poll(Trainer *t, long ticket, Err *err) {
  pthread_mutex_lock(&t->mu);
  const Ticket *k = &t->tickets[ticket % N_TICKETS];
  int state;
  if (ticket < 0 || ticket >= t->next_ticket) state = err_set(err, "no step request %ld", ticket);
  else if (k->id != ticket) state = 1;   /* long finished: its slot was reused */
  else {
    state = k->state;
    if (state < 0) err_set(err, "%s", k->err);
    /* Its last step's callbacks have not run yet. */
    if (state > 0 && awaiting_handover(t) && t->handover_ticket == ticket) state = 0;
  }
  pthread_mutex_unlock(&t->mu);
  return state;
}

/* Free a job's memory if nobody needs it any more: it ended (or never
** started) and was dropped. Called with 'mu' locked. */
static void job_release(Ticket *k) {
  if (!k->arg || !k->dropped || k->running || k->state == 0) return;
  if (k->free_arg) k->free_arg(k->arg);
  k->arg = NULL;
}

/* Stop ticket 'k': a waiting one fails at once, a running job at its next
** report. Called with 'mu' locked. */
static void stop_ticket(Ticket *k, const char *why) {
  if (k->id < 0 || k->state != 0) return;
  if (k->running) {
    k->stop = 1;
    return;
  }
  k->state = -1;
  snprintf(k->err, sizeof k->err, "%s", why);
  job_release(k);
}

static void cancel_locked(Trainer *t, const char *why) {
  for (int i = 0; i < N_TICKETS; i++) stop_ticket(&t->tickets[i], why);
}

void trainer_cancel(Trainer *t) {
  pthread_mutex_lock(&t->mu);
  cancel_locked(t, "interrupted");
  t->publish_req = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  wake(t, 1);
}

/* ------------------------------------------------------------ the thread */

/* The next ticket is a job (which the throttle never holds back). */
static int job_next(Trainer *t) {
  const Ticket *k = next_ticket(t);
  return k && k->fn;
}

/* A step may be taken now: none waits for the Lua thread. */
static int may_step(const Trainer *t) { return !awaiting_handover(t); }

/* Steps are asked for: by a ticket, or by continuous training. */
static int wants_step(const Trainer *t) { return next_ticket((Trainer *)t) || (t->running && t->n_active > 0); }

static int has_work(const Trainer *t) {
  return t->cmd_n > 0 || t->publish_req || (may_step(t) && wants_step(t));
}

/* The lab-wide step after a step, as the headless runner reports it: the
** highest step of any run after a lockstep, else that run's step. */
static long handed_step(Trainer *t, int run_id_) {
  Run *one = run_id_ >= 0 ? lab_run_by_id(t->lab, run_id_) : NULL;
  if (one) return run_metrics(one)->step;
  long step = 0;
  for (int i = 0; i < lab_n_runs(t->lab); i++)
    if (run_metrics(lab_run(t->lab, i))->step > step) step = run_metrics(lab_run(t->lab, i))->step;
  return step;
}

/* One step of run 'run_id_', or of every unpaused run when it is -1. */
static int do_step(Trainer *t, int run_id_, Err *err) {
  if (run_id_ < 0) return lab_step(t->lab, err);
  Run *r = lab_run_by_id(t->lab, run_id_);
  if (!r) return err_set(err, "run %d was removed", run_id_);
  return run_step(r, err);
}

static void after_step(Trainer *t, double t0) {
  double now = clock_seconds(), dt = now - t0;
  if (dt > 0) t->rate = t->rate > 0 ? 0.9 * t->rate + 0.1 / dt : 1 / dt;
  t->lab_steps++;
}

/* Training stopped with row norms older than the last steps: measure them
** now, so that a paused lab shows its weights as they are. Called with
** 'mu' locked, when there is nothing else to do. */
static void idle_refresh(Trainer *t) {
  t->stepping = 1;
  pthread_mutex_unlock(&t->mu);
  refresh_norms(t, 1);
  pthread_mutex_lock(&t->mu);
  fill(t, clock_seconds(), 0);
  pthread_mutex_unlock(&t->mu);
  wake(t, 0);
  pthread_mutex_lock(&t->mu);
  t->stepping = 0;
  pthread_cond_broadcast(&t->cv);
}

/* ------------------------------------------------------------ the throttle */

/* A step is what the loop does next: no command first, none waiting for
** its callbacks, and a ticket or continuous training asks for one. Only
** then may the throttle hold it back and book the next one. Called with
** 'mu' locked. */
static int step_next(Trainer *t) { return t->cmd_n == 0 && may_step(t) && wants_step(t) && !job_next(t); }

/* What the throttle lets one pass of the loop do. */
typedef enum Throttle {
  THROTTLE_GO,      /* whatever is next, a step too */
  THROTTLE_HOLD,    /* publish what is asked, but the step waits for its slot */
  THROTTLE_WAITED   /* it waited a while: look again */
} Throttle;

/* Hold the next step back until its time under the throttle: wait on 'cv'
** (so commands, acquirers and a quit are served meanwhile) and look again,
** or publish at once what is asked (a new ticket's owed steps) and step
** later; when its time has come, book the step after it. A slot is booked
** only for a step taken. Called with 'mu' locked. */
static Throttle throttle_wait(Trainer *t) {
  double speed = atomic_load(&t->speed), now = clock_seconds();
  if (speed <= 0 || !step_next(t)) return THROTTLE_GO;
  if (now < t->next_step_at) {
    if (t->publish_req) return THROTTLE_HOLD;
    /* At most a second at a time: a slower pace only waits more often. */
    double left = fmin(t->next_step_at - now, 1.0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);   /* the clock 'cv' waits on */
    long ns = ts.tv_nsec + (long)(fmod(left, 1.0) * 1e9);
    ts.tv_sec += (time_t)left + ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&t->cv, &t->mu, &ts);
    return THROTTLE_WAITED;
  }
  t->next_step_at = now + 1 / speed;
  return THROTTLE_GO;
}

void trainer_set_speed(Trainer *t, double steps_per_s) {
  pthread_mutex_lock(&t->mu);
  /* Flat out for 0 (or nonsense); a pace far below a step a minute or
  ** beyond any step's speed is no pace at all. */
  double v = steps_per_s > 0 && isfinite(steps_per_s) ? fmin(fmax(steps_per_s, TRAINER_SPEED_MIN), 1e9) : 0;
  atomic_store(&t->speed, v);
  t->next_step_at = 0;   /* the new pace starts with the next step */
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

double trainer_speed(const Trainer *t) { return atomic_load(&t->speed); }

/* After a command or a step: its ticket's state, the handover of the step
** to the Lua thread, and the publication, then the UI woken. Called with
** 'mu' unlocked; returns with it unlocked. */
static void settle(Trainer *t, long kid, int rc, const Err *err, long handed) {
  pthread_mutex_lock(&t->mu);
  if (rc < 0) set_message(t, err->msg);
  Ticket *k = kid >= 0 ? &t->tickets[kid % N_TICKETS] : NULL;
  if (k && k->id == kid && k->state == 0) {
    if (rc < 0) {
      k->state = -1;
      snprintf(k->err, sizeof k->err, "%s", err->msg);
    } else if (--k->left <= 0) {
      k->state = 1;
    }
  }
  int done = k && k->id == kid && k->state != 0;
  int hand = handed >= 0 && t->handover;
  if (hand) {
    t->handover_step = handed;
    t->handover_ticket = done ? kid : -1;
    t->handover_seq++;
  }
  /* Exact when a ticket ends and before a pause (a step handed over is
  ** none: the next follows its callbacks); in the same locked section as
  ** the ticket's state, so a finished ticket is published. */
  fill(t, clock_seconds(), done || !(t->cmd_n > 0 || t->publish_req || wants_step(t)));
  pthread_mutex_unlock(&t->mu);
  wake(t, done || hand);
}

/* ------------------------------------------------------------ jobs */

/* Take the oldest command off the queue into 'cmd'; 0 when there is none.
** Called with 'mu' locked. */
static int pop_command(Trainer *t, Command *cmd) {
  if (t->cmd_n == 0) return 0;
  *cmd = t->cmds[t->cmd_head];
  t->cmd_head = (t->cmd_head + 1) % N_COMMANDS;
  t->cmd_n--;
  return 1;
}


typedef struct JobReport {
  HostJobProgress p;
  Trainer *t;
  Ticket *k;
} JobReport;

/* Between two pieces of a job, whoever waits for the lab has it: the
** commands queued (a key's change) run, and an acquirer holds the lab
** until it lets go; the job's run refuses what would disturb the job
** (lab.h, run_fitting). Steps and other jobs wait for the job's end, as
** their tickets come after it. Returns whether anything was served.
** Called with 'mu' locked; returns with it locked. */
static int serve_between(Trainer *t) {
  int served = 0;
  if (!t->lend) return 0;
  Command cmd;
  while (!t->quit && pop_command(t, &cmd)) {
    pthread_mutex_unlock(&t->mu);
    Err err = {{0}};
    int rc = cmd.fn(t->lab, cmd.arg, &err);
    pthread_mutex_lock(&t->mu);
    if (rc < 0) set_message(t, err.msg);
    served = 1;
  }
  if (t->waiters > 0 && !t->quit) {
    t->stepping = 0;
    pthread_cond_broadcast(&t->cv);
    while (t->held || (!t->quit && t->waiters > 0)) pthread_cond_wait(&t->cv, &t->mu);
    t->stepping = 1;
    served = 1;
  }
  return served;
}

/* A job's report (the trainer thread, the lab in hand): its progress, now
** and then a publication of it, and the lab lent to whoever waits for it
** (serve_between); nonzero once it is to stop. */
static int job_report(HostJobProgress *p, const char *what, long done, long total) {
  JobReport *jr = p->ud;
  Trainer *t = jr->t;
  Ticket *k = jr->k;
  pthread_mutex_lock(&t->mu);
  snprintf(k->what, sizeof k->what, "%s", what ? what : "");
  k->done = done;
  k->total = total;
  int served = !(k->stop || t->quit) && serve_between(t);
  int stop = k->stop || t->quit;
  double now = clock_seconds();
  int pub = served || now - t->last_job_pub >= JOB_PUBLISH;
  if (pub) {
    fill(t, now, 0);
    t->last_job_pub = now;
  }
  pthread_mutex_unlock(&t->mu);
  if (pub) wake(t, 0);
  return stop;
}

static int run_job(Trainer *t, Ticket *k, HostJobFn fn, void *arg, Err *err) {
  JobReport jr = {{job_report, NULL}, t, k};
  jr.p.ud = &jr;
  return fn(t->lab, arg, &jr.p, err);
}

/* The job of ticket 'k' returned 'rc': the ticket ends, its memory is
** freed if it was dropped, the lab is published. */
static void settle_job(Trainer *t, Ticket *k, int rc, const Err *err) {
  pthread_mutex_lock(&t->mu);
  k->running = 0;
  k->state = rc < 0 ? -1 : 1;
  if (rc < 0) snprintf(k->err, sizeof k->err, "%s", err->msg);
  if (rc < 0 && k->dropped) set_message(t, err->msg);   /* nobody else will say it */
  job_release(k);
  fill(t, clock_seconds(), 1);
  pthread_mutex_unlock(&t->mu);
  wake(t, 1);
}

long trainer_submit_job(Trainer *t, HostJobFn fn, void *arg, HostJobFree free_arg, Err *err) {
  pthread_mutex_lock(&t->mu);
  long tid = t->next_ticket;
  Ticket *k = &t->tickets[tid % N_TICKETS];
  if (k->id >= 0 && (k->state == 0 || k->arg)) {
    pthread_mutex_unlock(&t->mu);
    if (free_arg) free_arg(arg);
    return err_set(err, "too many requests in flight (%d)", N_TICKETS);
  }
  t->next_ticket++;
  *k = (Ticket){.id = tid, .run_id = -1, .fn = fn, .arg = arg, .free_arg = free_arg};
  t->publish_req = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  return tid;
}

void trainer_drop_job(Trainer *t, long ticket) {
  pthread_mutex_lock(&t->mu);
  Ticket *k = ticket >= 0 ? &t->tickets[ticket % N_TICKETS] : NULL;
  if (k && k->id == ticket && k->fn) {
    k->dropped = 1;
    stop_ticket(k, "dropped");
    job_release(k);
    pthread_cond_broadcast(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
}

void trainer_set_lending(Trainer *t, int on) {
  pthread_mutex_lock(&t->mu);
  t->lend = on != 0;
  pthread_mutex_unlock(&t->mu);
}

void trainer_stop_jobs(Trainer *t) {
  pthread_mutex_lock(&t->mu);
  for (int i = 0; i < N_TICKETS; i++)
    if (t->tickets[i].fn) stop_ticket(&t->tickets[i], "stopped: the lab is closing");
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

static void *trainer_main(void *arg) {
  Trainer *t = arg;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGWINCH);
  pthread_sigmask(SIG_BLOCK, &set, NULL);

  pthread_mutex_lock(&t->mu);
  for (;;) {
    if (!t->quit && !t->held && !t->waiters && !has_work(t) && t->norms_stale && !awaiting_handover(t))
      idle_refresh(t);
    while (!t->quit && (t->held || t->waiters || !has_work(t))) pthread_cond_wait(&t->cv, &t->mu);
    if (t->quit) break;
    Throttle pace = throttle_wait(t);
    if (pace == THROTTLE_WAITED) continue;
    Command cmd = {0};
    int have_cmd = pop_command(t, &cmd);
    /* A command goes alone, so that a queue of them never delays an acquirer. */
    int may = !have_cmd && pace == THROTTLE_GO && may_step(t);
    Ticket *k = may ? next_ticket(t) : NULL;
    long kid = k ? k->id : -1;
    int krun = k ? k->run_id : -1;
    HostJobFn job = k ? k->fn : NULL;
    void *job_arg = k ? k->arg : NULL;
    if (job) k->running = 1;
    int step = may && !job && (k || (t->running && t->n_active > 0));
    t->stepping = 1;
    t->publish_req = 0;
    pthread_mutex_unlock(&t->mu);

    Err err = {{0}};
    int rc = 0;
    double t0 = clock_seconds();
    if (have_cmd) rc = cmd.fn(t->lab, cmd.arg, &err);
    else if (job) rc = run_job(t, k, job, job_arg, &err);
    else if (step) rc = do_step(t, krun, &err);
    long handed = step && rc == 0 ? handed_step(t, krun) : -1;
    if (step) {
      after_step(t, t0);
      refresh_samples(t);
      refresh_norms(t, 0);
    }

    if (job) settle_job(t, k, rc, &err);
    else settle(t, kid, rc, &err, handed);
    pthread_mutex_lock(&t->mu);
    t->stepping = 0;
    pthread_cond_broadcast(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

/* ------------------------------------------------------------ life */

Trainer *trainer_new(Lab *lab, Err *err) {
  Trainer *t = calloc(1, sizeof *t);
  if (!t) return err_set(err, "out of memory starting the trainer"), NULL;
  t->lab = lab;
  t->wake[0] = t->wake[1] = -1;
  t->handover_ticket = -1;
  t->lend = 1;
  for (int i = 0; i < N_TICKETS; i++) t->tickets[i].id = -1;
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->pub = trainer_snap_new();
  if (!t->pub || pipe(t->wake) < 0) {
    err_set(err, "cannot start the trainer: %s", t->pub ? strerror(errno) : "out of memory");
    trainer_free(t);
    return NULL;
  }
  for (int i = 0; i < 2; i++) {
    fcntl(t->wake[i], F_SETFL, fcntl(t->wake[i], F_GETFL) | O_NONBLOCK);
    fcntl(t->wake[i], F_SETFD, FD_CLOEXEC);
  }
  refresh_samples(t);
  refresh_norms(t, 1);
  publish(t, 1);

  /* Create the thread with the signals already blocked, so there is no
  ** moment when one could land on it. */
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGWINCH);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  int rc = pthread_create(&t->thread, NULL, trainer_main, t);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    err_set(err, "cannot start the trainer thread: %s", strerror(rc));
    trainer_free(t);
    return NULL;
  }
  t->started = 1;
  return t;
}

void trainer_free(Trainer *t) {
  if (!t) return;
  if (t->started) {
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
  }
  for (int i = 0; i < N_TICKETS; i++) {   /* jobs never run, or never dropped */
    Ticket *k = &t->tickets[i];
    if (k->arg && k->free_arg) k->free_arg(k->arg);
  }
  for (int i = 0; i < 2; i++)
    if (t->wake[i] >= 0) close(t->wake[i]);
  trainer_snap_free(t->pub);
  for (int i = 0; i < t->n_samples; i++) free(t->samples[i].norms.norm_in);
  free(t->samples);
  pthread_cond_destroy(&t->cv);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

/* ------------------------------------------------------------ control */

void trainer_set_running(Trainer *t, int on) {
  pthread_mutex_lock(&t->mu);
  t->running = on != 0;
  t->publish_req = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

int trainer_running(Trainer *t) {
  pthread_mutex_lock(&t->mu);
  int on = t->running;
  pthread_mutex_unlock(&t->mu);
  return on;
}

int trainer_post(Trainer *t, TrainerFn fn, const void *arg, size_t n, Err *err) {
  if (n > TRAINER_ARG_MAX) return err_set(err, "command argument too large (%zu bytes)", n);
  pthread_mutex_lock(&t->mu);
  if (t->cmd_n == N_COMMANDS) {
    pthread_mutex_unlock(&t->mu);
    return err_set(err, "the trainer's queue is full (%d commands)", N_COMMANDS);
  }
  Command *c = &t->cmds[(t->cmd_head + t->cmd_n) % N_COMMANDS];
  c->fn = fn;
  c->n = n;
  if (n) memcpy(c->arg, arg, n);
  t->cmd_n++;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  return 0;
}

/* The lab for the calling thread once no step runs and nobody holds it,
** waiting until 'until' at most (NULL: for ever); NULL when that came first. */
static Lab *acquire_until(Trainer *t, const struct timespec *until) {
  pthread_mutex_lock(&t->mu);
  if (t->held && pthread_equal(t->holder, pthread_self())) {
    t->held++;
  } else {
    t->waiters++;
    int late = 0, waits = !until && (t->stepping || t->held);
    /* A wait for ever ends with the step: a signal meanwhile waits for it. */
    if (waits) watchdog_busy(t->watchdog, 1);
    while ((t->stepping || t->held) && !late)
      late = (until ? pthread_cond_timedwait(&t->cv, &t->mu, until) : pthread_cond_wait(&t->cv, &t->mu)) == ETIMEDOUT;
    if (waits) watchdog_busy(t->watchdog, 0);
    t->waiters--;
    if (t->stepping || t->held) {   /* gave up: the trainer may go on */
      pthread_cond_broadcast(&t->cv);
      pthread_mutex_unlock(&t->mu);
      return NULL;
    }
    t->held = 1;
    t->holder = pthread_self();
  }
  pthread_mutex_unlock(&t->mu);
  return t->lab;
}

Lab *trainer_acquire(Trainer *t) { return acquire_until(t, NULL); }

void trainer_set_watchdog(Trainer *t, Watchdog *w) { t->watchdog = w; }

Lab *trainer_acquire_within(Trainer *t, double seconds) {
  struct timespec until = clock_deadline(seconds);
  return acquire_until(t, &until);
}

void trainer_release(Trainer *t) {
  /* The holder changed the lab, perhaps (a new run, a load): show it, also
  ** from a nested release, so that a read right after the change sees it
  ** while an outer holder keeps the lab. */
  refresh_norms(t, 0);
  publish(t, 1);
  pthread_mutex_lock(&t->mu);
  if (t->held > 0) t->held--;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

void trainer_set_handover(Trainer *t, int on) {
  pthread_mutex_lock(&t->mu);
  t->handover = on != 0;
  if (!on) t->handover_ack = t->handover_seq;   /* nobody will run them */
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

long trainer_handover(Trainer *t, long *step) {
  pthread_mutex_lock(&t->mu);
  long seq = awaiting_handover(t) ? t->handover_seq : 0;
  if (seq) *step = t->handover_step;
  pthread_mutex_unlock(&t->mu);
  return seq;
}

void trainer_handover_done(Trainer *t, long seq) {
  pthread_mutex_lock(&t->mu);
  if (seq > t->handover_ack) t->handover_ack = seq;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

void trainer_hold(Trainer *t, int on) {
  pthread_mutex_lock(&t->mu);
  t->hold = on != 0;
  t->publish_req = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

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

/* ------------------------------------------------------------ the Host */

static Lab *host_acquire(Host *h) { return trainer_acquire(h->ud); }
static void host_release(Host *h) { trainer_release(h->ud); }
static long host_submit(Host *h, int id, long n, Err *err) { return trainer_submit(h->ud, id, n, err); }
static int host_poll(Host *h, long ticket, Err *err) { return trainer_poll(h->ud, ticket, err); }
static void host_cancel(Host *h) { trainer_cancel(h->ud); }
static long host_submit_job(Host *h, HostJobFn fn, void *arg, HostJobFree free_arg, Err *err) {
  return trainer_submit_job(h->ud, fn, arg, free_arg, err);
}
static void host_drop_job(Host *h, long ticket) { trainer_drop_job(h->ud, ticket); }
static int host_view(Host *h, int id, HostViewFn fn, void *ctx) { return trainer_view(h->ud, id, fn, ctx); }
static void host_handover(Host *h, int on) { trainer_set_handover(h->ud, on); }
static void host_hold(Host *h, int on) { trainer_hold(h->ud, on); }

/* The callbacks of the step handed over, if one waits, on the calling
** (the Lua) thread; then the trainer goes on. */
static void host_serve(Host *h) {
  long step, seq = trainer_handover(h->ud, &step);
  if (!seq) return;
  if (h->after_step) h->after_step(h->after_step_ctx, step);
  trainer_handover_done(h->ud, seq);
}

void trainer_host(Trainer *t, Host *h) {
  memset(h, 0, sizeof *h);
  h->acquire = host_acquire;
  h->release = host_release;
  h->submit = host_submit;
  h->poll = host_poll;
  h->cancel = host_cancel;
  h->submit_job = host_submit_job;
  h->drop_job = host_drop_job;
  h->view = host_view;
  h->handover = host_handover;
  h->hold = host_hold;
  h->serve = host_serve;
  h->inline_steps = 0;
  h->ud = t;
}
