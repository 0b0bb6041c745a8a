/*
** bench_lab.h -- training throughput with every instrument at its interval:
** the same JSON line as bench.h, but each step is a whole lab step of a
** tied run on real batches (lens training, validation, lens evaluation,
** drift, alignment with an untied partner), so the cost of the instruments
** shows beside the bare step of 'tielab --bench'. Under mpirun the steps
** are shared among the ranks (lab_set_reducer) and the line also gives
** "allreduce_ms": rank 0's time per step inside the sums of the gradient,
** the part of them that the backward did not hide.
*/
#ifndef TIELAB_BENCH_LAB_H
#define TIELAB_BENCH_LAB_H

#include <stdio.h>

#include "app/cli.h"

int bench_lab_run(const CliOptions *o, FILE *out, Err *err);

#endif
