/*
** test_jobs.c -- jobs on the trainer's tickets: a job runs on the trainer
** thread with the lab, lent at its reports (an acquirer holds it between
** two, a posted command runs there, the job goes on after; with lending
** off an acquirer waits for the whole job), poll reports
** its end and its error, its progress is in the snapshot, a cancel stops a
** long job at its next report, a job never starts while a holder has the
** lab or while tickets are held, and its memory is freed once, by whoever
** comes last of the job's end and its drop.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "trainer/trainer.h"
#include "trainer_test.h"

static void nap(void) { nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL); }

/* What a job saw and what the test tells it. */
typedef struct Probe {
  Lab *lab;                /* the lab it was given */
  pthread_t thread;        /* where it ran */
  atomic_int started, ran, reports;
  atomic_int go;           /* the test lets it end */
  atomic_int stopped;      /* a report told it to stop */
  atomic_int *held;        /* another thread holds the lab now (may be NULL) */
  int saw_held;            /* the job ran while it did */
  int forever;             /* report until told to stop */
  int fail;                /* end with an error */
} Probe;

static atomic_int freed;

static void free_probe(void *arg) {
  (void)arg;
  atomic_fetch_add(&freed, 1);
}

static int probe_job(Lab *lab, void *arg, HostJobProgress *p, Err *err) {
  Probe *pr = arg;
  pr->lab = lab;
  pr->thread = pthread_self();
  atomic_store(&pr->started, 1);
  for (long k = 1;; k++) {
    if (p->report(p, "probing", k, 100)) {
      atomic_store(&pr->stopped, 1);
      return err_set(err, "probe stopped at %ld", k);
    }
    atomic_fetch_add(&pr->reports, 1);
    if (pr->held && atomic_load(pr->held)) pr->saw_held = 1;
    if (!pr->forever && atomic_load(&pr->go)) break;
    nap();
  }
  atomic_store(&pr->ran, 1);
  return pr->fail ? err_set(err, "probe failed on purpose") : 0;
}

static int wait_poll(Host *h, long ticket, double secs, Err *err) {
  double end = now_s() + secs;
  int st;
  while ((st = h->poll(h, ticket, err)) == 0 && now_s() < end) nap();
  return st;
}

static int wait_flag(atomic_int *f, double secs) {
  double end = now_s() + secs;
  while (!atomic_load(f) && now_s() < end) nap();
  return atomic_load(f);
}

/* A thread that takes the lab, keeps it a while ('holding' meanwhile) and
** says when it had it. */
typedef struct Taker {
  Trainer *t;
  atomic_int asking, got, holding;
  atomic_int job_ran;      /* the job had ended when the lab was got */
  Probe *job;
} Taker;

static void *take_lab(void *arg) {
  Taker *tk = arg;
  atomic_store(&tk->asking, 1);
  trainer_acquire(tk->t);
  atomic_store(&tk->holding, 1);
  atomic_store(&tk->job_ran, atomic_load(&tk->job->ran));
  for (int i = 0; i < 20; i++) nap();   /* a job running now would report meanwhile */
  atomic_store(&tk->holding, 0);
  atomic_store(&tk->got, 1);
  trainer_release(tk->t);
  return NULL;
}

/* A command that notes it ran. */
static atomic_int command_ran;
static int note_command(Lab *lab, const void *arg, Err *err) {
  (void)lab, (void)arg, (void)err;
  atomic_store(&command_ran, 1);
  return 0;
}

