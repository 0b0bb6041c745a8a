/*
** parallel.h -- a small persistent pool of worker threads and a parallel
** for over it, for the loops of one model step that BLAS does not cover
** (attention per batch and head, LayerNorm, GELU, softmax rows) and for
** splitting large products into blocks of rows. How a loop is cut, and
** who may use a pool: docs/architecture.md, 'The worker pool'.
*/
#ifndef TIELAB_PARALLEL_H
#define TIELAB_PARALLEL_H

#include "base/err.h"

typedef struct Pool Pool;

/* One range of a parallel loop: items [begin,end), run by worker 'w'
** (0 is the calling thread) of the pool's threads. */
typedef void (*PoolTask)(void *arg, int begin, int end, int w);

/* A pool of 'threads' (>= 1) threads in all, the caller included: a pool of
** one starts no thread and runs every loop inline. */
Pool *pool_create(int threads, Err *err);
void pool_free(Pool *p);
int pool_threads(const Pool *p);

/* Run 'task' over [0,n) split into at most pool_threads() ranges, at most
** one per item. */
void pool_for(Pool *p, int n, PoolTask task, void *arg);

/* Run 'task' once on every thread of the pool, with its part number in
** [0, parts): for a stage that does its share of several loops at once,
** each cut with 'pool_split'. */
typedef void (*PoolPart)(void *arg, int part, int parts);
void pool_run(Pool *p, PoolPart task, void *arg);

/* The range of part 'part' of 'parts' when [0,n) is cut as 'pool_for'
** cuts it: contiguous, sizes differing by at most one. */
void pool_split(int n, int parts, int part, int *begin, int *end);

#endif
