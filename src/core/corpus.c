/*
** corpus.c -- see corpus.h.
**
** The synthetic language: a lexicon of invented words built from syllables
** and split into word classes, and sentences from a small probabilistic
** grammar. Within each class words are drawn with Zipfian frequencies (the
** shortest words are the most frequent, as in natural languages); nouns and
** verbs agree in number through suffixes; each verb prefers objects from
** one of a few noun topics. A model can learn the lexicon, the agreement
** and the selection, so its loss falls well below the unigram entropy.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/corpus.h"
#include "base/num.h"
#include "base/safeopen.h"
#include "base/utf8.h"
#include "core/rng.h"

void corpus_free(Corpus *c) {
  free(c->text);
  c->text = NULL;
  c->len = 0;
}

/* ---- reading a file ------------------------------------------------------ */

/* Share of bytes (in percent) allowed to be neither text nor UTF-8. */
#define NONTEXT_MAX_PERCENT 25

/* Bytes that are not printable ASCII, whitespace or part of a UTF-8 character. */
static size_t nontext_bytes(const uint8_t *s, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n;) {
    uint8_t c = s[i];
    if ((c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      i++;
    } else if (c >= 0x80 && utf8_char((const char *)s + i, n - i)) {
      i += utf8_char((const char *)s + i, n - i);
    } else {
      bad++;
      i++;
    }
  }
  return bad;
}

/* Exactly 'size' bytes of 'f', as its size said: one byte more means the
** file grew (or, with size 0, that its size is not known: /proc, /sys). The
** read is bounded by the size, so an endless file cannot exhaust memory. */
static int read_sized(FILE *f, size_t size, Corpus *c, const char *path, Err *err) {
  uint8_t *buf = malloc(size + 1);
  if (!buf) return err_set(err, "%s: out of memory reading its %.1f MiB", path, (double)size / (1 << 20));
  size_t n = fread(buf, 1, size, f);
  int extra = n == size ? fgetc(f) : EOF;
  if (ferror(f)) {
    free(buf);
    return err_set(err, "%s: read error", path);
  }
  if (extra != EOF) {
    free(buf);
    return size == 0 ? err_set(err, "%s: says it has 0 bytes but has more: its size cannot be known", path)
                     : err_set(err, "%s: grew while it was read (more than its %zu bytes)", path, size);
  }
  c->text = buf;
  c->len = n;
  return 0;
}

/* Refuse what is not a usable text corpus; 'c->text' holds the file. */
static int corpus_check(const Corpus *c, const char *path, Err *err) {
  if (c->len == 0) return err_set(err, "%s: is empty", path);
  if (c->len < CORPUS_MIN_BYTES)
    return err_set(err, "%s: only %zu bytes, need at least %d", path, c->len, CORPUS_MIN_BYTES);
  const uint8_t *nul = memchr(c->text, 0, c->len);
  if (nul) return err_set(err, "%s: looks binary (NUL byte at offset %zu)", path, (size_t)(nul - c->text));
  size_t bad = nontext_bytes(c->text, c->len);
  if (bad * 100 > c->len * NONTEXT_MAX_PERCENT)
    return err_set(err, "%s: looks binary (%zu%% of its bytes are not text)", path, bad * 100 / c->len);
  return 0;
}

int corpus_read_max(Corpus *c, const char *path, uint64_t max_bytes, int nofollow, Err *err) {
  struct stat st;
  memset(c, 0, sizeof *c);
  /* A device or a pipe could be endless (/dev/zero) or block forever. */
  FILE *f = safeopen_fread(path, nofollow ? SAFEOPEN_NOFOLLOW : 0, &st, err);
  if (!f) return -1;
  if ((uint64_t)st.st_size > max_bytes) {
    char size[NUM_TEXT_MAX], cap[NUM_TEXT_MAX];
    fclose(f);
    return err_set(err, "%s: %s is more than the %s a corpus may have (raise 'corpus_max', in MiB)", path,
                   num_bytes(size, sizeof size, (unsigned long long)st.st_size), num_bytes(cap, sizeof cap, max_bytes));
  }
  int r = read_sized(f, (size_t)st.st_size, c, path, err);
  fclose(f);
  if (r < 0) return -1;
  if (corpus_check(c, path, err) < 0) {
    corpus_free(c);
    return -1;
  }
  snprintf(c->name, sizeof c->name, "%s", path);
  return 0;
}

