/*
** hftok.c -- a released tokenizer's vocabulary: each id's spelling and
** bytes, the merges, lookup by bytes (see hftok.h; the files are read in
** hftok_json.c, encoding is in hftok_encode.c).
**
** Tokens are added one at a time as the files give them, each check made
** as it comes: an id already spelt otherwise, a spelling that already has
** another id. Bytes are worked out once everything is read, and the lookup
** by bytes made then: which of two ids with the same bytes it gives
** depends on both ids' kinds, and an added token can make a vocabulary
** piece special after it was read.
*/
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/hash.h"
#include "base/utf8.h"
#include "core/hftok.h"
#include "core/hftok_impl.h"

/* ---- hashing and the id sets -------------------------------------------- */

uint32_t hftok_hash(const uint8_t *p, size_t n) {
  uint64_t h = hash_fnv1a(p, n, HASH_FNV_BASIS);   /* then a final mix */
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  return (uint32_t)(h ^ (h >> 32));
}

static size_t idset_slot(const IdSet *s, IdKey k, const uint8_t *p, size_t n) {
  size_t i = hftok_hash(p, n) & (s->cap - 1);
  for (;; i = (i + 1) & (s->cap - 1)) {
    int32_t id = s->slot[i] - 1;
    if (id < 0 || (k.len[id] == n && memcmp(k.pool + k.off[id], p, n) == 0)) return i;
  }
}

int32_t idset_find(const IdSet *s, IdKey k, const uint8_t *p, size_t n) {
  return s->cap ? s->slot[idset_slot(s, k, p, n)] - 1 : -1;
}

/* Make room for one more; 0, or -1 without memory. */
static int idset_reserve(IdSet *s, IdKey k) {
  if (2 * (s->n + 1) <= s->cap) return 0;
  IdSet g = {calloc(s->cap ? 2 * s->cap : 1024, sizeof(int32_t)), s->cap ? 2 * s->cap : 1024, s->n};
  if (!g.slot) return -1;
  for (size_t i = 0; i < s->cap; i++) {
    int32_t id = s->slot[i] - 1;
    if (id >= 0) g.slot[idset_slot(&g, k, k.pool + k.off[id], k.len[id])] = id + 1;
  }
  free(s->slot);
  *s = g;
  return 0;
}

/* Put 'id' under its key, replacing whichever id had that key. */
static int idset_put(IdSet *s, IdKey k, int32_t id) {
  if (idset_reserve(s, k) < 0) return -1;
  size_t i = idset_slot(s, k, k.pool + k.off[id], k.len[id]);
  if (!s->slot[i]) s->n++;
  s->slot[i] = id + 1;
  return 0;
}

/* ---- tokens as they come ------------------------------------------------ */

/* Append 'n' bytes of 'p' and a NUL (so that a spelling is a C string
** too); '*off' is where they went. */
static int pool_add(uint8_t **pool, size_t *used, size_t *cap, const void *p, size_t n, uint32_t *off) {
  if (*used + n + 1 > UINT32_MAX) return -1;
  if (*used + n + 1 > *cap) {
    size_t c = *cap ? *cap : 4096;
    while (c < *used + n + 1) c *= 2;
    uint8_t *q = realloc(*pool, c);
    if (!q) return -1;
    *pool = q;
    *cap = c;
  }
  if (n) memcpy(*pool + *used, p, n);
  (*pool)[*used + n] = 0;
  *off = (uint32_t)*used;
  *used += n + 1;
  return 0;
}

