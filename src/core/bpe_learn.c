/*
** bpe_learn.c -- training a tokenizer: the merges learnt from a text.
**
** Training keeps the count of every adjacent pair, the chunks each pair
** occurs in, and a heap of (count, pair). A merge rewrites only the chunks
** that hold the pair and updates the counts of the pairs around each
** occurrence, so one merge costs time in proportion to where it applies,
** not to the corpus.
*/
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "core/bpe.h"
#include "core/bpe_impl.h"

/* ---- training ------------------------------------------------------------ */

/* A pair of adjacent ids, its weighted count, and the words it occurs in
** (a superset: a word stays listed after the pair has left it). */
typedef struct Pair {
  int32_t left, right;
  int64_t count;
  int32_t *words;
  size_t cap_words;
  int n_words;
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
  int n_pairs;
  size_t cap_pairs;
  uint64_t *map_key;
  int32_t *map_val;
  size_t map_cap;
  /* heap of (count, pair); entries whose count is out of date are skipped */
  HeapItem *heap;
  size_t heap_n, heap_cap;
  int32_t *touched;
  int n_touched;
  size_t cap_touched;
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
  if (grow_array((void **)&t->pairs, &t->cap_pairs, (size_t)t->n_pairs + 1, sizeof *t->pairs) < 0) return -1;
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
    if (grow_array((void **)&p->words, &p->cap_words, (size_t)p->n_words + 1, sizeof *p->words) < 0) return -1;
    p->words[p->n_words++] = w;
  }
  if (p->stamp != t->merge_no) {
    p->stamp = t->merge_no;
    if (grow_array((void **)&t->touched, &t->cap_touched, (size_t)t->n_touched + 1, sizeof *t->touched) < 0)
      return -1;
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
  if (grow_array((void **)&t->heap, &t->heap_cap, t->heap_n + 1, sizeof *t->heap) < 0) return -1;
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
  p->n_words = 0;
  p->cap_words = 0;
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
