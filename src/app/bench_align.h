/*
** bench_align.h -- how long the paper's Table 1 takes on two random [V,d]
** matrices (the run's vocab and dim): the linear map, Procrustes, KNN@10
** and CKA, each with its random baseline, timed one metric at a time and
** all four in one call (align.h's ALIGN_TABLE1), reported as one JSON line.
** A released model's 50k x 2048 embeddings are what it is sized for.
*/
#ifndef TIELAB_BENCH_ALIGN_H
#define TIELAB_BENCH_ALIGN_H

#include <stdio.h>

#include "base/err.h"
#include "lab/lab.h"

/* Time 'reps' fresh align_compare calls per metric and for the whole
** Table 1 set, on the run's threads, after 'warmup' untimed calls of every
** metric; print medians, the memory estimate
** and the Table 1 values to 'out'. Refused, with both figures, when the
** matrices and the workspace do not fit in memory. */
int bench_align_run(const RunOptions *o, int reps, int warmup, FILE *out, Err *err);

#endif
