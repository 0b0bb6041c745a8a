/* test_safetensors.c -- the safetensors reader and writer: round trips,
** hostile files, random mutations, header-only reading and reading by rows,
** and atomic replacement. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/rng.h"
#include "core/safetensors.h"
#include "tap.h"

static char dir[256];

static const char *path_in(char *buf, size_t size, const char *name) {
  snprintf(buf, size, "%s/%s", dir, name);
  return buf;
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---------------------------------------------------------------- round trip */

static void test_round_trip(Rng *r) {
  enum { N = 2 * 3 * 5 };
  static uint8_t bytes[ST_NDTYPES][N * 8];
  int64_t shape[3] = {2, 3, 5}, empty[2] = {0, 4};
  char path[512];
  Err err = {{0}};
  StWriter *w = st_writer_new();
  int good = 1;

  /* Adding in reverse name order: the file must still list them by name. */
  for (int d = ST_NDTYPES - 1; d >= 0; d--) {
    char name[32];
    for (size_t i = 0; i < sizeof bytes[d]; i++) bytes[d][i] = (uint8_t)rng_u64(r);
    snprintf(name, sizeof name, "t.%s", st_dtype_name((StDtype)d));
    good &= st_writer_add(w, name, (StDtype)d, 1 + d % 3, shape + 2 - d % 3, bytes[d], &err) == 0;
  }
  float scalar = 3.5f;
  good &= st_writer_add(w, "a.scalar", ST_F32, 0, NULL, &scalar, &err) == 0;
  good &= st_writer_add(w, "a.empty", ST_F64, 2, empty, NULL, &err) == 0;
  good &= st_writer_meta(w, "note", "first", &err) == 0;
  good &= st_writer_meta(w, "unicode", "\xce\xbb = 1", &err) == 0;
  good &= st_writer_meta(w, "note", "replaced", &err) == 0;
  good &= st_writer_write(w, path_in(path, sizeof path, "rt.safetensors"), &err) == 0;
  st_writer_free(w);
  ok(good, "writer accepts every dtype, a scalar and an empty tensor (%s)", good ? "" : err.msg);

  StFile f;
  if (st_read(&f, path, &err) != 0) {
    ok(0, "read back: %s", err.msg);
    return;
  }
  uint64_t hlen;
  memcpy(&hlen, f.buf, 8);
  ok(hlen % 8 == 0 && f.buf[8] == '{' && f.buf[8 + hlen - 1] != '\0',
     "header length %llu is a multiple of 8 and starts with '{'", (unsigned long long)hlen);
  ok(f.n == ST_NDTYPES + 2, "%d tensors read back", f.n);

  int exact = 1;
  for (int d = 0; d < ST_NDTYPES; d++) {
    char name[32];
    snprintf(name, sizeof name, "t.%s", st_dtype_name((StDtype)d));
    const StTensor *t = st_find(&f, name);
    int nd = 1 + d % 3;
    size_t numel = 1;
    for (int k = 0; k < nd; k++) numel *= (size_t)shape[2 - d % 3 + k];
    exact &= t && t->dtype == (StDtype)d && t->ndim == nd && t->numel == numel &&
             t->nbytes == numel * st_dtype_size((StDtype)d) &&
             memcmp(t->shape, shape + 2 - d % 3, (size_t)nd * sizeof *shape) == 0 &&
             memcmp(t->data, bytes[d], t->nbytes) == 0;
  }
  ok(exact, "every dtype comes back bit for bit with its shape");
  const StTensor *s = st_find(&f, "a.scalar"), *e = st_find(&f, "a.empty");
  ok(s && s->ndim == 0 && s->numel == 1 && memcmp(s->data, &scalar, 4) == 0, "scalar round trip");
  ok(e && e->ndim == 2 && e->numel == 0 && e->nbytes == 0, "empty tensor round trip");
  ok(st_meta(&f, "note") && strcmp(st_meta(&f, "note"), "replaced") == 0 &&
         st_meta(&f, "unicode") && strcmp(st_meta(&f, "unicode"), "\xce\xbb = 1") == 0 &&
         !st_meta(&f, "absent"),
     "metadata round trip (a key set twice keeps the last value)");
  /* Name order is file order: the data offsets grow with the names. */
  int ordered = 1;
  for (int i = 0; i < f.n; i++)
    for (int j = 0; j < f.n; j++)
      if (strcmp(f.tensors[i].name, f.tensors[j].name) < 0 && f.tensors[i].nbytes > 0 &&
          f.tensors[j].nbytes > 0)
        ordered &= f.tensors[i].data < f.tensors[j].data;
  ok(ordered, "tensors are laid out in name order");
  st_free(&f);
}

