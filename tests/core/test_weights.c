/* test_weights.c -- weights files: save -> load bit for bit in every tie
** mode, nanoGPT-style files without tielab's keys, and files that must be
** refused with the offending tensor named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/rng.h"
#include "core/weights.h"
#include "tap.h"

enum { V = 50, D = 16, L = 2, H = 2, T = 8, B = 2 };

static char dir[256];

typedef struct Path {
  char s[512];
} Path;

static Path path_in(const char *name) {
  Path p;
  snprintf(p.s, sizeof p.s, "%s/%s", dir, name);
  return p;
}

/* A model with every parameter random (so no two tensors agree by chance)
** and E_out's shared columns mirroring E_in's, as the model keeps them. */
static Model *random_model(int tie_k, uint64_t seed) {
  ModelConfig c = {.vocab = V, .dim = D, .layers = L, .heads = H, .ctx = T, .batch = B,
                   .tie_k = tie_k};
  Err err = {{0}};
  Model *m = model_create(&c, 1, &err);
  if (!m) {
    diag("model_create: %s", err.msg);
    return NULL;
  }
  model_init(m, seed);
  Rng r;
  rng_seed(&r, seed);
  float *p = model_params(m);
  for (size_t i = 0; i < model_n_floats(m); i++) p[i] = (float)rng_normal(&r);
  float *wte = p + model_find_tensor(m, "transformer.wte.weight")->offset;
  float *lm = p + model_find_tensor(m, "lm_head.weight")->offset;
  for (int v = 0; v < V; v++) memcpy(lm + v * D, wte + v * D, (size_t)tie_k * sizeof(float));
  return m;
}

static int same_config(const ModelConfig *a, const ModelConfig *b) {
  return a->vocab == b->vocab && a->dim == b->dim && a->layers == b->layers &&
         a->heads == b->heads && a->ctx == b->ctx && a->batch == b->batch && a->tie_k == b->tie_k;
}

static int same_params(Model *a, Model *b) {
  return model_n_floats(a) == model_n_floats(b) &&
         memcmp(model_params(a), model_params(b), model_n_floats(a) * sizeof(float)) == 0;
}

static void test_round_trip(const char *what, int tie_k) {
  Err err = {{0}};
  Model *m = random_model(tie_k, 7 + (uint64_t)tie_k);
  Path rt = path_in("rt.safetensors");
  const char *path = rt.s;
  if (!m || weights_save(m, path, &err) != 0) {
    ok(0, "%s: save: %s", what, err.msg);
    model_free(m);
    return;
  }
  Model *back = weights_load(path, 1, B, &err);
  ok(back && same_config(model_config(m), model_config(back)) && same_params(m, back),
     "%s: save -> load is bit-exact, tie_k %d kept %s", what, tie_k, back ? "" : err.msg);
  StFile f;
  if (st_read(&f, path, &err) == 0) {
    int has_lm = st_find(&f, "lm_head.weight") != NULL;
    ok(has_lm == (tie_k != D) && f.n == model_tensor_count(m) - (tie_k == D),
       "%s: %d tensors, lm_head.weight %s", what, f.n, has_lm ? "written" : "omitted");
    const char *keys[] = {"vocab_size", "n_embd", "n_layer", "n_head", "block_size", "tie"};
    const char *want[] = {"50", "16", "2", "2", "8", tie_k == D ? "tied" : tie_k ? "5" : "untied"};
    int meta = 1;
    for (int i = 0; i < 6; i++)
      meta &= st_meta(&f, keys[i]) && !strcmp(st_meta(&f, keys[i]), want[i]);
    ok(meta, "%s: nanoGPT config keys and the tie mode in the metadata", what);
    st_free(&f);
  }
  model_free(back);
  model_free(m);
}

/* ---------------------------------------------------------------- edited copies */

/* A copy of 'src' without tensor 'drop' and metadata key 'drop_meta', for the
** caller to add to and write; 'f' keeps the data alive until then. */
static StWriter *copy_of(const char *src, StFile *f, const char *drop, const char *drop_meta) {
  Err err;
  if (st_read(f, src, &err) != 0) return NULL;
  StWriter *w = st_writer_new();
  for (int i = 0; i < f->n; i++) {
    const StTensor *t = &f->tensors[i];
    if (drop && strcmp(t->name, drop) == 0) continue;
    st_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, &err);
  }
  for (int i = 0; i < f->n_meta; i++)
    if (!drop_meta || strcmp(f->meta_keys[i], drop_meta) != 0)
      st_writer_meta(w, f->meta_keys[i], f->meta_vals[i], &err);
  return w;
}

