/*
** dist.c -- which job this process is in, read from the environment that
** the launchers give their processes, and the part of dist.h that needs
** no MPI. The transport is in mpi.c.
*/
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dist/dist.h"
#include "dist/dist_impl.h"

/* The job size each launcher puts into its processes' environment:
** Open MPI's mpirun, PMIx (srun --mpi=pmix, prterun) and PMI (MPICH's
** hydra, srun --mpi=pmi2). */
static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"};

int dist_env_world(const char **var) {
  for (size_t i = 0; i < sizeof size_vars / sizeof *size_vars; i++) {
    const char *v = getenv(size_vars[i]);
    if (!v || !*v) continue;
    char *end;
    long n = strtol(v, &end, 10);
    *var = size_vars[i];
    return *end || n < 1 || n > 1 << 20 ? -1 : (int)n;
  }
  *var = NULL;
  return 1;
}

int dist_open(Dist **out, Err *err) {
  *out = NULL;
  const char *var;
  int world = dist_env_world(&var);
  if (world < 0) return err_set(err, "%s='%s' is not a number of processes", var, getenv(var));
  if (world == 1) return 0;
  return dist_mpi_open(out, err);
}

const Reducer *dist_reducer(Dist *d) { return d ? &d->red : NULL; }

void dist_quiet(Dist *d) {
  if (!d || d->red.rank == 0) return;
  fflush(stdout);
  fflush(stderr);
  d->tty = dup(STDERR_FILENO);   /* this module's own messages */
  int null = open("/dev/null", O_WRONLY);
  if (null < 0) return;
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
  close(null);
}

void dist_say(Dist *d, const char *msg) {
  char line[ERR_MSG_MAX + 64];
  int n = snprintf(line, sizeof line, "tielab (rank %d of %d): %s\n", d->red.rank, d->red.world, msg);
  if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
  if (write(d->tty >= 0 ? d->tty : STDERR_FILENO, line, (size_t)n) < 0) return;
}