int corpus_read(Corpus *c, const char *path, Err *err) {
  return corpus_read_max(c, path, CORPUS_DEFAULT_MAX_BYTES, 0, err);
}

/* ---- the lexicon --------------------------------------------------------- */

#define WORD_MAX 24
#define N_TOPICS 8

enum { W_DET_SG, W_DET_PL, W_ADJ, W_NOUN, W_VERB, W_PREP, W_CONJ, W_ADV, W_NAME, N_CLASSES };

/* Class sizes, syllables per word, and the Zipf exponent of their use. */
static const struct {
  int count, min_syl, max_syl;
  double zipf;
} word_classes[N_CLASSES] = {
  [W_DET_SG] = {5, 1, 1, 1.0},
  [W_DET_PL] = {4, 1, 1, 1.0},
  [W_ADJ] = {500, 1, 3, 1.0},
  [W_NOUN] = {1600, 1, 3, 1.0},
  [W_VERB] = {700, 1, 3, 1.0},
  [W_PREP] = {12, 1, 2, 1.0},
  [W_CONJ] = {5, 1, 1, 1.0},
  [W_ADV] = {120, 2, 3, 1.0},
  [W_NAME] = {200, 2, 3, 1.1},
};

static const char *const onsets[] = {
  "", "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
  "z", "br", "ch", "cl", "dr", "fl", "gr", "kr", "pl", "sh", "sk", "st", "th", "tr",
};
static const char *const vowels[] = {
  "a", "a", "e", "e", "i", "i", "o", "o", "u", "ai", "au", "ea", "ie", "ou",
};
static const char *const codas[] = {
  "", "", "", "", "n", "r", "l", "s", "m", "k", "nd", "rt", "st", "th", "x",
};
/* Number suffixes; the seed picks one of each. */
static const char *const noun_plural[] = {"en", "i", "as", "ar", "im"};
static const char *const verb_singular[] = {"a", "et", "o", "is"};
static const char *const verb_plural[] = {"an", "un", "or", "es"};

#define COUNT(table) (sizeof table / sizeof table[0])
#define PICK(r, table) (table[rng_below(r, COUNT(table))])

typedef char Word[WORD_MAX];

typedef struct Lexicon {
  Word *w[N_CLASSES];        /* stems by class, most frequent first */
  double *cdf[N_CLASSES];    /* Zipf cumulative probabilities by rank */
  double *topic_cdf;         /* the same over one topic's nouns */
  Word *noun_pl, *verb_sg, *verb_pl;
} Lexicon;

static void lexicon_free(Lexicon *lx) {
  for (int k = 0; k < N_CLASSES; k++) {
    free(lx->w[k]);
    free(lx->cdf[k]);
  }
  free(lx->topic_cdf);
  free(lx->noun_pl);
  free(lx->verb_sg);
  free(lx->verb_pl);
}

static double *zipf_cdf(int n, double s) {
  double *cdf = malloc(sizeof *cdf * (size_t)n), sum = 0;
  if (!cdf) return NULL;
  for (int i = 0; i < n; i++) cdf[i] = sum += pow(i + 1, -s);
  for (int i = 0; i < n; i++) cdf[i] /= sum;
  return cdf;
}

