/*
** test_bpe.c -- the byte-level BPE tokenizer: training is deterministic and
** reaches the vocabulary, any bytes survive encode and decode, bad merge
** lists are refused, the cache file is used, checked and repaired, and a
** caller's Cancel stops training and encoding early.
*/
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bpe.h"
#include "core/corpus.h"
#include "core/rng.h"
#include "tap.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  return remove(path);
}

/* Encode and decode 'n' bytes; 1 when the bytes come back unchanged. */
static int round_trips(const Bpe *b, const uint8_t *s, size_t n) {
  int32_t *ids;
  size_t n_ids;
  if (bpe_encode(b, s, n, &ids, &n_ids, NULL, NULL) < 0) return 0;
  uint8_t *back = malloc(n + 1);
  size_t need = bpe_decode(b, ids, n_ids, back, n);
  int same = need == n && memcmp(back, s, n) == 0;
  for (size_t i = 0; i < n_ids; i++) same &= ids[i] >= 0 && ids[i] < bpe_vocab(b);
  free(back);
  free(ids);
  return same;
}

static int same_merges(const Bpe *a, const Bpe *b) {
  int na, nb;
  const int32_t *ma = bpe_merges(a, &na), *mb = bpe_merges(b, &nb);
  return na == nb && memcmp(ma, mb, sizeof *ma * 2 * (size_t)na) == 0;
}

static size_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  *n = file_size(path);
  uint8_t *p = malloc(*n + 1);
  if (!f || fread(p, 1, *n, f) != *n) *n = 0;
  if (f) fclose(f);
  return p;
}

static void spit(const char *path, const uint8_t *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(p, 1, n, f);
    fclose(f);
  }
}

static void test_training(const Corpus *c) {
  Err err;
  Bpe *a = bpe_train(c->text, c->len, 1024, NULL, &err), *b = bpe_train(c->text, c->len, 1024, NULL, &err);
  ok(a && b, "trains on %zu bytes", c->len);
  if (!a || !b) return;
  ok(bpe_vocab(a) == 1024, "reaches the vocabulary (%d)", bpe_vocab(a));
  ok(same_merges(a, b), "training twice gives identical merges");
  int n, earlier = 1;
  const int32_t *m = bpe_merges(a, &n);
  for (int i = 0; i < n; i++)
    earlier &= m[2 * i] >= 0 && m[2 * i + 1] >= 0 && m[2 * i] < 256 + i && m[2 * i + 1] < 256 + i;
  ok(earlier, "every merge refers only to earlier ids");
  size_t len;
  const uint8_t *tok = bpe_token_bytes(a, 256, &len);
  ok(tok && len == 2, "the first merge is two bytes long");
  ok(!bpe_token_bytes(a, 1024, &len) && !bpe_token_bytes(a, -1, &len), "ids out of range have no bytes");

  int32_t *ids;
  size_t n_ids;
  ok(bpe_encode(a, c->text, c->len, &ids, &n_ids, NULL, &err) == 0, "encodes the corpus");
  ok(n_ids < c->len / 2, "text compresses: %zu bytes -> %zu tokens", c->len, n_ids);
  ok(round_trips(a, c->text, c->len), "decode(encode(text)) == text");
  uint8_t *text = malloc(c->len);
  size_t need = bpe_decode(a, ids, n_ids, text, c->len);
  int32_t *again;
  size_t n_again;
  bpe_encode(a, text, need, &again, &n_again, NULL, &err);
  ok(n_again == n_ids && memcmp(again, ids, sizeof *ids * n_ids) == 0, "encode(decode(ids)) == ids");
  ok(bpe_decode(a, ids, n_ids, text, 10) == c->len, "decode reports the bytes needed past its capacity");
  free(again);
  free(text);
  free(ids);

  Bpe *c2 = bpe_from_merges(m, n, &err);
  ok(c2 && same_merges(a, c2), "a tokenizer rebuilt from its merges is the same");
  ok(c2 && round_trips(c2, c->text, 20000), "and encodes the same way");
  bpe_free(c2);
  bpe_free(a);
  bpe_free(b);
}

