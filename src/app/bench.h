/*
** bench.h -- training throughput of one model shape: full steps (forward,
** backward, combine, clip, the optimizer step) on random token batches
** (or a corpus's), reported as one JSON line, like the PyTorch peer's bench so the two can
** be compared.
*/
#ifndef TIELAB_BENCH_H
#define TIELAB_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "lab/lab.h"

/* Time 'warmup' + 'steps' training steps of a model of the shape of 'o'
** with its threads and its optimizer and schedule, batches drawn from its
** data seed (random tokens, or its corpus); print one JSON line to 'out' with the configuration, median
** tokens/s and step times (also of forward, backward and the optimizer),
** FLOPs and the first/last loss. */
int bench_run(const RunOptions *o, int steps, int warmup, FILE *out, Err *err);

/* The same for forward passes alone (logits and loss, no backward, no
** optimizer): median forward time and tokens/s, as the PyTorch peer's
** forward under torch.no_grad() is timed beside it by scripts/bench. */
int bench_forward_run(const RunOptions *o, int steps, int warmup, FILE *out, Err *err);

/* '"config":{...}' -- the model's shape, each size under its setting's
** name, the tie as text. */
void bench_print_config(FILE *out, const ModelConfig *c);

/* '"optim":{...}' -- the optimizer and schedule settings of 'o', on which
** a bench's losses depend, as JSON values. */
void bench_print_optim(FILE *out, const RunOptions *o);

/* '"data":{...}' -- where the batches came from: the corpus (else random
** tokens, or with 'synthetic' the built-in language and its seed), its size
** cap and the data seed. */
void bench_print_data(FILE *out, const RunOptions *o, int synthetic);

#endif
