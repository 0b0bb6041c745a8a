/*
** hffamily.h -- the model families a released checkpoint may belong to,
** and the tensor names and config.json keys each uses (hffamily.c). Within
** the core only: hfmodel.h is what the rest of the program sees.
*/
#ifndef TIELAB_HFFAMILY_H
#define TIELAB_HFFAMILY_H

#include <stddef.h>

#define HF_MAX_NAMES 4

typedef struct HfFamily {
  const char *name;                          /* "gpt2", "llama", ... */
  const char *model_types[HF_MAX_NAMES];     /* config.json's model_type values */
  const char *embed[HF_MAX_NAMES];           /* E_in's name, in the order tried */
  const char *head[HF_MAX_NAMES];            /* E_out's, likewise */
  /* A bare file has no config: the family is the first row whose
  ** embedding is present and whose markers each occur in some name. */
  const char *markers[HF_MAX_NAMES];
  const char *tie_key;     /* config.json's key saying tied; NULL: "tie_word_embeddings" */
  int tie_default;         /* what the library assumes when the key is absent: 1, 0, -1 unknown */
  const char *vocab_key;   /* the key giving the embedding's rows; NULL: "vocab_size" */
  /* For reading the whole model (GPT-2's layout only, hf_gpt2_read): the
  ** prefixes its blocks' names come with, and whether its projection
  ** weights are Conv1D, stored [in, out]. */
  const char *prefixes[HF_MAX_NAMES];
  int conv1d;
} HfFamily;

/* The table's rows, in the order names are matched. */
int hf_family_count(void);
const HfFamily *hf_family_at(int i);

/* The family whose model_type is 'type', NULL when none. */
const HfFamily *hf_family_by_type(const char *type);
/* The family a set of tensor names belongs to: 'has(ctx, s)' says whether
** a name equals 's', 'contains(ctx, s)' whether some name contains it.
** NULL when no family's embedding is there. */
const HfFamily *hf_family_by_names(int (*has)(void *ctx, const char *name),
                                   int (*contains)(void *ctx, const char *part), void *ctx);
/* Each family's name, for messages ("gpt-neo, gpt2, ..."), into 'buf'. */
void hf_family_list(char *buf, size_t cap);

#endif
