/*
** bpe.h -- a byte-level BPE tokenizer: trained on a corpus to a vocabulary
** size, encodes bytes to token ids and back, and is cached on disk.
**
** Ids 0..255 are the bytes; id 256+i is merge i, the pair (left, right) of
** earlier ids. Training is deterministic: ties between equally frequent
** pairs are broken by the smaller (left, right), so the same corpus always
** gives the same merges. Encoding applies merges in rank order, so decode(encode(x)) == x
** for any bytes x.
*/
#ifndef TIELAB_BPE_H
#define TIELAB_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"

typedef struct Bpe Bpe;

/* Largest vocabulary accepted. */
#define BPE_VOCAB_MAX (1 << 20)

/* Train on 'text' until the vocabulary has 'vocab' ids (>= 256), or until no
** pair occurs twice (then bpe_vocab() < vocab). 'cancel' (may be NULL) is
** asked as training goes: when it says stop, NULL with 'err' saying how far
** training had come. */
Bpe *bpe_train(const uint8_t *text, size_t n, int vocab, const Cancel *cancel, Err *err);

/* Build from a merge list: 'merges' holds 2*n_merges ids. Checked: every
** merge refers only to earlier ids, none repeats, and no token is longer
** than 256 bytes (the longest chunk training sees). */
Bpe *bpe_from_merges(const int32_t *merges, int n_merges, Err *err);

void bpe_free(Bpe *b);
int bpe_vocab(const Bpe *b);                 /* 256 + number of merges */
const int32_t *bpe_merges(const Bpe *b, int *n_merges);

/* Encode 'n' bytes; '*out' is malloc'd with '*n_out' ids. 'cancel' (may be
** NULL) stops a long text's encoding as it does training. */
int bpe_encode(const Bpe *b, const uint8_t *text, size_t n, int32_t **out, size_t *n_out, const Cancel *cancel,
               Err *err);

/* Bytes of token 'id' (NULL when out of range); '*len' set. */
const uint8_t *bpe_token_bytes(const Bpe *b, int32_t id, size_t *len);

/* Decode into 'out' of capacity 'cap'; returns the bytes needed (may exceed cap). */
size_t bpe_decode(const Bpe *b, const int32_t *ids, size_t n, uint8_t *out, size_t cap);

/* Train, or load from the cache: $XDG_CACHE_HOME/tielab (or ~/.cache/tielab),
** keyed by a hash of the corpus bytes and the vocabulary size. A damaged
** cache file is ignored and rewritten. */
Bpe *bpe_train_cached(const uint8_t *text, size_t n, int vocab, const Cancel *cancel, Err *err);

/* The cache file bpe_train_cached uses for this corpus and vocabulary, into
** 'path' of capacity 'cap'; -1 when there is no cache directory to use. */
int bpe_cache_path(const uint8_t *text, size_t n, int vocab, char *path, size_t cap);

#endif
