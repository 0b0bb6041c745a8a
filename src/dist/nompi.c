/*
** nompi.c -- the transport of a build without MPI: a job of several ranks
** is refused, so that 'mpirun -np 2 tielab' never trains two unrelated
** copies of the same run.
*/
#include "config.h"

#include "dist/dist.h"
#include "dist/dist_impl.h"

int dist_mpi_open(Dist **out, int world, Err *err) {
  const char *var;
  dist_env_world(&var);
  *out = NULL;
  return err_set(err, "started as one of %d processes (%s), but this tielab was built without MPI: install "
                 "Debian's libopenmpi-dev and build again (configure finds ompi-c), or run it without mpirun",
                 world, var);
}

int dist_close(Dist *d, int code) {
  (void)d;
  return code;
}
