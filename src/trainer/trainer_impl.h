/*
** trainer_impl.h -- the inside of a Trainer, shared by its files: trainer.c
** (the thread, the throttle, the lock), tickets.c (tickets, commands and
** jobs) and snap.c (snapshots, samples, reading). Nothing outside
** src/trainer/ includes it; docs/architecture.md tells how they fit.
*/
#ifndef TIELAB_TRAINER_IMPL_H
#define TIELAB_TRAINER_IMPL_H

#include "trainer/trainer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define N_TICKETS 64
#define N_COMMANDS 64

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

/* A hook's call waiting for the Lua thread (trainer_call). */
typedef struct TrainerCall {
  TrainerCallFn fn;
  void *arg;
  int rc, running, done;
} TrainerCall;

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
  TrainerCall *call;             /* a step's hook waiting for the Lua thread */
  pthread_t lua_thread;          /* where calls run (trainer_host's caller) */
  int has_lua_thread;
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
  int stale;                     /* a run stepped since its last sample or row norms */

  double last_job_pub;           /* when a job's progress was last published */
  int lend;                      /* a job lends the lab at its reports (serve_between) */

  _Atomic double speed;          /* lab steps a second at most, 0: flat out */
  double next_step_at;           /* the throttle lets the next step start then */
};

static inline void wake(Trainer *t, int force) {
  if (atomic_exchange(&t->wake_pending, 1) && !force) return;
  char b = 1;
  ssize_t n = write(t->wake[1], &b, 1);   /* EAGAIN: a byte is waiting already */
  (void)n;
}

/* A step was handed over and its callbacks have not run yet. */
static inline int awaiting_handover(const Trainer *t) { return t->handover && t->handover_ack < t->handover_seq; }

static inline void set_message(Trainer *t, const char *msg) {
  snprintf(t->msg, sizeof t->msg, "%s", msg);
  t->msg_seq++;
}

/* snap.c: the publication, and what the lab's holder measures for it. */
void snap_fill(Trainer *t, double now, int full);
void snap_publish(Trainer *t, int full);
void snap_refresh(Trainer *t, int now_);
void snap_refresh_norms(Trainer *t);

/* tickets.c: the queue of tickets and commands, and running a job. */
Ticket *ticket_next(Trainer *t);
int command_pop(Trainer *t, Command *cmd);
int job_run(Trainer *t, Ticket *k, HostJobFn fn, void *arg, Err *err);
void job_settle(Trainer *t, Ticket *k, int rc, const Err *err);

#endif