/* A rank drawn from 'cdf' of 'n' ranks. */
static int zipf_draw(Rng *r, const double *cdf, int n) {
  double u = rng_uniform(r);
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (cdf[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

static void make_word(Rng *r, int syllables, char *out) {
  out[0] = 0;
  for (int s = 0; s < syllables; s++) {
    strcat(out, PICK(r, onsets));
    strcat(out, PICK(r, vowels));
    if (s == syllables - 1 || rng_below(r, 3) == 0) strcat(out, PICK(r, codas));
  }
}

/*
** A set of the stems made so far, so that no two classes share a word.
** Open addressing over FNV-1a; 'slots' holds indexes into 'words' + 1.
*/
typedef struct WordSet {
  const Word **words;
  int *slots;
  int cap, n;
} WordSet;

static uint32_t word_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

/* Add 'w' unless present; 1 when added. */
static int wordset_add(WordSet *set, const Word *w) {
  int i = (int)(word_hash(*w) & (uint32_t)(set->cap - 1));
  for (; set->slots[i]; i = (i + 1) & (set->cap - 1))
    if (strcmp(*set->words[set->slots[i] - 1], *w) == 0) return 0;
  set->words[set->n++] = w;
  set->slots[i] = set->n;
  return 1;
}

/* Shorter words first, so the most frequent ranks get the shortest words. */
static int by_length(const void *a, const void *b) {
  size_t la = strlen(a), lb = strlen(b);
  return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

static int class_fill(Lexicon *lx, int k, WordSet *set, Rng *r) {
  int n = word_classes[k].count, lo = word_classes[k].min_syl, hi = word_classes[k].max_syl;
  lx->w[k] = malloc(sizeof(Word) * (size_t)n);
  lx->cdf[k] = zipf_cdf(n, word_classes[k].zipf);
  if (!lx->w[k] || !lx->cdf[k]) return -1;
  for (int i = 0; i < n; i++) {
    do make_word(r, lo + (int)rng_below(r, (uint64_t)(hi - lo + 1)), lx->w[k][i]);
    while (strlen(lx->w[k][i]) < 2 || !wordset_add(set, &lx->w[k][i]));
  }
  return 0;
}

static void suffix_all(Word *out, Word *stems, int n, const char *suffix) {
  for (int i = 0; i < n; i++) snprintf(out[i], WORD_MAX, "%s%s", stems[i], suffix);
}

static int lexicon_make(Lexicon *lx, Rng *r) {
  int total = 0;
  for (int k = 0; k < N_CLASSES; k++) total += word_classes[k].count;
  WordSet set = {0};
  set.cap = 1;
  while (set.cap < 2 * total) set.cap <<= 1;
  set.words = malloc(sizeof *set.words * (size_t)total);
  set.slots = calloc((size_t)set.cap, sizeof *set.slots);
  int bad = !set.words || !set.slots;
  for (int k = 0; k < N_CLASSES && !bad; k++) bad = class_fill(lx, k, &set, r) < 0;
  free(set.words);
  free(set.slots);
  /* Sort only now: the set finds words where their text hashed to. */
  for (int k = 0; k < N_CLASSES && !bad; k++)
    qsort(lx->w[k], (size_t)word_classes[k].count, sizeof(Word), by_length);
  int n_noun = word_classes[W_NOUN].count, n_verb = word_classes[W_VERB].count;
  lx->topic_cdf = bad ? NULL : zipf_cdf(n_noun / N_TOPICS, 1.0);
  lx->noun_pl = malloc(sizeof(Word) * (size_t)n_noun);
  lx->verb_sg = malloc(sizeof(Word) * (size_t)n_verb);
  lx->verb_pl = malloc(sizeof(Word) * (size_t)n_verb);
  if (bad || !lx->topic_cdf || !lx->noun_pl || !lx->verb_sg || !lx->verb_pl) return -1;
  /* Words are short, so stem + suffix always fits in a Word. */
  suffix_all(lx->noun_pl, lx->w[W_NOUN], n_noun, PICK(r, noun_plural));
  suffix_all(lx->verb_sg, lx->w[W_VERB], n_verb, PICK(r, verb_singular));
  suffix_all(lx->verb_pl, lx->w[W_VERB], n_verb, PICK(r, verb_plural));
  return 0;
}

/* ---- the grammar ----------------------------------------------------------
**
**   paragraph := sentence{3..8} "\n\n"
**   sentence  := clause [", " conj clause] ("." | "?" | "!")
**   clause    := subject(num) [adv] verb(num) [object] [pp]
**   subject   := name (singular) | np(num)
**   np(num)   := det(num) [adj [adj]] noun(num) [pp]     (pp only at the top)
**   object    := np, the noun mostly from the verb's topic
**   pp        := prep np
*/

typedef struct Gen {
  Rng r;
  const Lexicon *lx;
  uint8_t *buf;
  size_t len, cap;
  int capital;          /* the next word starts a sentence */
} Gen;

static int gen_put(Gen *g, const char *s) {
  size_t n = strlen(s);
  if (g->len + n + 1 > g->cap) {
    size_t cap = g->cap * 2 + n;
    uint8_t *p = realloc(g->buf, cap);
    if (!p) return -1;
    g->buf = p;
    g->cap = cap;
  }
  memcpy(g->buf + g->len, s, n);
  if (g->capital && n > 0 && s[0] >= 'a' && s[0] <= 'z') g->buf[g->len] = (uint8_t)(s[0] - 32);
  g->capital = 0;
  g->len += n;
  return 0;
}

static int chance(Gen *g, double p) { return rng_uniform(&g->r) < p; }

static int draw(Gen *g, int k) { return zipf_draw(&g->r, g->lx->cdf[k], word_classes[k].count); }

/* Put " word" (no space at the start of a sentence). */
static int gen_word(Gen *g, const char *w) {
  if (!g->capital && gen_put(g, " ") < 0) return -1;
  return gen_put(g, w);
}

/* A noun phrase; 'topic' >= 0 draws the noun mostly from that topic. */
static int gen_np(Gen *g, int plural, int topic, int top) {
  const Lexicon *lx = g->lx;
  int det = plural ? W_DET_PL : W_DET_SG, noun;
  if (gen_word(g, lx->w[det][draw(g, det)]) < 0) return -1;
  int n_adj = chance(g, 0.35) ? (chance(g, 0.2) ? 2 : 1) : 0;
  for (int i = 0; i < n_adj; i++)
    if (gen_word(g, lx->w[W_ADJ][draw(g, W_ADJ)]) < 0) return -1;
  if (topic >= 0 && chance(g, 0.7))
    noun = topic + N_TOPICS * zipf_draw(&g->r, lx->topic_cdf, word_classes[W_NOUN].count / N_TOPICS);
  else
    noun = draw(g, W_NOUN);
  if (gen_word(g, plural ? lx->noun_pl[noun] : lx->w[W_NOUN][noun]) < 0) return -1;
  if (top && chance(g, 0.1)) {
    if (gen_word(g, lx->w[W_PREP][draw(g, W_PREP)]) < 0) return -1;
    return gen_np(g, chance(g, 0.3), -1, 0);
  }
  return 0;
}

static int gen_clause(Gen *g) {
  const Lexicon *lx = g->lx;
  int plural = chance(g, 0.35), verb;
  if (!plural && chance(g, 0.15)) {
    if (gen_word(g, lx->w[W_NAME][draw(g, W_NAME)]) < 0) return -1;
  } else if (gen_np(g, plural, -1, 1) < 0) {
    return -1;
  }
  if (chance(g, 0.1) && gen_word(g, lx->w[W_ADV][draw(g, W_ADV)]) < 0) return -1;
  verb = draw(g, W_VERB);
  if (gen_word(g, plural ? lx->verb_pl[verb] : lx->verb_sg[verb]) < 0) return -1;
  if (chance(g, 0.65) && gen_np(g, chance(g, 0.3), verb % N_TOPICS, 0) < 0) return -1;
  if (chance(g, 0.3)) {
    if (gen_word(g, lx->w[W_PREP][draw(g, W_PREP)]) < 0) return -1;
    if (gen_np(g, chance(g, 0.3), -1, 0) < 0) return -1;
  }
  return 0;
}

static int gen_sentence(Gen *g) {
  static const char *const ends[] = {".", ".", ".", ".", ".", ".", ".", ".", "?", "!"};
  g->capital = 1;
  if (gen_clause(g) < 0) return -1;
  if (chance(g, 0.25)) {
    if (gen_put(g, ",") < 0 || gen_word(g, g->lx->w[W_CONJ][draw(g, W_CONJ)]) < 0) return -1;
    if (gen_clause(g) < 0) return -1;
  }
  return gen_put(g, PICK(&g->r, ends));
}

int corpus_synthetic(Corpus *c, uint64_t seed, size_t bytes, Err *err) {
  Lexicon lx = {0};
  Gen g = {0};
  Rng lex_rng;
  memset(c, 0, sizeof *c);
  rng_seed(&lex_rng, rng_mix(seed, 1));
  rng_seed(&g.r, rng_mix(seed, 2));
  g.lx = &lx;
  g.cap = bytes + 1024;
  g.buf = malloc(g.cap);
  if (!g.buf || lexicon_make(&lx, &lex_rng) < 0) goto nomem;
  do {
    int sentences = 3 + (int)rng_below(&g.r, 6);
    for (int i = 0; i < sentences; i++)
      if ((i > 0 && gen_put(&g, " ") < 0) || gen_sentence(&g) < 0) goto nomem;
    if (gen_put(&g, "\n\n") < 0) goto nomem;
  } while (g.len < bytes);
  lexicon_free(&lx);
  c->text = g.buf;
  c->len = g.len;
  snprintf(c->name, sizeof c->name, "synthetic:%llu", (unsigned long long)seed);
  return 0;
nomem:
  lexicon_free(&lx);
  free(g.buf);
  return err_set(err, "synthetic corpus: out of memory for %zu bytes", bytes);
}
