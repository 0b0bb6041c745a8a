/*
** tokenizer.c -- see tokenizer.h. Each kind answers through a table of its
** operations; a released tokenizer also keeps its files' bytes.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "base/sha256.h"
#include "core/tokenizer.h"

typedef struct TokenizerOps {
  int (*size)(const void *impl);
  int (*encode)(const void *impl, const uint8_t *text, size_t n, int32_t **out, size_t *n_out, const Cancel *cancel,
                Err *err);
  size_t (*decode)(const void *impl, const int32_t *ids, size_t n, uint8_t *out, size_t cap);
  const uint8_t *(*token)(const void *impl, int32_t id, size_t *len);
  void (*free)(void *impl);
} TokenizerOps;

/* The largest tokenizer file read: Llama 3's tokenizer.json is 9 MB. */
#define TOKENIZER_FILE_MAX (256u << 20)

struct Tokenizer {
  const TokenizerOps *ops;
  void *impl;
  int n_files;
  char *names[TOKENIZER_MAX_FILES];
  uint8_t *bytes[TOKENIZER_MAX_FILES];
  size_t lens[TOKENIZER_MAX_FILES];
  char source[1024];
  char sha256[SHA256_HEX];
};

/* ---------------------------------------------------------------- the kinds */

static int bpe_size_op(const void *b) { return bpe_vocab(b); }
static int bpe_encode_op(const void *b, const uint8_t *text, size_t n, int32_t **out, size_t *n_out,
                         const Cancel *cancel, Err *err) {
  return bpe_encode(b, text, n, out, n_out, cancel, err);
}
static size_t bpe_decode_op(const void *b, const int32_t *ids, size_t n, uint8_t *out, size_t cap) {
  return bpe_decode(b, ids, n, out, cap);
}
static const uint8_t *bpe_token_op(const void *b, int32_t id, size_t *len) { return bpe_token_bytes(b, id, len); }
static void bpe_free_op(void *b) { bpe_free(b); }

static const TokenizerOps bpe_ops = {bpe_size_op, bpe_encode_op, bpe_decode_op, bpe_token_op, bpe_free_op};

static int hf_size_op(const void *t) { return hftok_size(t); }
static int hf_encode_op(const void *t, const uint8_t *text, size_t n, int32_t **out, size_t *n_out,
                        const Cancel *cancel, Err *err) {
  return hftok_encode(t, text, n, out, n_out, cancel, err);
}
static size_t hf_decode_op(const void *t, const int32_t *ids, size_t n, uint8_t *out, size_t cap) {
  return hftok_decode(t, ids, n, out, cap);
}
static const uint8_t *hf_token_op(const void *t, int32_t id, size_t *len) { return hftok_bytes(t, id, len); }
static void hf_free_op(void *t) { hftok_free(t); }

static const TokenizerOps hf_ops = {hf_size_op, hf_encode_op, hf_decode_op, hf_token_op, hf_free_op};

/* ---------------------------------------------------------------- making */

static Tokenizer *tokenizer_new(const TokenizerOps *ops, void *impl, Err *err) {
  Tokenizer *t = calloc(1, sizeof *t);
  if (!t) {
    ops->free(impl);
    err_set(err, "out of memory");
    return NULL;
  }
  t->ops = ops;
  t->impl = impl;
  return t;
}

Tokenizer *tokenizer_from_bpe(Bpe *bpe, Err *err) { return bpe ? tokenizer_new(&bpe_ops, bpe, err) : NULL; }

void tokenizer_free(Tokenizer *t) {
  if (!t) return;
  if (t->impl) t->ops->free(t->impl);
  for (int i = 0; i < t->n_files; i++) {
    free(t->names[i]);
    free(t->bytes[i]);
  }
  free(t);
}

/* The files a released tokenizer is read from, in the order hftok_open
** looks for them: tokenizer.json, else GPT-2's older pair. */
static const char *const json_files[] = {"tokenizer.json"};
static const char *const pair_files[] = {"vocab.json", "merges.txt"};

