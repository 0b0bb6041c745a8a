/*
** model.h -- the reference GPT of docs/architecture.md: forward, backward,
** an AdamW, Adam or SGD step with global-norm clipping, and tying (tied,
** untied, partial) with the two gradients of the embedding kept apart.
** Its memory (one arena per kind, nanoGPT's tensors in order), how tying
** is kept and the order of a step's calls: docs/architecture.md, 'The
** model's memory, tying and step'.
*/
#ifndef TIELAB_MODEL_H
#define TIELAB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/config.h"
#include "core/reduce.h"

typedef struct Model Model;

/* One tensor of the arena. */
typedef struct TensorInfo {
  char name[64];    /* nanoGPT name */
  int ndim;         /* 1 or 2 */
  int shape[2];     /* [rows, cols] or [n] */
  size_t offset;    /* in floats, into every arena */
  size_t numel;
  int decay;        /* 1 for 2-D weights (weight decay applies) */
} TensorInfo;

/* Create a model of shape 'cfg' (validated) with all buffers, parameters
** zeroed. 'threads' sizes the model's pool (>= 1), which splits every
** product and elementwise loop itself: creating a model therefore sets
** OpenBLAS to one thread for the whole process. Results are bit-identical
** from run to run at a given thread count; a different count splits the
** sums differently and changes the last bits. */
Model *model_create(const ModelConfig *cfg, int threads, Err *err);
void model_free(Model *m);

/* Bytes 'model_create' allocates for a model of shape 'c': the four arenas,
** the activations kept for backward and the scratch of a step (this is
** what 'config_memory_bytes' reports). 'model_allocated_bytes' is what a
** model did allocate. */
size_t model_memory_bytes(const ModelConfig *c);
size_t model_allocated_bytes(const Model *m);

/* nanoGPT init from 'seed': N(0,0.02) weights and embeddings, c_proj weights
** N(0,0.02/sqrt(2L)), biases 0, LayerNorm 1/0; E_out's shared columns
** mirror E_in; moments and step count reset. */
void model_init(Model *m, uint64_t seed);

/* The tensor table a model of shape 'c' (validated) would have, without
** creating it: a malloc'd array of '*n' entries, NULL when out of memory.
** Loaders check a file's names and shapes against it before allocating. */
TensorInfo *model_tensor_table(const ModelConfig *c, int *n);

const ModelConfig *model_config(const Model *m);
int model_tensor_count(const Model *m);
const TensorInfo *model_tensor(const Model *m, int i);
const TensorInfo *model_find_tensor(const Model *m, const char *name);
/* A tensor as a matrix, as scripts see it: a weight [rows, cols] as it
** is, a vector [n] as an n x 1 column. */
void tensor_matrix_shape(const TensorInfo *t, int *rows, int *cols);
size_t model_n_floats(const Model *m);
float *model_params(Model *m);   /* arenas of n_floats */
float *model_grads(Model *m);
float *model_adam_m(Model *m);
float *model_adam_v(Model *m);
long model_adam_t(const Model *m);          /* optimizer steps taken */
void model_set_adam_t(Model *m, long t);

/* Copy E_in's shared columns into E_out, after writing weights directly
** into the parameter arena (loading a file, say). */
void model_mirror_shared(Model *m);

/* Forward on 'b' <= B sequences of 't' <= T tokens ('inputs' [b,t]).
** Returns the mean cross-entropy against 'targets' [b,t], or 0 when targets
** is NULL (logits still computed). Activations are kept for backward.
** Returns NAN, computing nothing, when b, t or a token id is out of range. */
float model_forward(Model *m, const int32_t *inputs, const int32_t *targets, int b, int t);

/* The same on 'b' rows that are this process's part of a batch of
** 'batch_rows' (>= b) shared across processes: the loss returned is the
** mean over these rows, and the gradient backward will compute is these
** rows' share of the whole batch's mean loss, so that the shares summed
** across processes are one process's gradient of the whole batch. */
float model_forward_part(Model *m, const int32_t *inputs, const int32_t *targets, int b, int t, int batch_rows);

/* Backward of the last forward (which had targets). Fills every gradient
** slot (overwriting) and the GradStats 'gs' (except total_norm). */
void model_backward(Model *m, GradStats *gs);

/* The same with each finished slice of the gradient arena handed to 'red'
** as the backward goes down (NULL: none), waiting for its sums before the
** GradStats are taken of the whole batch's gradient. -1 with 'err' set when
** the Reducer fails (a rank is gone); the weights are untouched. */
int model_backward_reduced(Model *m, GradStats *gs, const Reducer *red, Err *err);

/* The same with the hooks of a step (core/step.h; NULL: none): at each
** residual position p of 'hooks->hidden_positions', from L down to 0, once
** the gradient there is complete (p = L after the head and ln_f; p < L
** after block p, the gradient at its input; p = 0 before it is scattered
** into the embeddings), 'on_hidden' gets it with the stream there
** ('model_residual(m, p)'), on the calling thread, and may change it: the
** blocks below and the embeddings then see the change, and so do the
** GradStats. What the hooks report is added to '*aux' (may be NULL),
** summed across ranks with the GradStats under a Reducer ('gs' given).
** 'step' is handed to them. Returns 0, BACKWARD_RANKS (the Reducer failed)
** or BACKWARD_HOOK (a hook did, 'err' its message), the weights untouched. */
struct StepHooks;
enum { BACKWARD_RANKS = -1, BACKWARD_HOOK = -2 };
int model_backward_hooked(Model *m, GradStats *gs, const Reducer *red, const struct StepHooks *hooks, long step,
                          double *aux, Err *err);

/* Apply scales and fold the shared columns (see the top of this file). */
void model_combine(Model *m, float in_scale, float out_scale);

/* Global L2 norm of the gradient over every parameter entry (shared columns
** once); if above 'max_norm', scale all gradients down to it. Returns the
** norm before clipping. */
double model_clip(Model *m, float max_norm);

/* The same for the gradient times 'grad_scale' (folded into the clip's
** factor: one pass over the gradient at most); 'max_norm' 0 clips nothing.
** Returns the norm of the scaled gradient before clipping. */
double model_clip_scaled(Model *m, float grad_scale, float max_norm);

/* One optimizer step with 'oc' (its kind), then re-mirror shared columns. */
void model_update(Model *m, const OptimConfig *oc);

/* Change the number of shared columns. Columns that stop being shared give
** E_out a copy of the shared values and of their moments; columns that
** become shared take E_in's, E_out's or the mean of both ('merge'), values
** and moments alike. Returns -1 on a bad 'new_k'. */
int model_set_tie(Model *m, int new_k, TieMerge merge, Err *err);

/* Activations of the last forward, for instruments:
** the residual stream at position l in 0..L (0 after the embeddings, l after
** block l), [b,t,d]; the final LayerNorm output [b,t,d]; the logits [b,t,V]
** (overwritten by probabilities after a forward with targets). */
const float *model_residual(const Model *m, int l);
const float *model_lnf_out(const Model *m);
const float *model_logits(const Model *m);

/* Read a hidden state out through the model's current ln_f and E_out:
** 'h' [n,d] -> 'logits' [n,V]. 'scratch' holds n*d floats. No gradients. */
void model_readout(const Model *m, const float *h, int n, float *logits, float *scratch);

/* Backward of 'model_readout' with respect to 'h' only (ln_f and E_out are
** treated as constants): 'dlogits' [n,V] -> 'dh' [n,d]. 'scratch' holds
** 2*n*d floats. */
void model_readout_backward(const Model *m, const float *h, const float *dlogits, int n,
                            float *dh, float *scratch);

#endif
