/*
** weights.h -- a model's parameters as a safetensors file: nanoGPT's tensor
** names and layouts, and nanoGPT's config keys (vocab_size, n_embd, n_layer,
** n_head, block_size) in '__metadata__', so that PyTorch reads what tielab
** writes and the other way round. Checkpoints reuse the same functions for
** their model part.
**
** Tying is read from the file: 'tie' in the metadata ("tied", "untied" or a
** column count K) when present, else tied iff lm_head.weight is absent or
** equal to transformer.wte.weight. A tied file may carry lm_head.weight (as
** nanoGPT's state dicts do); the shared columns must then agree bit for bit.
*/
#ifndef TIELAB_WEIGHTS_H
#define TIELAB_WEIGHTS_H

#include "core/model.h"
#include "core/safetensors.h"

/* The shape a weights file describes: metadata first, tensor shapes where a
** key is missing; only n_head cannot be inferred. 'batch' is the caller's. */
int weights_config(const StFile *f, int batch, ModelConfig *cfg, Err *err);

/* Check 'f' against a model of shape 'c' before one exists: every model
** tensor present with its exact shape (lm_head.weight may be absent when
** fully tied), no stranger in the model's namespaces, nor anywhere when
** 'strict'. Missing, unexpected and mis-shaped tensors are named. */
int weights_check(const StFile *f, const ModelConfig *c, int strict, Err *err);

/* 0 when all 'n' values are finite, else -1 naming tensor 'name' and the
** first element that is NaN or infinite. */
int weights_check_finite(const char *name, const float *x, size_t n, Err *err);

/* Read a weights-only file into a new model (moments zero, no steps taken).
** Names and shapes are checked before the model is allocated (so a small
** file cannot make a large one), values after: NaN or infinity refused.
** Errors name the file and the tensor or key. */
Model *weights_load(const char *path, int threads, int batch, Err *err);

/* Set 'm's parameters from 'f' (F32, F64, F16 or BF16), leaving moments and
** step count alone. Names outside the model's namespaces ("transformer.",
** "lm_head.") are left to the caller; values must be finite; on any error
** 'm' is unchanged. */
int weights_read_into(Model *m, const StFile *f, Err *err);

/* Add 'm's parameters (pointers into the model: keep it unchanged until the
** write) and its config metadata to 'w'. lm_head.weight goes in unless the
** model is fully tied and 'with_lm_head' is 0. */
int weights_add_to_writer(Model *m, StWriter *w, int with_lm_head, Err *err);

/* Write a weights-only file (lm_head.weight omitted when fully tied). */
int weights_save(Model *m, const char *path, Err *err);

#endif
