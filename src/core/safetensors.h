/*
** safetensors.h -- read and write the safetensors format: an 8-byte
** little-endian header length, a JSON header naming each tensor's dtype,
** shape and byte range, then the bytes. What the reader refuses and how the
** writer replaces a file: docs/architecture.md, 'The safetensors format'.
*/
#ifndef TIELAB_SAFETENSORS_H
#define TIELAB_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef enum StDtype { ST_F32, ST_F64, ST_I32, ST_I64, ST_U8, ST_F16, ST_BF16, ST_NDTYPES } StDtype;

#define ST_MAX_DIMS 8

typedef struct StTensor {
  char *name;
  StDtype dtype;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  size_t numel;
  const uint8_t *data;   /* into the file's buffer */
  size_t nbytes;
} StTensor;

typedef struct StFile {
  StTensor *tensors;
  int n;
  char **meta_keys, **meta_vals;   /* __metadata__, string to string */
  int n_meta;
  uint8_t *buf;                    /* the whole file */
  size_t len;
} StFile;

int st_read(StFile *f, const char *path, Err *err);
/* The same, the file opened with safeopen.h's 'flags' (SAFEOPEN_NOFOLLOW:
** a symbolic link is refused, not followed). */
int st_read_flags(StFile *f, const char *path, int flags, Err *err);
/* The same checks on a file already in memory: 'f' takes 'buf' (from
** malloc) whatever the outcome; 'name' names it in messages. */
int st_parse(StFile *f, uint8_t *buf, size_t len, const char *name, Err *err);
void st_free(StFile *f);
const StTensor *st_find(const StFile *f, const char *name);
const char *st_meta(const StFile *f, const char *key);   /* NULL when absent */
const char *st_dtype_name(StDtype d);
size_t st_dtype_size(StDtype d);

/* A shape as messages show it, "[300, 16]", into 'buf' (a free dimension,
** -1, as N); returns 'buf'. */
const char *st_shape_str(char *buf, size_t size, int ndim, const int64_t *shape);

/* Copy tensor 't' into 'dst' as float32 (F32, F64, F16, BF16 accepted). */
int st_to_f32(const StTensor *t, float *dst, size_t n, Err *err);

/* ---- Header-only reading, for files too large to hold: the same checks
** as st_parse on the header and the ranges it names (against the file's
** size), then one tensor at a time with pread. */

typedef struct StEntry {
  char *name;
  StDtype dtype;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  size_t numel;
  uint64_t offset;   /* of its first byte, from the start of the file */
  size_t nbytes;
} StEntry;

typedef struct StHeader {
  StEntry *entries;  /* sorted by offset */
  int n;
  uint64_t file_size;   /* when the header was read */
} StHeader;

int st_read_header(StHeader *h, const char *path, Err *err);
void st_header_free(StHeader *h);
const StEntry *st_header_find(const StHeader *h, const char *name);

/* Read 'numel' values of 'dtype' at byte 'offset' of the open file 'fd'
** into 'dst' as float32, 'row' values (at least) at a time through a buffer
** of that size; 'what' names the tensor in messages (its file first). */
int st_pread_f32(int fd, StDtype dtype, uint64_t offset, size_t numel, size_t row, float *dst,
                 const char *what, Err *err);

/* Writer: collect tensors (pointers, not copies: keep them alive until
** st_write) and metadata, then write atomically. */
typedef struct StWriter StWriter;
StWriter *st_writer_new(void);
int st_writer_add(StWriter *w, const char *name, StDtype dtype, int ndim, const int64_t *shape,
                  const void *data, Err *err);
int st_writer_meta(StWriter *w, const char *key, const char *value, Err *err);
int st_writer_write(StWriter *w, const char *path, Err *err);
void st_writer_free(StWriter *w);

#endif
