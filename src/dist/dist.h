/*
** dist.h -- the processes of one data-parallel job: tielab started by
** 'mpirun -np N' (or srun), each process a rank of the job.
**
** Every rank runs the same command line; the lab shares each batch among
** them through the Reducer this module gives it (core/reduce.h), so that
** every rank holds the same weights. Rank 0 alone prints and writes: once
** 'dist_quiet' is called the others' stdout goes to /dev/null and their
** stderr to a file of theirs, whose last line rank 0 says when one fails.
** Without the environment mpirun gives its processes, nothing here starts
** MPI: a plain process is a job of one, and a build without MPI is the
** same program.
*/
#ifndef TIELAB_DIST_DIST_H
#define TIELAB_DIST_DIST_H

#include "base/err.h"
#include "core/reduce.h"

typedef struct Dist Dist;

/* Join the job this process was started in. *out is NULL for a plain
** process or a job of one rank; -1 with 'err' set when the environment
** says there are several ranks but they cannot be joined (or this build
** has no MPI). An empty message: the ranks met and rank 0 has said why
** already (before they left MPI, so that the job's end cannot lose it). */
int dist_open(Dist **out, Err *err);

/* This process's rank as its launcher says it, before or without
** dist_open (0 in a plain process): so that only rank 0 reports an error
** every rank meets alike, such as dist_open's. */
int dist_env_rank(void);

/* The Reducer for lab_set_reducer; NULL for a NULL Dist. */
const Reducer *dist_reducer(Dist *d);

/* On rank > 0, send stdout to /dev/null and stderr to a file of this
** rank's (its last 256 KiB at most): rank 0 speaks for the job. What this
** module itself has to say (a rank gone) still reaches the terminal. */
void dist_quiet(Dist *d);

/* Leave the job with this rank's exit status 'code'; returns the job's,
** the highest of the ranks', which every rank exits with. The ranks end together: one that
** failed while the others wait in a sum it will never join ends the whole
** job (MPI_Abort) after a while. A NULL Dist returns 'code'. */
int dist_close(Dist *d, int code);

#endif
