/*
** hftok.h -- a released model's tokenizer, read as Hugging Face distributes
** it: tokenizer.json (a BPE model, byte-level as GPT-2, GPT-NeoX, OLMo,
** Llama 3 and Qwen have it, or SentencePiece-style with "▁" for a space
** and <0xNN> byte pieces as Llama 2 and Gemma have it; a Unigram model for
** its vocabulary alone), or GPT-2's older vocab.json + merges.txt. How
** tokens are kept and text encoded: docs/architecture.md, 'A released
** tokenizer'; what is read and refused: docs/tokenizers.md.
**
** The files are in hftok.c (tokens, bytes, lookup), hftok_json.c (reading)
** and hftok_encode.c (encoding).
*/
#ifndef TIELAB_HFTOK_H
#define TIELAB_HFTOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"

typedef struct HfTok HfTok;

/* Open the tokenizer of model folder 'folder': tokenizer.json, else
** vocab.json + merges.txt. An error names the file and the problem. */
HfTok *hftok_open(const char *folder, Err *err);
void hftok_free(HfTok *t);

/* One past the largest id. */
int hftok_size(const HfTok *t);
/* Tokens it has (ids may have gaps). */
int hftok_count(const HfTok *t);
/* "byte-level BPE", "SentencePiece BPE", "SentencePiece Unigram". */
const char *hftok_kind(const HfTok *t);
/* The file it was read from. */
const char *hftok_file(const HfTok *t);
/* Whether hftok_encode can encode with it. */
int hftok_can_encode(const HfTok *t);

/* The bytes token 'id' stands for; NULL when no token has that id. */
const uint8_t *hftok_bytes(const HfTok *t, int32_t id, size_t *len);
/* The token as the file spells it ("Ġthe", "▁the", "<0x0A>"); NULL likewise. */
const char *hftok_spelling(const HfTok *t, int32_t id);
/* 1 for special (added) tokens, 2 for a byte-fallback piece <0xNN>, else 0. */
int hftok_kind_of(const HfTok *t, int32_t id);
/* The id whose bytes are these; -1 when none. Where two ids stand for the
** same bytes (a piece and its byte-fallback twin), the ordinary piece. */
int32_t hftok_lookup(const HfTok *t, const uint8_t *bytes, size_t len);
/* How many ordinary or special ids stand for the same bytes as a lower id
** (possible only in odd or hostile files); hftok_lookup gives the lower. */
int hftok_ambiguous(const HfTok *t);
/* Why hftok_encode cannot encode with it ("" when it can). */
const char *hftok_why_not_encode(const HfTok *t);

/* Encode 'n' bytes; '*out' malloc'd with '*n_out' ids. */
int hftok_encode(const HfTok *t, const uint8_t *text, size_t n, int32_t **out, size_t *n_out,
                 const Cancel *cancel, Err *err);
/* Decode into 'out' of capacity 'cap'; returns the bytes needed. Unknown
** ids decode to nothing. */
size_t hftok_decode(const HfTok *t, const int32_t *ids, size_t n, uint8_t *out, size_t cap);

#endif
