/*
** trainer.h -- the thread that steps the lab, so the screen never waits:
** it trains, publishes a snapshot after every step, runs the commands
** queued for it and lends the lab to a caller between two steps;
** 'trainer_host' wraps all this in the Host of luaapi/host.h. How each
** works: docs/architecture.md, 'The trainer as its clients see it'.
*/
#ifndef TIELAB_TRAINER_H
#define TIELAB_TRAINER_H

#include "lab/lab.h"
#include "luaapi/host.h"
#include "trainer/watchdog.h"

typedef struct Trainer Trainer;

#define TRAINER_SAMPLE_MAX 400

/* Row norms of E_in and E_out beside the log frequency (ln of the count)
** of each token seen in training: a scatter plot's points. One buffer of
** 3 * cap doubles, allocated on first use and reused. */
typedef struct TrainerNorms {
  double *norm_in, *norm_out, *log_freq;   /* n each */
  int n, cap;
  long step;       /* the run's step when measured, -1: not yet */
  uint64_t seq;    /* which measurement this is (0: none) */
} TrainerNorms;

typedef struct TrainerRun {
  int id;
  char name[64];
  RunMetrics m;
  int lens_every, eval_every, align_every;   /* the instruments' intervals (0: off) */
  RunOptions opt;                   /* every option as the run has it now */
  History *hist;                    /* a copy owned by the snapshot; NULL until copied */
  uint64_t hist_mark;               /* what 'hist' was copied from (see snap.c) */
  char sample[TRAINER_SAMPLE_MAX];  /* the bytes the model writes now, as its tokens hold them */
  size_t sample_len;                /* how many (0 until the first): not UTF-8 checked, may hold a 0 */
  long sample_step;                 /* when it was written, -1: none */
  char sample_note[96];             /* "", or the tokenizer it is decoded with when not the model's own */
  TrainerNorms norms;               /* owned by the snapshot */
} TrainerRun;

typedef struct TrainerSnap {
  long version;          /* grows with every publication */
  long lab_steps;        /* lab steps taken since the trainer started */
  int running;           /* training continuously */
  long owed;             /* steps still owed to tickets */
  int holding;           /* tickets are held (a paused script): owed steps wait */
  double steps_per_s;    /* lab steps per second, smoothed */
  char job[64];          /* what the job in progress does ("" when none runs) */
  long job_done, job_total;   /* and how far it is */
  long msg_seq;          /* grows with every new message */
  char msg[ERR_MSG_MAX]; /* the last error of a step or a command */
  int n_runs, cap_runs;
  TrainerRun *runs;
} TrainerSnap;

/* Start the thread on 'lab' (which the trainer uses until trainer_free). */
Trainer *trainer_new(Lab *lab, Err *err);
/* Stop after the step in progress and join the thread. */
void trainer_free(Trainer *t);

/* Readable when a new snapshot or a finished ticket is waiting. After a
** wake-up, 'trainer_drain' empties it; no further byte comes for snapshots
** until the next 'trainer_take' (a finished ticket always sends one). */
int trainer_wake_fd(const Trainer *t);
void trainer_drain(Trainer *t);

/* Swap the newest snapshot into '*snap' if it is newer than it; returns 1
** when it did. '*snap' must come from trainer_snap_new. The trainer's
** host reads the snapshot last taken until a newer one is published, so
** it is freed only after trainer_free. */
int trainer_take(Trainer *t, TrainerSnap **snap);
TrainerSnap *trainer_snap_new(void);
void trainer_snap_free(TrainerSnap *s);
const TrainerRun *trainer_snap_find(const TrainerSnap *s, int id);
/* The lab-wide step of a snapshot: the highest step of its runs (it goes
** on from a resumed checkpoint's step, unlike 'lab_steps'). */
long trainer_snap_step(const TrainerSnap *s);

/* The newest publication, never waiting for a step: 'fn' sees run 'id'
** (every run when -1) with the trainer's lock held. Returns how many runs
** it saw. This is the Host's 'view'. */
int trainer_view(Trainer *t, int id, HostViewFn fn, void *ctx);

/* Train continuously (1) or stop at the next step boundary (0). */
void trainer_set_running(Trainer *t, int on);
int trainer_running(Trainer *t);

