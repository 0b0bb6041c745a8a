/*
** model_impl.h -- the inside of a Model, shared by model.c (the table,
** the buffers, init), model_pass.c (forward, backward) and optim.c
** (combine, clip, AdamW, tying). Nothing outside those files includes it.
*/
#ifndef TIELAB_MODEL_IMPL_H
#define TIELAB_MODEL_IMPL_H

#include "core/model.h"
#include "core/parallel.h"

/* Rows per block of row-parallel work; LayerNorm weight gradients are
** summed per block, so they do not depend on the thread count. */
enum { ROWS = 64 };
/* Query rows per block of causal attention. */
enum { ATT_ROWS = 32 };
/* Floats per chunk of the arena for the clip norm and AdamW. */
enum { CHUNK = 16384 };

/* The tensors of one block, in arena order. */
enum {
  LN1_W, LN1_B, QKV_W, QKV_B, PROJ_W, PROJ_B,
  LN2_W, LN2_B, FC_W, FC_B, FCPROJ_W, FCPROJ_B,
  LAYER_TENSORS
};
/* Table indices: wte, wpe, the blocks, then ln_f weight/bias and lm_head. */
enum { T_WTE, T_WPE, T_LAYER0 };
static inline int t_lnf_w(const ModelConfig *c) { return T_LAYER0 + c->layers * LAYER_TENSORS; }
static inline int t_lm_head(const ModelConfig *c) { return t_lnf_w(c) + 2; }
static inline int tensor_count(const ModelConfig *c) { return t_lm_head(c) + 1; }

/* Every buffer of a model, carved from one allocation. Activations are
** sized for the full B x T; a forward on b x t uses the first b*t rows. */
typedef struct Buffers {
  float *params, *grads, *adam_m, *adam_v;  /* the arenas, n_floats each */
  float *resid;                  /* (L+1) x [N,d] residual stream 0..L */
  float *ln1, *ln1_mean, *ln1_rstd;   /* L x [N,d], L x [N] */
  float *qkv;                    /* L x [N,3d] */
  float *att;                    /* L x [B,H,T,T] attention probabilities */
  float *atty;                   /* L x [N,d] attention output before c_proj */
  float *resid_mid;              /* L x [N,d] x + attention */
  float *ln2, *ln2_mean, *ln2_rstd;
  float *gelu_grad;              /* L x [N,4d] GELU' at c_fc's output */
  float *gelu;                   /* L x [N,4d] GELU of c_fc's output */
  float *lnf, *lnf_mean, *lnf_rstd;   /* [N,d], [N] */
  float *probs;                  /* [N,V] logits, then probabilities */
  float *dlogits;                /* [N,V] */
  float *dresid, *dln, *datty;   /* [N,d] backward scratch */
  float *dqkv;                   /* [N,3d] */
  float *datt;                   /* [B,H,T,T] */
  float *dfch;                   /* [N,4d] */
  float *ln_part;                /* [N/ROWS,2d] LayerNorm gradient partials */
  float *ones;                   /* [N] of 1: column sums */
  double *row_loss;              /* [N] */
  double *stat;                  /* 3 x [2V+N] per-row gradient norms */
  double *chunk;                 /* per-chunk sums of the arena */
  int32_t *inputs, *targets;     /* [N] of the last forward */
} Buffers;

struct Model {
  ModelConfig cfg;
  Pool *pool;
  int n_tensors;
  TensorInfo *tensors;
  size_t n_floats;
  char *buf;
  size_t buf_bytes;
  Buffers a;
  long adam_t;
  int b, t;             /* shape of the last forward */
  int grad_rows;        /* rows of the batch whose mean loss the gradient is of (>= b) */
  int has_targets;      /* the last forward computed a loss: backward may run */
};

static inline float *tensor_ptr(const Model *m, float *arena, int i) { return arena + m->tensors[i].offset; }
static inline float *layer_ptr(const Model *m, float *arena, int l, int f) {
  return tensor_ptr(m, arena, T_LAYER0 + l * LAYER_TENSORS + f);
}


#endif
