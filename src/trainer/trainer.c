/*
** trainer.c -- the training thread and its lock: the loop that steps the
** lab, the throttle, the trainer's life, and acquiring the lab. Who may
** touch the lab, and when: docs/architecture.md.
*/
#include "base/clock.h"
#include "base/sig.h"
#include "trainer/trainer.h"
#include "trainer/trainer_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ the thread */

/* The next ticket is a job (which the throttle never holds back). */
static int job_next(Trainer *t) {
  const Ticket *k = ticket_next(t);
  return k && k->fn;
}

/* A step may be taken now: none waits for the Lua thread. */
static int may_step(const Trainer *t) { return !awaiting_handover(t); }

/* Steps are asked for: by a ticket, or by continuous training. */
static int wants_step(const Trainer *t) { return ticket_next((Trainer *)t) || (t->running && t->n_active > 0); }

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

/* Nothing to do, nobody holding or waiting for the lab, and a sample or
** row norms lag their run's step. Called with 'mu' locked. */
static int idle_due(Trainer *t) {
  return !t->quit && !t->held && !t->waiters && !has_work(t) && t->stale && !awaiting_handover(t);
}

/* Training stopped with a sample or row norms older than the last steps:
** take them now, so that a paused lab shows its weights as they are.
** Called with 'mu' locked, when there is nothing else to do. */
static void idle_refresh(Trainer *t) {
  t->stepping = 1;
  pthread_mutex_unlock(&t->mu);
  snap_refresh(t, 1);
  pthread_mutex_lock(&t->mu);
  snap_fill(t, clock_seconds(), 0);
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
    struct timespec ts = clock_deadline(left);   /* 'cv' waits on the wall clock */
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
  snap_fill(t, clock_seconds(), done || !(t->cmd_n > 0 || t->publish_req || wants_step(t)));
  pthread_mutex_unlock(&t->mu);
  wake(t, done || hand);
}

/* ------------------------------------------------------------ the loop */

static void *trainer_main(void *arg) {
  Trainer *t = arg;
  pthread_mutex_lock(&t->mu);
  for (;;) {
    if (idle_due(t)) idle_refresh(t);
    /* Woken with nothing to do but a lag a holder left: back to the top. */
    while (!t->quit && (t->held || t->waiters || !has_work(t)) && !idle_due(t)) pthread_cond_wait(&t->cv, &t->mu);
    if (t->quit) break;
    if (idle_due(t)) continue;
    Throttle pace = throttle_wait(t);
    if (pace == THROTTLE_WAITED) continue;
    Command cmd = {0};
    int have_cmd = command_pop(t, &cmd);
    /* A command goes alone, so that a queue of them never delays an acquirer. */
    int may = !have_cmd && pace == THROTTLE_GO && may_step(t);
    Ticket *k = may ? ticket_next(t) : NULL;
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
    else if (job) rc = job_run(t, k, job, job_arg, &err);
    else if (step) rc = do_step(t, krun, &err);
    long handed = step && rc == 0 ? handed_step(t, krun) : -1;
    if (step) {
      after_step(t, t0);
      snap_refresh(t, 0);
    }

    if (job) job_settle(t, k, rc, &err);
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
  snap_refresh(t, 1);
  snap_publish(t, 1);

  /* The signals are the loop's: the trainer takes none. */
  int rc = sig_thread_start(&t->thread, trainer_main, t);
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

/* ------------------------------------------------------------ calls on the Lua thread */

static int on_lua_thread(const Trainer *t) { return t->has_lua_thread && pthread_equal(t->lua_thread, pthread_self()); }

/* A call waits and this thread is the one to run it (t->mu held). */
static int serve_here(const Trainer *t) { return t->call && !t->call->running && on_lua_thread(t); }

/* Run the waiting call with the lock let go meanwhile (t->mu held). */
static void serve_locked(Trainer *t) {
  TrainerCall *c = t->call;
  c->running = 1;
  pthread_mutex_unlock(&t->mu);
  int rc = c->fn(c->arg);
  pthread_mutex_lock(&t->mu);
  c->rc = rc;
  c->done = 1;
  t->call = NULL;
  pthread_cond_broadcast(&t->cv);
}

int trainer_call(Trainer *t, TrainerCallFn fn, void *arg) {
  if (!t->has_lua_thread || on_lua_thread(t)) return fn(arg);
  TrainerCall c = {.fn = fn, .arg = arg};
  pthread_mutex_lock(&t->mu);
  t->call = &c;
  pthread_cond_broadcast(&t->cv);   /* a Lua thread waiting in trainer_acquire */
  wake(t, 1);                       /* the UI's loop */
  while (!c.done && !t->quit) pthread_cond_wait(&t->cv, &t->mu);
  if (!c.done) t->call = NULL;      /* quitting: the Lua thread is the one quitting, never inside 'fn' */
  while (t->held && !t->quit) pthread_cond_wait(&t->cv, &t->mu);   /* a save took the parked lab */
  pthread_mutex_unlock(&t->mu);
  return c.done ? c.rc : -1;
}

void trainer_set_lua_thread(Trainer *t) {
  pthread_mutex_lock(&t->mu);
  t->lua_thread = pthread_self();
  t->has_lua_thread = 1;
  pthread_mutex_unlock(&t->mu);
}

int trainer_call_waiting(Trainer *t) {
  pthread_mutex_lock(&t->mu);
  int waiting = serve_here(t);
  pthread_mutex_unlock(&t->mu);
  return waiting;
}

void trainer_serve_call(Trainer *t) {
  pthread_mutex_lock(&t->mu);
  if (serve_here(t)) serve_locked(t);
  pthread_mutex_unlock(&t->mu);
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
    while ((t->stepping || t->held) && !late) {
      if (serve_here(t)) {   /* the step waits for this thread: serve it, or neither goes on */
        serve_locked(t);
        continue;
      }
      /* A step parked on a hook has not touched the weights yet: the
      ** watchdog's save (the one timed acquirer) may have the lab as it
      ** is; the step waits for it before going on (trainer_call). */
      if (until && t->call && !t->held) break;
      late = (until ? pthread_cond_timedwait(&t->cv, &t->mu, until) : pthread_cond_wait(&t->cv, &t->mu)) == ETIMEDOUT;
    }
    if (waits) watchdog_busy(t->watchdog, 0);
    t->waiters--;
    int parked = until && t->call && !t->held;
    if (!parked && (t->stepping || t->held)) {   /* gave up: the trainer may go on */
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
  snap_refresh_norms(t);
  snap_publish(t, 1);
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