/* ---------------------------------------------------------------- to_f32 */

static void test_to_f32(void) {
  uint16_t half[] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x8400, 0x7c00, 0x0000, 0x8000, 0x3555};
  float want[] = {1.0f, -2.0f, 65504.0f, 5.9604645e-8f, -6.1035156e-5f, INFINITY, 0.0f, -0.0f,
                  0.33325195f};
  uint16_t bf[] = {0x3f80, 0xc040, 0x7f80, 0x0001};
  float bwant[] = {1.0f, -3.0f, INFINITY, 9.18355e-41f};
  double dbl[] = {0.1, -1e300, 1e-50};
  float out[9];
  Err err = {{0}};

  StTensor t = {.name = "h", .dtype = ST_F16, .ndim = 1, .numel = 9, .data = (uint8_t *)half};
  int good = st_to_f32(&t, out, 9, &err) == 0;
  for (int i = 0; i < 9; i++) good &= out[i] == want[i] && signbit(out[i]) == signbit(want[i]);
  ok(good, "F16 -> F32: normals, subnormal, max, inf, signed zero");
  uint16_t nan16 = 0x7e01;
  t.data = (uint8_t *)&nan16;
  t.numel = 1;
  ok(st_to_f32(&t, out, 1, &err) == 0 && isnan(out[0]), "F16 NaN stays NaN");

  t = (StTensor){.name = "b", .dtype = ST_BF16, .ndim = 1, .numel = 4, .data = (uint8_t *)bf};
  good = st_to_f32(&t, out, 4, &err) == 0;
  for (int i = 0; i < 4; i++) good &= out[i] == bwant[i];
  ok(good, "BF16 -> F32");

  t = (StTensor){.name = "d", .dtype = ST_F64, .ndim = 1, .numel = 3, .data = (uint8_t *)dbl};
  ok(st_to_f32(&t, out, 3, &err) == 0 && out[0] == 0.1f && isinf(out[1]) && out[1] < 0 &&
         out[2] == 0.0f,
     "F64 -> F32 rounds like a C cast");

  int32_t ints[2] = {1, 2};
  t = (StTensor){.name = "i", .dtype = ST_I32, .ndim = 1, .numel = 2, .data = (uint8_t *)ints};
  ok(st_to_f32(&t, out, 2, &err) != 0 && strstr(err.msg, "not a float type"),
     "I32 refused: %s", err.msg);
  t.dtype = ST_F32;
  ok(st_to_f32(&t, out, 3, &err) != 0 && strstr(err.msg, "expected 3"), "wrong count refused: %s",
     err.msg);
}

/* ---------------------------------------------------------------- hostile files */

/* A file: u64 header length, the header, 'dlen' data bytes. */
static uint8_t *make_file(const char *header, size_t dlen, size_t *len) {
  uint64_t n = strlen(header);
  *len = 8 + n + dlen;
  uint8_t *b = calloc(1, *len);
  memcpy(b, &n, 8);
  memcpy(b + 8, header, n);
  return b;
}

#define T1(extra) "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}" extra "}"