int main(void) {
  Err err = {{0}};
  Lab *lab;
  Host h;
  Trainer *t = tiny_trainer(&lab, &h, &err);
  if (!t) return tap_done();
  ok(h.submit_job && h.drop_job, "the trainer's host runs jobs");
  TrainerSnap *snap = trainer_snap_new();

  /* A job runs on the trainer thread with the lab, lent at its reports. */
  Taker tk = {.t = t};
  Probe a = {.held = &tk.holding};
  tk.job = &a;
  long k = h.submit_job(&h, probe_job, &a, free_probe, &err);
  ok(k >= 0 && wait_flag(&a.started, 30), "a job starts");
  ok(a.lab == lab && !pthread_equal(a.thread, pthread_self()), "on the trainer's thread, with the lab");
  pthread_t th;
  pthread_create(&th, NULL, take_lab, &tk);
  ok(wait_flag(&tk.got, 30) && !tk.job_ran && !a.ran, "a taker gets the lab while the job runs, between two reports");
  ok(!a.saw_held, "the job does not run while the taker holds the lab");
  int before = atomic_load(&a.reports);
  double end = now_s() + 10;
  while (atomic_load(&a.reports) < before + 5 && now_s() < end) nap();
  ok(atomic_load(&a.reports) >= before + 5, "and goes on after the taker lets go");
  ok(trainer_post(t, note_command, NULL, 0, &err) == 0 && wait_flag(&command_ran, 30) && !a.ran,
     "a command posted during the job runs at its next report");
  end = now_s() + 10;
  int shown = 0;
  while (!shown && now_s() < end) {
    trainer_take(t, &snap);
    shown = strcmp(snap->job, "probing") == 0 && snap->job_total == 100 && snap->job_done > 0;
    if (!shown) nap();
  }
  ok(shown, "the snapshot shows its progress: '%s' %ld/%ld", snap->job, snap->job_done, snap->job_total);
  ok(h.poll(&h, k, &err) == 0, "while it runs, its ticket waits");
  atomic_store(&a.go, 1);
  ok(wait_poll(&h, k, 30, &err) == 1 && a.ran, "let go, it ends and poll says done");
  pthread_join(th, NULL);
  trainer_take(t, &snap);
  ok(snap->job[0] == '\0' && snap->job_total == 0, "the snapshot shows no job after it");
  ok(atomic_load(&freed) == 0, "its memory is kept until it is dropped");
  h.drop_job(&h, k);
  ok(atomic_load(&freed) == 1, "dropped after its end, it is freed at once");

  /* A failing job: poll says so with the job's error. */
  Probe b = {.fail = 1, .go = 1};
  k = h.submit_job(&h, probe_job, &b, free_probe, &err);
  Err perr = {{0}};
  ok(wait_poll(&h, k, 30, &perr) == -1 && strstr(perr.msg, "probe failed on purpose"),
     "a job that fails: poll -1 with its error (%s)", perr.msg);
  h.drop_job(&h, k);

  /* A cancel stops a long job at its next report. */
  Probe c = {.forever = 1};
  k = h.submit_job(&h, probe_job, &c, free_probe, &err);
  wait_flag(&c.started, 30);
  h.cancel(&h);
  perr.msg[0] = '\0';
  ok(wait_poll(&h, k, 30, &perr) == -1 && c.stopped && strstr(perr.msg, "probe stopped at"),
     "cancel stops a job that would never end (%s)", perr.msg);
  h.drop_job(&h, k);

  /* Dropped while it runs: stopped, and freed by the trainer at its end. */
  Probe d = {.forever = 1};
  int was = atomic_load(&freed);
  k = h.submit_job(&h, probe_job, &d, free_probe, &err);
  wait_flag(&d.started, 30);
  h.drop_job(&h, k);
  wait_flag(&d.stopped, 30);
  end = now_s() + 30;
  while (atomic_load(&freed) == was && now_s() < end) nap();
  ok(d.stopped && atomic_load(&freed) == was + 1, "dropped while it runs: stopped and freed once");

  /* Never while a holder has the lab, nor while tickets are held. */
  Probe e = {.go = 1};
  trainer_acquire(t);
  k = h.submit_job(&h, probe_job, &e, free_probe, &err);
  for (int i = 0; i < 100; i++) nap();
  ok(!e.started && h.poll(&h, k, &err) == 0, "a job waits while a holder has the lab");
  h.hold(&h, 1);
  trainer_release(t);
  for (int i = 0; i < 100; i++) nap();
  ok(!e.started, "and while tickets are held");
  h.hold(&h, 0);
  ok(wait_poll(&h, k, 30, &err) == 1 && e.ran, "released, it runs");
  h.drop_job(&h, k);

  /* Queued behind a long one and dropped: freed without running. */
  Probe f = {.forever = 1}, g = {.go = 1};
  long kf = h.submit_job(&h, probe_job, &f, free_probe, &err);
  long kg = h.submit_job(&h, probe_job, &g, free_probe, &err);
  wait_flag(&f.started, 30);
  was = atomic_load(&freed);
  h.drop_job(&h, kg);
  ok(!g.started && atomic_load(&freed) == was + 1 && h.poll(&h, kg, &err) == -1,
     "a queued job dropped is freed at once and never runs");
  h.drop_job(&h, kf);
  wait_poll(&h, kf, 30, &err);

  /* With lending off (a journal), a taker waits for the whole job. */
  trainer_set_lending(t, 0);
  Taker tl = {.t = t};
  Probe l = {.held = &tl.holding};
  tl.job = &l;
  long kl = h.submit_job(&h, probe_job, &l, free_probe, &err);
  wait_flag(&l.started, 30);
  pthread_t thl;
  pthread_create(&thl, NULL, take_lab, &tl);
  wait_flag(&tl.asking, 10);
  int at = atomic_load(&l.reports);
  while (atomic_load(&l.reports) < at + 20) nap();   /* the taker has had time to ask */
  ok(!atomic_load(&tl.got), "lending off: the taker does not get the lab while the job runs");
  atomic_store(&l.go, 1);
  pthread_join(thl, NULL);
  ok(tl.got && tl.job_ran && !l.saw_held, "it gets it after the job's end");
  h.drop_job(&h, kl);
  trainer_set_lending(t, 1);

  /* A job left running when the trainer ends is stopped and freed. */
  Probe q = {.forever = 1};
  was = atomic_load(&freed);
  h.submit_job(&h, probe_job, &q, free_probe, &err);
  wait_flag(&q.started, 30);
  trainer_free(t);
  ok(q.stopped && atomic_load(&freed) == was + 1, "the trainer's end stops a running job and frees it");

  trainer_snap_free(snap);
  lab_free(lab);
  return tap_done();
}
