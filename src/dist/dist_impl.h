/*
** dist_impl.h -- the inside of the dist module: what dist.c and the
** transport (mpi.c, or nompi.c in a build without MPI) share.
*/
#ifndef TIELAB_DIST_DIST_IMPL_H
#define TIELAB_DIST_DIST_IMPL_H

#include "core/reduce.h"

struct Dist {
  Reducer red;   /* red.ctx is this Dist */
  int tty;       /* rank > 0 after dist_quiet: where its own messages go; else -1 */
  void *mpi;     /* the transport's state */
};

/* The job's size from the launcher's environment: 1 when there is none
** ('*var' NULL), -1 when its variable ('*var') is not a number. */
int dist_env_world(const char **var);

/* Start the transport for a job of several ranks. */
int dist_mpi_open(Dist **out, Err *err);

/* One line on this rank's terminal, even after dist_quiet. */
void dist_say(Dist *d, const char *msg);

#endif