/* Random bytes, with NULs, 0xFF, invalid UTF-8 and runs longer than a chunk. */
static void test_any_bytes(const Corpus *c) {
  static const char *const odd[] = {
    "\xc3\x28", "\xa0\xa1", "\xe2\x28\xa1", "\xf0\x28\x8c\xbc", "\xff\xfe\xfd", "\xc0\xaf",
    "\xed\xa0\x80", "\xf8\x88\x80\x80\x80",
  };
  size_t n = 1 << 16, k = 0;
  uint8_t *s = malloc(n + 4096);
  Rng r;
  rng_seed(&r, 42);
  for (; k < 256; k++) s[k] = (uint8_t)k;
  while (k < n) {
    switch (rng_below(&r, 6)) {
    case 0: /* an odd sequence */
      for (const char *p = odd[rng_below(&r, sizeof odd / sizeof odd[0])]; *p; p++) s[k++] = (uint8_t)*p;
      break;
    case 1: /* a run longer than any chunk */
      for (size_t j = 0, len = 300 + rng_below(&r, 400), b = rng_below(&r, 4); j < len; j++)
        s[k++] = (uint8_t)"a !\0"[b];
      break;
    default:
      s[k++] = (uint8_t)rng_below(&r, 256);
    }
  }
  Err err;
  Bpe *text_bpe = bpe_train(c->text, c->len, 600, NULL, &err);
  Bpe *byte_bpe = bpe_train(s, k, 600, NULL, &err);
  ok(text_bpe && round_trips(text_bpe, s, k), "random bytes survive a text-trained tokenizer");
  ok(byte_bpe && round_trips(byte_bpe, s, k), "random bytes survive a tokenizer trained on them");
  ok(byte_bpe && round_trips(byte_bpe, c->text, c->len), "text survives a byte-trained tokenizer");
  uint8_t zeros[5000] = {0};
  ok(text_bpe && round_trips(text_bpe, zeros, sizeof zeros), "a run of NULs survives");
  int32_t *ids = NULL;
  size_t n_ids = 99;
  ok(text_bpe && bpe_encode(text_bpe, s, 0, &ids, &n_ids, NULL, &err) == 0 && n_ids == 0, "no bytes, no ids");
  free(ids);
  bpe_free(text_bpe);
  bpe_free(byte_bpe);
  free(s);
}

static void test_limits(void) {
  Err err;
  uint8_t s[4096];
  for (size_t i = 0; i < sizeof s; i++) s[i] = "ab"[i % 2];
  Bpe *b = bpe_train(s, sizeof s, 1000, NULL, &err);
  ok(b && bpe_vocab(b) < 1000, "stops when no pair occurs twice (vocab %d)", b ? bpe_vocab(b) : 0);
  ok(b && round_trips(b, s, sizeof s), "and still round trips");
  bpe_free(b);
  b = bpe_train(s, 0, 512, NULL, &err);
  ok(b && bpe_vocab(b) == 256, "an empty text gives the bytes alone");
  bpe_free(b);
  err.msg[0] = 0;
  ok(!bpe_train(s, sizeof s, 100, NULL, &err) && strstr(err.msg, "100"), "vocabulary below 256 refused: %s", err.msg);
}

static void test_bad_merges(void) {
  static const struct {
    int32_t m[8];
    int n;
    const char *what;
  } bad[] = {
    {{256, 1}, 1, "a merge that refers to itself"},
    {{97, 98, 300, 97}, 2, "a merge that refers to a later id"},
    {{-1, 97}, 1, "a negative id"},
    {{97, 98, 97, 98}, 2, "a repeated merge"},
    {{97, 98}, -1, "a negative count"},
  };
  Err err;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err.msg[0] = 0;
    Bpe *b = bpe_from_merges(bad[i].m, bad[i].n, &err);
    ok(!b && err.msg[0], "refuses %s: %s", bad[i].what, err.msg);
    bpe_free(b);
  }
  int32_t chain[2 * 16];
  chain[0] = chain[1] = 'a';
  for (int i = 1; i < 16; i++) chain[2 * i] = chain[2 * i + 1] = 255 + i;
  Bpe *b = bpe_from_merges(chain, 16, &err);
  ok(!b, "refuses merges that build a token of 65536 bytes: %s", err.msg);
  bpe_free(b);
  b = bpe_from_merges(chain, 8, &err);
  size_t len;
  ok(b && bpe_token_bytes(b, 263, &len) && len == 256, "accepts a token of 256 bytes");
  bpe_free(b);
}

