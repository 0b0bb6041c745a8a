/*
** dist_impl.h -- the inside of the dist module: what dist.c and the
** transport (mpi.c, or nompi.c in a build without MPI) share.
*/
#ifndef TIELAB_DIST_DIST_IMPL_H
#define TIELAB_DIST_DIST_IMPL_H

#include <stddef.h>

#include "core/reduce.h"

struct Dist {
  Reducer red;   /* red.ctx is this Dist */
  int tty;       /* rank > 0 after dist_quiet: where its own messages go; else -1 */
  int log;       /* rank > 0 after dist_quiet: the file in memory its stderr goes to; else -1 */
  void *mpi;     /* the transport's state */
};

/* The job's size from the launcher's environment: 1 when there is none
** ('*var' NULL), -1 when its variable ('*var') is not a number. */
int dist_env_world(const char **var);

/* Start the transport for a job of 'world' ranks, as the launcher said. */
int dist_mpi_open(Dist **out, int world, Err *err);

/* One line on this rank's terminal, even after dist_quiet. */
void dist_say(Dist *d, const char *msg);

/* Why this rank failed, for its Bye: the last line it wrote to stderr
** (a traceback left out) on a rank > 0, whose stderr only this keeps;
** "" on rank 0, which reports its own. */
#define DIST_WHY_MAX 400
void dist_why(Dist *d, char *why, size_t cap);

/* Keep a rank's stderr file small, its last lines only: called each step. */
void dist_trim_log(Dist *d);

/* Close what dist_quiet opened and free 'd'. */
void dist_free(Dist *d);

#endif
