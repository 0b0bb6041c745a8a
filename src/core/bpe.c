/*
** bpe.c -- see bpe.h.
**
** Text is first cut into chunks roughly the way GPT-2 does it: a run of
** letters and digits (bytes >= 0x80 count as letters, so UTF-8 characters
** stay whole) or a run of punctuation, each with at most one leading space,
** and runs of whitespace. Merges never cross a chunk boundary, so training
** works on the distinct chunks weighted by how often they occur, and
** encoding caches each distinct chunk's ids.
**
** Training keeps the count of every adjacent pair, the chunks each pair
** occurs in, and a heap of (count, pair). A merge rewrites only the chunks
** that hold the pair and updates the counts of the pairs around each
** occurrence, so one merge costs time in proportion to where it applies,
** not to the corpus.
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bpe.h"
#include "base/folder.h"
#include "base/replace.h"
#include "base/safeopen.h"

/* Longest chunk; merges never build a token longer than this. */
#define CHUNK_MAX 256

struct Bpe {
  int n_merges;
  int32_t *merges;      /* 2*n_merges: (left, right) of id 256+i */
  uint32_t *tok_off;    /* vocab+1 offsets into 'tok_bytes' */
  uint8_t *tok_bytes;
  uint64_t *rank_key;   /* open-addressed map (left,right) -> merge index */
  int32_t *rank_val;
  size_t rank_cap;      /* a power of two */
};

/* ---- hashing ---------------------------------------------------------- */