static uint64_t fnv1a(const uint8_t *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

/*
** Rewrite a cache file to hold only its first 'keep' merges, with a good
** checksum (layout in bpe_cache.c: a 36-byte header whose last field is the
** count, 8 bytes per merge, an FNV-1a checksum). Loading it must give
** exactly those merges: proof that the file, not training, was used.
*/
static void cache_keep(const char *path, int keep) {
  size_t n;
  uint8_t *p = slurp(path, &n);
  size_t len = 36 + 8 * (size_t)keep;
  if (n >= len + 8) {
    for (int i = 0; i < 4; i++) p[32 + i] = (uint8_t)((unsigned)keep >> (8 * i));
    uint64_t sum = fnv1a(p, len, 0xcbf29ce484222325ULL);
    for (int i = 0; i < 8; i++) p[len + i] = (uint8_t)(sum >> (8 * i));
    spit(path, p, len + 8);
  }
  free(p);
}

static void test_cache(const Corpus *c, const char *rel) {
  char dir[PATH_MAX + 32], path[PATH_MAX + 128], file[PATH_MAX + 32], tmp[PATH_MAX];
  Err err;
  size_t n = 100000;   /* a part of the corpus keeps this quick */
  /* XDG folders are absolute: a relative one is ignored, as the XDG rules say. */
  if (!realpath(rel, tmp)) snprintf(tmp, sizeof tmp, "%s", rel);
  snprintf(dir, sizeof dir, "%s/cache/deeper", tmp);
  setenv("XDG_CACHE_HOME", dir, 1);
  ok(bpe_cache_path(c->text, n, 700, path, sizeof path) == 0 && strncmp(path, dir, strlen(dir)) == 0,
     "cache file under $XDG_CACHE_HOME: %s", path);
  Bpe *fresh = bpe_train(c->text, n, 700, NULL, &err);
  Bpe *first = bpe_train_cached(c->text, n, 700, NULL, &err);
  ok(first && same_merges(first, fresh), "the first cached call trains");
  struct stat st1, st2;
  ok(stat(path, &st1) == 0 && st1.st_size > 0, "and writes the cache file (%zu bytes)", file_size(path));
  size_t good_n;
  uint8_t *good = slurp(path, &good_n);

  Bpe *second = bpe_train_cached(c->text, n, 700, NULL, &err);
  ok(second && same_merges(second, fresh), "the second call gives the same merges");
  ok(stat(path, &st2) == 0 && st1.st_ino == st2.st_ino, "without rewriting the file");

  cache_keep(path, 10);
  Bpe *partial = bpe_train_cached(c->text, n, 700, NULL, &err);
  ok(partial && bpe_vocab(partial) == 266, "a valid cache file is what gets loaded (vocab %d)",
     partial ? bpe_vocab(partial) : 0);

  static const struct {
    size_t at;       /* where to damage; 0: truncate to half */
    const char *what;
  } damage[] = {{0, "cut in half"}, {100, "a flipped byte in the merges"}, {3, "a bad magic"},
                {20, "another corpus' hash"}};
  for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
    uint8_t *bad = malloc(good_n);
    memcpy(bad, good, good_n);
    if (damage[i].at) bad[damage[i].at] ^= 0x5a;
    spit(path, bad, damage[i].at ? good_n : good_n / 2);
    Bpe *b = bpe_train_cached(c->text, n, 700, NULL, &err);
    size_t now_n;
    uint8_t *now = slurp(path, &now_n);
    ok(b && same_merges(b, fresh), "a damaged cache file (%s) is ignored", damage[i].what);
    ok(now_n == good_n && memcmp(now, good, good_n) == 0, "and rewritten");
    bpe_free(b);
    free(now);
    free(bad);
  }

  Bpe *other = bpe_train_cached(c->text, n, 600, NULL, &err);
  ok(other && bpe_vocab(other) == 600, "another vocabulary is another cache file");
  bpe_free(other);

  snprintf(file, sizeof file, "%s/plain", tmp);
  spit(file, (const uint8_t *)"x", 1);
  setenv("XDG_CACHE_HOME", file, 1);   /* a file where the directory should be */
  Bpe *nodir = bpe_train_cached(c->text, n, 700, NULL, &err);
  ok(nodir && same_merges(nodir, fresh), "a cache directory that cannot be made is no error");
  bpe_free(nodir);

  unsetenv("XDG_CACHE_HOME");
  snprintf(dir, sizeof dir, "%s/home", tmp);
  setenv("HOME", dir, 1);
  Bpe *home = bpe_train_cached(c->text, n, 700, NULL, &err);
  ok(bpe_cache_path(c->text, n, 700, path, sizeof path) == 0 && strstr(path, "/home/.cache/tielab/") &&
         file_size(path) == good_n && home && same_merges(home, fresh),
     "without $XDG_CACHE_HOME the cache is under $HOME/.cache/tielab");
  bpe_free(home);

  free(good);
  bpe_free(fresh);
  bpe_free(first);
  bpe_free(second);
  bpe_free(partial);
}

