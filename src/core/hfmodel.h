/*
** hfmodel.h -- released checkpoints as they are distributed: a model
** folder (config.json; model.safetensors, or model.safetensors.index.json
** and its shards; a tokenizer, see hftok.h) or one .safetensors file.
** What opening reads, how tying is decided and what is refused:
** docs/architecture.md, 'Opening a released model'.
*/
#ifndef TIELAB_HFMODEL_H
#define TIELAB_HFMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/config.h"
#include "core/safetensors.h"

typedef struct HfModel HfModel;

/* Where one tensor's bytes are: which file, where in it, and its type. */
typedef struct HfTensor {
  const char *name;    /* as stored */
  const char *file;    /* the shard that holds it */
  StDtype dtype;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  uint64_t offset;     /* of its first byte, in 'file' */
  size_t nbytes;
} HfTensor;

/* What a model is, from its config and tensor names. */
typedef struct HfInfo {
  const char *family;       /* "gpt2", "gpt-neo", "gpt-neox", "olmo", ... (hffamily.c) */
  const char *model_type;   /* config.json's, or "" for a bare file */
  int vocab;                /* rows of the embedding */
  int dim;                  /* its columns */
  int layers, heads, ctx;   /* from config.json; 0 when not said */
  StDtype dtype;            /* the embedding's */
  int tied;                 /* decided from the tensors */
  int config_tied;          /* config.json's tie_word_embeddings: 1, 0, or -1 when absent */
  const HfTensor *embed;    /* E_in */
  const HfTensor *head;     /* E_out: 'embed' when tied with no head stored; a stored copy of the same bytes stays itself */
  int n_tensors;            /* in all its files */
  int n_files;              /* safetensors files */
} HfInfo;

/* Open a folder or a .safetensors file. */
HfModel *hf_open(const char *path, Err *err);
void hf_close(HfModel *m);
const HfInfo *hf_info(const HfModel *m);
const char *hf_path(const HfModel *m);      /* the folder (or the file) as given */
const char *hf_folder(const HfModel *m);    /* where the tokenizer is looked for */

/* A tensor by its stored name, NULL when the model has none. */
const HfTensor *hf_tensor(const HfModel *m, const char *name);
int hf_tensor_count(const HfModel *m);
const HfTensor *hf_tensor_at(const HfModel *m, int i);

/* Bytes a tensor takes as float32. */
size_t hf_tensor_f32_bytes(const HfTensor *t);

/* Read tensor 't' as float32 into 'dst' of 'n' floats (its numel): rows
** converted as they are read, never the whole file in memory. */
int hf_read_f32(const HfModel *m, const HfTensor *t, float *dst, size_t n, Err *err);

/* The same, malloc'd, after sysmem_check. */
float *hf_read_f32_alloc(const HfModel *m, const HfTensor *t, Err *err);

/* ---- GPT-2-style models as the reference model (nanoGPT's layout). */

/* The reference model's shape for a model of family "gpt2" (learned
** positions, LayerNorm with biases, tanh GELU, 4d MLP): vocab, dim, layers,
** heads and ctx from config.json, tie_k from the checkpoint's tying (dim
** or 0); 'batch' is left as the caller set it.
** Refused, saying why, for any other family or an unsupported config
** (activation, layer_norm_epsilon other than 1e-5, ...). */
int hf_gpt2_config(const HfModel *m, ModelConfig *c, Err *err);

/* Every parameter of a model created with that config, read into 'params'
** (the model's arena, laid out by 'table' of 'n' tensors, see
** core/model.h): Conv1D weights transposed on the way in, E_out taken from
** the head or, tied, from the embedding. */
struct TensorInfo;
int hf_gpt2_read(const HfModel *m, const struct TensorInfo *table, int n, float *params, Err *err);

#endif
