/*
** data.h -- a tokenized corpus split into training and validation tokens,
** and the deterministic batches drawn from it.
**
** Batch k of a data seed is a pure function of (seed, k): a run resumed at
** step k sees exactly the batches it would have seen, and runs sharing a data
** seed see identical batches. Validation batches are fixed windows spread
** evenly over the validation split.
*/
#ifndef TIELAB_DATA_H
#define TIELAB_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/corpus.h"
#include "core/tokenizer.h"

typedef struct Dataset {
  Tokenizer *tok;      /* owned */
  int32_t *tokens;     /* all tokens; train = [0, n_train), val = [n_train, n) */
  size_t n, n_train;
  char name[256];      /* corpus name */
} Dataset;

/* Tokenize 'c' with a tokenizer trained (or cached) to 'vocab'; hold out the
** last 'val_fraction' (e.g. 0.1) for validation. Refuses a corpus too short
** for one training and one validation window of 'ctx'+1 tokens. 'cancel'
** (may be NULL) stops training and encoding a large corpus early. */
int dataset_build(Dataset *ds, const Corpus *c, int vocab, double val_fraction, int ctx, const Cancel *cancel,
                  Err *err);
/* The same with the tokenizer 'tok' (taken over, freed on failure too):
** a released model's, whose ids the corpus must be read in. */
int dataset_build_with(Dataset *ds, const Corpus *c, Tokenizer *tok, double val_fraction, int ctx,
                       const Cancel *cancel, Err *err);
void dataset_free(Dataset *ds);

/* Fill 'out' [b, t+1] with training batch 'index' of 'data_seed' (from all
** the tokens when n_train is 0). */
void dataset_train_batch(const Dataset *ds, uint64_t data_seed, uint64_t index,
                         int b, int t, int32_t *out);

/* Fill 'out' [b, t+1] with fixed validation batch 'index' (0 .. n_val_batches-1). */
void dataset_val_batch(const Dataset *ds, int index, int n_val_batches, int b, int t, int32_t *out);
/* Where row 'i' of that batch starts in the validation split (its t+1
** tokens follow; a split shorter than them wraps). */
size_t dataset_val_window(const Dataset *ds, int index, int n_val_batches, int b, int t, int i);

/* Split rows of [b, t+1] into inputs [b,t] and targets [b,t]. */
void batch_split(const int32_t *rows, int b, int t, int32_t *inputs, int32_t *targets);

#endif
