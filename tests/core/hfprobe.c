/*
** hfprobe.c -- hfmodel.h from the command line, for test_hfmodel.sh:
**
**   hfprobe info MODEL                 what hf_open found, one key=value a line
**   hfprobe values MODEL EXPECTED      each tensor of EXPECTED (a safetensors
**                                      file of float32) read from MODEL and
**                                      compared bit for bit
**   hfprobe read MODEL NAME            read one tensor (after the memory check)
**   hfprobe gpt2 MODEL EXPECTED        the whole model into the reference
**                                      model's arena, each tensor compared with
**                                      EXPECTED's, Conv1D weights transposed
**
** Exit 0 when all is well, 1 with the error on stderr.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hfmodel.h"
#include "core/model.h"

static int fail(const char *msg) {
  fprintf(stderr, "%s\n", msg);
  return 1;
}

static int info(const HfModel *m) {
  const HfInfo *in = hf_info(m);
  printf("family=%s\nmodel_type=%s\nvocab=%d\ndim=%d\nlayers=%d\nheads=%d\nctx=%d\n", in->family,
         in->model_type, in->vocab, in->dim, in->layers, in->heads, in->ctx);
  printf("dtype=%s\ntied=%d\nconfig_tied=%d\nembed=%s\nhead=%s\nhead_is_embed=%d\n",
         st_dtype_name(in->dtype), in->tied, in->config_tied, in->embed->name, in->head->name,
         in->head == in->embed);
  printf("n_tensors=%d\nn_files=%d\nfolder=%s\n", in->n_tensors, in->n_files, hf_folder(m));
  return 0;
}

/* Every tensor of 'expected' read from the model, compared bit for bit. */
static int values(const HfModel *m, const char *expected, Err *err) {
  StFile f;
  if (st_read(&f, expected, err) != 0) return fail(err->msg);
  int bad = 0, n = 0;
  for (int i = 0; i < f.n && !bad; i++) {
    const StTensor *want = &f.tensors[i];
    const HfTensor *t = hf_tensor(m, want->name);
    if (!t) {
      fprintf(stderr, "%s: no tensor '%s'\n", hf_path(m), want->name);
      bad = 1;
      break;
    }
    float *got = hf_read_f32_alloc(m, t, err);
    if (!got || want->nbytes != hf_tensor_f32_bytes(t) || memcmp(got, want->data, want->nbytes) != 0) {
      fprintf(stderr, "%s: %s\n", want->name, got ? "values differ" : err->msg);
      bad = 1;
    }
    free(got);
    n++;
  }
  if (!bad) printf("same=%d\n", n);
  st_free(&f);
  return bad;
}

static int read_one(const HfModel *m, const char *name, Err *err) {
  const HfTensor *t = hf_tensor(m, name);
  if (!t) return fail("no such tensor");
  float *x = hf_read_f32_alloc(m, t, err);
  if (!x) return fail(err->msg);
  printf("read=%zu\n", hf_tensor_f32_bytes(t) / sizeof(float));
  free(x);
  return 0;
}

/* Whether nanoGPT's tensor 'ti' (read into 'p') holds the file's tensor
** 'want' ([in, out] for a Conv1D weight, so transposed). */
static int is_conv1d(const TensorInfo *ti) {
  return ti->ndim == 2 && (strstr(ti->name, ".attn.c_") || strstr(ti->name, ".mlp.c_"));
}

static int same_as(const TensorInfo *ti, const float *p, const StTensor *want) {
  int conv1d = is_conv1d(ti);
  const float *w = (const float *)want->data;   /* a float32 file this program's writer laid out */
  if (want->numel != ti->numel) return 0;
  if (!conv1d) return memcmp(p, w, ti->numel * sizeof(float)) == 0;
  int rows = ti->shape[0], cols = ti->shape[1];
  if (want->shape[0] != cols || want->shape[1] != rows) return 0;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      if (memcmp(&p[(size_t)r * cols + c], &w[(size_t)c * rows + r], sizeof(float)) != 0) return 0;
  return 1;
}

/* The file's name of nanoGPT's tensor 'name': with or without the prefix;
** the head is the embedding when tied. */
static const StTensor *expected_for(const StFile *f, const HfModel *m, const char *name) {
  const StTensor *t = st_find(f, name);
  if (!t && strncmp(name, "transformer.", 12) == 0) t = st_find(f, name + 12);
  if (!t && strcmp(name, "lm_head.weight") == 0) t = st_find(f, hf_info(m)->embed->name);
  return t;
}

static int gpt2(const HfModel *m, const char *expected, Err *err) {
  ModelConfig c = {.batch = 1};
  if (hf_gpt2_config(m, &c, err) != 0) return fail(err->msg);
  int n;
  TensorInfo *table = model_tensor_table(&c, &n);
  size_t floats = table[n - 1].offset + table[n - 1].numel;
  float *params = calloc(floats, sizeof(float));
  StFile f;
  int rc = 0;
  if (hf_gpt2_read(m, table, n, params, err) != 0 || st_read(&f, expected, err) != 0) {
    rc = fail(err->msg);
  } else {
    int transposed = 0;
    for (int i = 0; i < n && rc == 0; i++) {
      const StTensor *want = expected_for(&f, m, table[i].name);
      if (!want || !same_as(&table[i], params + table[i].offset, want)) {
        fprintf(stderr, "%s: differs from the file\n", table[i].name);
        rc = 1;
      }
      transposed += is_conv1d(&table[i]);
    }
    if (rc == 0) printf("tensors=%d\ntransposed=%d\ntie_k=%d\n", n, transposed, c.tie_k);
    st_free(&f);
  }
  free(params);
  free(table);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) return fail("usage: hfprobe info|values|read|gpt2 MODEL [ARG]");
  Err err = {{0}};
  HfModel *m = hf_open(argv[2], &err);
  if (!m) return fail(err.msg);
  int rc;
  if (strcmp(argv[1], "info") == 0)
    rc = info(m);
  else if (strcmp(argv[1], "values") == 0 && argc == 4)
    rc = values(m, argv[3], &err);
  else if (strcmp(argv[1], "read") == 0 && argc == 4)
    rc = read_one(m, argv[3], &err);
  else if (strcmp(argv[1], "gpt2") == 0 && argc == 4)
    rc = gpt2(m, argv[3], &err);
  else
    rc = fail("usage: hfprobe info|values|read|gpt2 MODEL [ARG]");
  hf_close(m);
  return rc;
}