/* Write 'w' to 'name' in the test folder; the returned path lives until the next call. */
static const char *finish(StWriter *w, StFile *f, const char *name) {
  static Path p;
  Err err;
  p = path_in(name);
  if (st_writer_write(w, p.s, &err) != 0) diag("write: %s", err.msg);
  st_writer_free(w);
  st_free(f);
  return p.s;
}

/* Loading 'path' must fail, naming the file and containing 'expect'. */
static void refused(const char *what, const char *path, const char *expect) {
  Err err = {{0}};
  Model *m = weights_load(path, 1, B, &err);
  ok(!m && strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, expect), "%s: %s", what,
     err.msg);
  model_free(m);
}

static void test_refused(void) {
  Err err = {{0}};
  Model *tied = random_model(D, 1), *untied = random_model(0, 2), *part = random_model(5, 3);
  Path tpath = path_in("tied.safetensors"), upath = path_in("untied.safetensors");
  Path ppath = path_in("part.safetensors");
  const char *tp = tpath.s, *up = upath.s, *pp = ppath.s;
  weights_save(tied, tp, &err);
  weights_save(untied, up, &err);
  weights_save(part, pp, &err);
  StFile f;
  StWriter *w;

  w = copy_of(up, &f, "transformer.h.1.mlp.c_fc.bias", NULL);
  refused("a missing tensor", finish(w, &f, "x.safetensors"),
          "missing tensors: transformer.h.1.mlp.c_fc.bias");
  w = copy_of(up, &f, "lm_head.weight", NULL);
  refused("untied without lm_head", finish(w, &f, "x.safetensors"),
          "missing tensors: lm_head.weight");

  static float junk[T * T];
  int64_t mask[2] = {T, T};
  w = copy_of(tp, &f, NULL, NULL);
  st_writer_add(w, "transformer.h.0.attn.bias", ST_F32, 2, mask, junk, &err);
  st_writer_add(w, "extra.thing", ST_F32, 2, mask, junk, &err);
  refused("unexpected tensors", finish(w, &f, "x.safetensors"),
          "unexpected tensors: extra.thing, transformer.h.0.attn.bias");

  int64_t short_ln[1] = {D - 1};
  w = copy_of(tp, &f, "transformer.ln_f.weight", NULL);
  st_writer_add(w, "transformer.ln_f.weight", ST_F32, 1, short_ln, junk, &err);
  refused("a wrong shape", finish(w, &f, "x.safetensors"),
          "wrong shape: transformer.ln_f.weight is [15], the model needs [16]");

  w = copy_of(tp, &f, NULL, NULL);
  st_writer_meta(w, "vocab_size", "51", &err);
  refused("metadata against the shapes", finish(w, &f, "x.safetensors"),
          "transformer.wte.weight is [50, 16], the model needs [51, 16]");

  w = copy_of(tp, &f, NULL, "n_head");
  refused("no n_head", finish(w, &f, "x.safetensors"), "no n_head in the metadata");
  w = copy_of(tp, &f, NULL, NULL);
  st_writer_meta(w, "n_head", "two", &err);
  refused("n_head not a number", finish(w, &f, "x.safetensors"), "metadata n_head is 'two'");
  w = copy_of(tp, &f, NULL, NULL);
  st_writer_meta(w, "n_head", "3", &err);
  refused("n_head not dividing n_embd", finish(w, &f, "x.safetensors"), "3");

  /* lm_head.weight in a file that says tied must be the same matrix. */
  w = copy_of(up, &f, NULL, NULL);
  st_writer_meta(w, "tie", "tied", &err);
  refused("tied with a different lm_head", finish(w, &f, "x.safetensors"), "differs");
  w = copy_of(up, &f, NULL, NULL);
  st_writer_meta(w, "tie", "5", &err);
  refused("partial with different shared columns", finish(w, &f, "x.safetensors"),
          "differs from transformer.wte.weight in the 5 shared columns");

  static int32_t ints[D];
  int64_t ln[1] = {D};
  w = copy_of(tp, &f, "transformer.ln_f.bias", NULL);
  st_writer_add(w, "transformer.ln_f.bias", ST_I32, 1, ln, ints, &err);
  refused("an integer tensor", finish(w, &f, "x.safetensors"), "not a float type");

  w = copy_of(tp, &f, "transformer.wte.weight", "vocab_size");
  refused("no vocab_size and no wte", finish(w, &f, "x.safetensors"), "no vocab_size");

  /* weights_read_into: other namespaces are the caller's; errors change nothing. */
  Model *m = weights_load(up, 1, B, &err);
  if (!m) {
    ok(0, "load %s: %s", up, err.msg);
    return;
  }
  float *before = malloc(model_n_floats(m) * sizeof(float));
  memcpy(before, model_params(m), model_n_floats(m) * sizeof(float));
  w = copy_of(tp, &f, NULL, NULL);
  st_writer_add(w, "optim.m.transformer.wte.weight", ST_F32, 2, mask, junk, &err);
  st_read(&f, finish(w, &f, "ck.safetensors"), &err);
  ok(weights_read_into(m, &f, &err) != 0 && strstr(err.msg, "missing tensors: lm_head.weight") &&
         !strstr(err.msg, "optim") &&
         !memcmp(before, model_params(m), model_n_floats(m) * sizeof(float)),
     "weights_read_into ignores other namespaces and changes nothing on error: %s", err.msg);
  st_free(&f);
  st_read(&f, up, &err);
  model_init(m, 99);
  int rc = weights_read_into(m, &f, &err);
  ok(rc == 0 && same_params(m, untied), "weights_read_into restores a model's parameters %s",
     rc ? err.msg : "");
  st_free(&f);
  free(before);
  model_free(m);

  model_free(tied);
  model_free(untied);
  model_free(part);
}

