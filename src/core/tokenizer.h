/*
** tokenizer.h -- the tokenizer a run reads text with, whichever it is: a
** byte-level BPE tielab learned from a corpus (core/bpe.h), or a released
** model's own (core/hftok.h), whose ids are the ones its embedding rows
** were trained for and must be kept exactly.
**
** A released model's tokenizer keeps the bytes of the files it was read
** from (tokenizer.json, or vocab.json and merges.txt), so that a checkpoint
** can carry it whole and be read back without the model's folder.
*/
#ifndef TIELAB_TOKENIZER_H
#define TIELAB_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"
#include "core/bpe.h"
#include "core/hftok.h"

typedef struct Tokenizer Tokenizer;

/* One file of a released tokenizer, by its name in the model's folder. */
typedef struct TokenizerFile {
  const char *name;        /* "tokenizer.json", "vocab.json", "merges.txt" */
  const uint8_t *bytes;
  size_t len;
} TokenizerFile;

#define TOKENIZER_MAX_FILES 2

/* Take over 'bpe' (freed with the tokenizer; NULL gives NULL). */
Tokenizer *tokenizer_from_bpe(Bpe *bpe, Err *err);
/* The tokenizer of model folder 'folder', as hftok_open finds it, with its
** files' bytes. */
Tokenizer *tokenizer_open_pretrained(const char *folder, Err *err);
/* The same from the bytes of its files (copied), as a checkpoint holds
** them; 'source' names where they were first read from. Each is checked as
** a file in a model folder would be. */
Tokenizer *tokenizer_from_files(const TokenizerFile *files, int n, const char *source, Err *err);
void tokenizer_free(Tokenizer *t);

/* One past the largest id. */
int tokenizer_size(const Tokenizer *t);
/* Encode 'n' bytes; '*out' malloc'd with '*n_out' ids. */
int tokenizer_encode(const Tokenizer *t, const uint8_t *text, size_t n, int32_t **out, size_t *n_out,
                     const Cancel *cancel, Err *err);
/* Decode into 'out' of capacity 'cap'; returns the bytes needed. */
size_t tokenizer_decode(const Tokenizer *t, const int32_t *ids, size_t n, uint8_t *out, size_t cap);
/* The bytes of token 'id'; NULL when no token has that id. */
const uint8_t *tokenizer_token(const Tokenizer *t, int32_t id, size_t *len);

/* The learned BPE, or NULL for a released model's tokenizer. */
const Bpe *tokenizer_bpe(const Tokenizer *t);
/* A released model's tokenizer: its files (how many, 0 for a learned
** BPE), the file it was first read from, and the SHA-256 of its files. */
int tokenizer_files(const Tokenizer *t, TokenizerFile *files);
const char *tokenizer_source(const Tokenizer *t);
const char *tokenizer_sha256(const Tokenizer *t);

#endif