static int file_named(const char *name) {
  return !strcmp(name, json_files[0]) || !strcmp(name, pair_files[0]) || !strcmp(name, pair_files[1]);
}

static int keep_file(Tokenizer *t, const char *name, const uint8_t *bytes, size_t len, Err *err) {
  int i = t->n_files;
  t->names[i] = strdup(name);
  t->bytes[i] = malloc(len ? len : 1);
  if (!t->names[i] || !t->bytes[i]) {
    free(t->names[i]);
    free(t->bytes[i]);
    return err_set(err, "out of memory keeping the tokenizer's '%s'", name);
  }
  memcpy(t->bytes[i], bytes, len);
  t->lens[i] = len;
  t->n_files++;
  return 0;
}

static void hash_files(Tokenizer *t) {
  Sha256 s;
  uint8_t d[32];
  sha256_begin(&s);
  for (int i = 0; i < t->n_files; i++) {
    sha256_add(&s, t->names[i], strlen(t->names[i]) + 1);
    sha256_add(&s, t->bytes[i], t->lens[i]);
  }
  sha256_end(&s, d);
  for (int i = 0; i < 32; i++) snprintf(t->sha256 + 2 * i, 3, "%02x", d[i]);
}

/* The whole of 'path', at most TOKENIZER_FILE_MAX bytes, malloc'd. */
static uint8_t *read_file(const char *path, size_t *len, Err *err) {
  struct stat st;
  FILE *f = safeopen_fread(path, 0, &st, err);
  if (!f) return NULL;
  if ((uint64_t)st.st_size > TOKENIZER_FILE_MAX) {
    fclose(f);
    err_set(err, "%s: %lld bytes, more than a tokenizer file may have (%u MiB)", path, (long long)st.st_size,
            TOKENIZER_FILE_MAX >> 20);
    return NULL;
  }
  uint8_t *buf = malloc((size_t)st.st_size + 1);
  *len = buf ? fread(buf, 1, (size_t)st.st_size + 1, f) : 0;
  int bad = !buf || ferror(f) || *len != (size_t)st.st_size;
  fclose(f);
  if (bad) {
    free(buf);
    err_set(err, "%s: %s", path, buf ? "could not be read whole (did it change?)" : "out of memory");
    return NULL;
  }
  return buf;
}

Tokenizer *tokenizer_open_pretrained(const char *folder, Err *err) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", folder, json_files[0]);
  int json = stat(path, &st) == 0;
  const char *const *names = json ? json_files : pair_files;
  int n = json ? 1 : 2;
  HfTok *h = hftok_open(folder, err);
  if (!h) return NULL;
  Tokenizer *t = tokenizer_new(&hf_ops, h, err);
  if (!t) return NULL;
  snprintf(t->source, sizeof t->source, "%s/%s", folder, names[0]);
  for (int i = 0; i < n; i++) {
    size_t len;
    snprintf(path, sizeof path, "%s/%s", folder, names[i]);
    uint8_t *bytes = read_file(path, &len, err);
    int rc = bytes ? keep_file(t, names[i], bytes, len, err) : -1;
    free(bytes);
    if (rc < 0) {
      tokenizer_free(t);
      return NULL;
    }
  }
  hash_files(t);
  return t;
}

#define TOKENIZER_DIR_MAX 1024

/* hftok reads a model's folder: the files are put in a private one of
** their own, read from there and removed. */
static int write_file(const char *dir, const TokenizerFile *f, Err *err) {
  char path[TOKENIZER_DIR_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, f->name);
  FILE *out = fopen(path, "wbx");
  if (!out) return err_set(err, "%s: %s", path, strerror(errno));
  size_t w = fwrite(f->bytes, 1, f->len, out);
  int bad = fclose(out) != 0 || w != f->len;
  return bad ? err_set(err, "%s: could not be written whole", path) : 0;
}

