/*
** mpi.c -- the transport over MPI: the Reducer's sums are nonblocking
** MPI_Iallreduce calls on a duplicate of MPI_COMM_WORLD, overlapped with
** the backward; how waits, signals and ranks that part ways are kept from
** hanging the job: docs/architecture.md.
*/
#include "config.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sig.h"
#include "dist/dist.h"
#include "dist/dist_impl.h"

/* What a rank in dist_close tells each other rank: its status and, when
** it failed, why (its last line on stderr): rank 0 says it for the job. */
typedef struct Bye {
  int rank, code;
  char why[DIST_WHY_MAX];
} Bye;

typedef struct Mpi {
  MPI_Comm comm;         /* the gradient's sums, and gathers */
  MPI_Comm end;          /* the exit status, apart: 'comm' may hold sums left half done */
  MPI_Comm bye;          /* "this rank has ended": a Bye from a rank in dist_close */
  MPI_Request bye_req;   /* the receive of the first such message, posted at the start */
  Bye bye_in;
  int left;              /* that message came: bye_in says who, and no sum can complete */
  int broken;            /* a sum was given up (a signal, a rank gone): MPI must not run again */
  Bye bye_out;           /* what this rank said as it left (bye_now, say_bye): read by the sends */
  unsigned signals_then; /* sig_count() when this rank gave up */
  pthread_mutex_t lock;  /* held around every MPI call after the start: one thread at a time */
  pthread_t watcher;     /* the thread of 'watch' */
  int watching;          /* it runs */
  atomic_int watch_stop; /* it is to end */
  MPI_Request *req;      /* sums in flight */
  int n_req, cap_req;
  int whole;             /* TIELAB_ALLREDUCE=whole: one sum at the end */
  float *lo, *hi;        /* whole: the span of the slices handed over */
  size_t handed;         /* whole: how many floats they hold (the span must be no more) */
  double busy;           /* seconds inside the Reducer's calls */
} Mpi;

/* A process joins MPI once: this is its state. It is never freed, for a
** job that gave up a sum ends with MPI still holding the addresses of its
** requests and of the bye's receive. */
static Mpi the_job;

/* Tell every other rank at once that this one gives up ('code', 'why'):
** one may be waiting in a sum this rank will never join again, and after
** giving up this rank makes no more MPI calls (its sums' buffers go with
** the lab). Here they are still the lab's, so this last call is safe;
** the message lives on in the_job for the sends, which are let go. */
static void bye_now(Dist *d, int code, const char *why) {
  Mpi *m = d->mpi;
  m->bye_out.rank = d->red.rank;
  m->bye_out.code = code;
  snprintf(m->bye_out.why, sizeof m->bye_out.why, "%.*s", (int)sizeof m->bye_out.why - 1, why);
  for (int r = 0; r < d->red.world; r++) {
    MPI_Request sent;
    if (r != d->red.rank && MPI_Isend(&m->bye_out, sizeof m->bye_out, MPI_BYTE, r, 0, m->bye, &sent) == MPI_SUCCESS)
      MPI_Request_free(&sent);
  }
}

/* Give up the sums in flight, with the reason in 'err' ('code': the exit
** status it means): rank 0 reports it as any error; the others say it on
** their terminal, for rank 0 may be the one gone. */
static int give_up_as(Dist *d, int code, Err *err) {
  Mpi *m = d->mpi;
  if (d->red.rank > 0) dist_say(d, err->msg);
  bye_now(d, code, err->msg);
  m->broken = 1;
  m->signals_then = sig_count();
  return -1;
}

static int give_up(Dist *d, Err *err) { return give_up_as(d, EXIT_RUNTIME, err); }

static int mpi_fail(Dist *d, int rc, const char *what, Err *err) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", rc);
  err_set(err, "rank %d of %d: %s failed: %s (another rank is gone?)", d->red.rank, d->red.world, what, text);
  return give_up(d, err);
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

/* Start summing n values at x in place, in pieces MPI's int counts hold:
** half of INT_MAX, so that no piece's size in bytes overflows an int in an
** MPI that computes it so. */
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

