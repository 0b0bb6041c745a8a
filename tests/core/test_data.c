/*
** test_data.c -- corpora and batches: corpus_read refuses what is not text
** with a message naming the file, the synthetic language is deterministic
** and learnable, and batches are pure functions of (seed, index).
*/
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/corpus.h"
#include "core/data.h"
#include "core/rng.h"
#include "tap.h"

static char tmp[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  return remove(path);
}

static const char *fixture(const char *name, const uint8_t *p, size_t n) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(p, 1, n, f);
    fclose(f);
  }
  return path;
}

/* corpus_read on 'path' fails with a message holding the path and 'want'. */
static void refused(const char *path, const char *want, const char *what) {
  Corpus c;
  Err err = {""};
  int r = corpus_read(&c, path, &err);
  ok(r < 0 && strstr(err.msg, path) && strstr(err.msg, want), "%s refused: %s", what, err.msg);
}

static void test_read(const Corpus *syn) {
  char path[256];
  uint8_t buf[8192];
  snprintf(path, sizeof path, "%s/missing.txt", tmp);
  refused(path, "no such file", "a missing file");
  refused(fixture("empty.txt", buf, 0), "is empty", "an empty file");
  refused(fixture("short.txt", syn->text, 100), "only 100 bytes, need at least 4096", "a short file");
  memcpy(buf, syn->text, sizeof buf);
  buf[5000] = 0;
  refused(fixture("nul.txt", buf, sizeof buf), "looks binary (NUL byte at offset 5000)", "a file with a NUL");
  Rng r;
  rng_seed(&r, 9);
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(1 + rng_below(&r, 255));
  refused(fixture("noise.bin", buf, sizeof buf), "looks binary", "random bytes without a NUL");
  snprintf(path, sizeof path, "%s/adir", tmp);
  mkdir(path, 0755);
  refused(path, "is a folder, not a regular file", "a directory");
  refused("/dev/zero", "not a regular file", "an endless device");
  /* procfs files say they have 0 bytes and read on: a size that cannot be
  ** known, so the read stops at once rather than growing a buffer. */
  refused("/proc/self/status", "says it has 0 bytes but has more", "a /proc file");
  refused("/proc/self/pagemap", "says it has 0 bytes but has more", "/proc/self/pagemap");

  /* The cap on the size: refused before any byte is read. */
  const char *big = fixture("big.txt", syn->text, 12000);
  Corpus capped;
  Err cap_err = {""};
  ok(corpus_read_max(&capped, big, 8192, 0, &cap_err) < 0 && strstr(cap_err.msg, "more than the") &&
         strstr(cap_err.msg, "corpus_max"),
     "a corpus above the cap is refused and names the setting: %s", cap_err.msg);
  ok(corpus_read_max(&capped, big, 12000, 0, &cap_err) == 0 && capped.len == 12000, "one at the cap is read whole");
  corpus_free(&capped);

  /* Text with a few Latin-1 bytes (invalid UTF-8) is still text. */
  memcpy(buf, syn->text, sizeof buf);
  for (size_t i = 0; i < sizeof buf; i += 100) buf[i] = 0xe9;
  Corpus c;
  Err err;
  ok(corpus_read(&c, fixture("latin1.txt", buf, sizeof buf), &err) == 0, "text with a few Latin-1 bytes is read");
  corpus_free(&c);
  const char *good = fixture("good.txt", syn->text, syn->len);
  ok(corpus_read(&c, good, &err) == 0 && c.len == syn->len && memcmp(c.text, syn->text, c.len) == 0 &&
         strcmp(c.name, good) == 0,
     "the synthetic corpus written to a file reads back as text");
  corpus_free(&c);
}

