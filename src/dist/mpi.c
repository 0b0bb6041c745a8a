/*
** mpi.c -- the transport over MPI: the Reducer's sums are nonblocking
** MPI_Iallreduce calls on a duplicate of MPI_COMM_WORLD.
**
** The model hands each slice of the gradient arena over as soon as the
** backward has finished it (the head first, the embeddings last); each
** slice's sum starts at once, and MPI moves it while the layers below are
** computed, whenever this rank calls into MPI: every start also tests the
** sums in flight, which is what moves them along (Open MPI has no thread of
** its own for that). With TIELAB_ALLREDUCE=whole the slices are gathered
** into one MPI_Iallreduce of the whole arena at the end of the backward
** instead: no overlap, for measuring what the overlap gains.
**
** Waiting polls (MPI_Testall) rather than blocking in MPI_Wait, so that
** SIGINT, SIGTERM or SIGHUP (mpirun sends SIGTERM to every rank when one
** dies) ends the wait with an error instead of a hang. Errors are returned
** (MPI_ERRORS_RETURN), never fatal inside MPI.
*/
#include "config.h"

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/sig.h"
#include "dist/dist.h"
#include "dist/dist_impl.h"

typedef struct Mpi {
  MPI_Comm comm;         /* the gradient's sums */
  MPI_Comm end;          /* the exit status, apart: 'comm' may hold sums left half done */
  int broken;            /* a sum was given up (a signal, a rank gone): MPI must not run again */
  MPI_Request *req;      /* sums in flight */
  int n_req, cap_req;
  int whole;             /* TIELAB_ALLREDUCE=whole: one sum at the end */
  float *lo, *hi;        /* whole: the span of the slices handed over */
  double busy;           /* seconds inside the Reducer's calls */
} Mpi;

static int mpi_fail(Dist *d, int rc, const char *what, Err *err) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", rc);
  err_set(err, "rank %d of %d: %s failed: %s (another rank is gone?)", d->red.rank, d->red.world, what, text);
  dist_say(d, err->msg);
  ((Mpi *)d->mpi)->broken = 1;
  return -1;
}

/* Once a sum was given up, its buffers are the lab's again: no MPI call
** may move it along, so every later one is refused without calling MPI. */
static int refuse_if_broken(Dist *d, Err *err) {
  if (!((Mpi *)d->mpi)->broken) return 0;
  return err_set(err, "rank %d of %d: an earlier sum was given up; this job cannot train on", d->red.rank,
                 d->red.world);
}

static int add_request(Dist *d, MPI_Request r, Err *err) {
  Mpi *m = d->mpi;
  if (m->n_req == m->cap_req) {
    int cap = m->cap_req ? 2 * m->cap_req : 16;
    MPI_Request *grown = realloc(m->req, (size_t)cap * sizeof *grown);
    if (!grown) {
      m->broken = 1;   /* 'r' is in flight and lost */
      return err_set(err, "out of memory for the gradient's sums");
    }
    m->req = grown;
    m->cap_req = cap;
  }
  m->req[m->n_req++] = r;
  return 0;
}

/* Start summing n values at x in place, in pieces MPI's int counts hold. */
static int start_sum(Dist *d, void *x, size_t n, MPI_Datatype type, size_t size, Err *err) {
  Mpi *m = d->mpi;
  if (refuse_if_broken(d, err) < 0) return -1;
  while (n > 0) {
    int count = n > INT_MAX / 2 ? INT_MAX / 2 : (int)n;
    MPI_Request r;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, x, count, type, MPI_SUM, m->comm, &r);
    if (rc != MPI_SUCCESS) return mpi_fail(d, rc, "MPI_Iallreduce", err);
    if (add_request(d, r, err) < 0) return -1;
    x = (char *)x + (size_t)count * size;
    n -= (size_t)count;
  }
  return 0;
}