/* The throttle: at most 'steps_per_s' lab steps a second, continuous or
** for tickets, the trainer sleeping between them; 0 (or less) trains flat
** out. Commands and acquirers are served while it sleeps. */
#define TRAINER_SPEED_MIN 0.01   /* steps a second: one every 100 s */
void trainer_set_speed(Trainer *t, double steps_per_s);
double trainer_speed(const Trainer *t);

/* A command run by the trainer thread between two steps with the lab in
** hand; 'arg' (at most TRAINER_ARG_MAX bytes) is copied. An error it
** returns becomes the snapshot's message. */
#define TRAINER_ARG_MAX HOST_POST_MAX
typedef int (*TrainerFn)(Lab *lab, const void *arg, Err *err);
int trainer_post(Trainer *t, TrainerFn fn, const void *arg, size_t n, Err *err);

/* Steps on demand: 'n' steps of run 'id' (-1: every unpaused run in
** lockstep). Tickets are served in order, before continuous training. */
long trainer_submit(Trainer *t, int id, long n, Err *err);
int trainer_poll(Trainer *t, long ticket, Err *err);   /* 1 done, 0 waiting, -1 failed */
void trainer_cancel(Trainer *t);                       /* fail every ticket in flight */

/* Jobs (luaapi/host.h): tickets too, served in order with the steps, each
** run by the thread with the lab to itself. An acquirer waits for the job
** in progress to end; 'trainer_cancel' (and a quit) stops it at its next
** report. 'trainer_stop_jobs' stops the jobs only (the lab is wanted: a
** save before quitting). */
long trainer_submit_job(Trainer *t, HostJobFn fn, void *arg, HostJobFree free_arg, Err *err);
void trainer_drop_job(Trainer *t, long ticket);
void trainer_stop_jobs(Trainer *t);
/* Whether a job lends the lab at its reports (1, from the start): a
** journal turns it off, since a replay runs a job whole and could not put
** a call back between two of its pieces. */
void trainer_set_lending(Trainer *t, int on);

/* Hand every step to the Lua thread (1) while it has on_step callbacks:
** after each step the trainer waits until 'trainer_handover_done' is
** called with the sequence number 'trainer_handover' gave (> 0 while a
** step waits, with the lab-wide step in '*step'; 0 when none waits). */
void trainer_set_handover(Trainer *t, int on);
long trainer_handover(Trainer *t, long *step);
void trainer_handover_done(Trainer *t, long seq);

/* A step's hooks run on the Lua thread: 'trainer_call', on the thread
** that steps, runs 'fn(arg)' there and waits for it (at once when called on
** the Lua thread itself, a step that thread takes). The Lua thread runs a
** waiting call in 'trainer_serve_call', and while it waits in
** 'trainer_acquire' (else the two would wait for each other). A call the
** trainer gives up on (the trainer quits) returns -1. The Lua thread is the
** one that called 'trainer_host' (or 'trainer_set_lua_thread'). */
typedef int (*TrainerCallFn)(void *arg);
void trainer_set_lua_thread(Trainer *t);
int trainer_call(Trainer *t, TrainerCallFn fn, void *arg);
int trainer_call_waiting(Trainer *t);
/* Whether run 'id' is being stepped: 1 a step request for it (or for
** every run) is in flight, 2 the trainer runs freely, else 0 (Host.stepping). */
int trainer_stepping(Trainer *t, int id);
void trainer_serve_call(Trainer *t);

/* Keep every ticket waiting (1), or serve them again (0); the snapshot's
** 'holding' says which. */
void trainer_hold(Trainer *t, int on);

/* Exclusive use of the lab for the calling thread, after the step in
** progress; nests. A snapshot is published on the last release. */
Lab *trainer_acquire(Trainer *t);
void trainer_release(Trainer *t);
/* The same, waiting 'seconds' at most (a step that takes longer, or a
** holder that keeps it, and NULL comes back): the watchdog's way in. */
Lab *trainer_acquire_within(Trainer *t, double seconds);

/* The watchdog (watchdog.h) to tell when trainer_acquire waits for a step:
** that wait ends by itself, and a deadline waits for it. */
void trainer_set_watchdog(Trainer *t, Watchdog *w);

/* Fill 'h' with a Host whose steps are this trainer's tickets. */
void trainer_host(Trainer *t, Host *h);

#endif
