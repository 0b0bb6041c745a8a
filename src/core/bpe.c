/*
** bpe.c -- the tokenizer from its merges: chunks, encoding and decoding
** (see bpe.h; the merges are learnt in bpe_learn.c, kept in bpe_cache.c).
**
** Text is first cut into chunks roughly the way GPT-2 does it: a run of
** letters and digits (bytes >= 0x80 count as letters, so UTF-8 characters
** stay whole) or a run of punctuation, each with at most one leading space,
** and runs of whitespace. Merges never cross a chunk boundary, so training
** works on the distinct chunks weighted by how often they occur, and
** encoding caches each distinct chunk's ids.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bpe.h"
#include "core/bpe_impl.h"

/* ---- chunks ----------------------------------------------------------- */

enum { C_WORD, C_SPACE, C_PUNCT };

static int byte_class(uint8_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80)
    return C_WORD;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return C_SPACE;
  return C_PUNCT;
}

static size_t run_end(const uint8_t *s, size_t n, size_t i, int cls) {
  while (i < n && byte_class(s[i]) == cls) i++;
  return i;
}

/* End of the chunk that starts at 'i' (< n). */
size_t chunk_end(const uint8_t *s, size_t n, size_t i) {
  size_t end;
  int cls = byte_class(s[i]);
  /* Looking one byte past the longest chunk decides it as well as looking further. */
  if (n - i > CHUNK_MAX + 1) n = i + CHUNK_MAX + 1;
  if (s[i] == ' ' && i + 1 < n && byte_class(s[i + 1]) != C_SPACE) {
    end = run_end(s, n, i + 1, byte_class(s[i + 1]));
  } else if (cls == C_SPACE) {
    end = run_end(s, n, i, C_SPACE);
    /* Leave a final space to lead the next word, as "\s+(?!\S)" does. */
    if (end < n && end - i >= 2 && s[end - 1] == ' ') end--;
  } else {
    end = run_end(s, n, i, cls);
  }
  return end - i > CHUNK_MAX ? i + CHUNK_MAX : end;
}


int chunkmap_init(ChunkMap *m, size_t cap) {
  m->cap = pow2_at_least(cap);
  m->n = 0;
  m->e = calloc(m->cap, sizeof *m->e);
  return m->e ? 0 : -1;
}

static ChunkEntry *chunkmap_slot(ChunkEntry *e, size_t cap, const uint8_t *p, uint32_t len, uint32_t h) {
  size_t i = h & (cap - 1);
  while (e[i].p && !(e[i].hash == h && e[i].len == len && memcmp(e[i].p, p, len) == 0))
    i = (i + 1) & (cap - 1);
  return &e[i];
}

static int chunkmap_grow(ChunkMap *m) {
  size_t cap = m->cap * 2;
  ChunkEntry *e = calloc(cap, sizeof *e);
  if (!e) return -1;
  for (size_t i = 0; i < m->cap; i++)
    if (m->e[i].p) *chunkmap_slot(e, cap, m->e[i].p, m->e[i].len, m->e[i].hash) = m->e[i];
  free(m->e);
  m->e = e;
  m->cap = cap;
  return 0;
}

/* The entry for chunk 'p'; a new one has p set and a = b = 0. NULL: no memory. */
ChunkEntry *chunkmap_get(ChunkMap *m, const uint8_t *p, uint32_t len) {
  if (2 * (m->n + 1) > m->cap && chunkmap_grow(m) < 0) return NULL;
  uint32_t h = (uint32_t)mix64(hash_fnv1a(p, len, HASH_FNV_BASIS));
  ChunkEntry *e = chunkmap_slot(m->e, m->cap, p, len, h);
  if (!e->p) {
    e->p = p;
    e->len = len;
    e->hash = h;
    m->n++;
  }
  return e;
}

/* ---- a tokenizer from its merges --------------------------------------- */

static int32_t rank_of(const Bpe *b, int32_t left, int32_t right) {
  uint64_t k = pair_key(left, right);
  size_t i = mix64(k) & (b->rank_cap - 1);
  while (b->rank_val[i] >= 0) {
    if (b->rank_key[i] == k) return b->rank_val[i];
    i = (i + 1) & (b->rank_cap - 1);
  }
  return -1;
}

void bpe_free(Bpe *b) {
  if (!b) return;
  free(b->merges);
  free(b->tok_off);
  free(b->tok_bytes);
  free(b->rank_key);
  free(b->rank_val);
  free(b);
}