static const struct {
  const char *what, *header;
  size_t dlen;
  const char *expect;
} hostile[] = {
  {"unknown dtype", "{\"a\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
   "unknown dtype"},
  {"I16 (not one of ours)", "{\"a\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4,
   "unknown dtype"},
  {"dtype missing", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype is not a string"},
  {"entry not an object", "{\"a\":[1,2]}", 0, "entry is not an object"},
  {"shape not an array", "{\"a\":{\"dtype\":\"F32\",\"shape\":3,\"data_offsets\":[0,12]}}", 12,
   "shape is not an array"},
  {"negative shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
   "not a non-negative integer"},
  {"fractional shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4,
   "not a non-negative integer"},
  {"string shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", 4,
   "not a non-negative integer"},
  {"too many dims",
   "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 1,
   "more than 8"},
  {"shape product overflow",
   "{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}", 0,
   "shape overflows"},
  {"byte size overflow",
   "{\"a\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,0]}}", 0,
   "shape overflows"},
  {"shape past int64", "{\"a\":{\"dtype\":\"U8\",\"shape\":[99999999999999999999],"
                       "\"data_offsets\":[0,1]}}", 1, "bad JSON"},
  {"one offset", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4,
   "data_offsets is not two"},
  {"three offsets", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8,
   "data_offsets is not two"},
  {"offsets as strings", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[\"0\",\"4\"]}}",
   4, "not two non-negative integers"},
  {"negative offset", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4,
   "not two non-negative integers"},
  {"begin after end", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4,
   "begin after end"},
  {"end beyond the buffer", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
   "beyond the 4-byte buffer"},
  {"huge end offset",
   "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,9223372036854775807]}}", 4,
   "beyond the"},
  {"size mismatch", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4,
   "byte range of 4 bytes"},
  {"overlap", T1(",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}"), 12,
   "overlap"},
  {"same range twice", T1(",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"), 8,
   "overlap"},
  {"empty tensor inside another",
   T1(",\"b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}"), 8, "overlap"},
  {"gap", T1(",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}"), 16,
   "gap of 4 bytes before tensor 'b'"},
  {"gap at the start", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
   "gap of 4 bytes"},
  {"trailing bytes", T1(""), 12, "4 trailing bytes"},
  {"data but no tensors", "{}", 3, "3 trailing bytes"},
  {"duplicate names", T1(",\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}"), 16,
   "duplicate"},
  {"metadata not an object", T1(",\"__metadata__\":[1]"), 8, "__metadata__ is not an object"},
  {"metadata value a number", T1(",\"__metadata__\":{\"k\":1}"), 8, "value of 'k' is not a string"},
  {"metadata value an object", T1(",\"__metadata__\":{\"k\":{}}"), 8, "not a string"},
  {"duplicate metadata key", T1(",\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}"), 8, "duplicate"},
  {"newline in a name", "{\"a\\nb\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
   "tensor 'a?b': unknown dtype"},
  {"not '{'", "[1,2]", 0, "does not start with '{'"},
  {"leading space", " {}", 0, "does not start with '{'"},
  {"bad JSON", "{\"a\":", 0, "bad JSON"},
  {"trailing garbage", "{} x", 0, "bad JSON"},
  {"NUL in a name", "{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
   "bad JSON"},
  {"invalid UTF-8", "{\"\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
   "bad JSON"},
};

static void check_rejected(uint8_t *b, size_t len, const char *what, const char *expect) {
  StFile f;
  Err err = {{0}};
  int rc = st_parse(&f, b, len, "x.st", &err);
  ok(rc != 0 && starts_with(err.msg, "x.st: ") && strstr(err.msg, expect), "%s: %s", what,
     err.msg);
  if (rc == 0) st_free(&f);
}

static void test_hostile(void) {
  size_t len;
  for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
    uint8_t *b = make_file(hostile[i].header, hostile[i].dlen, &len);
    check_rejected(b, len, hostile[i].what, hostile[i].expect);
  }

  uint8_t *b = calloc(1, 5);
  check_rejected(b, 5, "5-byte file", "shorter than the 8-byte");
  b = make_file("{}", 0, &len);
  uint64_t n = 100;
  memcpy(b, &n, 8);
  check_rejected(b, len, "header length past the end", "past the end of the file");
  b = make_file("{}", 0, &len);
  n = UINT64_MAX;
  memcpy(b, &n, 8);
  check_rejected(b, len, "header length 2^64-1", "absurd");
  b = make_file("{}", 0, &len);
  n = 100000001;
  memcpy(b, &n, 8);
  check_rejected(b, len, "header length just over 100 MB", "absurd");
  b = make_file("", 0, &len);
  check_rejected(b, len, "empty header", "does not start with '{'");

  /* The smallest legal files are accepted. */
  StFile f;
  Err err = {{0}};
  b = make_file("{}", 0, &len);
  ok(st_parse(&f, b, len, "x", &err) == 0 && f.n == 0, "'{}' with no data is a valid empty file");
  st_free(&f);
  b = make_file(T1(",\"__metadata__\":null") "    ", 8, &len);
  ok(st_parse(&f, b, len, "x", &err) == 0 && f.n == 1 && f.n_meta == 0,
     "null metadata and trailing spaces accepted (%s)", err.msg);
  st_free(&f);
}

/* A valid file with a few tensors and metadata, written by the writer. */
static void write_sample(const char *path, Rng *r) {
  static float a[12], b[3];
  static uint16_t c[8];
  static int64_t d[2];
  int64_t sa[2] = {3, 4}, sb[1] = {3}, sc[3] = {2, 2, 2}, sd[1] = {2};
  for (int i = 0; i < 12; i++) a[i] = (float)rng_normal(r);
  for (int i = 0; i < 3; i++) b[i] = (float)i;
  for (int i = 0; i < 8; i++) c[i] = (uint16_t)rng_u64(r);
  d[0] = -7;
  d[1] = 1LL << 40;
  Err err;
  StWriter *w = st_writer_new();
  st_writer_add(w, "transformer.wte.weight", ST_F32, 2, sa, a, &err);
  st_writer_add(w, "b", ST_F32, 1, sb, b, &err);
  st_writer_add(w, "c", ST_BF16, 3, sc, c, &err);
  st_writer_add(w, "d", ST_I64, 1, sd, d, &err);
  st_writer_meta(w, "n_head", "4", &err);
  st_writer_meta(w, "tie", "tied", &err);
  if (st_writer_write(w, path, &err) != 0) diag("write_sample: %s", err.msg);
  st_writer_free(w);
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  *len = (size_t)ftell(fp);
  rewind(fp);
  uint8_t *b = malloc(*len);
  if (fread(b, 1, *len, fp) != *len) *len = 0;
  fclose(fp);
  return b;
}

static void test_truncated(Rng *r) {
  char path[512], cut[512];
  write_sample(path_in(path, sizeof path, "sample.safetensors"), r);
  size_t len;
  uint8_t *b = slurp(path, &len);
  uint64_t n;
  memcpy(&n, b, 8);
  size_t cuts[] = {0, 1, 7, 8, 9, 8 + n / 2, 8 + n - 1, 8 + n, 8 + n + 1, len / 2 + n / 2, len - 1};
  int all = 1;
  char why[ERR_MSG_MAX] = "";
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
    FILE *fp = fopen(path_in(cut, sizeof cut, "cut.safetensors"), "wb");
    fwrite(b, 1, cuts[i], fp);
    fclose(fp);
    StFile f;
    Err err = {{0}};
    if (st_read(&f, cut, &err) == 0) {
      all = 0;
      snprintf(why, sizeof why, "cut at %zu was accepted", cuts[i]);
      st_free(&f);
    } else if (!starts_with(err.msg, cut)) {
      all = 0;
      snprintf(why, sizeof why, "message does not name the file: %.400s", err.msg);
    }
  }
  ok(all, "a valid %zu-byte file cut at %zu points is rejected each time %s", len,
     sizeof cuts / sizeof *cuts, why);

  StFile f;
  Err err = {{0}};
  ok(st_read(&f, path, &err) == 0 && f.n == 4, "the uncut file reads (%s)", err.msg);
  if (f.buf) st_free(&f);
  ok(st_read(&f, path_in(cut, sizeof cut, "absent.safetensors"), &err) != 0 &&
         starts_with(err.msg, cut) && strstr(err.msg, "no such file"),
     "missing file: %s", err.msg);
  ok(st_read(&f, dir, &err) != 0 && strstr(err.msg, "not a regular file"), "a folder: %s",
     err.msg);
  free(b);
}

