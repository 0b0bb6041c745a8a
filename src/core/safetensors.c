/*
** safetensors.c -- see safetensors.h.
**
** File layout: [u64 little-endian N] [N bytes of JSON] [byte buffer]. The
** JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin,
** end]} (offsets relative to the buffer), plus an optional "__metadata__"
** object of strings. The reader follows the reference implementation's rule:
** sorted by offset, the tensors must tile the buffer from 0 to its end with
** no gap and no overlap, so every byte of the file is accounted for.
*/
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/replace.h"
#include "base/safeopen.h"
#include "base/utf8.h"
#include "core/safetensors.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c copies tensor bytes as they are: it needs a little-endian host"
#endif

/* The reference implementation refuses headers above 100 MB. */
#define ST_MAX_HEADER 100000000ULL

/* ---------------------------------------------------------------- dtypes */

typedef void (*ToF32)(const uint8_t *src, float *dst, size_t n);

static void f32_to_f32(const uint8_t *src, float *dst, size_t n) {
  memcpy(dst, src, n * sizeof(float));
}

static void f64_to_f32(const uint8_t *src, float *dst, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double x;
    memcpy(&x, src + 8 * i, 8);   /* tensors need not be aligned in the file */
    dst[i] = (float)x;
  }
}

/* IEEE half: 1 sign, 5 exponent (bias 15), 10 mantissa bits. */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  uint32_t bits;
  float f;
  if (exp == 0) {   /* zero or subnormal: man * 2^-24, exact in float */
    f = ldexpf((float)man, -24);
    return sign ? -f : f;
  }
  if (exp == 31)
    bits = sign | 0x7f800000u | (man << 13);   /* inf, NaN (payload kept) */
  else
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  memcpy(&f, &bits, 4);
  return f;
}

static void f16_to_f32(const uint8_t *src, float *dst, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h;
    memcpy(&h, src + 2 * i, 2);
    dst[i] = half_to_float(h);
  }
}

/* bfloat16 is the top half of a float32. */
static void bf16_to_f32(const uint8_t *src, float *dst, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h;
    memcpy(&h, src + 2 * i, 2);
    uint32_t bits = (uint32_t)h << 16;
    memcpy(&dst[i], &bits, 4);
  }
}

static const struct {
  const char *name;
  size_t size;
  ToF32 to_f32;   /* NULL: not a float type */
} dtypes[ST_NDTYPES] = {
  [ST_F32] = {"F32", 4, f32_to_f32},  [ST_F64] = {"F64", 8, f64_to_f32},
  [ST_I32] = {"I32", 4, NULL},        [ST_I64] = {"I64", 8, NULL},
  [ST_U8] = {"U8", 1, NULL},          [ST_F16] = {"F16", 2, f16_to_f32},
  [ST_BF16] = {"BF16", 2, bf16_to_f32},
};

const char *st_dtype_name(StDtype d) {
  return (unsigned)d < ST_NDTYPES ? dtypes[d].name : "?";
}

size_t st_dtype_size(StDtype d) {
  return (unsigned)d < ST_NDTYPES ? dtypes[d].size : 0;
}

static int dtype_lookup(const char *name) {
  for (int d = 0; d < ST_NDTYPES; d++)
    if (strcmp(dtypes[d].name, name) == 0) return d;
  return -1;
}

/* Element count and byte size of a shape, or -1 when either overflows. */
static int shape_size(StDtype dtype, int ndim, const int64_t *shape, size_t *numel,
                      size_t *nbytes) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (uint64_t)shape[i] > SIZE_MAX) return -1;
    if (shape[i] != 0 && n > SIZE_MAX / (size_t)shape[i]) return -1;
    n *= (size_t)shape[i];
  }
  if (n > SIZE_MAX / dtypes[dtype].size) return -1;
  *numel = n;
  *nbytes = n * dtypes[dtype].size;
  return 0;
}

/* ---------------------------------------------------------------- reader */

