/*
** hftok_encode.c -- encoding text with a released byte-level BPE tokenizer
** (see hftok.h), the way GPT-2's encoder.py and Hugging Face's tokenizers
** do it: added tokens first, then the pre-tokenizer's pieces, then merges
** by rank within each piece. The steps: docs/architecture.md, 'Encoding
** with a released tokenizer'.
*/
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "core/hftok_impl.h"

/* ---- setting up --------------------------------------------------------- */

typedef struct Special {
  uint32_t len;
  int32_t id;
} Special;

static int longer_first(const void *a, const void *b) {
  const Special *x = a, *y = b;
  if (x->len != y->len) return x->len > y->len ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* The added tokens, longest first, and the bytes they can start with. */
static int list_specials(HfTok *t) {
  Special *sp = malloc(sizeof *sp * ((size_t)t->count + 1));
  t->specials = malloc(sizeof *t->specials * ((size_t)t->count + 1));
  if (!sp || !t->specials) {
    free(sp);
    return -1;
  }
  int n = 0;
  for (int32_t id = 0; id < t->size; id++)
    if (t->spell_off[id] != HFTOK_NONE && hftok_kind_at(t, id) == HFTOK_SPECIAL && t->byte_len[id] > 0)
      sp[n++] = (Special){t->byte_len[id], id};
  qsort(sp, (size_t)n, sizeof *sp, longer_first);
  for (int i = 0; i < n; i++) {
    t->specials[i] = sp[i].id;
    t->special_first[t->byte_pool[t->byte_off[sp[i].id]]] = 1;
  }
  t->n_specials = n;
  free(sp);
  return 0;
}

static int compile_splits(HfTok *t) {
  for (int i = 0; i < t->n_splits; i++) {
    int code;
    PCRE2_SIZE at;
    /* A literal takes no Unicode properties (PCRE2 refuses UCP with it). */
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (t->split_literal[i] ? PCRE2_LITERAL : PCRE2_UCP);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)t->split_pattern[i], PCRE2_ZERO_TERMINATED, opts, &code, &at, NULL);
    if (!re) {
      PCRE2_UCHAR msg[120];
      pcre2_get_error_message(code, msg, sizeof msg);
      snprintf(t->no_encode, sizeof t->no_encode, "the pre-tokenizer's regular expression does not compile: %s at %zu",
               (const char *)msg, (size_t)at);
      return 0;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);   /* when JIT is not there, the interpreter matches the same */
    t->split_code[i] = re;
  }
  return 0;
}

int hftok_encoder_init(HfTok *t, Err *err) {
  if (t->no_encode[0]) return 0;
  for (int b = 0; b < 256; b++) {
    uint8_t c = (uint8_t)b;
    t->byte_id[b] = hftok_lookup(t, &c, 1);
    if (t->byte_id[b] < 0) {
      snprintf(t->no_encode, sizeof t->no_encode, "no token stands for byte 0x%02x alone", b);
      return 0;
    }
  }
  if (list_specials(t) < 0) return err_set(err, "%s: out of memory", t->file);
  return compile_splits(t);
}

void hftok_encoder_free(HfTok *t) {
  for (int i = 0; i < HFTOK_SPLITS_MAX; i++) {
    pcre2_code_free(t->split_code[i]);
    free(t->split_pattern[i]);
  }
  free(t->specials);
}

/* ---- the state of one call ---------------------------------------------- */

typedef struct Seen {   /* a distinct piece and where its ids are in 'cache' */
  const uint8_t *p;     /* NULL: empty slot */
  size_t len, at, n;
} Seen;

typedef struct HeapItem {
  int32_t rank, pos, left, right;
} HeapItem;

typedef struct Enc {
  const HfTok *t;
  int32_t *out, *cache;
  size_t n_out, cap_out, n_cache, cap_cache;
  Seen *seen;
  size_t seen_cap, seen_n;
  /* scratch for one piece, grown as pieces need */
  int32_t *id, *next, *prev;
  HeapItem *heap;
  size_t scratch, n_heap;
  pcre2_match_data *md;
  const Cancel *cancel;
  size_t done, asked_at, total;
  Err *err;
} Enc;

static int push_ids(int32_t **v, size_t *n, size_t *cap, const int32_t *ids, size_t k) {
  if (grow_array((void **)v, cap, *n + k, sizeof **v) < 0) return -1;
  memcpy(*v + *n, ids, sizeof *ids * k);
  *n += k;
  return 0;
}

/* ---- merging one piece -------------------------------------------------- */