/* Files as nanoGPT or the reference write them: no 'tie' key, lm_head maybe
** present when tied, other float types, sizes left to the shapes. */
static void test_nanogpt(void) {
  Err err = {{0}};
  Model *tied = random_model(D, 4), *untied = random_model(0, 5);
  Path tpath = path_in("tied.safetensors"), upath = path_in("untied.safetensors");
  const char *tp = tpath.s, *up = upath.s;
  StWriter *w = st_writer_new();
  weights_add_to_writer(tied, w, 1, &err);
  st_writer_write(w, tp, &err);
  st_writer_free(w);
  weights_save(untied, up, &err);
  StFile f;
  Model *m;

  w = copy_of(tp, &f, NULL, "tie");
  m = weights_load(finish(w, &f, "x.safetensors"), 1, B, &err);
  ok(m && model_config(m)->tie_k == D && same_params(m, tied),
     "lm_head.weight equal to wte and no tie key: tied %s", m ? "" : err.msg);
  model_free(m);
  w = copy_of(up, &f, NULL, "tie");
  m = weights_load(finish(w, &f, "x.safetensors"), 1, B, &err);
  ok(m && model_config(m)->tie_k == 0 && same_params(m, untied),
     "lm_head.weight different and no tie key: untied %s", m ? "" : err.msg);
  model_free(m);

  /* Only n_head: every other size from the shapes. */
  StFile src;
  st_read(&src, up, &err);
  w = st_writer_new();
  for (int i = 0; i < src.n; i++) {
    const StTensor *t = &src.tensors[i];
    st_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, &err);
  }
  st_writer_meta(w, "n_head", "2", &err);
  m = weights_load(finish(w, &src, "x.safetensors"), 1, B, &err);
  ModelConfig want = *model_config(untied);
  ok(m && same_config(model_config(m), &want) && same_params(m, untied),
     "sizes inferred from the shapes when only n_head is given %s", m ? "" : err.msg);
  model_free(m);

  /* F64 and F16 tensors are converted. */
  const TensorInfo *ti = model_find_tensor(untied, "transformer.wpe.weight");
  double wpe64[T * D];
  uint16_t ln16[D];
  for (size_t i = 0; i < ti->numel; i++) wpe64[i] = model_params(untied)[ti->offset + i];
  for (int i = 0; i < D; i++) ln16[i] = 0x3c00 + (uint16_t)i;   /* 1, 1+2^-10, ... */
  int64_t swpe[2] = {T, D}, sln[1] = {D};
  w = copy_of(up, &f, "transformer.wpe.weight", NULL);
  st_writer_add(w, "transformer.wpe.weight", ST_F64, 2, swpe, wpe64, &err);
  StFile f2;
  Path p64 = path_in("x64.safetensors");
  finish(w, &f, "x64.safetensors");
  w = copy_of(p64.s, &f2, "transformer.ln_f.weight", NULL);
  st_writer_add(w, "transformer.ln_f.weight", ST_F16, 1, sln, ln16, &err);
  m = weights_load(finish(w, &f2, "x16.safetensors"), 1, B, &err);
  int conv = m != NULL;
  if (m) {
    const float *lnf = model_params(m) + model_find_tensor(m, "transformer.ln_f.weight")->offset;
    conv = !memcmp(model_params(m) + ti->offset, model_params(untied) + ti->offset,
                   ti->numel * sizeof(float));
    for (int i = 0; i < D; i++) conv &= lnf[i] == 1.0f + (float)i / 1024.0f;
  }
  ok(conv, "F64 and F16 tensors load as their float values %s", m ? "" : err.msg);
  model_free(m);
  model_free(tied);
  model_free(untied);
}

