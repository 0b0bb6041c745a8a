/*
** config.h -- the plain settings of a model: its shape and batch, with the
** checks that make a shape possible, and the optimizer's hyperparameters,
** the gradient figures of a step and the ways of tying, which lab.h hands
** on to its clients without the model itself (model.h).
**
** 'tie_k' says how many leading columns of the input embedding E_in are one
** parameter with the same columns of the output embedding E_out: 0 is
** untied, 'dim' is fully tied, anything between is partial tying.
*/
#ifndef TIELAB_CONFIG_H
#define TIELAB_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct ModelConfig {
  int vocab;   /* V: rows of both embedding matrices */
  int dim;     /* d: model width */
  int layers;  /* L: transformer blocks */
  int heads;   /* H: attention heads, divides d */
  int ctx;     /* T: context length (rows of wpe) */
  int batch;   /* B: sequences per step */
  int tie_k;   /* shared leading columns: 0 untied .. dim tied */
} ModelConfig;

/* Bounds every size is checked against; generous but finite so that a typo
** ('--dim 1000000') is refused before anything is allocated. */
enum {
  CONFIG_MAX_VOCAB = 1 << 18,
  CONFIG_MAX_DIM = 8192,
  CONFIG_MAX_LAYERS = 256,
  CONFIG_MAX_HEADS = 256,
  CONFIG_MAX_CTX = 8192,
  CONFIG_MAX_BATCH = 4096,
};

/* The defaults a run starts from when an option is not given. */
ModelConfig config_default(void);

/* 0 when every field is in range and consistent, else -1 with the first
** problem named ("heads (3) must divide dim (128)"). */
int config_validate(const ModelConfig *c, Err *err);

/* Number of trainable floats: the two embeddings count once per shared
** column (an untied model has V*d more than a tied one). */
size_t config_param_count(const ModelConfig *c);

/* Bytes a run of this shape allocates: parameters, gradients, two optimizer
** moments, activations kept for backward, and scratch. */
size_t config_memory_bytes(const ModelConfig *c);

/* Training FLOPs per token: 6*(12*L*d^2 + V*d) + 12*L*T*d. */
double config_flops_per_token(const ModelConfig *c);

/* Parse 'tied', 'untied' or a column count K into tie_k for width 'dim'. */
int config_parse_tie(const char *s, int dim, int *tie_k, Err *err);

/* Write the tie mode as text: "tied", "untied" or "K". */
const char *config_tie_name(int tie_k, int dim, char buf[16]);

/* The update rule: torch.optim.AdamW, torch.optim.Adam (weight decay added
** to the gradient) or torch.optim.SGD (dampening 0). */
typedef enum OptimKind { OPTIM_ADAMW, OPTIM_ADAM, OPTIM_SGD } OptimKind;

/* Names of the kinds, by kind ("adamw", "adam", "sgd"), NULL-ended. */
extern const char *const optim_names[];

/* The optimizer and clipping hyperparameters of one step (defaults from
** 'optim_default', docs/architecture.md). Weight decay applies to 2-D weights, or
** to every tensor with 'decay_all'. The token embeddings (E_in and E_out)
** step at lr * emb_lr_scale. SGD keeps its momentum buffer in the first
** moment's arena, so checkpoints carry it. */
typedef struct OptimConfig {
  float lr, beta1, beta2, eps, weight_decay;
  float clip;               /* global grad-norm clip; 0: none */
  OptimKind kind;
  float momentum;           /* SGD */
  int nesterov;             /* SGD, with momentum > 0 */
  int decay_all;            /* decay norms and biases too */
  float grad_scale;         /* every gradient times this before the clip */
  float emb_lr_scale;       /* the embeddings' rate over lr */
} OptimConfig;

OptimConfig optim_default(void);

/* The embeddings' rate, lr * emb_lr_scale, in float as the step uses it. */
float optim_emb_lr(const OptimConfig *oc);

/* The embedding gradients of the last backward, before any scaling.
** L2 and L1 norms of: G_in (V x d, summed into rows), the gradient at the
** lookup's output (B*T x d, the paper's input side), G_out (V x d). */
typedef struct GradStats {
  double in_l2, in_act_l2, out_l2;
  double in_l1, in_act_l1, out_l1;
  double rows_touched;   /* share of vocabulary rows with a non-zero G_in */
  double total_norm;     /* global norm after scales, before the clip */
} GradStats;

/* How an untied (or partly tied) column becomes shared when tying. */
typedef enum TieMerge { TIE_KEEP_IN, TIE_KEEP_OUT, TIE_MEAN } TieMerge;

#endif
