/*
** fuzz_safetensors.c -- libFuzzer harness for the safetensors reader.
**
** The input is a file's bytes. 'st_parse' must refuse it with a message or
** accept it; an accepted file must then hold up: every float tensor
** converts, every name and key is found, and what the writer makes of it
** reads back the same (names, dtypes, shapes, bytes and metadata).
*/
#include "fuzz.h"

#include "core/safetensors.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_setup();
  return 0;
}

/* 'b', read back from what the writer made of 'a', must equal it. */
static void compare(const StFile *a, const StFile *b) {
  fuzz_check(a->n == b->n, "tensor count changed on the way back");
  for (int i = 0; i < a->n; i++) {
    const StTensor *t = &a->tensors[i], *u = st_find(b, t->name);
    fuzz_check(u != NULL, "a tensor went missing on the way back");
    fuzz_check(u->dtype == t->dtype && u->ndim == t->ndim && u->numel == t->numel && u->nbytes == t->nbytes,
          "a tensor's dtype or shape changed on the way back");
    fuzz_check(memcmp(u->shape, t->shape, sizeof t->shape[0] * (size_t)t->ndim) == 0, "a shape changed");
    fuzz_check(t->nbytes == 0 || memcmp(u->data, t->data, t->nbytes) == 0, "a tensor's bytes changed");
  }
  fuzz_check(a->n_meta == b->n_meta, "metadata count changed on the way back");
  for (int i = 0; i < a->n_meta; i++) {
    const char *v = st_meta(b, a->meta_keys[i]);
    fuzz_check(v && strcmp(v, a->meta_vals[i]) == 0, "a metadata value changed on the way back");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  if (size) memcpy(buf, data, size);
  StFile f;
  Err err = {{0}};
  if (st_parse(&f, buf, size, "input", &err) < 0) {
    fuzz_check(err.msg[0] != 0, "refused without a message");
    return 0;
  }
  for (int i = 0; i < f.n; i++) {
    const StTensor *t = &f.tensors[i];
    fuzz_check(st_find(&f, t->name) != NULL, "a tensor is not found by its own name");
    fuzz_check(t->nbytes == t->numel * st_dtype_size(t->dtype), "bytes do not match the shape");
    float *x = malloc(sizeof *x * (t->numel ? t->numel : 1));
    if (x) st_to_f32(t, x, t->numel, &err);
    free(x);
  }
  for (int i = 0; i < f.n_meta; i++)
    fuzz_check(st_meta(&f, f.meta_keys[i]) != NULL, "a metadata key is not found");

  StWriter *w = st_writer_new();
  int ok = w != NULL;
  for (int i = 0; ok && i < f.n; i++) {
    const StTensor *t = &f.tensors[i];
    ok = st_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, &err) == 0;
  }
  for (int i = 0; ok && i < f.n_meta; i++)
    ok = st_writer_meta(w, f.meta_keys[i], f.meta_vals[i], &err) == 0;
  char out[4200];
  fuzz_path("roundtrip.safetensors", out, sizeof out);
  if (ok && st_writer_write(w, out, &err) == 0) {
    StFile g;
    if (st_read(&g, out, &err) < 0) {
      fprintf(stderr, "fuzz_safetensors: the writer's file does not read back: %s\n", err.msg);
      abort();
    }
    compare(&f, &g);
    st_free(&g);
  }
  st_writer_free(w);
  st_free(&f);
  return 0;
}