/* Why merge 'i' is not acceptable, given the lengths of earlier tokens; NULL if it is. */
static const char *merge_fault(const Bpe *b, int i, const uint32_t *len, char *why, size_t cap) {
  int32_t l = b->merges[2 * i], r = b->merges[2 * i + 1];
  if (l < 0 || r < 0 || l >= 256 + i || r >= 256 + i)
    snprintf(why, cap, "merge %d (%d, %d) refers to an id not defined before it", i, (int)l, (int)r);
  else if (len[l] + len[r] > CHUNK_MAX)
    snprintf(why, cap, "merge %d makes a token of %u bytes, more than %d", i, (unsigned)(len[l] + len[r]),
             CHUNK_MAX);
  else if (rank_of(b, l, r) >= 0)
    snprintf(why, cap, "merge %d repeats merge %d", i, (int)rank_of(b, l, r));
  else
    return NULL;
  return why;
}

/* Check each merge and fill the token byte table and the rank map. */
static int bpe_index(Bpe *b, Err *err) {
  int vocab = 256 + b->n_merges, r = -1;
  char why[128];
  uint32_t *len = malloc(sizeof *len * (size_t)vocab);
  b->tok_off = malloc(sizeof *b->tok_off * ((size_t)vocab + 1));
  b->rank_cap = pow2_at_least(2 * (size_t)b->n_merges + 2);
  b->rank_key = malloc(sizeof *b->rank_key * b->rank_cap);
  b->rank_val = malloc(sizeof *b->rank_val * b->rank_cap);
  if (!len || !b->tok_off || !b->rank_key || !b->rank_val) goto nomem;
  memset(b->rank_val, 0xff, sizeof *b->rank_val * b->rank_cap);   /* all -1: empty */
  size_t total = 256;
  for (int i = 0; i < 256; i++) len[i] = 1;
  for (int i = 0; i < b->n_merges; i++) {
    if (merge_fault(b, i, len, why, sizeof why)) {
      err_set(err, "tokenizer: %s", why);
      goto done;
    }
    int32_t left = b->merges[2 * i], right = b->merges[2 * i + 1];
    pairmap_put(b->rank_key, b->rank_val, b->rank_cap, pair_key(left, right), i);
    len[256 + i] = len[left] + len[right];
    total += len[256 + i];
  }
  b->tok_bytes = malloc(total);
  if (!b->tok_bytes) goto nomem;
  uint32_t off = 0;
  for (int id = 0; id < vocab; id++) {
    b->tok_off[id] = off;
    if (id < 256) {
      b->tok_bytes[off] = (uint8_t)id;
    } else {
      int32_t left = b->merges[2 * (id - 256)], right = b->merges[2 * (id - 256) + 1];
      memcpy(b->tok_bytes + off, b->tok_bytes + b->tok_off[left], len[left]);
      memcpy(b->tok_bytes + off + len[left], b->tok_bytes + b->tok_off[right], len[right]);
    }
    off += len[id];
  }
  b->tok_off[vocab] = off;
  r = 0;
  goto done;
nomem:
  err_set(err, "tokenizer: out of memory");
done:
  free(len);
  return r;
}

Bpe *bpe_from_merges(const int32_t *merges, int n_merges, Err *err) {
  if (n_merges < 0 || n_merges > BPE_VOCAB_MAX - 256) {
    err_set(err, "tokenizer: %d merges, expected 0 to %d", n_merges, BPE_VOCAB_MAX - 256);
    return NULL;
  }
  Bpe *b = calloc(1, sizeof *b);
  if (b) b->merges = malloc(sizeof *b->merges * (2 * (size_t)n_merges + 1));
  if (!b || !b->merges) {
    bpe_free(b);
    err_set(err, "tokenizer: out of memory");
    return NULL;
  }
  if (n_merges > 0) memcpy(b->merges, merges, sizeof *merges * 2 * (size_t)n_merges);
  b->n_merges = n_merges;
  if (bpe_index(b, err) < 0) {
    bpe_free(b);
    return NULL;
  }
  return b;
}

int bpe_vocab(const Bpe *b) { return 256 + b->n_merges; }

const int32_t *bpe_merges(const Bpe *b, int *n_merges) {
  *n_merges = b->n_merges;
  return b->merges;
}

const uint8_t *bpe_token_bytes(const Bpe *b, int32_t id, size_t *len) {
  if (id < 0 || id >= bpe_vocab(b)) {
    *len = 0;
    return NULL;
  }
  *len = b->tok_off[id + 1] - b->tok_off[id];
  return b->tok_bytes + b->tok_off[id];
}

size_t bpe_decode(const Bpe *b, const int32_t *ids, size_t n, uint8_t *out, size_t cap) {
  size_t need = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len;
    const uint8_t *p = bpe_token_bytes(b, ids[i], &len);
    if (p && need + len <= cap) memcpy(out + need, p, len);
    need += len;
  }
  return need;
}