/* Grow the per-id tables to hold id 'id', doubling: ids mostly come in
** order, one more each time. New ids have no token yet. */
static int ids_reserve(HfTok *t, int32_t id) {
  if (id < t->size) return 0;
  size_t old = (size_t)t->size, n = (size_t)id + 1;
  if (n > t->ids_cap) {
    size_t cap = t->ids_cap ? t->ids_cap : 1024;
    while (cap < n) cap *= 2;
    uint32_t **u32[] = {&t->spell_off, &t->spell_len, &t->byte_off, &t->byte_len};
    for (size_t k = 0; k < sizeof u32 / sizeof *u32; k++) {
      uint32_t *p = realloc(*u32[k], sizeof *p * cap);
      if (!p) return -1;
      *u32[k] = p;
    }
    uint8_t *kind = realloc(t->kind, cap);
    if (!kind) return -1;
    t->kind = kind;
    t->ids_cap = cap;
  }
  for (size_t i = old; i < n; i++) {
    t->spell_off[i] = HFTOK_NONE;
    t->spell_len[i] = t->byte_off[i] = t->byte_len[i] = 0;
    t->kind[i] = 0;
  }
  t->size = (int32_t)n;
  return 0;
}

/* Quote at most 40 bytes of a spelling in a message. */
#define SHOWN(len) (int)((len) > 40 ? 40 : (len))

int hftok_add(HfTok *t, int64_t id, const char *spelling, size_t len, int kind, const char *where, Err *err) {
  if (id < 0 || id >= HFTOK_ID_MAX)
    return err_set(err, "%s: %s: token \"%.*s\" has id %lld, outside 0 to %d", t->file, where, SHOWN(len), spelling,
                   (long long)id, HFTOK_ID_MAX - 1);
  if (len > UINT32_MAX / 2) return err_set(err, "%s: %s: a token of %zu bytes", t->file, where, len);
  if (ids_reserve(t, (int32_t)id) < 0) return err_set(err, "%s: out of memory", t->file);
  int32_t i = (int32_t)id;
  int32_t other = idset_find(&t->by_spelling, hftok_spell_key(t), (const uint8_t *)spelling, len);
  if (t->spell_off[i] != HFTOK_NONE) {
    if (other == i) return 0;   /* the same token again */
    return err_set(err, "%s: %s: id %d is both \"%.*s\" and \"%.*s\"", t->file, where, (int)i,
                   SHOWN(t->spell_len[i]), (const char *)t->spell_pool + t->spell_off[i], SHOWN(len), spelling);
  }
  if (other >= 0)
    return err_set(err, "%s: %s: \"%.*s\" has two ids, %d and %d", t->file, where, SHOWN(len), spelling, (int)other,
                   (int)i);
  if (pool_add(&t->spell_pool, &t->spell_used, &t->spell_cap, spelling, len, &t->spell_off[i]) < 0 ||
      (t->spell_len[i] = (uint32_t)len, idset_put(&t->by_spelling, hftok_spell_key(t), i) < 0))
    return err_set(err, "%s: out of memory", t->file);
  t->kind[i] = (uint8_t)kind;
  t->count++;
  return 0;
}

int32_t hftok_id_of_spelling(const HfTok *t, const char *s, size_t len) {
  return idset_find(&t->by_spelling, hftok_spell_key(t), (const uint8_t *)s, len);
}

/* ---- merges ------------------------------------------------------------- */

static uint64_t merge_key(int32_t left, int32_t right) {
  return ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
}

static size_t merge_slot(const HfTok *t, uint64_t k) {
  uint64_t h = k * 0x9e3779b97f4a7c15ULL;
  size_t i = (size_t)(h ^ (h >> 29)) & (t->merge_cap - 1);
  while (t->merge_rank[i] >= 0 && t->merge_key[i] != k) i = (i + 1) & (t->merge_cap - 1);
  return i;
}

int32_t hftok_merge_find(const HfTok *t, int32_t left, int32_t right, int32_t *made) {
  if (!t->merge_cap) return -1;
  size_t i = merge_slot(t, merge_key(left, right));
  if (t->merge_rank[i] >= 0) *made = t->merge_id[i];
  return t->merge_rank[i];
}

int hftok_merges_reserve(HfTok *t, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n + 2) cap *= 2;
  t->merge_key = malloc(sizeof *t->merge_key * cap);
  t->merge_rank = malloc(sizeof *t->merge_rank * cap);
  t->merge_id = malloc(sizeof *t->merge_id * cap);
  if (!t->merge_key || !t->merge_rank || !t->merge_id) return err_set(NULL, "out of memory");
  memset(t->merge_rank, 0xff, sizeof *t->merge_rank * cap);
  t->merge_cap = cap;
  return 0;
}

