/*
** reduce.h -- how one training step's gradient is summed across the
** processes that share its batch (data-parallel training).
**
** The core knows no transport. A Reducer is a table of functions that the
** process's edge fills in (src/dist, over MPI); the model calls 'start' on
** each slice of the gradient arena as soon as the backward has finished it,
** from the head down to the embeddings, so that the sums of the upper
** layers can travel while the lower ones are still being computed, then
** 'wait' once before anything reads the gradient. With no Reducer (a plain
** process) none of this runs.
*/
#ifndef TIELAB_CORE_REDUCE_H
#define TIELAB_CORE_REDUCE_H

#include <stddef.h>

#include "core/err.h"

typedef struct Reducer {
  int rank, world;   /* this process and how many share each batch */
  void *ctx;
  /* Begin summing 'n' floats at 'x' across every rank, in place; the sum
  ** may complete later, and 'x' is not touched again until 'wait'. */
  int (*start)(void *ctx, float *x, size_t n, Err *err);
  /* Let the sums started move on (MPI moves them only when called); the
  ** backward calls it between its stages. */
  int (*poll)(void *ctx, Err *err);
  /* Every sum started is complete; -1 with 'err' set when a rank is gone. */
  int (*wait)(void *ctx, Err *err);
  /* Sum 'n' doubles across every rank, in place, before returning. */
  int (*sum)(void *ctx, double *x, int n, Err *err);
  /* Seconds spent inside the three calls above so far: the part of the
  ** sums that did not overlap the computation (for the benchmarks). */
  double (*busy)(void *ctx);
} Reducer;

#endif
