/*
** dist.c -- which job this process is in, read from the environment that
** the launchers give their processes, and the part of dist.h that needs
** no MPI. The transport is in mpi.c.
*/
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/dist.h"
#include "dist/dist_impl.h"

/* The job size each launcher puts into its processes' environment: Open
** MPI's mpirun; srun with an MPI plugin, which says the size of its step
** and, with the plugin, a PMIx or PMI rank (srun without one starts
** unrelated copies: a plain process each); PMI (MPICH's hydra). */
static const struct {
  const char *size;   /* the job's size */
  const char *with;   /* only with this one set too, or NULL */
  const char *with2;
} launchers[] = {
    {"OMPI_COMM_WORLD_SIZE", NULL, NULL},
    {"SLURM_STEP_NUM_TASKS", "PMIX_RANK", "PMI_RANK"},
    {"PMI_SIZE", NULL, NULL},
};

static int set(const char *name) { return name && getenv(name) && *getenv(name); }

int dist_env_world(const char **var) {
  for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++) {
    if (!set(launchers[i].size)) continue;
    if (launchers[i].with && !set(launchers[i].with) && !set(launchers[i].with2)) continue;
    const char *v = getenv(launchers[i].size);
    char *end;
    long n = strtol(v, &end, 10);
    *var = launchers[i].size;
    return *end || n < 1 || n > 1 << 20 ? -1 : (int)n;
  }
  *var = NULL;
  return 1;
}

int dist_env_rank(void) {
  static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++)
    if (set(rank_vars[i])) return atoi(getenv(rank_vars[i]));
  return 0;
}

int dist_open(Dist **out, Err *err) {
  *out = NULL;
  const char *var;
  int world = dist_env_world(&var);
  if (world < 0) return err_set(err, "%s='%s' is not a number of processes", var, getenv(var));
  if (world == 1) return 0;
  if (dist_mpi_open(out, world, err) < 0) return -1;
  /* This process has joined: a tielab it starts is a process of its own. */
  unsetenv(var);
  return 0;
}

const Reducer *dist_reducer(Dist *d) { return d ? &d->red : NULL; }

/* The last bytes of stderr a rank keeps to tell why it failed. */
#define FAILURE_TAIL 1536

void dist_quiet(Dist *d) {
  if (!d || d->red.rank == 0) return;
  fflush(stdout);
  fflush(stderr);
  d->tty = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);   /* this module's own messages */
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  FILE *log = tmpfile();
  if (null >= 0) dup2(null, STDOUT_FILENO);
  if (log) d->log = fcntl(fileno(log), F_DUPFD_CLOEXEC, 3);
  if (d->log >= 0 || null >= 0) dup2(d->log >= 0 ? d->log : null, STDERR_FILENO);
  if (log) fclose(log);   /* the file lives on in d->log and stderr */
  if (null >= 0) close(null);
}

void dist_tell_failure(Dist *d, int code) {
  if (d->red.rank == 0 || code == 0 || d->log < 0) return;
  fflush(stderr);
  char tail[FAILURE_TAIL + 1];
  off_t end = lseek(d->log, 0, SEEK_END);
  off_t from = end > FAILURE_TAIL ? end - FAILURE_TAIL : 0;
  ssize_t n = end > 0 ? pread(d->log, tail, (size_t)(end - from), from) : 0;
  if (n <= 0) return;
  tail[n] = 0;
  char *line = tail;
  if (from > 0 && strchr(line, '\n')) line = strchr(line, '\n') + 1;   /* a whole first line */
  for (char *next; *line; line = next) {
    next = line + strcspn(line, "\n");
    if (*next) *next++ = 0;
    if (*line) dist_say(d, line);
  }
}

void dist_free(Dist *d) {
  if (d->tty >= 0) close(d->tty);
  if (d->log >= 0) close(d->log);
  free(d);
}

void dist_say(Dist *d, const char *msg) {
  char line[ERR_MSG_MAX + 64];
  int n = snprintf(line, sizeof line, "tielab (rank %d of %d): %s\n", d->red.rank, d->red.world, msg);
  if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
  if (write(d->tty >= 0 ? d->tty : STDERR_FILENO, line, (size_t)n) < 0) return;
}