static uint64_t fnv1a(const uint8_t *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

#define FNV_BASIS 0xcbf29ce484222325ULL

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t pair_key(int32_t left, int32_t right) {
  return ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
}

/* Put key 'k' -> 'v' in an open-addressed map whose empty slots hold -1. */
static void pairmap_put(uint64_t *key, int32_t *val, size_t cap, uint64_t k, int32_t v) {
  size_t i = mix64(k) & (cap - 1);
  while (val[i] >= 0) i = (i + 1) & (cap - 1);
  key[i] = k;
  val[i] = v;
}

static size_t pow2_at_least(size_t n) {
  size_t c = 16;
  while (c < n) c <<= 1;
  return c;
}

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
static size_t chunk_end(const uint8_t *s, size_t n, size_t i) {
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

/*
** A map from distinct chunks (pointers into the text) to two numbers: the
** count while training, the place of the chunk's ids while encoding.
*/
typedef struct ChunkEntry {
  const uint8_t *p;     /* NULL: empty slot */
  uint32_t len;
  uint32_t hash;
  int64_t a;
  int64_t b;
} ChunkEntry;

typedef struct ChunkMap {
  ChunkEntry *e;
  size_t cap, n;
} ChunkMap;

static int chunkmap_init(ChunkMap *m, size_t cap) {
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
static ChunkEntry *chunkmap_get(ChunkMap *m, const uint8_t *p, uint32_t len) {
  if (2 * (m->n + 1) > m->cap && chunkmap_grow(m) < 0) return NULL;
  uint32_t h = (uint32_t)mix64(fnv1a(p, len, FNV_BASIS));
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

/* ---- training ------------------------------------------------------------ */

/* A pair of adjacent ids, its weighted count, and the words it occurs in
** (a superset: a word stays listed after the pair has left it). */
typedef struct Pair {
  int32_t left, right;
  int64_t count;
  int32_t *words;
  int n_words, cap_words;
  int stamp;            /* last merge that touched the count */
} Pair;

typedef struct HeapItem {
  int64_t count;
  int32_t pair;
} HeapItem;

/* What learning the merges keeps: the corpus as counted words, their pairs
** and a heap of the most frequent pair. */
typedef struct MergeLearner {
  /* words: the distinct chunks as id sequences, shrinking as merges apply */
  int32_t *sym;
  size_t *w_off;
  int32_t *w_len;
  int64_t *w_count;
  int *w_stamp;
  int n_words;
  /* pairs, found through an open-addressed map of pair_key -> index */
  Pair *pairs;
  int n_pairs, cap_pairs;
  uint64_t *map_key;
  int32_t *map_val;
  size_t map_cap;
  /* heap of (count, pair); entries whose count is out of date are skipped */
  HeapItem *heap;
  size_t heap_n, heap_cap;
  int32_t *touched;
  int n_touched, cap_touched;
  int merge_no;
  const Cancel *cancel;   /* asked as the words are counted and between merges */
  int cancelled;          /* it said stop: a failure is that, not want of memory */
} MergeLearner;

/* Whether to stop now; remembered, so that the caller says why it failed. */
static int learner_cancelled(MergeLearner *t) {
  if (!t->cancelled) t->cancelled = cancel_asked(t->cancel);
  return t->cancelled;
}

static void learner_free(MergeLearner *t) {
  free(t->sym);
  free(t->w_off);
  free(t->w_len);
  free(t->w_count);
  free(t->w_stamp);
  for (int i = 0; i < t->n_pairs; i++) free(t->pairs[i].words);
  free(t->pairs);
  free(t->map_key);
  free(t->map_val);
  free(t->heap);
  free(t->touched);
}

/* 'p' with room for 'need' elements of 'elem' bytes, or NULL (then 'p' is intact). */
static void *grow(void *p, int *cap, size_t elem, int need) {
  if (need <= *cap) return p;
  int c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *q = realloc(p, elem * (size_t)c);
  if (q) *cap = c;
  return q;
}

static int pairmap_grow(MergeLearner *t) {
  size_t cap = t->map_cap ? t->map_cap * 2 : 1 << 16;
  uint64_t *key = malloc(sizeof *key * cap);
  int32_t *val = malloc(sizeof *val * cap);
  if (!key || !val) {
    free(key);
    free(val);
    return -1;
  }
  memset(val, 0xff, sizeof *val * cap);
  for (size_t i = 0; i < t->map_cap; i++)
    if (t->map_val[i] >= 0) pairmap_put(key, val, cap, t->map_key[i], t->map_val[i]);
  free(t->map_key);
  free(t->map_val);
  t->map_key = key;
  t->map_val = val;
  t->map_cap = cap;
  return 0;
}

/* Index of pair (l, r), created with count 0 when new; -1: no memory. */
static int32_t pair_get(MergeLearner *t, int32_t l, int32_t r) {
  uint64_t k = pair_key(l, r);
  size_t i = mix64(k) & (t->map_cap - 1);
  for (; t->map_val[i] >= 0; i = (i + 1) & (t->map_cap - 1))
    if (t->map_key[i] == k) return t->map_val[i];
  if (2 * ((size_t)t->n_pairs + 1) > t->map_cap) {
    if (pairmap_grow(t) < 0) return -1;
    return pair_get(t, l, r);
  }
  Pair *pairs = grow(t->pairs, &t->cap_pairs, sizeof *pairs, t->n_pairs + 1);
  if (!pairs) return -1;
  t->pairs = pairs;
  Pair *p = &t->pairs[t->n_pairs];
  memset(p, 0, sizeof *p);
  p->left = l;
  p->right = r;
  p->stamp = -1;
  t->map_key[i] = k;
  t->map_val[i] = t->n_pairs;
  return t->n_pairs++;
}

/* Add 'delta' to the count of (l, r) and note that word 'w' holds it. */
static int pair_add(MergeLearner *t, int32_t l, int32_t r, int64_t delta, int w) {
  int32_t i = pair_get(t, l, r);
  if (i < 0) return -1;
  Pair *p = &t->pairs[i];
  p->count += delta;
  if (delta > 0 && (p->n_words == 0 || p->words[p->n_words - 1] != w)) {
    int32_t *words = grow(p->words, &p->cap_words, sizeof *words, p->n_words + 1);
    if (!words) return -1;
    p->words = words;
    p->words[p->n_words++] = w;
  }
  if (p->stamp != t->merge_no) {
    p->stamp = t->merge_no;
    int32_t *touched = grow(t->touched, &t->cap_touched, sizeof *touched, t->n_touched + 1);
    if (!touched) return -1;
    t->touched = touched;
    t->touched[t->n_touched++] = i;
  }
  return 0;
}

/* Heap order: higher count first, then the smaller (left, right). */
static int heap_before(const MergeLearner *t, HeapItem a, HeapItem b) {
  if (a.count != b.count) return a.count > b.count;
  const Pair *pa = &t->pairs[a.pair], *pb = &t->pairs[b.pair];
  if (pa->left != pb->left) return pa->left < pb->left;
  return pa->right < pb->right;
}

static int heap_push(MergeLearner *t, int32_t pair) {
  if (t->heap_n == t->heap_cap) {
    size_t cap = t->heap_cap ? t->heap_cap * 2 : 1 << 16;
    HeapItem *h = realloc(t->heap, sizeof *h * cap);
    if (!h) return -1;
    t->heap = h;
    t->heap_cap = cap;
  }
  HeapItem it = {t->pairs[pair].count, pair};
  size_t i = t->heap_n++;
  while (i > 0 && heap_before(t, it, t->heap[(i - 1) / 2])) {
    t->heap[i] = t->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  t->heap[i] = it;
  return 0;
}

static HeapItem heap_pop(MergeLearner *t) {
  HeapItem top = t->heap[0], last = t->heap[--t->heap_n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= t->heap_n) break;
    if (c + 1 < t->heap_n && heap_before(t, t->heap[c + 1], t->heap[c])) c++;
    if (!heap_before(t, t->heap[c], last)) break;
    t->heap[i] = t->heap[c];
    i = c;
  }
  if (t->heap_n > 0) t->heap[i] = last;
  return top;
}

/* The most frequent pair, or -1 when none occurs twice. */
static int32_t best_pair(MergeLearner *t) {
  while (t->heap_n > 0) {
    HeapItem it = heap_pop(t);
    if (it.count == t->pairs[it.pair].count) return it.count >= 2 ? it.pair : -1;
  }
  return -1;
}

/* Cut the text into chunks and make one word per distinct chunk. */
static int learner_words(MergeLearner *t, const uint8_t *text, size_t n) {
  ChunkMap m;
  if (chunkmap_init(&m, 4096) < 0) return -1;
  for (size_t i = 0, asked = 0; i < n;) {
    if (i - asked >= CANCEL_EVERY && (asked = i, learner_cancelled(t))) goto fail;
    size_t end = chunk_end(text, n, i);
    ChunkEntry *e = chunkmap_get(&m, text + i, (uint32_t)(end - i));
    if (!e) goto fail;
    e->a++;
    i = end;
  }
  size_t n_sym = 0, w = 0;
  for (size_t i = 0; i < m.cap; i++) n_sym += m.e[i].p ? m.e[i].len : 0;
  t->n_words = (int)m.n;
  t->sym = malloc(sizeof *t->sym * (n_sym + 1));
  t->w_off = malloc(sizeof *t->w_off * (m.n + 1));
  t->w_len = malloc(sizeof *t->w_len * (m.n + 1));
  t->w_count = malloc(sizeof *t->w_count * (m.n + 1));
  t->w_stamp = malloc(sizeof *t->w_stamp * (m.n + 1));
  if (!t->sym || !t->w_off || !t->w_len || !t->w_count || !t->w_stamp) goto fail;
  n_sym = 0;
  for (size_t i = 0; i < m.cap; i++) {
    const ChunkEntry *e = &m.e[i];
    if (!e->p) continue;
    t->w_off[w] = n_sym;
    t->w_len[w] = (int32_t)e->len;
    t->w_count[w] = e->a;
    t->w_stamp[w] = -1;
    for (uint32_t k = 0; k < e->len; k++) t->sym[n_sym++] = e->p[k];
    w++;
  }
  free(m.e);
  return 0;
fail:
  free(m.e);
  return -1;
}

static int learner_init(MergeLearner *t, const uint8_t *text, size_t n) {
  if (learner_words(t, text, n) < 0 || pairmap_grow(t) < 0) return -1;
  for (int w = 0; w < t->n_words; w++) {
    if (w % CANCEL_EVERY == CANCEL_EVERY - 1 && learner_cancelled(t)) return -1;
    const int32_t *s = t->sym + t->w_off[w];
    for (int i = 0; i + 1 < t->w_len[w]; i++)
      if (pair_add(t, s[i], s[i + 1], t->w_count[w], w) < 0) return -1;
  }
  t->n_touched = 0;
  for (int i = 0; i < t->n_pairs; i++) {
    t->pairs[i].stamp = -1;
    if (heap_push(t, i) < 0) return -1;
  }
  return 0;
}

/*
** Replace each occurrence of (l, r) in word 'w', left to right, with 'id',
** moving the counts of the neighbouring pairs: in "p l r q" the pairs
** (p,l), (l,r), (r,q) lose one occurrence and (p,id), (id,q) gain one.
*/
static int merge_word(MergeLearner *t, int w, int32_t l, int32_t r, int32_t id) {
  int32_t *s = t->sym + t->w_off[w];
  int32_t n = t->w_len[w];
  int64_t c = t->w_count[w];
  for (int32_t i = 0; i + 1 < n; i++) {
    if (s[i] != l || s[i + 1] != r) continue;
    if (pair_add(t, l, r, -c, w) < 0) return -1;
    if (i > 0 && (pair_add(t, s[i - 1], l, -c, w) < 0 || pair_add(t, s[i - 1], id, c, w) < 0))
      return -1;
    if (i + 2 < n && (pair_add(t, r, s[i + 2], -c, w) < 0 || pair_add(t, id, s[i + 2], c, w) < 0))
      return -1;
    s[i] = id;
    memmove(s + i + 1, s + i + 2, sizeof *s * (size_t)(n - i - 2));
    n--;
  }
  t->w_len[w] = n;
  return 0;
}

/* Apply merge 'pair' as id 256 + t->merge_no to every word that holds it. */
static int learner_merge(MergeLearner *t, int32_t pair) {
  int32_t l = t->pairs[pair].left, r = t->pairs[pair].right, id = 256 + t->merge_no;
  t->n_touched = 0;
  /* The pair's word list does not grow here: new pairs all contain 'id'. */
  for (int k = 0; k < t->pairs[pair].n_words; k++) {
    int w = t->pairs[pair].words[k];
    if (t->w_stamp[w] == t->merge_no) continue;
    t->w_stamp[w] = t->merge_no;
    if (merge_word(t, w, l, r, id) < 0) return -1;
  }
  Pair *p = &t->pairs[pair];
  free(p->words);
  p->words = NULL;
  p->n_words = p->cap_words = 0;
  for (int k = 0; k < t->n_touched; k++)
    if (t->pairs[t->touched[k]].count > 0 && heap_push(t, t->touched[k]) < 0) return -1;
  return 0;
}

/* Training failed: for want of memory, or because it was told to stop. */
static Bpe *train_failed(const MergeLearner *t, size_t n, int vocab, Err *err) {
  if (!t->cancelled) err_set(err, "tokenizer: out of memory training on %zu bytes", n);
  else if (t->merge_no == 0 && !t->heap_n) err_set(err, "tokenizer: interrupted while counting the text's words");
  else err_set(err, "tokenizer: interrupted while training, at merge %d of %d", t->merge_no, vocab - 256);
  return NULL;
}

Bpe *bpe_train(const uint8_t *text, size_t n, int vocab, const Cancel *cancel, Err *err) {
  if (vocab < 256 || vocab > BPE_VOCAB_MAX) {
    err_set(err, "tokenizer: vocabulary size %d, expected 256 to %d", vocab, BPE_VOCAB_MAX);
    return NULL;
  }
  MergeLearner t = {.cancel = cancel};
  int32_t *merges = malloc(sizeof *merges * (2 * (size_t)(vocab - 256) + 1));
  Bpe *b = NULL;
  if (!merges || learner_init(&t, text, n) < 0) goto fail;
  while (256 + t.merge_no < vocab) {
    if (learner_cancelled(&t)) goto fail;
    int32_t p = best_pair(&t);
    if (p < 0) break;
    merges[2 * t.merge_no] = t.pairs[p].left;
    merges[2 * t.merge_no + 1] = t.pairs[p].right;
    if (learner_merge(&t, p) < 0) goto fail;
    t.merge_no++;
  }
  b = bpe_from_merges(merges, t.merge_no, err);
  free(merges);
  learner_free(&t);
  return b;
fail:
  free(merges);
  train_failed(&t, n, vocab, err);
  learner_free(&t);
  return NULL;
}

/* ---- the cache file --------------------------------------------------------
**
** Layout, little-endian: magic "tielabBP", u32 version, u32 vocab asked for,
** u64 corpus hash, u64 corpus length, u32 merge count, then (left, right) as
** u32 pairs, then a u64 FNV-1a checksum of everything before it. 'version'
** changes whenever the chunking or the training rule changes.
*/

#define CACHE_MAGIC "tielabBP"
#define CACHE_VERSION 1
#define CACHE_HEAD 36
#define PATH_CAP 4096

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint64_t corpus_hash(const uint8_t *text, size_t n) {
  return mix64(fnv1a(text, n, FNV_BASIS) ^ (uint64_t)n);
}

int bpe_cache_path(const uint8_t *text, size_t n, int vocab, char *path, size_t cap) {
  char dir[PATH_CAP];
  if (folder_xdg(FOLDER_CACHE, "tielab", dir, sizeof dir, NULL) < 0) return -1;
  int k = snprintf(path, cap, "%s/bpe-%016llx-%d.bin", dir,
                   (unsigned long long)corpus_hash(text, n), vocab);
  return k > 0 && (size_t)k < cap ? 0 : -1;
}

/* The tokenizer in 'path' if it is whole and made for this corpus, else NULL. */
static Bpe *cache_load(const char *path, uint64_t hash, size_t n, int vocab) {
  FILE *f = safeopen_fread(path, SAFEOPEN_NOFOLLOW, NULL, NULL);   /* a FIFO there is no cache */
  if (!f) return NULL;
  uint8_t head[CACHE_HEAD], sum[8];
  Bpe *b = NULL;
  uint8_t *body = NULL;
  if (fread(head, 1, CACHE_HEAD, f) != CACHE_HEAD || memcmp(head, CACHE_MAGIC, 8) != 0 ||
      get_u32(head + 8) != CACHE_VERSION || get_u32(head + 12) != (uint32_t)vocab ||
      get_u64(head + 16) != hash || get_u64(head + 24) != (uint64_t)n)
    goto done;
  uint32_t n_merges = get_u32(head + 32);
  if (n_merges > (uint32_t)(vocab - 256)) goto done;
  size_t body_len = 8 * (size_t)n_merges;
  body = malloc(body_len + 1);
  if (!body || fread(body, 1, body_len, f) != body_len || fread(sum, 1, 8, f) != 8 ||
      fgetc(f) != EOF)
    goto done;
  if (get_u64(sum) != fnv1a(body, body_len, fnv1a(head, CACHE_HEAD, FNV_BASIS))) goto done;
  int32_t *merges = malloc(sizeof *merges * (2 * (size_t)n_merges + 1));
  if (!merges) goto done;
  for (size_t i = 0; i < 2 * (size_t)n_merges; i++) merges[i] = (int32_t)get_u32(body + 4 * i);
  b = bpe_from_merges(merges, (int)n_merges, NULL);
  free(merges);
done:
  free(body);
  fclose(f);
  return b;
}

/* Write through a temporary file and rename, so a reader never sees half a file. */
static void cache_store(const char *path, const Bpe *b, uint64_t hash, size_t n, int vocab) {
  size_t len = CACHE_HEAD + 8 * (size_t)b->n_merges + 8;
  uint8_t *buf = malloc(len);
  if (!buf) return;
  memcpy(buf, CACHE_MAGIC, 8);
  put_u32(buf + 8, CACHE_VERSION);
  put_u32(buf + 12, (uint32_t)vocab);
  put_u64(buf + 16, hash);
  put_u64(buf + 24, (uint64_t)n);
  put_u32(buf + 32, (uint32_t)b->n_merges);
  for (size_t i = 0; i < 2 * (size_t)b->n_merges; i++)
    put_u32(buf + CACHE_HEAD + 4 * i, (uint32_t)b->merges[i]);
  put_u64(buf + len - 8, fnv1a(buf, len - 8, FNV_BASIS));
  Replace r;
  if (replace_begin(&r, path, NULL) == 0) replace_end(&r, replace_write(&r, buf, len));
  free(buf);
}

Bpe *bpe_train_cached(const uint8_t *text, size_t n, int vocab, const Cancel *cancel, Err *err) {
  char path[PATH_CAP], dir[PATH_CAP];
  int have_path = bpe_cache_path(text, n, vocab, path, sizeof path) == 0;
  uint64_t hash = corpus_hash(text, n);
  if (have_path && vocab >= 256 && vocab <= BPE_VOCAB_MAX) {
    Bpe *b = cache_load(path, hash, n, vocab);
    if (b) return b;
  }
  Bpe *b = bpe_train(text, n, vocab, cancel, err);
  /* The cache only saves time: a directory that cannot be made is no error. */
  if (b && have_path && folder_xdg(FOLDER_CACHE, "tielab", dir, sizeof dir, NULL) >= 0 &&
      folder_make_all(dir, FOLDER_PRIVATE, NULL) == 0)
    cache_store(path, b, hash, n, vocab);
  return b;
}