/* ---------------------------------------------------------------- mutations */

/* After a successful parse every tensor must lie inside the buffer. */
static int sane(const StFile *f) {
  const uint8_t *end = f->buf + f->len;
  for (int i = 0; i < f->n; i++) {
    const StTensor *t = &f->tensors[i];
    if (t->data < f->buf || t->data > end || t->nbytes > (size_t)(end - t->data)) return 0;
    if (t->nbytes != t->numel * st_dtype_size(t->dtype)) return 0;
  }
  return 1;
}

/* The sample file's bytes, and its header's length. */
static uint8_t *sample_bytes(Rng *r, size_t *len, uint64_t *hlen) {
  char path[512];
  write_sample(path_in(path, sizeof path, "sample.safetensors"), r);
  uint8_t *b = slurp(path, len);
  memcpy(hlen, b, 8);
  return b;
}

/* A copy of 'orig' with a few bytes changed, sometimes cut short too. */
static uint8_t *mutant(Rng *r, const uint8_t *orig, size_t len, uint64_t hlen, size_t *blen) {
  uint8_t *b = malloc(len);
  memcpy(b, orig, len);
  int flips = 1 + (int)rng_below(r, 4);
  for (int k = 0; k < flips; k++) {
    /* Mostly the header, where the parsing happens; sometimes anywhere. */
    size_t at = rng_below(r, 4) ? rng_below(r, 8 + hlen) : rng_below(r, len);
    b[at] = rng_below(r, 2) ? (uint8_t)rng_u64(r) : (uint8_t)(b[at] ^ (1u << rng_below(r, 8)));
  }
  *blen = rng_below(r, 8) ? len : rng_below(r, len + 1);
  return b;
}

