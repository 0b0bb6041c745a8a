/*
** config.h -- the shape of a model and a batch, and the checks that make a
** shape possible.
**
** 'tie_k' says how many leading columns of the input embedding E_in are one
** parameter with the same columns of the output embedding E_out: 0 is
** untied, 'dim' is fully tied, anything between is partial tying.
*/
#ifndef TIELAB_CONFIG_H
#define TIELAB_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

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

#endif