/* Merge number 'rank' of "a" and "b"; the caller names the file in a
** message. A pair listed twice keeps its later
** rank, as GPT-2's encoder.py and Hugging Face's tokenizers both do. */
int hftok_add_merge(HfTok *t, size_t rank, const char *a, size_t na, const char *b, size_t nb, Err *err) {
  int32_t left = hftok_id_of_spelling(t, a, na), right = hftok_id_of_spelling(t, b, nb), made = -1;
  char *ab = malloc(na + nb + 1);
  if (!ab) return err_set(err, "out of memory");
  memcpy(ab, a, na);
  memcpy(ab + na, b, nb);
  if (left >= 0 && right >= 0) made = hftok_id_of_spelling(t, ab, na + nb);
  free(ab);
  if (left < 0 || right < 0)
    return err_set(err, "merge %zu (\"%.*s\" \"%.*s\") names \"%.*s\", which is not in the vocabulary", rank + 1,
                   SHOWN(na), a, SHOWN(nb), b, left < 0 ? SHOWN(na) : SHOWN(nb), left < 0 ? a : b);
  if (made < 0)
    return err_set(err, "merge %zu (\"%.*s\" \"%.*s\") makes \"%.*s%.*s\", which is not in the vocabulary", rank + 1,
                   SHOWN(na), a, SHOWN(nb), b, SHOWN(na), a, SHOWN(nb), b);
  if (rank >= INT32_MAX || 2 * (t->n_merges + 1) > t->merge_cap)
    return err_set(err, "more merges than were made room for");
  size_t i = merge_slot(t, merge_key(left, right));
  if (t->merge_rank[i] < 0) t->n_merges++;
  t->merge_key[i] = merge_key(left, right);
  t->merge_rank[i] = (int32_t)rank;
  t->merge_id[i] = made;
  return 0;
}

/* ---- bytes -------------------------------------------------------------- */

/* GPT-2's bytes_to_unicode, undone: the byte each of its 256 characters
** stands for (printable Latin-1 stands for itself, the rest were moved to
** U+0100 on in byte order); -1 for any other character. Made once, for
** every thread. */
static int16_t byte_of[256 + 68];
static pthread_once_t byte_of_once = PTHREAD_ONCE_INIT;

static void byte_of_make(void) {
  int moved = 0;
  for (int i = 0; i < 256 + 68; i++) byte_of[i] = -1;
  for (int b = 0; b < 256; b++) {
    int kept = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    byte_of[kept ? b : 256 + moved++] = (int16_t)b;
  }
}

static int byte_of_char(uint32_t cp) {
  pthread_once(&byte_of_once, byte_of_make);
  return cp < 256 + 68 ? byte_of[cp] : -1;
}

/* A byte-level spelling's bytes into 'out' (room for 'n'); -1 when a
** character is none of GPT-2's 256, and then the spelling stands for its
** own UTF-8, as Hugging Face's ByteLevel decoder has it. */
static long byte_level_bytes(const char *s, size_t n, uint8_t *out) {
  size_t w = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    i += utf8_decode(s + i, n - i, &cp);
    int b = cp == UTF8_INVALID ? -1 : byte_of_char(cp);
    if (b < 0) return -1;
    out[w++] = (uint8_t)b;
  }
  return (long)w;
}

/* A SentencePiece spelling's bytes: "<0xNN>" is byte NN when the model
** falls back to bytes, each "▁" is a space, the rest is its UTF-8. */
static size_t sentencepiece_bytes(const char *s, size_t n, int byte_pieces, uint8_t *out, int *is_byte) {
  unsigned v;
  char end;
  if (byte_pieces && n == 6 && memcmp(s, "<0x", 3) == 0 && s[5] == '>' && sscanf(s + 3, "%2x%c", &v, &end) == 2 &&
      end == '>') {
    out[0] = (uint8_t)v;
    *is_byte = 1;
    return 1;
  }
  size_t w = 0;
  for (size_t i = 0; i < n;) {
    if (n - i >= 3 && memcmp(s + i, "\xe2\x96\x81", 3) == 0) {
      out[w++] = ' ';
      i += 3;
    } else {
      out[w++] = (uint8_t)s[i++];
    }
  }
  return w;
}