/* Has a rank ended (it is in dist_close) while this one still sums? */
static int rank_left(Dist *d) {
  Mpi *m = d->mpi;
  if (!m->left && MPI_Test(&m->bye_req, &m->left, MPI_STATUS_IGNORE) != MPI_SUCCESS) return 0;
  return m->left;
}

/* How long a sum may still take to complete after a rank said it ended:
** the rank may have finished its part of the last sum before it left, and
** what it sent can still be on its way (the messages of two
** communicators keep no order between them). */
#define BYE_GRACE_S 5.0

/* Until every sum in flight ('what') is complete. A signal ends the wait,
** and so does a rank that has ended: it will never join the sum. */
static int finish(Dist *d, const char *what, Err *err) {
  Mpi *m = d->mpi;
  if (refuse_if_broken(d, err) < 0) return -1;
  for (double grace_until = 0;;) {
    int done = 0;
    int rc = MPI_Testall(m->n_req, m->req, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_fail(d, rc, "MPI_Testall", err);
    if (done) break;
    if (sig_ended()) {
      /* said on every rank: what rank 0 reports is that it was interrupted */
      err_set(err, "stopped while waiting for the other ranks' sums");
      if (d->red.rank == 0) dist_say(d, err->msg);
      return give_up_as(d, EXIT_INTERRUPTED, err);
    }
    if (rank_left(d) && m->bye_in.code == EXIT_INTERRUPTED) {
      /* A signal stopped that rank: the job was stopped, here too, so
      ** that rank 0 saves its runs as a signal of its own would. */
      sig_post(SIGTERM);
      continue;
    }
    if (rank_left(d) && grace_until == 0) grace_until = clock_seconds() + BYE_GRACE_S;
    if (grace_until > 0 && clock_seconds() > grace_until) {
      const Bye *b = &m->bye_in;
      err_set(err, "rank %d ended (status %d) while this rank waits for %s: the ranks' scripts took "
              "different paths%s%.200s", b->rank, b->code, what, b->why[0] ? "; its last line on stderr: " : "",
              b->why);
      return give_up(d, err);
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
    m->handed += n;
    return 0;
  }
  if (start_sum(d, x, n, MPI_FLOAT, sizeof(float), err) < 0) return -1;
  return test_all(d, err);
}

static int wait_all(Dist *d, Err *err) {
  Mpi *m = d->mpi;
  if (m->whole && m->lo) {
    size_t n = (size_t)(m->hi - m->lo), handed = m->handed;
    float *lo = m->lo;
    m->lo = m->hi = NULL;
    m->handed = 0;
    /* one sum over the span is the slices' sums only when they tile it */
    if (n != handed)
      return err_set(err, "TIELAB_ALLREDUCE=whole: the gradient's slices are not one span (%zu floats "
                     "in a span of %zu)", handed, n);
    if (start_sum(d, lo, n, MPI_FLOAT, sizeof(float), err) < 0) return -1;
  }
  return finish(d, "the gradient's sums", err);
}

/* A small sum travels in an envelope of ENVELOPE doubles, the same size for
** every sum, so that two ranks at different sums still make one well-formed
** MPI call. Its head holds the key's three hashes, each as two 16-bit
** halves p and their squares p*p: the sum of p over the ranks is world*p
** and that of p*p is world*p*p only when every rank's p is this rank's
** (exactly, in doubles, for up to 2^20 ranks). The payload follows. */
enum { KEY_PARTS = 12, ENVELOPE = KEY_PARTS + REDUCE_SUM_MAX };

static void put_hash(double *e, uint32_t h) {
  double lo = (double)(h & 0xffff), hi = (double)(h >> 16);
  e[0] = lo, e[1] = hi, e[2] = lo * lo, e[3] = hi * hi;
}

static int same_hash(const double *sum, uint32_t h, int world) {
  double e[4];
  put_hash(e, h);
  for (int i = 0; i < 4; i++)
    if (sum[i] != world * e[i]) return 0;
  return 1;
}

static int check_key(Dist *d, const SumKey *key, const double *e, Err *err) {
  int world = d->red.world;
  if (!same_hash(e, key->where, world))
    err_set(err, "the ranks disagree at %s: another rank is at another run, step or size (the ranks' "
            "scripts took different paths)", key->what);
  else if (!same_hash(e + 8, key->settings, world))
    return err_set(err, "the ranks' settings differ at %s", key->what), REDUCE_SETTINGS_DIFFER;
  else if (!same_hash(e + 4, key->state, world))
    err_set(err, "the ranks' weights differ at %s: they have drifted apart (a setting changed on one "
            "rank alone?)", key->what);
  else
    return 0;
  ((Mpi *)d->mpi)->broken = 1;   /* every rank finds the same: rank 0 reports it */
  return REDUCE_KEYS_DIFFER;
}

static int sum_now(Dist *d, const SumKey *key, double *x, int n, Err *err) {
  if (n < 0 || n > REDUCE_SUM_MAX) return err_set(err, "a sum of %d values (at most %d)", n, REDUCE_SUM_MAX);
  double e[ENVELOPE] = {0};
  put_hash(e, key->where);
  put_hash(e + 4, key->state);
  put_hash(e + 8, key->settings);
  memcpy(e + KEY_PARTS, x, (size_t)n * sizeof *x);
  if (start_sum(d, e, ENVELOPE, MPI_DOUBLE, sizeof(double), err) < 0) return -1;
  if (finish(d, key->what, err) < 0) return -1;
  int differ = check_key(d, key, e, err);
  if (differ < 0) return differ == REDUCE_SETTINGS_DIFFER ? differ : REDUCE_KEYS_DIFFER;
  memcpy(x, e + KEY_PARTS, (size_t)n * sizeof *x);
  return 0;
}

/* Every rank's bytes, after a sum whose settings differed (every rank is
** at that sum): the job then cannot train on, so it is marked broken
** with no sum in flight, and ends as a failed one does. */
static int gather_now(Dist *d, const void *mine, size_t n, void *all, Err *err) {
  Mpi *m = d->mpi;
  if (refuse_if_broken(d, err) < 0) return -1;
  if (n > INT_MAX) return err_set(err, "a gather of %zu bytes (at most %d)", n, INT_MAX);
  MPI_Request r;
  int rc = MPI_Iallgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, m->comm, &r);
  if (rc != MPI_SUCCESS) return mpi_fail(d, rc, "MPI_Iallgather", err);
  if (add_request(d, r, err) < 0 || finish(d, "the ranks' settings", err) < 0) return -1;
  m->broken = 1;
  return 0;
}

/* The Reducer's calls: the above, under the lock (the watch may be
** looking), each charged to 'busy' from 'entered'. */
static double entered(void *ctx) {
  pthread_mutex_lock(&((Mpi *)((Dist *)ctx)->mpi)->lock);
  return clock_seconds();
}

static int charged(void *ctx, double t0, int rc) {
  Mpi *m = ((Dist *)ctx)->mpi;
  m->busy += clock_seconds() - t0;
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static int red_start(void *ctx, float *x, size_t n, Err *err) {
  double t0 = entered(ctx);
  return charged(ctx, t0, start_slice(ctx, x, n, err));
}

static int red_poll(void *ctx, Err *err) {
  double t0 = entered(ctx);
  return charged(ctx, t0, test_all(ctx, err));
}

static int red_wait(void *ctx, Err *err) {
  dist_trim_log(ctx);
  double t0 = entered(ctx);
  return charged(ctx, t0, wait_all(ctx, err));
}

static int red_sum(void *ctx, const SumKey *key, double *x, int n, Err *err) {
  dist_trim_log(ctx);
  double t0 = entered(ctx);
  return charged(ctx, t0, sum_now(ctx, key, x, n, err));
}

static int red_gather(void *ctx, const void *mine, size_t n, void *all, Err *err) {
  double t0 = entered(ctx);
  return charged(ctx, t0, gather_now(ctx, mine, n, all, err));
}

/* The job's watch: while this rank computes on its own (a lens fit, a
** script's sleep), a rank that a signal stopped would wait for it in
** vain; so every tenth of a second, when no MPI call is under way here,
** it looks for that rank's bye, and stops this rank as the signal would
** have. It never waits for the lock, and leaves MPI alone once a sum was
** given up (its buffers may be gone). */
static void *watch(void *arg) {
  Dist *d = arg;
  Mpi *m = d->mpi;
  struct timespec tenth = {0, 100000000};
  while (!atomic_load(&m->watch_stop)) {
    nanosleep(&tenth, NULL);
    if (pthread_mutex_trylock(&m->lock) != 0) continue;
    int stopped = !m->broken && rank_left(d) && m->bye_in.code == EXIT_INTERRUPTED;
    pthread_mutex_unlock(&m->lock);
    if (stopped) {
      sig_post(SIGTERM);
      break;
    }
  }
  return NULL;
}

static void watch_start(Dist *d) {
  Mpi *m = d->mpi;
  pthread_mutex_init(&m->lock, NULL);
  atomic_store(&m->watch_stop, 0);
  m->watching = sig_thread_start(&m->watcher, watch, d) == 0;
}

static void watch_end(Mpi *m) {
  if (!m->watching) return;
  atomic_store(&m->watch_stop, 1);
  pthread_join(m->watcher, NULL);
  m->watching = 0;
}

static double red_busy(void *ctx) { return ((Mpi *)((Dist *)ctx)->mpi)->busy; }

/* How a rank sums the gradient: TIELAB_ALLREDUCE. */
enum { MODE_LAYERS, MODE_WHOLE, MODE_NOT_UNDERSTOOD };

/* TIELAB_ALLREDUCE: "layers" (the default) or "whole"; anything else is
** MODE_NOT_UNDERSTOOD, with 'err' saying so (refused with the others, in
** join). */
static int read_mode(Err *err) {
  const char *v = getenv("TIELAB_ALLREDUCE");
  if (!v || !*v || strcmp(v, "layers") == 0) return MODE_LAYERS;
  if (strcmp(v, "whole") == 0) return MODE_WHOLE;
  err_set(err, "TIELAB_ALLREDUCE='%s': give layers (each layer's gradient summed as the backward "
          "leaves it, the default) or whole (the whole gradient summed at the end)", v);
  return MODE_NOT_UNDERSTOOD;
}

/* The communicators of dist_mpi_open, each a duplicate of the world's
** whose errors are returned; -1 when MPI could not make one. */
static int make_comm(MPI_Comm *c) {
  if (MPI_Comm_dup(MPI_COMM_WORLD, c) != MPI_SUCCESS) return -1;
  return MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN) == MPI_SUCCESS ? 0 : -1;
}

/* How many ranks share this rank's machine (its memory). */
static int ranks_on_node(void) {
  MPI_Comm node;
  int n = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

/* Every rank must sum the gradient the same way: the slices of one would
** meet the whole of another. One MAX over {mode, -mode} gives the highest
** mode and, negated, the lowest; they are equal when every rank's is the
** same. A rank whose own value was not understood has 'err' set already. */
static int same_mode(Mpi *m, int mode, Err *err) {
  int range[2] = {mode, -mode};
  if (MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT, MPI_MAX, m->comm) != MPI_SUCCESS)
    return err_set(err, "MPI_Allreduce failed at the start of the job");
  if (mode == MODE_NOT_UNDERSTOOD) return -1;
  if (range[0] == MODE_NOT_UNDERSTOOD)
    return err_set(err, "TIELAB_ALLREDUCE on another rank is neither layers nor whole: give every rank the same");
  if (range[0] != -range[1])
    return err_set(err, "TIELAB_ALLREDUCE is not the same on every rank: give every rank layers, or every rank whole");
  return 0;
}

static int join(Dist *d, Mpi *m, int env_world, int mode, Err *err) {
  int provided;
  /* Only one thread at a time calls MPI: the one that steps the runs. */
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    return err_set(err, "MPI_Init_thread failed: this process cannot join its mpirun job");
  if (provided < MPI_THREAD_SERIALIZED)
    return err_set(err, "this MPI gives thread level %d, below MPI_THREAD_SERIALIZED", provided);
  if (make_comm(&m->comm) < 0 || make_comm(&m->end) < 0 || make_comm(&m->bye) < 0)
    return err_set(err, "MPI could not make the job's communicators");
  MPI_Comm_rank(m->comm, &d->red.rank);
  MPI_Comm_size(m->comm, &d->red.world);
  if (d->red.world != env_world)
    return err_set(err, "the launcher started %d processes, but MPI joined %d of them: start tielab with "
                   "mpirun, or srun with an MPI plugin (srun --mpi=pmix)", env_world, d->red.world);
  d->red.node_ranks = ranks_on_node();
  if (same_mode(m, mode, err) < 0) return -1;
  if (MPI_Irecv(&m->bye_in, sizeof m->bye_in, MPI_BYTE, MPI_ANY_SOURCE, 0, m->bye, &m->bye_req) != MPI_SUCCESS)
    return err_set(err, "MPI_Irecv failed at the start of the job");
  return 0;
}

int dist_mpi_open(Dist **out, int env_world, Err *err) {
  *out = NULL;
  int mode = read_mode(err);
  Dist *d = calloc(1, sizeof *d);
  Mpi *m = &the_job;
  if (!d) return err_set(err, "out of memory joining the MPI job");
  if (join(d, m, env_world, mode, err) < 0) {
    int up = 0, rank = 0;
    MPI_Initialized(&up);
    if (up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Every rank refuses alike; rank 0 says why, and says it before
    ** MPI_Finalize, which every rank reaches before any leaves: a rank that
    ** ended first with a failing status could have mpirun end the job
    ** before rank 0's line was out. The message is then said. */
    if (up && rank == 0) fprintf(stderr, "tielab: %s\n", err->msg);
    if (up) MPI_Finalize();
    if (up) err->msg[0] = '\0';
    free(d);
    return -1;
  }
  m->whole = mode == MODE_WHOLE;
  d->tty = -1;
  d->log = -1;
  d->mpi = m;
  d->red.ctx = d;
  d->red.start = red_start;
  d->red.poll = red_poll;
  d->red.wait = red_wait;
  d->red.sum = red_sum;
  d->red.gather = red_gather;
  d->red.busy = red_busy;
  watch_start(d);
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
** that a signal reached, waits at most FAILED_WAIT_S. Returns 0; -1 when
** the others did not come; ENDED_AROUND when a signal came while this
** rank, failed or stopped, waited: mpirun's, as it ends the job now that
** another rank has ended (rank 0, its runs saved), or the user's. */
enum { ENDED_AROUND = -2 };

static int agree_on_code(Dist *d, int *code) {
  Mpi *m = d->mpi;
  MPI_Request r;
  double until = *code != EXIT_OK ? clock_seconds() + FAILED_WAIT_S : 0;   /* *code is MPI's until done */
  unsigned signals = sig_count();
  if (MPI_Iallreduce(MPI_IN_PLACE, code, 1, MPI_INT, MPI_MAX, m->end, &r) != MPI_SUCCESS) return -1;
  for (;;) {
    int done = 0;
    if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
    if (done) return 0;
    if (until > 0 && sig_count() != signals) return ENDED_AROUND;
    if (until == 0 && sig_ended()) until = clock_seconds() + FAILED_WAIT_S, signals = sig_count();
    if (until > 0 && clock_seconds() > until) return -1;
    sched_yield();
  }
}

/* A sum given up is still in flight and reads buffers the lab has freed
** by now: calling MPI at all would move it along. Rank 0 (its runs saved
** by now) just ends, and mpirun then ends the others; the others wait,
** not in MPI, for that to happen, so that rank 0 is not ended while it
** saves, unless rank 0 has said it ended. A signal that comes while they
** wait ends the wait: mpirun's, once rank 0 has ended, or the user's. */
static int end_broken(Dist *d, int code) {
  Mpi *m = d->mpi;
  struct timespec tenth = {0, 100000000};
  if (d->red.rank > 0 && !(m->left && m->bye_in.rank == 0))
    for (double until = clock_seconds() + FAILED_WAIT_S; clock_seconds() < until && sig_count() == m->signals_then;)
      nanosleep(&tenth, NULL);
  dist_free(d);
  return code;
}

/* Tell every other rank that this one has ended ('msg'): one still
** waiting in a sum then stops instead of waiting for ever, and rank 0 can
** say why. 'msg' stays untouched until the sends complete (take_byes). */
static int say_bye(Dist *d, const Bye *msg, MPI_Request *sent) {
  Mpi *m = d->mpi;
  for (int r = 0, k = 0; r < d->red.world; r++)
    if (r != d->red.rank && MPI_Isend(msg, sizeof *msg, MPI_BYTE, r, 0, m->bye, &sent[k++]) != MPI_SUCCESS)
      return -1;
  return 0;
}

/* A rank that failed where rank 0 did not fail alike: rank 0 says why. */
static void report_bye(Dist *d, const Bye *b, int own) {
  if (d->red.rank != 0 || b->code == own || b->code == EXIT_OK) return;
  Err msg;   /* err_set makes another process's bytes safe for the terminal */
  err_set(&msg, "rank %d ended with status %d%s%.300s", b->rank, b->code, b->why[0] ? "; its last line on stderr: " : "",
          b->why);
  dist_say(d, msg.msg);
}

/* Every rank has said bye by now (all have agreed on the status): take
** the messages, so that none is left in flight at MPI_Finalize, and on
** rank 0 report the failures it did not share. */
static void take_byes(Dist *d, MPI_Request *sent, int own) {
  Mpi *m = d->mpi;
  Bye in;
  MPI_Wait(&m->bye_req, MPI_STATUS_IGNORE);
  report_bye(d, &m->bye_in, own);
  for (int k = 0; k < d->red.world - 2; k++) {
    MPI_Recv(&in, sizeof in, MPI_BYTE, MPI_ANY_SOURCE, 0, m->bye, MPI_STATUS_IGNORE);
    report_bye(d, &in, own);
  }
  MPI_Waitall(d->red.world - 1, sent, MPI_STATUSES_IGNORE);
}

int dist_close(Dist *d, int code) {
  if (!d) return code;
  Mpi *m = d->mpi;
  watch_end(m);   /* from here this thread alone calls MPI */
  if (m->broken) return end_broken(d, code);   /* it has said why */
  int job = code;
  Bye *msg = &m->bye_out;   /* the job's, not this call's: read by the sends until they complete */
  *msg = (Bye){.rank = d->red.rank, .code = code};
  if (code != EXIT_OK) dist_why(d, msg->why, sizeof msg->why);
  MPI_Request *sent = calloc((size_t)d->red.world, sizeof *sent);
  int agreed = sent && say_bye(d, msg, sent) == 0 ? agree_on_code(d, &job) : -1;
  if (agreed == ENDED_AROUND) {   /* MPI is being ended around this rank: leave it be */
    free(sent);
    dist_free(d);
    return code;
  }
  if (agreed < 0) {
    Err line;
    err_set(&line, "ended with status %d and the other ranks did not end with it: ending the job%s%.300s", code,
            msg->why[0] ? "; its last line on stderr: " : "", msg->why);
    dist_say(d, line.msg);
    MPI_Abort(MPI_COMM_WORLD, code ? code : EXIT_RUNTIME);
  }
  take_byes(d, sent, code);
  free(sent);
  MPI_Comm_free(&m->comm);
  MPI_Comm_free(&m->end);
  MPI_Comm_free(&m->bye);
  MPI_Finalize();
  free(m->req);
  dist_free(d);
  return job;
}