/* A tensor of 'src' with element 'k' set to 'x' (as F32). */
static const char *with_value(const char *src, const char *tensor, size_t k, float x, const char *name) {
  StFile f;
  StWriter *w = copy_of(src, &f, tensor, NULL);
  const StTensor *t = st_find(&f, tensor);
  static float buf[V * D];
  memcpy(buf, t->data, t->nbytes);
  buf[k] = x;
  Err err;
  st_writer_add(w, tensor, ST_F32, t->ndim, t->shape, buf, &err);
  return finish(w, &f, name);
}

/* Values: no NaN nor infinity in any tensor, whatever its dtype. */
static void test_values(void) {
  Err err = {{0}};
  Model *m = random_model(0, 9);
  Path p = path_in("untied.safetensors");
  weights_save(m, p.s, &err);
  refused("a NaN weight", with_value(p.s, "transformer.h.1.attn.c_proj.weight", 7, NAN, "x.safetensors"),
          "tensor 'transformer.h.1.attn.c_proj.weight': element 7 is NaN");
  refused("an infinite weight", with_value(p.s, "lm_head.weight", 3, -INFINITY, "x.safetensors"),
          "tensor 'lm_head.weight': element 3 is -infinity");
  uint16_t ln16[D];
  for (int i = 0; i < D; i++) ln16[i] = 0x3c00;
  ln16[5] = 0x7c00;   /* +inf in F16 */
  int64_t sln[1] = {D};
  StFile f;
  StWriter *w = copy_of(p.s, &f, "transformer.ln_f.bias", NULL);
  st_writer_add(w, "transformer.ln_f.bias", ST_F16, 1, sln, ln16, &err);
  refused("an infinite F16 value", finish(w, &f, "x.safetensors"), "'transformer.ln_f.bias': element 5 is +infinity");
  double big[D];
  for (int i = 0; i < D; i++) big[i] = i == 2 ? 1e300 : 0.5;
  w = copy_of(p.s, &f, "transformer.ln_f.weight", NULL);
  st_writer_add(w, "transformer.ln_f.weight", ST_F64, 1, sln, big, &err);
  refused("an F64 value beyond float range", finish(w, &f, "x.safetensors"),
          "'transformer.ln_f.weight': element 2 is +infinity");
  model_free(m);
}

/* Metadata numbers are whole strings of digits: strtol's leniency is gone. */
static void test_strict_metadata(void) {
  Err err = {{0}};
  Model *m = random_model(D, 10);
  Path p = path_in("tied.safetensors");
  weights_save(m, p.s, &err);
  const char *bad[][2] = {{"vocab_size", " 50"}, {"vocab_size", "50 "}, {"n_embd", "+16"},
                          {"n_layer", "2.0"}, {"block_size", "0x8"}, {"n_head", "2e0"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    StFile f;
    StWriter *w = copy_of(p.s, &f, NULL, NULL);
    st_writer_meta(w, bad[i][0], bad[i][1], &err);
    char what[64];
    snprintf(what, sizeof what, "%s '%s'", bad[i][0], bad[i][1]);
    refused(what, finish(w, &f, "x.safetensors"), bad[i][0]);
  }
  model_free(m);
}

/* A small file whose metadata claims a huge model is refused by its shapes
** before anything is allocated: under a 1 GiB address-space limit, a model
** of n_embd 8192 (several GiB) could not even be created. */
static void test_small_file_big_claim(void) {
  Err err = {{0}};
  Model *m = random_model(D, 11);
  Path p = path_in("tied.safetensors");
  weights_save(m, p.s, &err);
  model_free(m);
  StFile f;
  StWriter *w = copy_of(p.s, &f, NULL, NULL);
  st_writer_meta(w, "n_embd", "8192", &err);
  st_writer_meta(w, "n_head", "2", &err);
  const char *big = finish(w, &f, "x.safetensors");
  struct rlimit old, lim;
  getrlimit(RLIMIT_AS, &old);
  lim = old;
  lim.rlim_cur = (rlim_t)1 << 30;
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur) lim.rlim_cur = old.rlim_max;
  if (!TAP_UNDER_ASAN) setrlimit(RLIMIT_AS, &lim);   /* a net in case the check is gone */
  refused("n_embd 8192 in a small file", big, "transformer.wte.weight is [50, 16], the model needs [50, 8192]");
  setrlimit(RLIMIT_AS, &old);
}

static void remove_dir(void) {
  const char *names[] = {"rt", "tied", "untied", "part", "x", "ck", "x64", "x16"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char n[64];
    snprintf(n, sizeof n, "%s.safetensors", names[i]);
    unlink(path_in(n).s);
  }
  rmdir(dir);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/tielab-weights-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return bail_out("cannot create a temporary folder in %s", dir);
  test_round_trip("tied", D);
  test_round_trip("untied", 0);
  test_round_trip("partial", 5);
  test_refused();
  test_nanogpt();
  test_values();
  test_strict_metadata();
  test_small_file_big_claim();
  remove_dir();
  return tap_done();
}