static void test_mutations(Rng *r) {
  size_t len, blen;
  uint64_t hlen;
  uint8_t *orig = sample_bytes(r, &len, &hlen);
  int rounds = 4000, accepted = 0, clean = 1;
  for (int i = 0; i < rounds && clean; i++) {
    uint8_t *b = mutant(r, orig, len, hlen, &blen);
    StFile f;
    Err err = {{0}};
    if (st_parse(&f, b, blen, "m", &err) == 0) {
      accepted++;
      clean &= sane(&f);
      st_free(&f);
    } else {
      clean &= starts_with(err.msg, "m: ") && strlen(err.msg) > 3;
      if (!clean) diag("round %d: %s", i, err.msg);
    }
  }
  ok(clean, "%d random mutations: each one read cleanly or refused with a message (%d read)",
     rounds, accepted);
  free(orig);
}

/* ---------------------------------------------------------------- writer */

static int count_entries(const char *d) {
  DIR *dp = opendir(d);
  int n = 0;
  if (!dp) return -1;
  for (struct dirent *e; (e = readdir(dp));) n += e->d_name[0] != '.';
  closedir(dp);
  return n;
}

/* In a child (as 'nobody' when root, since root ignores permissions), try to
** replace 'path' inside read-only 'ro'. Exit 0: refused as it should be,
** 1: not refused, 77: cannot drop privileges here. */
static int write_as_other_user(const char *path) {
  fflush(stdout);   /* or the child repeats what is buffered */
  pid_t pid = fork();
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(77);
    float x = 1;
    int64_t one = 1;
    Err err = {{0}};
    StWriter *w = st_writer_new();
    st_writer_add(w, "x", ST_F32, 1, &one, &x, &err);
    int rc = st_writer_write(w, path, &err);
    st_writer_free(w);
    printf("# child: %s\n", rc ? err.msg : "written");
    fflush(stdout);
    _exit(rc != 0 && starts_with(err.msg, path) ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return 77;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void test_writer(Rng *r) {
  char path[512], sub[512], target[600];
  Err err = {{0}};
  float x = 0;
  int64_t one = 1;
  StWriter *w = st_writer_new();
  ok(st_writer_add(w, "__metadata__", ST_F32, 1, &one, &x, &err) != 0, "'__metadata__' refused "
     "as a tensor name: %s", err.msg);
  ok(st_writer_add(w, "x", ST_F32, 9, &one, &x, &err) != 0, "9 dims refused: %s", err.msg);
  ok(st_writer_add(w, "bad\xff", ST_F32, 1, &one, &x, &err) != 0, "invalid UTF-8 refused: %s",
     err.msg);
  ok(st_writer_add(w, "x", ST_F32, 1, &one, &x, &err) == 0 &&
         st_writer_add(w, "x", ST_F32, 1, &one, &x, &err) != 0,
     "a name added twice is refused: %s", err.msg);

  /* Writing over a folder fails at the rename; the temporary file goes. */
  path_in(sub, sizeof sub, "sub");
  mkdir(sub, 0755);
  snprintf(target, sizeof target, "%s/x.safetensors", sub);
  mkdir(target, 0755);
  ok(st_writer_write(w, target, &err) != 0 && starts_with(err.msg, target) &&
         count_entries(sub) == 1,
     "writing over a folder fails and leaves no temporary file: %s", err.msg);
  rmdir(target);
  snprintf(target, sizeof target, "%s/none/x.safetensors", dir);
  ok(st_writer_write(w, target, &err) != 0 && starts_with(err.msg, target),
     "a missing folder: %s", err.msg);
  st_writer_free(w);

  /* Replacing a file inside a read-only folder fails; the old file stays. */
  write_sample(path_in(path, sizeof path, "sub/old.safetensors"), r);
  size_t len0, len1;
  uint8_t *before = slurp(path, &len0);
  chmod(dir, 0755);   /* the other user must reach 'sub' */
  chmod(sub, 0555);
  int rc = write_as_other_user(path);
  chmod(sub, 0755);
  uint8_t *after = slurp(path, &len1);
  if (rc == 77)
    skip("cannot write as another user here");
  else
    ok(rc == 0 && after && len0 == len1 && memcmp(before, after, len0) == 0 &&
           count_entries(sub) == 1,
       "replacing a file in a read-only folder fails cleanly and the old file is intact");
  free(before);
  free(after);
}

/* ---------------------------------------------------------------- save targets */

static int one_tensor_file(const char *path, Err *err) {
  static const float x[2] = {1, 2};
  int64_t two = 2;
  StWriter *w = st_writer_new();
  int rc = st_writer_add(w, "x", ST_F32, 1, &two, x, err);
  if (rc == 0) rc = st_writer_write(w, path, err);
  st_writer_free(w);
  return rc;
}

static int is_kind(const char *path, mode_t kind) {
  struct stat sb;
  return lstat(path, &sb) == 0 && (sb.st_mode & S_IFMT) == kind;
}

/* A save replaces a regular file, follows a link to one, and refuses the
** rest with one line naming the path. */
static void test_targets(void) {
  char fifo[512], file[512], link[512], bad_link[512], dangling[512];
  Err err = {{0}};
  path_in(fifo, sizeof fifo, "fifo.safetensors");
  ok(mkfifo(fifo, 0644) == 0 && one_tensor_file(fifo, &err) != 0 && starts_with(err.msg, fifo) &&
         strstr(err.msg, "FIFO") && !strchr(err.msg, '\n') && is_kind(fifo, S_IFIFO),
     "a FIFO is not replaced: %s", err.msg);

  path_in(file, sizeof file, "real.safetensors");
  path_in(link, sizeof link, "link.safetensors");
  StFile f;
  int linked = one_tensor_file(file, &err) == 0 && symlink("real.safetensors", link) == 0;
  struct stat before, after;
  stat(file, &before);
  int wrote = linked && one_tensor_file(link, &err) == 0;
  stat(file, &after);
  ok(wrote && is_kind(link, S_IFLNK) && before.st_ino != after.st_ino && st_read(&f, link, &err) == 0,
     "a link to a regular file is followed: the target is replaced, the link stays %s", wrote ? "" : err.msg);
  if (wrote) st_free(&f);
  path_in(bad_link, sizeof bad_link, "tofifo.safetensors");
  ok(symlink("fifo.safetensors", bad_link) == 0 && one_tensor_file(bad_link, &err) != 0 &&
         starts_with(err.msg, bad_link) && is_kind(fifo, S_IFIFO) && is_kind(bad_link, S_IFLNK),
     "a link to a FIFO is refused: %s", err.msg);
  path_in(dangling, sizeof dangling, "dangling.safetensors");
  ok(symlink("nowhere/x", dangling) == 0 && one_tensor_file(dangling, &err) != 0 &&
         starts_with(err.msg, dangling) && is_kind(dangling, S_IFLNK),
     "a link pointing nowhere is refused: %s", err.msg);
}

/* A writer killed mid-save leaves "<target>.tmp.<pid>.<n>"; the next save
** of that target removes it when its process is gone, and nothing else. */
static void test_stale_temps(void) {
  char target[512], dead[600], live[600], other[600], unrelated[600];
  Err err = {{0}};
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, NULL, 0);   /* 'child' is now a pid no process has */
  path_in(target, sizeof target, "t.safetensors");
  snprintf(dead, sizeof dead, "%s.tmp.%ld.0", target, (long)child);
  snprintf(live, sizeof live, "%s.tmp.%ld.7", target, (long)getppid());
  snprintf(other, sizeof other, "%s/u.safetensors.tmp.%ld.0", dir, (long)child);
  snprintf(unrelated, sizeof unrelated, "%s.tmp.%ld.0.keep", target, (long)child);
  char fresh[600];
  snprintf(fresh, sizeof fresh, "%s.tmp.%ld.1", target, (long)child);
  const char *all[] = {dead, live, other, unrelated, fresh};
  struct timeval old[2] = {{time(NULL) - 120, 0}, {time(NULL) - 120, 0}};
  for (int i = 0; i < 5; i++) {
    FILE *f = fopen(all[i], "w");
    if (f) fclose(f);
    if (i < 4) utimes(all[i], old);   /* two minutes quiet; 'fresh' was written just now */
  }
  int rc = one_tensor_file(target, &err);
  ok(rc == 0 && access(dead, F_OK) != 0, "a dead writer's temporary file is removed %s", rc ? err.msg : "");
  ok(access(live, F_OK) == 0 && access(other, F_OK) == 0 && access(unrelated, F_OK) == 0,
     "a live process's, another target's and an odd name's are kept");
  ok(access(fresh, F_OK) == 0, "and so is one written in the last minute (its writer may be on another host)");
  for (int i = 0; i < 5; i++) unlink(all[i]);

  chmod(target, 0600);
  rc = one_tensor_file(target, &err);
  struct stat sb;
  ok(rc == 0 && stat(target, &sb) == 0 && (sb.st_mode & 07777) == 0600,
     "a file replaced keeps its permissions (%o)", (unsigned)(sb.st_mode & 07777));
}

/* ---------------------------------------------------------------- main */

static void remove_tree(const char *d) {
  DIR *dp = opendir(d);
  if (!dp) return;
  char p[1024];
  for (struct dirent *e; (e = readdir(dp));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", d, e->d_name);
    struct stat sb;
    if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) remove_tree(p);
    else unlink(p);
  }
  closedir(dp);
  rmdir(d);
}