static int heap_less(const HeapItem *a, const HeapItem *b) {
  return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(Enc *e, HeapItem it) {
  size_t i = e->n_heap++;
  while (i > 0 && heap_less(&it, &e->heap[(i - 1) / 2])) {
    e->heap[i] = e->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  e->heap[i] = it;
}

static HeapItem heap_pop(Enc *e) {
  HeapItem top = e->heap[0], last = e->heap[--e->n_heap];
  size_t i = 0, n = e->n_heap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_less(&e->heap[c + 1], &e->heap[c])) c++;
    if (!heap_less(&e->heap[c], &last)) break;
    e->heap[i] = e->heap[c];
    i = c;
  }
  if (n) e->heap[i] = last;
  return top;
}

/* Push the pair that starts at node 'pos', if it has a merge. */
static void offer_pair(Enc *e, int32_t pos) {
  int32_t made, nx = e->next[pos];
  if (nx < 0) return;
  int32_t rank = hftok_merge_find(e->t, e->id[pos], e->id[nx], &made);
  if (rank >= 0) heap_push(e, (HeapItem){rank, pos, e->id[pos], e->id[nx]});
}

/* The ids of piece 's' ('n' bytes) appended to the cache. Nodes are the
** piece's bytes; a merge keeps the left node and unlinks the right, so
** node numbers stay in text order and break ties between equal ranks. */
static int merge_piece(Enc *e, const uint8_t *s, size_t n) {
  const HfTok *t = e->t;
  size_t cap = e->scratch;
  if (n > INT32_MAX / 4 || grow_array((void **)&e->id, &cap, n, sizeof *e->id) < 0) return -1;
  if (cap != e->scratch) {
    /* The heap holds at most 3n: n-1 pairs at first, two more per merge. */
    int32_t *next = realloc(e->next, sizeof *next * cap), *prev = next ? realloc(e->prev, sizeof *prev * cap) : NULL;
    if (next) e->next = next;
    if (prev) e->prev = prev;
    HeapItem *heap = prev ? realloc(e->heap, sizeof *heap * cap * 3) : NULL;
    if (!heap) return -1;
    e->heap = heap;
    e->scratch = cap;
  }
  for (size_t i = 0; i < n; i++) {
    e->id[i] = t->byte_id[s[i]];
    e->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    e->prev[i] = (int32_t)i - 1;
  }
  e->n_heap = 0;
  for (size_t i = 0; i + 1 < n; i++) offer_pair(e, (int32_t)i);
  while (e->n_heap) {
    HeapItem it = heap_pop(e);
    int32_t nx = e->next[it.pos], made;
    if (e->id[it.pos] != it.left || nx < 0 || e->id[nx] != it.right) continue;   /* stale */
    hftok_merge_find(t, it.left, it.right, &made);
    e->id[it.pos] = made;
    e->id[nx] = -1;
    e->next[it.pos] = e->next[nx];
    if (e->next[nx] >= 0) e->prev[e->next[nx]] = it.pos;
    if (e->prev[it.pos] >= 0) offer_pair(e, e->prev[it.pos]);
    offer_pair(e, it.pos);
  }
  size_t start = e->n_cache;
  for (int32_t i = 0; i >= 0; i = e->next[i])
    if (push_ids(&e->cache, &e->n_cache, &e->cap_cache, &e->id[i], 1) < 0) return -1;
  return (int)(e->n_cache - start);
}

static size_t piece_hash_slot(const Enc *e, const uint8_t *p, size_t n) {
  size_t i = hftok_hash(p, n) & (e->seen_cap - 1);
  while (e->seen[i].p && !(e->seen[i].len == n && memcmp(e->seen[i].p, p, n) == 0)) i = (i + 1) & (e->seen_cap - 1);
  return i;
}

static int seen_grow(Enc *e) {
  if (2 * (e->seen_n + 1) <= e->seen_cap) return 0;
  Enc g = *e;
  g.seen_cap = e->seen_cap ? 2 * e->seen_cap : 1024;
  if (!(g.seen = calloc(g.seen_cap, sizeof *g.seen))) return -1;
  for (size_t i = 0; i < e->seen_cap; i++)
    if (e->seen[i].p) g.seen[piece_hash_slot(&g, e->seen[i].p, e->seen[i].len)] = e->seen[i];
  free(e->seen);
  e->seen = g.seen;
  e->seen_cap = g.seen_cap;
  return 0;
}