/* Read all of 'path' (opened with safeopen.h's 'flags') into a malloc'd
** buffer. */
static int read_file(const char *path, int flags, uint8_t **buf, size_t *len, Err *err) {
  struct stat sb;
  int fd = safeopen_read(path, flags, &sb, err);
  if (fd < 0) return -1;
  size_t n = (size_t)sb.st_size, got = 0;
  uint8_t *b = malloc(n ? n : 1);
  if (!b) {
    close(fd);
    return err_set(err, "%s: out of memory reading %zu bytes", path, n);
  }
  while (got < n) {
    ssize_t r = read(fd, b + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : 0;
      free(b);
      close(fd);
      return err_set(err, "%s: %s", path, e ? strerror(e) : "file shrank while being read");
    }
    got += (size_t)r;
  }
  close(fd);
  *buf = b;
  *len = n;
  return 0;
}

/* A non-negative JSON integer, else -1. */
static int64_t json_count(const json_t *v) {
  if (!json_is_integer(v)) return -1;
  json_int_t x = json_integer_value(v);
  return x < 0 ? -1 : (int64_t)x;
}

/* Fill 'e' from one header entry; 'dlen' is the byte buffer's length, and
** e->offset is left relative to the buffer. */
static int parse_entry(StEntry *e, const char *name, json_t *v, size_t dlen, Err *err) {
  if (!json_is_object(v)) return err_set(err, "tensor '%s': entry is not an object", name);
  json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape");
  json_t *off = json_object_get(v, "data_offsets");

  if (!json_is_string(dt)) return err_set(err, "tensor '%s': dtype is not a string", name);
  int d = dtype_lookup(json_string_value(dt));
  if (d < 0)
    return err_set(err, "tensor '%s': unknown dtype '%.32s'", name, json_string_value(dt));
  e->dtype = (StDtype)d;

  if (!json_is_array(sh)) return err_set(err, "tensor '%s': shape is not an array", name);
  if (json_array_size(sh) > ST_MAX_DIMS)
    return err_set(err, "tensor '%s': %zu dims, more than %d", name, json_array_size(sh),
                   ST_MAX_DIMS);
  e->ndim = (int)json_array_size(sh);
  for (int i = 0; i < e->ndim; i++) {
    e->shape[i] = json_count(json_array_get(sh, (size_t)i));
    if (e->shape[i] < 0)
      return err_set(err, "tensor '%s': shape entry %d is not a non-negative integer", name, i);
  }
  if (shape_size(e->dtype, e->ndim, e->shape, &e->numel, &e->nbytes) != 0)
    return err_set(err, "tensor '%s': shape overflows", name);

  if (!json_is_array(off) || json_array_size(off) != 2)
    return err_set(err, "tensor '%s': data_offsets is not two integers", name);
  int64_t begin = json_count(json_array_get(off, 0)), end = json_count(json_array_get(off, 1));
  if (begin < 0 || end < 0)
    return err_set(err, "tensor '%s': data_offsets is not two non-negative integers", name);
  if (begin > end)
    return err_set(err, "tensor '%s': data_offsets [%lld, %lld] begin after end", name,
                   (long long)begin, (long long)end);
  if ((uint64_t)end > dlen)
    return err_set(err, "tensor '%s': data_offsets end %lld is beyond the %zu-byte buffer", name,
                   (long long)end, dlen);
  if ((uint64_t)(end - begin) != e->nbytes)
    return err_set(err, "tensor '%s': byte range of %lld bytes but %s x %zu elements is %zu", name,
                   (long long)(end - begin), dtypes[d].name, e->numel, e->nbytes);
  e->offset = (uint64_t)begin;
  return 0;
}

static int parse_meta(StFile *f, json_t *meta, Err *err) {
  if (json_is_null(meta)) return 0;   /* the reference writer's "no metadata" */
  if (!json_is_object(meta)) return err_set(err, "__metadata__ is not an object");
  size_t n = json_object_size(meta);
  f->meta_keys = calloc(n ? n : 1, sizeof(char *));
  f->meta_vals = calloc(n ? n : 1, sizeof(char *));
  if (!f->meta_keys || !f->meta_vals) return err_set(err, "out of memory");
  const char *key;
  json_t *v;
  json_object_foreach(meta, key, v) {
    if (!json_is_string(v)) return err_set(err, "__metadata__ value of '%s' is not a string", key);
    char *k = strdup(key), *s = strdup(json_string_value(v));
    f->meta_keys[f->n_meta] = k;
    f->meta_vals[f->n_meta] = s;
    f->n_meta++;   /* counted even on failure so that st_free frees both */
    if (!k || !s) return err_set(err, "out of memory");
  }
  return 0;
}

