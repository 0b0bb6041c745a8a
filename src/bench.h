/*
** bench.h -- training throughput of one model shape: full steps (forward,
** backward, combine, clip, AdamW) on random token batches, reported as one
** JSON line, like the PyTorch peer's bench so the two can be compared.
*/
#ifndef TIELAB_BENCH_H
#define TIELAB_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "core/config.h"
#include "core/err.h"

/* Time 'warmup' + 'steps' training steps of a model of shape 'cfg' with
** 'threads' threads, batches drawn from 'seed'; print one JSON line to
** 'out' with the configuration, median tokens/s and step times (also of
** forward, backward and the optimizer), FLOPs and the first/last loss. */
int bench_run(const ModelConfig *cfg, int threads, int steps, int warmup, uint64_t seed, FILE *out,
              Err *err);

#endif
