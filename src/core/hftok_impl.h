/*
** hftok_impl.h -- the inside of a released tokenizer, shared by hftok.c
** (reading the files, token bytes, lookup) and hftok_encode.c (the
** pre-tokenizer, merges, encoding). Nothing else includes it.
*/
#ifndef TIELAB_HFTOK_IMPL_H
#define TIELAB_HFTOK_IMPL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hftok.h"

/* Ids at or past this are refused: no released vocabulary comes near it
** (Gemma's 262,144 is the largest), and per-id tables are sized by it. */
#define HFTOK_ID_MAX (1 << 22)
/* Regular expressions a pre-tokenizer may chain (Split, then ByteLevel's). */
#define HFTOK_SPLITS_MAX 4
#define HFTOK_NONE UINT32_MAX

enum { HFTOK_ORDINARY = 0, HFTOK_SPECIAL = 1, HFTOK_BYTE_PIECE = 2 };
/* A flag beside the kind: the token's bytes are its spelling as it is (an
** added token's content), not decoded from it. */
enum { HFTOK_KIND_MASK = 3, HFTOK_AS_IS = 4 };

/* An open-addressed set of ids keyed by a string each id has (its
** spelling, or its bytes): slots hold id+1, 0 is empty. */
typedef struct IdSet {
  int32_t *slot;
  size_t cap, n;   /* cap a power of two, at most half full */
} IdSet;

/* Where an id's string is: the spelling pool or the bytes pool. */
typedef struct IdKey {
  const uint8_t *pool;
  const uint32_t *off, *len;
} IdKey;

struct HfTok {
  char file[PATH_MAX];
  int byte_level;          /* else SentencePiece-style */
  int unigram;             /* vocabulary only: merges unknown */
  int byte_fallback;       /* "<0xNN>" stands for byte NN */
  int ignore_merges;       /* a piece in the vocabulary is taken whole */
  int32_t size;            /* one past the largest id */
  size_t ids_cap;          /* room in the per-id tables */
  int count;
  int ambiguous;           /* ordinary ids whose bytes an earlier id has */

  /* Per id (size entries): offsets and lengths into the pools, kind. */
  uint32_t *spell_off, *spell_len, *byte_off, *byte_len;
  uint8_t *kind;           /* HFTOK_ORDINARY.., and HFTOK_AS_IS */
  uint8_t *spell_pool, *byte_pool;
  size_t spell_used, spell_cap, byte_used, byte_cap;

  IdSet by_spelling, by_bytes;

  /* Merges: (left, right) -> rank and the id made. */
  uint64_t *merge_key;
  int32_t *merge_rank, *merge_id;   /* rank -1: empty slot */
  size_t merge_cap, n_merges;

  /* Encoding. */
  int32_t byte_id[256];              /* the token of each single byte */
  char *split_pattern[HFTOK_SPLITS_MAX];
  int split_literal[HFTOK_SPLITS_MAX];   /* a Split's "String": matched as it is */
  int n_splits;
  void *split_code[HFTOK_SPLITS_MAX];   /* pcre2_code_8 */
  int32_t *specials;                 /* added tokens, longest first */
  int n_specials;
  uint8_t special_first[256];        /* bytes an added token starts with */
  char no_encode[200];               /* why encoding is not possible; "" when it is */
};

/* ---- shared between the files ------------------------------------------ */

/* Reading (hftok_json.c): fill 't' from the files, 't->file' set. */
int hftok_read_json(HfTok *t, const char *path, Err *err);
int hftok_read_vocab_merges(HfTok *t, const char *vocab, const char *merges, Err *err);

/* Token 'id' spelt 'spelling' ('len' bytes), of kind 'kind'; 'where'
** names the part of the file in a message. The same id and spelling again
** is no error and changes nothing. */
int hftok_add(HfTok *t, int64_t id, const char *spelling, size_t len, int kind, const char *where, Err *err);
/* An added token: the vocabulary's own token when that id stands for the
** same bytes there (GPT-2's "<|endoftext|>", NeoX's runs of spaces spelt
** "ĠĠ" in the vocabulary), made special when 'special'; else a new token
** whose bytes are its content. 't->byte_level' and 't->byte_fallback'
** must be known. */
int hftok_add_added(HfTok *t, int64_t id, const char *content, size_t len, int special, Err *err);
int32_t hftok_id_of_spelling(const HfTok *t, const char *s, size_t len);
/* Room for 'n' merges, then each merge by its rank (0 first). */
int hftok_merges_reserve(HfTok *t, size_t n);
int hftok_add_merge(HfTok *t, size_t rank, const char *a, size_t na, const char *b, size_t nb, Err *err);
/* Once all tokens are in: each id's bytes, and the lookup by bytes. */
int hftok_finish_bytes(HfTok *t, Err *err);

static inline int hftok_kind_at(const HfTok *t, int32_t id) { return t->kind[id] & HFTOK_KIND_MASK; }

uint32_t hftok_hash(const uint8_t *p, size_t n);
int32_t idset_find(const IdSet *s, IdKey k, const uint8_t *p, size_t n);
int32_t hftok_merge_find(const HfTok *t, int32_t left, int32_t right, int32_t *made);

/* After reading: compile the pre-tokenizer, list the specials, find the
** byte tokens. Sets t->no_encode when encoding cannot be done. */
int hftok_encoder_init(HfTok *t, Err *err);
void hftok_encoder_free(HfTok *t);

static inline IdKey hftok_spell_key(const HfTok *t) {
  return (IdKey){t->spell_pool, t->spell_off, t->spell_len};
}
static inline IdKey hftok_byte_key(const HfTok *t) {
  return (IdKey){t->byte_pool, t->byte_off, t->byte_len};
}

#endif