static int by_offset(const void *a, const void *b) {
  const StEntry *x = a, *y = b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

/* Sorted by offset, the entries must tile [0, dlen) exactly. */
static int check_coverage(StHeader *h, size_t dlen, Err *err) {
  qsort(h->entries, (size_t)h->n, sizeof *h->entries, by_offset);
  uint64_t pos = 0;
  for (int i = 0; i < h->n; i++) {
    const StEntry *e = &h->entries[i];
    if (e->offset < pos)
      return err_set(err, "tensors '%s' and '%s' overlap", h->entries[i - 1].name, e->name);
    if (e->offset > pos)
      return err_set(err, "gap of %llu bytes before tensor '%s'",
                     (unsigned long long)(e->offset - pos), e->name);
    pos = e->offset + e->nbytes;
  }
  if (pos != dlen)
    return err_set(err, "%llu trailing bytes after the last tensor", (unsigned long long)(dlen - pos));
  return 0;
}

/* The entries of header 'root' over a 'dlen'-byte buffer, sorted by offset
** (relative to the buffer); __metadata__ goes to 'meta'. */
static int parse_entries(StHeader *h, json_t *root, size_t dlen, StFile *meta, Err *err) {
  if (!json_is_object(root)) return err_set(err, "header is not a JSON object");
  size_t n = json_object_size(root);
  h->entries = calloc(n ? n : 1, sizeof *h->entries);
  if (!h->entries) return err_set(err, "out of memory");
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (strcmp(key, "__metadata__") == 0) {
      if (parse_meta(meta, v, err) != 0) return -1;
      continue;
    }
    StEntry *e = &h->entries[h->n++];
    if (!(e->name = strdup(key))) return err_set(err, "out of memory");
    if (parse_entry(e, key, v, dlen, err) != 0) return -1;
  }
  return check_coverage(h, dlen, err);
}

/* The header length at the start of a 'len'-byte file, checked. */
static int header_length(const uint8_t first8[8], uint64_t len, uint64_t *n, Err *err) {
  if (len < 8) return err_set(err, "file is %llu bytes, shorter than the 8-byte header length",
                              (unsigned long long)len);
  memcpy(n, first8, 8);
  if (*n > ST_MAX_HEADER)
    return err_set(err, "header length %llu is absurd (over %llu bytes)", (unsigned long long)*n,
                   ST_MAX_HEADER);
  if (*n > len - 8)
    return err_set(err, "header length %llu is past the end of the file (%llu bytes)",
                   (unsigned long long)*n, (unsigned long long)len);
  return 0;
}

/* The JSON header of 'n' bytes at 'text' over a 'dlen'-byte buffer. */
static int parse_json_header(StHeader *h, const char *text, uint64_t n, size_t dlen, StFile *meta,
                             Err *err) {
  if (n == 0 || text[0] != '{') return err_set(err, "header does not start with '{'");
  json_error_t je;
  json_t *root = json_loadb(text, (size_t)n, JSON_REJECT_DUPLICATES, &je);
  if (!root) return err_set(err, "bad JSON header at byte %d: %s", je.position, je.text);
  int rc = parse_entries(h, root, dlen, meta, err);
  json_decref(root);
  return rc;
}

static int parse(StFile *f, Err *err) {
  const uint8_t *buf = f->buf;
  size_t len = f->len;
  uint64_t n;
  if (header_length(buf, len, &n, err) != 0) return -1;
  StHeader h = {0};
  const uint8_t *data = buf + 8 + n;
  int rc = parse_json_header(&h, (const char *)buf + 8, n, len - 8 - (size_t)n, f, err);
  if (rc == 0 && !(f->tensors = calloc(h.n ? (size_t)h.n : 1, sizeof *f->tensors)))
    rc = err_set(err, "out of memory");
  for (int i = 0; rc == 0 && i < h.n; i++) {
    StEntry *e = &h.entries[i];
    f->tensors[f->n++] = (StTensor){.name = e->name, .dtype = e->dtype, .ndim = e->ndim,
                                     .numel = e->numel, .data = data + e->offset, .nbytes = e->nbytes};
    memcpy(f->tensors[i].shape, e->shape, sizeof e->shape);
    e->name = NULL;   /* the tensor has it now */
  }
  st_header_free(&h);
  return rc;
}