static void remove_folder(const char *dir, const TokenizerFile *files, int n) {
  char path[TOKENIZER_DIR_MAX + 64];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
    unlink(path);
  }
  rmdir(dir);
}

/* The reader's message names the file by the folder made for it, which
** is gone: the file's own name says more. */
static void strip_folder(Err *err, const char *dir) {
  size_t n = strlen(dir);
  if (err && strncmp(err->msg, dir, n) == 0 && err->msg[n] == '/') memmove(err->msg, err->msg + n + 1, strlen(err->msg + n));
}

static int check_files(const TokenizerFile *files, int n, Err *err) {
  if (n < 1 || n > TOKENIZER_MAX_FILES) return err_set(err, "a tokenizer of %d files, expected 1 or 2", n);
  for (int i = 0; i < n; i++) {
    if (!file_named(files[i].name))
      return err_set(err, "a tokenizer file named '%.60s', expected tokenizer.json, vocab.json or merges.txt",
                     files[i].name);
    if (files[i].len > TOKENIZER_FILE_MAX) return err_set(err, "tokenizer file '%s' is too large", files[i].name);
    for (int j = 0; j < i; j++)
      if (!strcmp(files[i].name, files[j].name)) return err_set(err, "tokenizer file '%s' twice", files[i].name);
  }
  return 0;
}

Tokenizer *tokenizer_from_files(const TokenizerFile *files, int n, const char *source, Err *err) {
  if (check_files(files, n, err) < 0) return NULL;
  const char *tmp = getenv("TMPDIR");
  char dir[TOKENIZER_DIR_MAX];
  snprintf(dir, sizeof dir, "%.900s/tielab-tokenizer-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    err_set(err, "cannot make a folder to read the tokenizer from (%s): %s", dir, strerror(errno));
    return NULL;
  }
  int written = 0, rc = 0;
  while (written < n && (rc = write_file(dir, &files[written], err)) == 0) written++;
  HfTok *h = rc == 0 ? hftok_open(dir, err) : NULL;
  remove_folder(dir, files, written);
  if (!h) strip_folder(err, dir);
  Tokenizer *t = h ? tokenizer_new(&hf_ops, h, err) : NULL;
  for (int i = 0; t && i < n; i++)
    if (keep_file(t, files[i].name, files[i].bytes, files[i].len, err) < 0) {
      tokenizer_free(t);
      return NULL;
    }
  if (!t) return NULL;
  snprintf(t->source, sizeof t->source, "%s", source);
  hash_files(t);
  return t;
}

/* ---------------------------------------------------------------- using */

int tokenizer_size(const Tokenizer *t) { return t->ops->size(t->impl); }

int tokenizer_encode(const Tokenizer *t, const uint8_t *text, size_t n, int32_t **out, size_t *n_out,
                     const Cancel *cancel, Err *err) {
  return t->ops->encode(t->impl, text, n, out, n_out, cancel, err);
}

size_t tokenizer_decode(const Tokenizer *t, const int32_t *ids, size_t n, uint8_t *out, size_t cap) {
  return t->ops->decode(t->impl, ids, n, out, cap);
}

const uint8_t *tokenizer_token(const Tokenizer *t, int32_t id, size_t *len) { return t->ops->token(t->impl, id, len); }

const Bpe *tokenizer_bpe(const Tokenizer *t) { return t->ops == &bpe_ops ? t->impl : NULL; }

int tokenizer_files(const Tokenizer *t, TokenizerFile *files) {
  for (int i = 0; i < t->n_files; i++) files[i] = (TokenizerFile){t->names[i], t->bytes[i], t->lens[i]};
  return t->n_files;
}

const char *tokenizer_source(const Tokenizer *t) { return t->source; }
const char *tokenizer_sha256(const Tokenizer *t) { return t->sha256; }