/* The bytes a vocabulary spelling stands for, into 'out' (room for 'n');
** '*is_byte' set for a byte-fallback piece. */
static size_t spelling_bytes(const HfTok *t, const char *s, size_t n, uint8_t *out, int *is_byte) {
  *is_byte = 0;
  if (!t->byte_level) return sentencepiece_bytes(s, n, t->byte_fallback, out, is_byte);
  long got = byte_level_bytes(s, n, out);
  if (got >= 0) return (size_t)got;
  memcpy(out, s, n);
  return n;
}

int hftok_add_added(HfTok *t, int64_t id, const char *content, size_t len, int special, Err *err) {
  if (id >= 0 && id < t->size && t->spell_off[id] != HFTOK_NONE) {
    const char *s = (const char *)t->spell_pool + t->spell_off[id];
    size_t n = t->spell_len[id];
    int as_is = n == len && memcmp(s, content, n) == 0, is_byte, same = as_is;
    uint8_t *b = same ? NULL : malloc(n + 1);
    if (!same && !b) return err_set(err, "%s: out of memory", t->file);
    if (!same) same = spelling_bytes(t, s, n, b, &is_byte) == len && memcmp(b, content, len) == 0;
    free(b);
    if (same) {
      if (special) t->kind[id] = HFTOK_SPECIAL | (as_is ? HFTOK_AS_IS : 0);
      return 0;
    }
  }
  return hftok_add(t, id, content, len, HFTOK_SPECIAL | HFTOK_AS_IS, "added_tokens", err);
}

/* Each id's bytes, then the lookup by bytes. Where two ids have the same
** bytes the lookup keeps the ordinary piece over a byte-fallback twin, and
** otherwise the lower id, counting it. */
int hftok_finish_bytes(HfTok *t, Err *err) {
  uint8_t *tmp = malloc(t->spell_used + 1);   /* a token's bytes are never more than its spelling's */
  if (!tmp) return err_set(err, "%s: out of memory", t->file);
  for (int32_t id = 0; id < t->size; id++) {
    if (t->spell_off[id] == HFTOK_NONE) continue;
    const char *s = (const char *)t->spell_pool + t->spell_off[id];
    size_t n = t->spell_len[id];
    int is_byte = 0;
    if (t->kind[id] & HFTOK_AS_IS)
      memcpy(tmp, s, n);
    else
      n = spelling_bytes(t, s, n, tmp, &is_byte);
    if (is_byte && t->kind[id] == HFTOK_ORDINARY) t->kind[id] = HFTOK_BYTE_PIECE;
    if (pool_add(&t->byte_pool, &t->byte_used, &t->byte_cap, tmp, n, &t->byte_off[id]) < 0) {
      free(tmp);
      return err_set(err, "%s: out of memory", t->file);
    }
    t->byte_len[id] = (uint32_t)n;
  }
  free(tmp);
  IdKey k = hftok_byte_key(t);
  for (int32_t id = 0; id < t->size; id++) {
    if (t->spell_off[id] == HFTOK_NONE) continue;
    int32_t had = idset_find(&t->by_bytes, k, t->byte_pool + t->byte_off[id], t->byte_len[id]);
    int had_byte = had >= 0 && hftok_kind_at(t, had) == HFTOK_BYTE_PIECE, is_byte = hftok_kind_at(t, id) == HFTOK_BYTE_PIECE;
    if (had >= 0 && !had_byte && !is_byte) t->ambiguous++;
    if ((had < 0 || (had_byte && !is_byte)) && idset_put(&t->by_bytes, k, id) < 0)
      return err_set(err, "%s: out of memory", t->file);
  }
  return 0;
}

/* ---- opening ------------------------------------------------------------ */

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

