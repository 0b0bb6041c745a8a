/*
** tickets.c -- what the trainer is asked to do: tickets (steps or a job,
** served in order), the queue of commands, and the running of a job,
** which lends the lab at each of its reports. The rules a job keeps:
** docs/architecture.md.
*/
#include <string.h>

#include "base/clock.h"
#include "trainer/trainer.h"
#include "trainer/trainer_impl.h"

#define JOB_PUBLISH 0.1       /* seconds between publications of a job's progress */

/* ------------------------------------------------------------ tickets */

Ticket *ticket_next(Trainer *t) {
  Ticket *best = NULL;
  if (t->hold) return NULL;
  for (int i = 0; i < N_TICKETS; i++) {
    Ticket *k = &t->tickets[i];
    if (k->id >= 0 && k->state == 0 && !k->running && (!best || k->id < best->id)) best = k;
  }
  return best;
}

int trainer_stepping(Trainer *t, int id) {
  pthread_mutex_lock(&t->mu);
  int how = t->running ? 2 : 0;
  for (int i = 0; i < N_TICKETS; i++) {
    const Ticket *k = &t->tickets[i];
    if (k->id >= 0 && k->state == 0 && !k->fn && (k->run_id == id || k->run_id < 0)) how = 1;
  }
  pthread_mutex_unlock(&t->mu);
  return how;
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

/* ------------------------------------------------------------ jobs */

/* A command at the end of the queue, run between two steps. */
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

/* Take the oldest command off the queue into 'cmd'; 0 when there is none.
** Called with 'mu' locked. */
int command_pop(Trainer *t, Command *cmd) {
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
  while (!t->quit && command_pop(t, &cmd)) {
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
    snap_fill(t, now, 0);
    t->last_job_pub = now;
  }
  pthread_mutex_unlock(&t->mu);
  if (pub) wake(t, 0);
  return stop;
}

int job_run(Trainer *t, Ticket *k, HostJobFn fn, void *arg, Err *err) {
  JobReport jr = {{job_report, NULL}, t, k};
  jr.p.ud = &jr;
  return fn(t->lab, arg, &jr.p, err);
}

/* The job of ticket 'k' returned 'rc': the ticket ends, its memory is
** freed if it was dropped, the lab is published. */
void job_settle(Trainer *t, Ticket *k, int rc, const Err *err) {
  pthread_mutex_lock(&t->mu);
  k->running = 0;
  k->state = rc < 0 ? -1 : 1;
  if (rc < 0) snprintf(k->err, sizeof k->err, "%s", err->msg);
  if (rc < 0 && k->dropped) set_message(t, err->msg);   /* nobody else will say it */
  job_release(k);
  snap_fill(t, clock_seconds(), 1);
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
