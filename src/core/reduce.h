/*
** reduce.h -- how one training step's gradient is summed across the
** processes that share its batch (data-parallel training). The Reducer's
** calls, and how ranks that part ways fail instead of hanging:
** docs/architecture.md, 'Summing a step's gradient across ranks'.
*/
#ifndef TIELAB_CORE_REDUCE_H
#define TIELAB_CORE_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* What a small sum is, for checking that every rank makes the same one. */
typedef struct SumKey {
  uint32_t where;     /* a hash of what is summed and where: the run, its step, its size */
  uint32_t state;     /* a hash of the weights, or 0: every rank's must be the same */
  const char *what;   /* for the error: "the loss of run 'tied' at step 51" */
  uint32_t settings;  /* a hash of the run's settings, or 0: every rank's must be the same */
} SumKey;

typedef struct Reducer {
  int rank, world;   /* this process and how many share each batch */
  int node_ranks;    /* how many of them share this machine's memory */
  void *ctx;
  /* Begin summing 'n' floats at 'x' across every rank, in place; the sum
  ** may complete later, and 'x' is not touched again until 'wait'. */
  int (*start)(void *ctx, float *x, size_t n, Err *err);
  /* Let the sums started move on (MPI moves them only when called); the
  ** backward calls it between its stages. */
  int (*poll)(void *ctx, Err *err);
  /* Every sum started is complete; -1 with 'err' set when a rank is gone. */
  int (*wait)(void *ctx, Err *err);
  /* Sum 'n' (at most REDUCE_SUM_MAX) doubles across every rank, in place,
  ** before returning; REDUCE_KEYS_DIFFER with 'err' set when the ranks'
  ** keys differ (the job cannot go on), REDUCE_SETTINGS_DIFFER when only
  ** their settings do (every rank is at the same sum: 'gather' may follow),
  ** -1 when the sum failed otherwise (a rank gone, a signal). */
  int (*sum)(void *ctx, const SumKey *key, double *x, int n, Err *err);
  /* Every rank's 'n' bytes at 'mine', in the ranks' order, into 'all'
  ** (world * n bytes), then the job stops training: only after a sum
  ** gave REDUCE_SETTINGS_DIFFER, where every rank calls it alike. */
  int (*gather)(void *ctx, const void *mine, size_t n, void *all, Err *err);
  /* Seconds spent inside the three calls above so far: the part of the
  ** sums that did not overlap the computation (for the benchmarks). */
  double (*busy)(void *ctx);
} Reducer;

#define REDUCE_SUM_MAX 8
#define REDUCE_KEYS_DIFFER (-2)
#define REDUCE_SETTINGS_DIFFER (-3)

/* A 32-bit hash of 'n' bytes, continuing from 'h' (start with 0): for the
** keys. */
uint32_t reduce_hash(uint32_t h, const void *bytes, size_t n);

#endif