/* ---------------------------------------------------------------- header only */

static int write_bytes(const char *path, const uint8_t *b, size_t len) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return -1;
  int rc = fwrite(b, 1, len, fp) == len ? 0 : -1;
  return fclose(fp) == 0 ? rc : -1;
}

/* st_read_header refuses what st_parse refuses, for the same reason, the
** file named. */
static void test_header_hostile(void) {
  char path[512];
  path_in(path, sizeof path, "hostile.safetensors");
  int all = 1;
  for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
    size_t len;
    uint8_t *b = make_file(hostile[i].header, hostile[i].dlen, &len);
    StHeader h;
    Err err = {{0}};
    if (write_bytes(path, b, len) != 0) {
      all = 0;
      diag("cannot write %s", path);
    } else if (st_read_header(&h, path, &err) == 0) {
      all = 0;
      diag("%s: accepted", hostile[i].what);
      st_header_free(&h);
    } else if (!starts_with(err.msg, path) || !strstr(err.msg, hostile[i].expect)) {
      all = 0;
      diag("%s: %s", hostile[i].what, err.msg);
    }
    free(b);
  }
  ok(all, "st_read_header refuses each of %zu hostile headers as st_parse does",
     sizeof hostile / sizeof *hostile);
}

/* The entries of a header agree with the tensors st_read finds. */
static int header_matches(const StHeader *h, const StFile *f) {
  if (h->n != f->n || h->file_size != f->len) return 0;
  for (int i = 0; i < h->n; i++) {
    const StEntry *e = &h->entries[i];
    const StTensor *t = st_find(f, e->name);
    if (!t || t->dtype != e->dtype || t->ndim != e->ndim || t->nbytes != e->nbytes || t->numel != e->numel ||
        (uint64_t)(t->data - f->buf) != e->offset || memcmp(t->shape, e->shape, sizeof e->shape) != 0)
      return 0;
    if (st_header_find(h, e->name) != e) return 0;
  }
  return 1;
}