static void test_synthetic(void) {
  Corpus a, b, d;
  Err err;
  clock_t t0 = clock();
  int ra = corpus_synthetic(&a, 11, 1 << 20, &err);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  int rb = corpus_synthetic(&b, 11, 1 << 20, &err), rd = corpus_synthetic(&d, 12, 1 << 20, &err);
  ok(ra == 0 && rb == 0 && rd == 0, "generates 1 MiB (%.3f s)", secs);
  ok(a.len >= 1 << 20 && a.len < (1 << 20) + 4096, "about the size asked for (%zu bytes)", a.len);
  ok(a.len == b.len && memcmp(a.text, b.text, a.len) == 0, "the same seed gives the same text");
  ok(a.len != d.len || memcmp(a.text, d.text, a.len) != 0, "another seed gives another text");
  ok(strcmp(a.name, "synthetic:11") == 0, "named %s", a.name);
  size_t upper = 0, stops = 0, paragraphs = 0, other = 0;
  for (size_t i = 0; i < a.len; i++) {
    uint8_t ch = a.text[i];
    upper += ch >= 'A' && ch <= 'Z';
    stops += ch == '.' || ch == '?' || ch == '!';
    paragraphs += ch == '\n' && i > 0 && a.text[i - 1] == '\n';
    other += !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || strchr(" .,?!\n", ch));
  }
  ok(upper >= stops && stops > 1000 && paragraphs > 100 && other == 0,
     "sentences start with capitals and end with stops, in paragraphs (%zu, %zu, %zu)", upper, stops, paragraphs);
  const uint8_t *line = a.text, *nl = memchr(line, '\n', a.len);
  diag("synthetic:11 begins: %.*s", (int)(nl ? nl - line : 0), (const char *)line);
  corpus_free(&a);
  corpus_free(&b);
  corpus_free(&d);
}

/* Where the window 'row' of t+1 tokens starts in tokens[lo, hi), or -1. */
static long find_window(const Dataset *ds, size_t lo, size_t hi, const int32_t *row, int t) {
  for (size_t s = lo; s + (size_t)t + 1 <= hi; s++)
    if (memcmp(ds->tokens + s, row, sizeof *row * ((size_t)t + 1)) == 0) return (long)s;
  return -1;
}

static void test_batches(const Dataset *ds) {
  enum { B = 4, T = 64 };
  int32_t x[B * (T + 1)], y[B * (T + 1)], in[B * T], tg[B * T];
  int vocab = tokenizer_size(ds->tok), in_vocab = 1, in_train = 1;
  dataset_train_batch(ds, 1, 5, B, T, x);
  dataset_train_batch(ds, 1, 5, B, T, y);
  ok(memcmp(x, y, sizeof x) == 0, "batch (seed 1, index 5) twice is the same");
  dataset_train_batch(ds, 2, 5, B, T, y);
  ok(memcmp(x, y, sizeof x) != 0, "another seed gives another batch");
  dataset_train_batch(ds, 1, 6, B, T, y);
  ok(memcmp(x, y, sizeof x) != 0, "another index gives another batch");
  for (uint64_t k = 0; k < 50; k++) {
    dataset_train_batch(ds, 3, k, B, T, y);
    for (int i = 0; i < B * (T + 1); i++) in_vocab &= y[i] >= 0 && y[i] < vocab;
    for (int i = 0; i < B; i++) in_train &= find_window(ds, 0, ds->n_train, y + i * (T + 1), T) >= 0;
  }
  ok(in_vocab, "every id is below the vocabulary (%d)", vocab);
  ok(in_train, "every row is a window of the training split");

  batch_split(x, B, T, in, tg);
  int shifted = 1;
  for (int i = 0; i < B; i++)
    for (int j = 0; j < T; j++)
      shifted &= in[i * T + j] == x[i * (T + 1) + j] && tg[i * T + j] == x[i * (T + 1) + j + 1];
  ok(shifted, "targets are the inputs shifted by one");

  int n_val = 3, in_val = 1;
  dataset_val_batch(ds, 1, n_val, B, T, x);
  dataset_val_batch(ds, 1, n_val, B, T, y);
  ok(memcmp(x, y, sizeof x) == 0, "a validation batch is fixed");
  dataset_val_batch(ds, 0, n_val, B, T, x);
  ok(memcmp(x, ds->tokens + ds->n_train, sizeof *x * (T + 1)) == 0, "the first starts the validation split");
  dataset_val_batch(ds, n_val - 1, n_val, B, T, y);
  ok(memcmp(y + (B - 1) * (T + 1), ds->tokens + ds->n - (T + 1), sizeof *y * (T + 1)) == 0,
     "the last ends it");
  for (int k = 0; k < n_val; k++) {
    dataset_val_batch(ds, k, n_val, B, T, y);
    for (int i = 0; i < B; i++) in_val &= find_window(ds, ds->n_train, ds->n, y + i * (T + 1), T) >= 0;
  }
  ok(in_val, "every validation row is a window of the validation split");
}

