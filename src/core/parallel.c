/*
** parallel.c -- see parallel.h.
**
** One mutex guards the job: the caller publishes (task, arg, n), bumps
** 'generation' and wakes everyone; each worker runs its own range, and the
** last one to finish wakes the caller. Workers wait for the next
** generation on 'wake', so between loops they cost nothing.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/sig.h"
#include "core/parallel.h"

typedef struct Worker {
  Pool *pool;
  int index;
  pthread_t tid;
} Worker;

struct Pool {
  int threads;
  Worker *workers;          /* one per thread; [0] stands for the caller */
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  unsigned long generation;
  int pending;              /* workers still running the current job */
  int quit;
  PoolTask task;            /* the current job: a range task, */
  PoolPart part_task;       /* or a part task */
  void *arg;
  int n, parts;
};

void pool_split(int n, int parts, int part, int *begin, int *end) {
  int base = n / parts, extra = n % parts;
  *begin = part * base + (part < extra ? part : extra);
  *end = *begin + base + (part < extra);
}

static void run_part(Pool *p, int w) {
  if (p->part_task) {
    p->part_task(p->arg, w, p->parts);
    return;
  }
  int begin, end;
  pool_split(p->n, p->parts, w, &begin, &end);
  if (begin < end) p->task(p->arg, begin, end, w);
}

static void *worker_main(void *arg) {
  Worker *wk = arg;
  Pool *p = wk->pool;
  unsigned long seen = 0;   /* the generation at creation: no job yet */
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (p->generation == seen && !p->quit) pthread_cond_wait(&p->wake, &p->mu);
    if (p->quit) break;
    seen = p->generation;
    int active = wk->index < p->parts;
    pthread_mutex_unlock(&p->mu);
    if (active) run_part(p, wk->index);
    pthread_mutex_lock(&p->mu);
    if (active && --p->pending == 0) pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

Pool *pool_create(int threads, Err *err) {
  if (threads < 1) threads = 1;
  Pool *p = calloc(1, sizeof *p);
  if (!p) return err_set(err, "out of memory for a thread pool"), NULL;
  p->threads = threads;
  if (threads == 1) return p;
  p->workers = calloc((size_t)threads, sizeof *p->workers);
  if (!p->workers) {
    free(p);
    return err_set(err, "out of memory for a thread pool"), NULL;
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  /* Workers take no signal: they go to the threads that wait for them. */
  int rc = 0, started = 1;
  for (; started < threads && rc == 0; started++) {
    Worker *wk = &p->workers[started];
    wk->pool = p;
    wk->index = started;
    rc = sig_thread_start(&wk->tid, worker_main, wk);
  }
  if (rc != 0) {
    p->threads = started - 1;   /* free joins the ones that started */
    pool_free(p);
    return err_set(err, "cannot start worker thread %d of %d: %s", started - 1, threads, strerror(rc)), NULL;
  }
  return p;
}

void pool_free(Pool *p) {
  if (!p) return;
  if (p->threads > 1 || p->workers) {
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->threads; i++) pthread_join(p->workers[i].tid, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
  }
  free(p);
}

int pool_threads(const Pool *p) { return p->threads; }

/* Publish a job of 'parts' parts, run part 0 here, wait for the others. */
static void pool_start(Pool *p, PoolTask task, PoolPart part_task, void *arg, int n, int parts) {
  pthread_mutex_lock(&p->mu);
  p->task = task;
  p->part_task = part_task;
  p->arg = arg;
  p->n = n;
  p->parts = parts;
  p->pending = parts - 1;
  p->generation++;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  run_part(p, 0);
  pthread_mutex_lock(&p->mu);
  while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

void pool_for(Pool *p, int n, PoolTask task, void *arg) {
  if (n <= 0) return;
  int parts = n < p->threads ? n : p->threads;
  if (parts == 1) task(arg, 0, n, 0);
  else pool_start(p, task, NULL, arg, n, parts);
}

void pool_run(Pool *p, PoolPart task, void *arg) {
  if (p->threads == 1) task(arg, 0, 1);
  else pool_start(p, NULL, task, arg, p->threads, p->threads);
}