/* Mutated and cut files: the header reader and the whole-file reader
** accept and refuse the same ones, and agree on what they accept. */
static void test_header_agrees(Rng *r) {
  char mut[512];
  path_in(mut, sizeof mut, "mutated.safetensors");
  size_t len, blen;
  uint64_t hlen;
  uint8_t *orig = sample_bytes(r, &len, &hlen);
  int rounds = 300, same = 1, accepted = 0;
  for (int i = 0; i < rounds && same; i++) {
    uint8_t *b = i == 0 ? NULL : mutant(r, orig, len, hlen, &blen);   /* the first one whole */
    write_bytes(mut, b ? b : orig, b ? blen : len);
    free(b);
    StFile f;
    StHeader h;
    Err e1 = {{0}}, e2 = {{0}};
    int whole = st_read(&f, mut, &e1), head = st_read_header(&h, mut, &e2);
    if (whole == 0 && head == 0) {
      accepted++;
      same &= header_matches(&h, &f);
    } else {
      same &= whole != 0 && head != 0 && strcmp(e1.msg, e2.msg) == 0;
    }
    if (!same) diag("round %d: '%s' against '%s'", i, e1.msg, e2.msg);
    if (whole == 0) st_free(&f);
    if (head == 0) st_header_free(&h);
  }
  ok(same, "%d mutated files: the header alone accepted and refused as the whole file (%d accepted)", rounds,
     accepted);
  free(orig);
}