/*
** Cross-entropy in bits of tokens [n_train, n) under a unigram model
** (add-one) and a bigram model (Witten-Bell, backing off to the unigram),
** both counted on tokens [0, n_train); with 'plug' set, also the plug-in
** entropies of the training tokens.
*/
static void ngram_bits(const int32_t *tok, size_t n_train, size_t n, int V, double *h_uni, double *h_big,
                       double *plug) {
  double *uni = calloc((size_t)V, sizeof *uni), *after = calloc((size_t)V, sizeof *after);
  double *kinds = calloc((size_t)V, sizeof *kinds), nt = (double)n_train;
  unsigned *big = calloc((size_t)V * (size_t)V, sizeof *big);
  for (size_t i = 0; i < n_train; i++) {
    uni[tok[i]]++;
    if (i == 0) continue;
    after[tok[i - 1]]++;
    if (big[(size_t)tok[i - 1] * V + tok[i]]++ == 0) kinds[tok[i - 1]]++;
  }
  *h_uni = *h_big = 0;
  for (size_t i = n_train + 1; i < n; i++) {
    int32_t h = tok[i - 1], w = tok[i];
    double pu = (uni[w] + 1) / (nt + V);
    double pb = after[h] > 0 ? (big[(size_t)h * V + w] + kinds[h] * pu) / (after[h] + kinds[h]) : pu;
    *h_uni -= log2(pu) / (double)(n - n_train - 1);
    *h_big -= log2(pb) / (double)(n - n_train - 1);
  }
  if (plug) {
    plug[0] = plug[1] = 0;
    for (int w = 0; w < V; w++)
      if (uni[w] > 0) plug[0] -= uni[w] / nt * log2(uni[w] / nt);
    for (size_t k = 0; k < (size_t)V * V; k++)
      if (big[k] > 0) plug[1] -= big[k] / (nt - 1) * log2(big[k] / after[k / V]);
  }
  free(uni);
  free(after);
  free(kinds);
  free(big);
}

/* The words of 'c' (space-separated) in a random order: no grammar left. */
static uint8_t *word_salad(const Corpus *c, size_t *len) {
  size_t n_words = 0, k = 0;
  for (size_t i = 0; i < c->len; i++) n_words += c->text[i] == ' ' || c->text[i] == '\n';
  const uint8_t **words = malloc(sizeof *words * (n_words + 1));
  size_t *lens = malloc(sizeof *lens * (n_words + 1));
  n_words = 0;
  for (size_t i = 0; i < c->len;) {
    size_t j = i;
    while (j < c->len && c->text[j] != ' ' && c->text[j] != '\n') j++;
    if (j > i) {
      words[n_words] = c->text + i;
      lens[n_words++] = j - i;
    }
    i = j + 1;
  }
  Rng r;
  rng_seed(&r, 77);
  for (size_t i = n_words; i > 1; i--) {
    size_t j = (size_t)rng_below(&r, i);
    const uint8_t *w = words[i - 1];
    size_t l = lens[i - 1];
    words[i - 1] = words[j], lens[i - 1] = lens[j];
    words[j] = w, lens[j] = l;
  }
  uint8_t *out = malloc(c->len + 1);
  for (size_t i = 0; i < n_words; i++) {
    memcpy(out + k, words[i], lens[i]);
    k += lens[i];
    out[k++] = ' ';
  }
  free(words);
  free(lens);
  *len = k;
  return out;
}