/* ---- encoding ----------------------------------------------------------- */

/* Rank of the merge of (left, right), or INT32_MAX when there is none. */
static int32_t rank_or_max(const Bpe *b, int32_t left, int32_t right) {
  int32_t r = rank_of(b, left, right);
  return r < 0 ? INT32_MAX : r;
}

/*
** Encode one chunk into 'ids' (room for 'n'): repeatedly merge every
** occurrence of the adjacent pair with the lowest rank. This replays
** training's order, in which merge i was applied to all text before i+1.
** 'rank[i]' caches the rank of (ids[i], ids[i+1]); a pass looks up only
** the pairs next to the tokens it made.
*/
static size_t encode_chunk(const Bpe *b, const uint8_t *s, size_t n, int32_t *ids) {
  int32_t rank[CHUNK_MAX];
  uint8_t fresh[CHUNK_MAX];
  for (size_t i = 0; i < n; i++) ids[i] = s[i];
  for (size_t i = 0; i + 1 < n; i++) rank[i] = rank_or_max(b, ids[i], ids[i + 1]);
  while (n >= 2) {
    int32_t best = INT32_MAX;
    for (size_t i = 0; i + 1 < n; i++)
      if (rank[i] < best) best = rank[i];
    if (best == INT32_MAX) break;
    size_t w = 0;
    for (size_t i = 0; i < n; w++) {   /* w <= i: entries are read before they are overwritten */
      if (i + 1 < n && rank[i] == best) {
        ids[w] = 256 + best;
        fresh[w] = 1;
        i += 2;
      } else {
        ids[w] = ids[i];
        rank[w] = rank[i];
        fresh[w] = 0;
        i++;
      }
    }
    n = w;
    for (size_t i = 0; i < n; i++) {
      if (!fresh[i]) continue;
      if (i > 0) rank[i - 1] = rank_or_max(b, ids[i - 1], ids[i]);
      if (i + 1 < n) rank[i] = rank_or_max(b, ids[i], ids[i + 1]);
    }
  }
  return n;
}

typedef struct IdVec {
  int32_t *v;
  size_t n, cap;
} IdVec;

static int idvec_reserve(IdVec *v, size_t more) {
  if (v->n + more <= v->cap) return 0;
  size_t cap = v->cap ? v->cap : 1024;
  while (cap < v->n + more) cap *= 2;
  int32_t *p = realloc(v->v, sizeof *p * cap);
  if (!p) return -1;
  v->v = p;
  v->cap = cap;
  return 0;
}

int bpe_encode(const Bpe *b, const uint8_t *text, size_t n, int32_t **out, size_t *n_out, const Cancel *cancel,
               Err *err) {
  IdVec res = {0}, cache = {0};   /* 'cache' holds each distinct chunk's ids once */
  ChunkMap seen;
  int32_t buf[CHUNK_MAX];
  *out = NULL;
  *n_out = 0;
  if (chunkmap_init(&seen, 1024) < 0 || idvec_reserve(&res, n / 3 + 16) < 0) goto nomem;
  for (size_t i = 0, asked = 0; i < n;) {
    if (i - asked >= CANCEL_EVERY && (asked = i, cancel_asked(cancel))) {
      err_set(err, "tokenizer: interrupted while encoding the text (%zu of %zu bytes)", i, n);
      goto stop;
    }
    size_t end = chunk_end(text, n, i);
    ChunkEntry *e = chunkmap_get(&seen, text + i, (uint32_t)(end - i));
    if (!e) goto nomem;
    if (e->b == 0) {   /* first time: every chunk encodes to at least one id */
      size_t k = encode_chunk(b, text + i, end - i, buf);
      if (idvec_reserve(&cache, k) < 0) goto nomem;
      memcpy(cache.v + cache.n, buf, sizeof *buf * k);
      e->a = (int64_t)cache.n;
      e->b = (int64_t)k;
      cache.n += k;
    }
    if (idvec_reserve(&res, (size_t)e->b) < 0) goto nomem;
    memcpy(res.v + res.n, cache.v + e->a, sizeof *res.v * (size_t)e->b);
    res.n += (size_t)e->b;
    i = end;
  }
  free(seen.e);
  free(cache.v);
  *out = res.v;
  *n_out = res.n;
  return 0;
nomem:
  err_set(err, "tokenizer: out of memory encoding %zu bytes", n);
stop:
  free(seen.e);
  free(cache.v);
  free(res.v);
  return -1;
}