int st_parse(StFile *f, uint8_t *buf, size_t len, const char *name, Err *err) {
  memset(f, 0, sizeof *f);
  f->buf = buf;
  f->len = len;
  if (parse(f, err) != 0) {
    st_free(f);
    err_prefix(err, "%s", name);
    err_one_line(err);
    return -1;
  }
  return 0;
}

int st_read_flags(StFile *f, const char *path, int flags, Err *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  memset(f, 0, sizeof *f);
  if (read_file(path, flags, &buf, &len, err) != 0) return -1;
  return st_parse(f, buf, len, path, err);
}

int st_read(StFile *f, const char *path, Err *err) { return st_read_flags(f, path, 0, err); }

void st_free(StFile *f) {
  for (int i = 0; i < f->n; i++) free(f->tensors[i].name);
  for (int i = 0; i < f->n_meta; i++) {
    free(f->meta_keys[i]);
    free(f->meta_vals[i]);
  }
  free(f->tensors);
  free(f->meta_keys);
  free(f->meta_vals);
  free(f->buf);
  memset(f, 0, sizeof *f);
}

const StTensor *st_find(const StFile *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
  return NULL;
}

const char *st_meta(const StFile *f, const char *key) {
  for (int i = 0; i < f->n_meta; i++)
    if (strcmp(f->meta_keys[i], key) == 0) return f->meta_vals[i];
  return NULL;
}

const char *st_shape_str(char *buf, size_t size, int ndim, const int64_t *shape) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && n < size; i++)
    n += (size_t)(shape[i] < 0 ? snprintf(buf + n, size - n, "%sN", i ? ", " : "")
                               : snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)shape[i]));
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

int st_to_f32(const StTensor *t, float *dst, size_t n, Err *err) {
  if (!dtypes[t->dtype].to_f32)
    return err_set(err, "tensor '%s': dtype %s is not a float type", t->name,
                   dtypes[t->dtype].name);
  if (n != t->numel)
    return err_set(err, "tensor '%s': %zu elements, expected %zu", t->name, t->numel, n);
  dtypes[t->dtype].to_f32(t->data, dst, n);
  return 0;
}

/* ---------------------------------------------------------------- header only */

/* 'n' bytes at 'offset' of 'fd', all of them. */
static int pread_all(int fd, void *dst, size_t n, uint64_t offset, Err *err) {
  uint8_t *p = dst;
  while (n > 0) {
    ssize_t r = pread(fd, p, n, (off_t)offset);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return err_set(err, "%s", strerror(errno));
    if (r == 0) return err_set(err, "file shrank while being read");
    p += r, n -= (size_t)r, offset += (uint64_t)r;
  }
  return 0;
}

static int read_header_fd(StHeader *h, int fd, uint64_t size, Err *err) {
  uint8_t first8[8] = {0};
  uint64_t n;
  if (pread_all(fd, first8, size < 8 ? (size_t)size : 8, 0, err) != 0) return -1;
  if (header_length(first8, size, &n, err) != 0) return -1;
  char *text = malloc(n ? (size_t)n : 1);
  if (!text) return err_set(err, "out of memory for a %llu-byte header", (unsigned long long)n);
  int rc = pread_all(fd, text, (size_t)n, 8, err);
  if (rc == 0) {
    uint64_t dlen = size - 8 - n;
    if (dlen > SIZE_MAX) rc = err_set(err, "file too large for this machine");
    StFile meta = {0};   /* checked as st_parse checks it, then dropped */
    if (rc == 0) rc = parse_json_header(h, text, n, (size_t)dlen, &meta, err);
    st_free(&meta);
    for (int i = 0; rc == 0 && i < h->n; i++) h->entries[i].offset += 8 + n;
  }
  free(text);
  return rc;
}

int st_read_header(StHeader *h, const char *path, Err *err) {
  struct stat sb;
  memset(h, 0, sizeof *h);
  int fd = safeopen_read(path, 0, &sb, err);
  if (fd < 0) return -1;
  h->file_size = (uint64_t)sb.st_size;
  int rc = read_header_fd(h, fd, h->file_size, err);
  close(fd);
  if (rc != 0) {
    st_header_free(h);
    err_prefix(err, "%s", path);
    err_one_line(err);
  }
  return rc;
}