/*
** The synthetic language is learnable from context: held-out bigram
** cross-entropy is well below the unigram one, and by more than for the
** same words shuffled (whose gain comes only from inside words).
*/
static void test_learnable(const Dataset *ds, const Corpus *c) {
  int V = tokenizer_size(ds->tok);
  double uni, big, plug[2], s_uni, s_big;
  ngram_bits(ds->tokens, ds->n_train, ds->n, V, &uni, &big, plug);
  diag("training tokens: unigram entropy %.2f bits, bigram conditional entropy %.2f bits", plug[0], plug[1]);
  diag("held out: unigram cross-entropy %.2f bits, bigram %.2f bits", uni, big);
  ok(big < uni - 1.0, "held-out bigram cross-entropy is over 1 bit below the unigram one");

  size_t len, n;
  uint8_t *salad = word_salad(c, &len);
  int32_t *tok;
  tokenizer_encode(ds->tok, salad, len, &tok, &n, NULL, NULL);
  ngram_bits(tok, n - n / 10, n, V, &s_uni, &s_big, NULL);
  diag("the same words shuffled: unigram %.2f bits, bigram %.2f bits", s_uni, s_big);
  ok(uni - big > s_uni - s_big + 0.5, "word order carries over half a bit per token (%.2f vs %.2f)",
     uni - big, s_uni - s_big);
  free(tok);
  free(salad);
}

static void test_dataset(void) {
  Corpus c;
  Dataset ds;
  Err err;
  char cache[128];
  snprintf(cache, sizeof cache, "%s/cache", tmp);
  setenv("XDG_CACHE_HOME", cache, 1);
  corpus_synthetic(&c, 3, 300000, &err);
  ok(dataset_build(&ds, &c, 512, 0.1, 64, NULL, &err) == 0, "builds a dataset from %s", c.name);
  size_t n_val = ds.n - ds.n_train;
  ok(ds.tok && tokenizer_bpe(ds.tok) && tokenizer_size(ds.tok) == 512 && strcmp(ds.name, c.name) == 0, "with its tokenizer and name");
  ok(n_val > 0 && fabs((double)n_val / (double)ds.n - 0.1) < 0.001, "holds out 10%% (%zu of %zu tokens)",
     n_val, ds.n);
  test_batches(&ds);
  test_learnable(&ds, &c);
  dataset_free(&ds);

  ok(dataset_build(&ds, &c, 512, 0.1, 100000, NULL, &err) < 0 && strstr(err.msg, "too short") &&
         strstr(err.msg, c.name),
     "a corpus too short for the context is refused: %s", err.msg);
  ok(dataset_build(&ds, &c, 512, 0.0, 64, NULL, &err) < 0, "no validation split is refused: %s", err.msg);
  ok(dataset_build(&ds, &c, 512, 0.1, 0, NULL, &err) < 0, "a context of 0 is refused: %s", err.msg);
  ok(dataset_build(&ds, &c, 10, 0.1, 64, NULL, &err) < 0 && strstr(err.msg, c.name),
     "a bad vocabulary is refused: %s", err.msg);
  corpus_free(&c);
}

int main(void) {
  Corpus syn;
  Err err;
  strcpy(tmp, "tests/tmp-data-XXXXXX");
  if (!mkdtemp(tmp)) {
    strcpy(tmp, "tmp-data-XXXXXX");
    if (!mkdtemp(tmp)) return printf("Bail out! cannot make a temporary directory\n"), 1;
  }
  if (corpus_synthetic(&syn, 5, 20000, &err) < 0) return printf("Bail out! %s\n", err.msg), 1;
  test_read(&syn);
  test_synthetic();
  test_dataset();
  corpus_free(&syn);
  nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return tap_done();
}