/* A Cancel that says stop at its 'at'-th question (1 the first). */
typedef struct Asker {
  int asked, at;
} Asker;

static int ask(void *ctx) {
  Asker *a = ctx;
  return ++a->asked >= a->at;
}

static void test_cancel(const Corpus *c) {
  Err err;
  Asker never = {0, 1 << 30}, first = {0, 1}, later = {0, 40};
  Cancel no = {ask, &never}, at_once = {ask, &first}, soon = {ask, &later};
  Bpe *plain = bpe_train(c->text, c->len, 1024, NULL, &err), *asked = bpe_train(c->text, c->len, 1024, &no, &err);
  ok(plain && asked && same_merges(plain, asked) && never.asked > 0,
     "a Cancel that never says stop is asked (%d times) and changes nothing", never.asked);
  ok(!bpe_train(c->text, c->len, 1024, &at_once, &err) && strstr(err.msg, "interrupted while counting") && first.asked == 1,
     "one that says stop at once: training ends while counting words: %s", err.msg);
  int merge = -1;
  Bpe *cut = bpe_train(c->text, c->len, 1024, &soon, &err);
  const char *at = strstr(err.msg, "at merge");
  ok(!cut && at && sscanf(at, "at merge %d of 768", &merge) == 1 && merge > 0 && merge < 40,
     "one that says stop later: training ends between merges: %s", err.msg);
  int32_t *ids = (int32_t *)&merge;   /* must come back NULL */
  size_t n_ids = 1;
  first.asked = 0;
  ok(bpe_encode(plain, c->text, c->len, &ids, &n_ids, &at_once, &err) < 0 && !ids && n_ids == 0 &&
         strstr(err.msg, "interrupted while encoding"),
     "encoding stops too, with nothing returned: %s", err.msg);
  bpe_free(plain);
  bpe_free(asked);
}

int main(void) {
  Corpus c;
  Err err;
  char tmp[] = "tests/tmp-bpe-XXXXXX";
  if (!mkdtemp(tmp)) {
    strcpy(tmp, "tmp-bpe-XXXXXX");
    if (!mkdtemp(tmp)) return printf("Bail out! cannot make a temporary directory\n"), 1;
  }
  if (corpus_synthetic(&c, 7, 200000, &err) < 0) return printf("Bail out! %s\n", err.msg), 1;
  test_training(&c);
  test_any_bytes(&c);
  test_limits();
  test_bad_merges();
  test_cache(&c, tmp);
  test_cancel(&c);
  corpus_free(&c);
  nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return tap_done();
}