/* One piece of the pre-tokenizer: its ids onto the output. 'cancel' is
** asked here, every CANCEL_EVERY bytes of pieces. */
static int encode_piece(Enc *e, const uint8_t *p, size_t n) {
  e->done += n;
  if (e->done - e->asked_at >= CANCEL_EVERY) {
    e->asked_at = e->done;
    if (cancel_asked(e->cancel))
      return err_set(e->err, "tokenizer: interrupted while encoding the text (%zu of %zu bytes)", e->done, e->total);
  }
  if (seen_grow(e) < 0) return err_set(e->err, "tokenizer: out of memory encoding %zu bytes", e->total);
  Seen *s = &e->seen[piece_hash_slot(e, p, n)];
  if (!s->p) {
    int32_t whole = e->t->ignore_merges ? hftok_lookup(e->t, p, n) : -1;
    size_t at = e->n_cache;
    int k = whole >= 0 && hftok_kind_at(e->t, whole) == HFTOK_ORDINARY
                ? (push_ids(&e->cache, &e->n_cache, &e->cap_cache, &whole, 1) < 0 ? -1 : 1)
                : merge_piece(e, p, n);
    if (k < 0) return err_set(e->err, "tokenizer: out of memory encoding %zu bytes", e->total);
    *s = (Seen){p, n, at, (size_t)k};
    e->seen_n++;
  }
  if (push_ids(&e->out, &e->n_out, &e->cap_out, e->cache + s->at, s->n) < 0)
    return err_set(e->err, "tokenizer: out of memory encoding %zu bytes", e->total);
  return 0;
}

/* ---- pre-tokenizing ----------------------------------------------------- */

/* Cut 's' by split 'level' and pass each part to the next level; past the
** last, a part is a piece. */
static int split(Enc *e, int level, const uint8_t *s, size_t n) {
  if (n == 0) return 0;
  if (level == e->t->n_splits) return encode_piece(e, s, n);
  const pcre2_code *re = e->t->split_code[level];
  size_t at = 0;
  while (at < n) {
    int rc = pcre2_match(re, s, n, at, PCRE2_NOTEMPTY, e->md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
        rc == PCRE2_ERROR_JIT_STACKLIMIT)
      break;   /* a pattern that backtracks past PCRE2's limits here: the rest is one part, still encoded */
    if (rc < 0) {
      PCRE2_UCHAR msg[120];
      pcre2_get_error_message(rc, msg, sizeof msg);
      return err_set(e->err, "tokenizer: the pre-tokenizer's regular expression failed: %s", (const char *)msg);
    }
    /* Copied out: the next level matches with the same match data. */
    size_t from = pcre2_get_ovector_pointer(e->md)[0], to = pcre2_get_ovector_pointer(e->md)[1];
    if (split(e, level + 1, s + at, from - at) < 0 || split(e, level + 1, s + from, to - from) < 0) return -1;
    at = to;
  }
  return split(e, level + 1, s + at, n - at);
}

/* The longest added token at 'p' ('n' bytes left), or -1. */
static int32_t special_at(const HfTok *t, const uint8_t *p, size_t n) {
  if (!t->special_first[p[0]]) return -1;
  for (int i = 0; i < t->n_specials; i++) {
    int32_t id = t->specials[i];
    size_t len = t->byte_len[id];
    if (len <= n && memcmp(t->byte_pool + t->byte_off[id], p, len) == 0)
      return id;
  }
  return -1;
}

int hftok_encode(const HfTok *t, const uint8_t *text, size_t n, int32_t **out, size_t *n_out, const Cancel *cancel,
                 Err *err) {
  *out = NULL;
  *n_out = 0;
  if (t->no_encode[0]) return err_set(err, "%s: cannot encode: %s", t->file, t->no_encode);
  Enc e = {.t = t, .cancel = cancel, .total = n, .err = err};
  int r = 0;
  if (!(e.md = pcre2_match_data_create(1, NULL))) r = err_set(err, "tokenizer: out of memory");
  size_t from = 0;
  for (size_t i = 0; r == 0 && i <= n;) {
    int32_t sp = i < n ? special_at(t, text + i, n - i) : -1;
    if (sp < 0 && i < n) {
      i++;
      continue;
    }
    r = split(&e, 0, text + from, i - from);
    if (r == 0 && sp >= 0) {
      r = push_ids(&e.out, &e.n_out, &e.cap_out, &sp, 1) < 0 ? err_set(err, "tokenizer: out of memory") : 0;
      i += t->byte_len[sp];
      from = i;
    } else {
      break;
    }
  }
  pcre2_match_data_free(e.md);
  free(e.cache);
  free(e.seen);
  free(e.id);
  free(e.next);
  free(e.prev);
  free(e.heap);
  if (r < 0) {
    free(e.out);
    return -1;
  }
  *out = e.out ? e.out : malloc(sizeof(int32_t));
  *n_out = e.n_out;
  return 0;
}