HfTok *hftok_open(const char *folder, Err *err) {
  char json[PATH_MAX], vocab[PATH_MAX], merges[PATH_MAX];
  struct stat st;
  if (stat(folder, &st) != 0) {
    err_set(err, "%s: %s", folder, strerror(errno));
    return NULL;
  }
  HfTok *t = calloc(1, sizeof *t);
  if (!t) {
    err_set(err, "%s: out of memory", folder);
    return NULL;
  }
  int r;
  snprintf(json, sizeof json, "%s/tokenizer.json", folder);
  snprintf(vocab, sizeof vocab, "%s/vocab.json", folder);
  snprintf(merges, sizeof merges, "%s/merges.txt", folder);
  if (!S_ISDIR(st.st_mode))   /* a tokenizer.json named itself */
    r = hftok_read_json(t, folder, err);
  else if (is_file(json))
    r = hftok_read_json(t, json, err);
  else if (is_file(vocab) && is_file(merges))
    r = hftok_read_vocab_merges(t, vocab, merges, err);
  else
    r = err_set(err, "%s: no tokenizer: looked for tokenizer.json, and for vocab.json with merges.txt%s", folder,
                is_file(vocab) ? " (merges.txt is missing)" : is_file(merges) ? " (vocab.json is missing)" : "");
  if (r == 0 && t->count == 0) r = err_set(err, "%s: the vocabulary is empty", t->file);
  if (r == 0) r = hftok_encoder_init(t, err);
  if (r < 0) {
    hftok_free(t);
    return NULL;
  }
  return t;
}

void hftok_free(HfTok *t) {
  if (!t) return;
  hftok_encoder_free(t);
  free(t->spell_off);
  free(t->spell_len);
  free(t->byte_off);
  free(t->byte_len);
  free(t->kind);
  free(t->spell_pool);
  free(t->byte_pool);
  free(t->by_spelling.slot);
  free(t->by_bytes.slot);
  free(t->merge_key);
  free(t->merge_rank);
  free(t->merge_id);
  free(t);
}

/* ---- what it holds ------------------------------------------------------ */

int hftok_size(const HfTok *t) { return t->size; }
int hftok_count(const HfTok *t) { return t->count; }
const char *hftok_kind(const HfTok *t) {
  return t->unigram ? "SentencePiece Unigram" : t->byte_level ? "byte-level BPE" : "SentencePiece BPE";
}
const char *hftok_file(const HfTok *t) { return t->file; }
int hftok_can_encode(const HfTok *t) { return t->no_encode[0] == 0; }
int hftok_ambiguous(const HfTok *t) { return t->ambiguous; }
const char *hftok_why_not_encode(const HfTok *t) { return t->no_encode; }

static int has_id(const HfTok *t, int32_t id) {
  return id >= 0 && id < t->size && t->spell_off[id] != HFTOK_NONE;
}

const uint8_t *hftok_bytes(const HfTok *t, int32_t id, size_t *len) {
  *len = has_id(t, id) ? t->byte_len[id] : 0;
  return has_id(t, id) ? t->byte_pool + t->byte_off[id] : NULL;
}

const char *hftok_spelling(const HfTok *t, int32_t id) {
  return has_id(t, id) ? (const char *)t->spell_pool + t->spell_off[id] : NULL;
}

int hftok_kind_of(const HfTok *t, int32_t id) { return has_id(t, id) ? hftok_kind_at(t, id) : 0; }

int32_t hftok_lookup(const HfTok *t, const uint8_t *bytes, size_t len) {
  return idset_find(&t->by_bytes, hftok_byte_key(t), bytes, len);
}

size_t hftok_decode(const HfTok *t, const int32_t *ids, size_t n, uint8_t *out, size_t cap) {
  size_t need = 0;
  for (size_t i = 0; i < n; i++) {
    if (!has_id(t, ids[i])) continue;
    uint32_t len = t->byte_len[ids[i]];
    if (need + len <= cap) memcpy(out + need, t->byte_pool + t->byte_off[ids[i]], len);
    need += len;
  }
  return need;
}