/* Until every sum in flight is complete; a signal ends the wait. */
static int finish(Dist *d, Err *err) {
  Mpi *m = d->mpi;
  if (refuse_if_broken(d, err) < 0) return -1;
  for (;;) {
    int done = 0;
    int rc = MPI_Testall(m->n_req, m->req, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_fail(d, rc, "MPI_Testall", err);
    if (done) break;
    if (sig_ended()) {
      err_set(err, "stopped while waiting for the other ranks' sums");
      dist_say(d, err->msg);
      m->broken = 1;
      return -1;
    }
    sched_yield();
  }
  m->n_req = 0;
  return 0;
}

/* Move the sums in flight along: Open MPI advances a nonblocking
** collective only inside MPI calls. */
static int test_all(Dist *d, Err *err) {
  Mpi *m = d->mpi;
  if (refuse_if_broken(d, err) < 0) return -1;
  if (m->n_req == 0) return 0;
  int done;
  int rc = MPI_Testall(m->n_req, m->req, &done, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) return mpi_fail(d, rc, "MPI_Testall", err);
  if (done) m->n_req = 0;
  return 0;
}

static int start_slice(Dist *d, float *x, size_t n, Err *err) {
  Mpi *m = d->mpi;
  if (m->whole) {
    if (!m->lo || x < m->lo) m->lo = x;
    if (!m->hi || x + n > m->hi) m->hi = x + n;
    return 0;
  }
  if (start_sum(d, x, n, MPI_FLOAT, sizeof(float), err) < 0) return -1;
  return test_all(d, err);
}

static int wait_all(Dist *d, Err *err) {
  Mpi *m = d->mpi;
  if (m->whole && m->lo) {
    size_t n = (size_t)(m->hi - m->lo);
    float *lo = m->lo;
    m->lo = m->hi = NULL;
    if (start_sum(d, lo, n, MPI_FLOAT, sizeof(float), err) < 0) return -1;
  }
  return finish(d, err);
}

static int sum_now(Dist *d, double *x, int n, Err *err) {
  if (start_sum(d, x, (size_t)n, MPI_DOUBLE, sizeof(double), err) < 0) return -1;
  return finish(d, err);
}

/* The Reducer's calls: the above, each charged to 'busy' from 't0'. */
static int charged(void *ctx, double t0, int rc) {
  ((Mpi *)((Dist *)ctx)->mpi)->busy += clock_seconds() - t0;
  return rc;
}

static int red_start(void *ctx, float *x, size_t n, Err *err) {
  double t0 = clock_seconds();
  return charged(ctx, t0, start_slice(ctx, x, n, err));
}

static int red_poll(void *ctx, Err *err) {
  double t0 = clock_seconds();
  return charged(ctx, t0, test_all(ctx, err));
}

static int red_wait(void *ctx, Err *err) {
  double t0 = clock_seconds();
  return charged(ctx, t0, wait_all(ctx, err));
}

static int red_sum(void *ctx, double *x, int n, Err *err) {
  double t0 = clock_seconds();
  return charged(ctx, t0, sum_now(ctx, x, n, err));
}

static double red_busy(void *ctx) { return ((Mpi *)((Dist *)ctx)->mpi)->busy; }

/* TIELAB_ALLREDUCE: "layers" (the default) or "whole". */
static int read_mode(int *whole, Err *err) {
  const char *v = getenv("TIELAB_ALLREDUCE");
  *whole = 0;
  if (!v || !*v || strcmp(v, "layers") == 0) return 0;
  *whole = strcmp(v, "whole") == 0;
  if (*whole) return 0;
  return err_set(err, "TIELAB_ALLREDUCE='%s': give layers (each layer's gradient summed as the backward "
                 "leaves it, the default) or whole (the whole gradient summed at the end)", v);
}

int dist_mpi_open(Dist **out, Err *err) {
  *out = NULL;
  int whole;
  if (read_mode(&whole, err) < 0) return -1;
  int provided;
  /* Only one thread at a time calls MPI: the one that steps the runs. */
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    return err_set(err, "MPI_Init_thread failed: this process cannot join its mpirun job");
  Dist *d = calloc(1, sizeof *d);
  Mpi *m = calloc(1, sizeof *m);
  if (!d || !m) {
    free(d), free(m);
    MPI_Finalize();
    return err_set(err, "out of memory joining the MPI job");
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    free(d), free(m);
    MPI_Finalize();
    return err_set(err, "this MPI gives thread level %d, below MPI_THREAD_SERIALIZED", provided);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &m->end);
  MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(m->end, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m->comm, &d->red.rank);
  MPI_Comm_size(m->comm, &d->red.world);
  m->whole = whole;
  d->tty = -1;
  d->mpi = m;
  d->red.ctx = d;
  d->red.start = red_start;
  d->red.poll = red_poll;
  d->red.wait = red_wait;
  d->red.sum = red_sum;
  d->red.busy = red_busy;
  *out = d;
  return 0;
}

/* How long a rank that failed or was signalled waits for the others to
** end too before it ends the job: they may be waiting for a sum it will
** never join, or (rank 0, after SIGTERM) still be saving the runs. */
#define FAILED_WAIT_S 60.0

/* Every rank posts its exit status and waits for all the others' (the
** highest of them is the job's): the job's ranks end together, with one
** status, and a failure on any rank is the job's. A rank that failed, or
** that a signal reached, waits at most FAILED_WAIT_S. Returns 0, or -1
** when the others did not come. */
static int agree_on_code(Dist *d, int *code) {
  Mpi *m = d->mpi;
  MPI_Request r;
  double until = *code != EXIT_OK ? clock_seconds() + FAILED_WAIT_S : 0;   /* *code is MPI's until done */
  if (MPI_Iallreduce(MPI_IN_PLACE, code, 1, MPI_INT, MPI_MAX, m->end, &r) != MPI_SUCCESS) return -1;
  for (;;) {
    int done = 0;
    if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
    if (done) return 0;
    if (until == 0 && sig_ended()) until = clock_seconds() + FAILED_WAIT_S;
    if (until > 0 && clock_seconds() > until) return -1;
    sched_yield();
  }
}

/* A sum given up is still in flight and reads buffers the lab has freed
** by now: calling MPI at all would move it along. Rank 0 (its runs saved
** by now) just ends, and mpirun then ends the others; the others wait,
** not in MPI, for that to happen, so that rank 0 is not ended while it
** saves. */
static int end_broken(Dist *d, int code) {
  if (d->red.rank > 0)
    for (double until = clock_seconds() + FAILED_WAIT_S; clock_seconds() < until;) sleep(1);
  return code;
}

int dist_close(Dist *d, int code) {
  if (!d) return code;
  Mpi *m = d->mpi;
  if (m->broken) return end_broken(d, code);
  int job = code;
  if (agree_on_code(d, &job) < 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "ended with status %d and the other ranks did not end with it: ending the job", code);
    dist_say(d, msg);
    MPI_Abort(MPI_COMM_WORLD, code ? code : EXIT_RUNTIME);
  }
  MPI_Comm_free(&m->comm);
  MPI_Comm_free(&m->end);
  MPI_Finalize();
  free(m->req);
  free(m);
  if (d->tty >= 0) close(d->tty);
  free(d);
  return job;
}