/* st_pread_f32 gives what st_to_f32 gives, across chunks of rows, for
** every float dtype; a shrunk file and an integer dtype are refused. */
static void test_pread_f32(Rng *r) {
  enum { ROWS = 700, COLS = 1001, N = ROWS * COLS };   /* past one 1 MB chunk in every dtype */
  static const StDtype kinds[] = {ST_F32, ST_F64, ST_F16, ST_BF16};
  uint8_t *bytes = malloc((size_t)N * 8);
  float *want = malloc((size_t)N * sizeof *want), *got = malloc((size_t)N * sizeof *got);
  char path[512];
  path_in(path, sizeof path, "pread.safetensors");
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    for (size_t i = 0; i < (size_t)N * 8; i++) bytes[i] = (uint8_t)rng_u64(r);
    Err err = {{0}};
    int64_t shape[2] = {ROWS, COLS}, three[1] = {3};
    StWriter *w = st_writer_new();
    st_writer_add(w, "pad", ST_U8, 1, three, bytes, &err);   /* "x" then starts at an odd offset */
    st_writer_add(w, "x", kinds[k], 2, shape, bytes, &err);
    int rc = st_writer_write(w, path, &err);
    st_writer_free(w);
    StFile f;
    StHeader h;
    if (rc == 0) rc = st_read(&f, path, &err);
    if (rc == 0 && (rc = st_read_header(&h, path, &err)) != 0) st_free(&f);
    if (rc != 0) {
      ok(0, "%s file written and read: %s", st_dtype_name(kinds[k]), err.msg);
      continue;
    }
    const StEntry *e = st_header_find(&h, "x");
    st_to_f32(st_find(&f, "x"), want, N, &err);
    FILE *fp = fopen(path, "rb");
    rc = st_pread_f32(fileno(fp), e->dtype, e->offset, N, COLS, got, "x", &err);
    ok(rc == 0 && memcmp(want, got, (size_t)N * sizeof *got) == 0, "%s read by rows at offset %llu: %d values bit for bit %s",
       st_dtype_name(kinds[k]), (unsigned long long)e->offset, N, err.msg);
    if (kinds[k] == ST_BF16) {
      ok(st_pread_f32(fileno(fp), e->dtype, e->offset + 2, N, COLS, got, "x", &err) != 0 &&
             strstr(err.msg, "x: file shrank"),
         "reading past the end is refused: %s", err.msg);
      const StEntry *pad = st_header_find(&h, "pad");
      ok(st_pread_f32(fileno(fp), pad->dtype, pad->offset, 3, 3, got, "pad", &err) != 0 &&
             strstr(err.msg, "pad: dtype U8 is not a float type"),
         "an integer tensor is refused: %s", err.msg);
    }
    fclose(fp);
    st_free(&f);
    st_header_free(&h);
  }
  free(bytes);
  free(want);
  free(got);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/tielab-st-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return bail_out("cannot create a temporary folder in %s", dir);
  Rng r;
  rng_seed(&r, 20240611);
  test_round_trip(&r);
  test_to_f32();
  test_hostile();
  test_truncated(&r);
  test_mutations(&r);
  test_header_hostile();
  test_header_agrees(&r);
  test_pread_f32(&r);
  test_writer(&r);
  test_targets();
  test_stale_temps();
  remove_tree(dir);
  return tap_done();
}
