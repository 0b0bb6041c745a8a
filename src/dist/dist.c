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
#include <sys/mman.h>
#include <unistd.h>

#include "dist/dist.h"
#include "dist/dist_impl.h"

/* The job size each launcher puts into its processes' environment, in
** the order they are believed: Open MPI's mpirun; PMI (MPICH's hydra,
** which starts its proxies with srun under Slurm, so that they carry the
** size of that step, of nodes, too); srun with an MPI plugin, which says
** the size of its step and, with the plugin, a PMIx or PMI rank (srun
** without one starts unrelated copies: a plain process each). */
static const struct {
  const char *size;   /* the job's size */
  const char *with;   /* only with this one set too, or NULL */
  const char *with2;
} launchers[] = {
    {"OMPI_COMM_WORLD_SIZE", NULL, NULL},
    {"PMI_SIZE", NULL, NULL},
    {"SLURM_STEP_NUM_TASKS", "PMIX_RANK", "PMI_RANK"},
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
  /* This process has joined: a tielab it starts is a process of its own
  ** (and so is an mpirun or srun it starts: they see no job around them). */
  for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++) unsetenv(launchers[i].size);
  return 0;
}

const Reducer *dist_reducer(Dist *d) { return d ? &d->red : NULL; }

/* A rank's stderr file keeps at least its last LOG_KEEP bytes, and is cut
** back to them when it grows past LOG_MAX. */
#define LOG_KEEP 4096
#define LOG_MAX (256 * 1024)

/* The file a rank's stderr goes to: in memory, or where tmpfile() puts it
** when memfd_create is refused. Every write lands at its end (O_APPEND),
** after a trim too; -1 when there is none. */
static int open_log(void) {
  int fd = memfd_create("tielab-rank-stderr", MFD_CLOEXEC);
  if (fd < 0) {
    FILE *f = tmpfile();
    fd = f ? fcntl(fileno(f), F_DUPFD_CLOEXEC, 3) : -1;
    if (f) fclose(f);
  }
  int flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_APPEND) < 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

/* On rank > 0: stdout to /dev/null; stderr to a file in memory (memfd),
** which says why the rank failed when it does; this module's own lines
** to the terminal. */
void dist_quiet(Dist *d) {
  if (!d || d->red.rank == 0) return;
  fflush(stdout);
  fflush(stderr);
  d->tty = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  d->log = open_log();
  if (null >= 0) dup2(null, STDOUT_FILENO);
  if (d->log >= 0 || null >= 0) dup2(d->log >= 0 ? d->log : null, STDERR_FILENO);
  if (null >= 0) close(null);
}

/* The last up to 'cap' - 1 bytes of the stderr file into 'buf'. */
static size_t log_tail(Dist *d, char *buf, size_t cap) {
  off_t end = lseek(d->log, 0, SEEK_END);
  if (end <= 0) return 0;
  off_t from = end > (off_t)(cap - 1) ? end - (off_t)(cap - 1) : 0;
  ssize_t n = pread(d->log, buf, (size_t)(end - from), from);
  if (n <= 0) return 0;
  buf[n] = 0;
  return (size_t)n;
}

void dist_trim_log(Dist *d) {
  if (d->log < 0 || lseek(d->log, 0, SEEK_END) <= LOG_MAX) return;
  char tail[LOG_KEEP + 1];
  size_t n = log_tail(d, tail, sizeof tail);
  if (ftruncate(d->log, 0) < 0) return;
  /* a short write loses part of a log that only says why the rank failed */
  ssize_t written = write(d->log, tail, n);
  (void)written;
}

void dist_why(Dist *d, char *why, size_t cap) {
  why[0] = 0;
  if (d->red.rank == 0 || d->log < 0) return;
  fflush(stderr);
  char tail[LOG_KEEP + 1];
  if (log_tail(d, tail, sizeof tail) == 0) return;
  char *trace = strstr(tail, "stack traceback:");   /* Lua's: the error is the line above */
  for (char *t = trace; t; t = strstr(t + 1, "stack traceback:")) trace = t;
  if (trace) *trace = 0;
  size_t n = strlen(tail);
  while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == ' ' || tail[n - 1] == '\t')) tail[--n] = 0;
  char *line = strrchr(tail, '\n');
  Err shown;   /* err_set keeps what the terminal can show */
  err_set(&shown, "%s", line ? line + 1 : tail);
  snprintf(why, cap, "%s", shown.msg);
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