void st_header_free(StHeader *h) {
  for (int i = 0; i < h->n; i++) free(h->entries[i].name);
  free(h->entries);
  memset(h, 0, sizeof *h);
}

const StEntry *st_header_find(const StHeader *h, const char *name) {
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->entries[i].name, name) == 0) return &h->entries[i];
  return NULL;
}

/* Whole rows of at least this many bytes go through the buffer at once:
** fewer reads for narrow rows, and still no more than a row or two of a
** wide matrix in memory. */
#define ST_CHUNK_BYTES (1u << 20)

int st_pread_f32(int fd, StDtype dtype, uint64_t offset, size_t numel, size_t row, float *dst,
                 const char *what, Err *err) {
  if ((unsigned)dtype >= ST_NDTYPES || !dtypes[dtype].to_f32)
    return err_set(err, "%s: dtype %s is not a float type", what, st_dtype_name(dtype));
  size_t size = dtypes[dtype].size;
  if (row == 0) row = 1;
  size_t rows = ST_CHUNK_BYTES / (row * size);
  size_t chunk = (rows ? rows : 1) * row;
  if (chunk > numel) chunk = numel;
  /* float32 needs no conversion: read straight into place. */
  uint8_t *buf = dtype == ST_F32 ? NULL : malloc(chunk ? chunk * size : 1);
  if (dtype != ST_F32 && !buf) return err_set(err, "%s: out of memory for a row buffer", what);
  int rc = 0;
  for (size_t done = 0; done < numel && rc == 0; done += chunk) {
    size_t k = numel - done < chunk ? numel - done : chunk;
    uint8_t *into = buf ? buf : (uint8_t *)(dst + done);
    rc = pread_all(fd, into, k * size, offset + done * size, err);
    if (rc == 0 && buf) dtypes[dtype].to_f32(buf, dst + done, k);
  }
  free(buf);
  if (rc != 0) err_prefix(err, "%s", what);
  return rc;
}

/* ---------------------------------------------------------------- writer */

typedef struct WEntry {
  char *name;
  StDtype dtype;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  size_t nbytes;
  const void *data;
} WEntry;

struct StWriter {
  WEntry *e;
  int n, n_meta;
  size_t cap, cap_meta;
  char **keys, **vals;
};

StWriter *st_writer_new(void) { return calloc(1, sizeof(StWriter)); }

void st_writer_free(StWriter *w) {
  if (!w) return;
  for (int i = 0; i < w->n; i++) free(w->e[i].name);
  for (int i = 0; i < w->n_meta; i++) {
    free(w->keys[i]);
    free(w->vals[i]);
  }
  free(w->e);
  free(w->keys);
  free(w->vals);
  free(w);
}

int st_writer_add(StWriter *w, const char *name, StDtype dtype, int ndim, const int64_t *shape,
                  const void *data, Err *err) {
  /* JSON strings must be UTF-8: refuse now what jansson would refuse when writing. */
  if (!name || !utf8_valid(name, strlen(name))) return err_set(err, "tensor name is not valid UTF-8");
  if (strcmp(name, "__metadata__") == 0) return err_set(err, "'__metadata__' is not a tensor name");
  if ((unsigned)dtype >= ST_NDTYPES) return err_set(err, "tensor '%s': bad dtype %d", name, dtype);
  if (ndim < 0 || ndim > ST_MAX_DIMS)
    return err_set(err, "tensor '%s': %d dims, not 0..%d", name, ndim, ST_MAX_DIMS);
  for (int i = 0; i < w->n; i++)
    if (strcmp(w->e[i].name, name) == 0) return err_set(err, "tensor '%s' added twice", name);
  WEntry e = {.dtype = dtype, .ndim = ndim, .data = data};
  size_t numel;
  if (ndim > 0) memcpy(e.shape, shape, (size_t)ndim * sizeof *shape);
  if (shape_size(dtype, ndim, e.shape, &numel, &e.nbytes) != 0)
    return err_set(err, "tensor '%s': shape overflows or is negative", name);
  if (e.nbytes > 0 && !data) return err_set(err, "tensor '%s': no data", name);
  if (grow_array((void **)&w->e, &w->cap, (size_t)w->n + 1, sizeof *w->e) != 0 || !(e.name = strdup(name)))
    return err_set(err, "out of memory");
  w->e[w->n++] = e;
  return 0;
}

/* Set 'key' to 'value'; a key set twice keeps the last value. */
int st_writer_meta(StWriter *w, const char *key, const char *value, Err *err) {
  if (!key || !value || !utf8_valid(key, strlen(key)) || !utf8_valid(value, strlen(value)))
    return err_set(err, "metadata is not valid UTF-8");
  char *v = strdup(value);
  if (!v) return err_set(err, "out of memory");
  for (int i = 0; i < w->n_meta; i++)
    if (strcmp(w->keys[i], key) == 0) {
      free(w->vals[i]);
      w->vals[i] = v;
      return 0;
    }
  char *k = strdup(key);
  if (!k || grow_array((void **)&w->keys, &w->cap_meta, (size_t)w->n_meta + 1, sizeof(char *)) != 0) {
    free(k);
    free(v);
    return err_set(err, "out of memory");
  }
  /* 'vals' follows 'keys' in size; grow it to the same capacity. */
  char **vals = realloc(w->vals, w->cap_meta * sizeof(char *));
  if (!vals) {
    free(k);
    free(v);
    return err_set(err, "out of memory");
  }
  w->vals = vals;
  w->keys[w->n_meta] = k;
  w->vals[w->n_meta++] = v;
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const WEntry *)a)->name, ((const WEntry *)b)->name);
}

/* The JSON header, space-padded to a multiple of 8 bytes; NULL on no memory. */
static char *header_json(StWriter *w, size_t *len) {
  json_t *root = json_object();
  int bad = !root;   /* jansson calls fail only for lack of memory */
  if (w->n_meta && !bad) {
    json_t *meta = json_object();
    for (int i = 0; i < w->n_meta; i++)
      bad |= json_object_set_new(meta, w->keys[i], json_string(w->vals[i])) != 0;
    bad |= json_object_set_new(root, "__metadata__", meta) != 0;
  }
  size_t pos = 0;
  for (int i = 0; i < w->n && !bad; i++) {
    const WEntry *e = &w->e[i];
    json_t *shape = json_array();
    for (int k = 0; k < e->ndim; k++)
      bad |= json_array_append_new(shape, json_integer(e->shape[k])) != 0;
    json_t *t = json_pack("{s:s, s:o, s:[I,I]}", "dtype", dtypes[e->dtype].name, "shape", shape,
                          "data_offsets", (json_int_t)pos, (json_int_t)(pos + e->nbytes));
    bad |= json_object_set_new(root, e->name, t) != 0;
    pos += e->nbytes;
  }
  char *s = bad ? NULL : json_dumps(root, JSON_COMPACT);
  json_decref(root);
  if (!s) return NULL;
  size_t n = strlen(s), padded = (n + 7) / 8 * 8;
  char *p = realloc(s, padded + 1);
  if (!p) {
    free(s);
    return NULL;
  }
  memset(p + n, ' ', padded - n);
  p[padded] = '\0';
  *len = padded;
  return p;
}

/* 0 or an errno; replace_end syncs the file. */
static int write_body(StWriter *w, Replace *r, const char *hdr, size_t hlen) {
  uint64_t n = hlen;
  int e = replace_write(r, &n, 8);
  if (!e) e = replace_write(r, hdr, hlen);
  for (int i = 0; i < w->n && !e; i++) e = replace_write(r, w->e[i].data, w->e[i].nbytes);
  return e;
}

int st_writer_write(StWriter *w, const char *path, Err *err) {
  if (w->n > 1) qsort(w->e, (size_t)w->n, sizeof *w->e, by_name);   /* w->e is NULL when empty */
  size_t hlen;
  char *hdr = header_json(w, &hlen);
  if (!hdr) return err_set(err, "%s: out of memory building the header", path);
  Replace r;
  int rc = replace_begin(&r, path, err);
  if (rc == 0) {
    int e = replace_end(&r, write_body(w, &r, hdr, hlen));
    if (e != 0) rc = err_set(err, "%s: cannot write: %s", path, strerror(e));
  }
  free(hdr);
  return rc;
}
