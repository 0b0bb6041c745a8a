/*
** test_mutants.c -- hundreds of damaged copies of a real checkpoint and of
** a weights-only file, each loaded with a time limit under an address-space
** limit. Every mutant must either be refused with one line that starts with
** its path, or load when the damage is legitimate (a weight's lowest
** mantissa bit, a negative first moment, a renamed run); what loads must be
** sane (finite weights, second moments >= 0). A mutant with NaN, a negative
** second moment, a wrong shape or contradictory metadata must be refused.
**
** Mutations: truncations, the header length, data offsets, dtypes, shapes,
** metadata values and removed keys, NaN and infinities in every float
** tensor, negative second moments, random byte flips.
*/
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/num.h"
#include "core/rng.h"
#include "core/weights.h"
#include "lab/run.h"
#include "tap.h"

#define LOAD_SECONDS 5
#define ADDRESS_SPACE ((rlim_t)3 << 30)

typedef enum Expect { REFUSED, LOADS, EITHER } Expect;

static const char *const expect_name[] = {"refused", "loaded", "either"};

/* The file under test, as bytes, and its header parsed. */
typedef struct Image {
  const char *label;
  uint8_t *buf;
  size_t len, hlen;   /* file and JSON header lengths */
  json_t *root;
  int checkpoint;
} Image;

/* Tallies of one class of mutation. */
typedef struct Tally {
  int n, refused, loaded, wrong;
} Tally;

static Lab *lab;
static char dir[256], mutant[300];
static Rng rng;
static int total, current;
static const char *current_what;

static void on_alarm(int sig) {
  (void)sig;
  char line[200];
  int n = snprintf(line, sizeof line, "Bail out! mutant %d (%s) took more than %d s to load\n", current,
                   current_what ? current_what : "?", LOAD_SECONDS);
  if (write(1, line, (size_t)n) < 0) _exit(2);
  _exit(1);
}

/* ------------------------------------------------------------ loading one */

/* What a loaded run holds must be usable: finite, moments >= 0. */
static const char *insane(Run *r) {
  Model *m = run_model(r);
  const float *p = model_params(m), *mm = model_adam_m(m), *v = model_adam_v(m);
  for (size_t i = 0; i < model_n_floats(m); i++) {
    if (!isfinite(p[i]) || !isfinite(mm[i])) return "a non-finite parameter or moment";
    if (!(v[i] >= 0) || !isfinite(v[i])) return "a second moment that is negative or not finite";
  }
  const RunMetrics *mt = run_metrics(r);
  if (mt->step > 0 && !(isfinite(mt->loss) && mt->loss >= 0)) return "a step without a finite loss";
  if (model_adam_t(m) > mt->step) return "more optimizer steps than steps";
  return NULL;
}

static void try_mutant(const uint8_t *buf, size_t len, Expect want, const char *what, Tally *t) {
  FILE *f = fopen(mutant, "wb");
  if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
    diag("cannot write %s", mutant);
    t->wrong++;
    return;
  }
  Err err = {{0}};
  current = ++total;
  current_what = what;
  alarm(LOAD_SECONDS);
  Run *r = lab_load(lab, mutant, "mutant", &err);
  alarm(0);
  t->n++;
  const char *problem = NULL;
  if (r) {
    t->loaded++;
    problem = insane(r);
    if (!problem && want == REFUSED) problem = "loaded, but must be refused";
    lab_remove_run(lab, r);
  } else {
    t->refused++;
    if (strncmp(err.msg, mutant, strlen(mutant)) != 0) problem = "refused without naming the file first";
    else if (strchr(err.msg, '\n')) problem = "refused in more than one line";
    else if (strstr(err.msg, "out of memory")) problem = "refused only when memory ran out: it was allocated first";
    else if (want == LOADS) problem = "refused, but it is legitimate";
  }
  if (problem) {
    t->wrong++;
    diag("mutant %d (%s, want %s): %s: %s", current, what, expect_name[want], problem, r ? "" : err.msg);
  }
}

static void report(const Image *im, const char *klass, const Tally *t) {
  ok(t->wrong == 0 && t->n > 0, "%s, %s: %d mutants, %d refused, %d loaded, %d wrong", im->label, klass, t->n,
     t->refused, t->loaded, t->wrong);
}

/* ------------------------------------------------------------ the image */

static int read_image(Image *im, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  im->len = (size_t)ftell(f);
  rewind(f);
  im->buf = malloc(im->len);
  size_t got = fread(im->buf, 1, im->len, f);
  fclose(f);
  uint64_t n;
  memcpy(&n, im->buf, 8);
  im->hlen = (size_t)n;
  json_error_t je;
  im->root = got == im->len ? json_loadb((const char *)im->buf + 8, im->hlen, 0, &je) : NULL;
  return im->root ? 0 : -1;
}

static void free_image(Image *im) {
  json_decref(im->root);
  free(im->buf);
}

/* The file with header 'root' in place of its own, the data unchanged. */
static void try_header(const Image *im, json_t *root, Expect want, const char *what, Tally *t) {
  char *js = json_dumps(root, JSON_COMPACT);
  size_t n = strlen(js), padded = (n + 7) / 8 * 8, dlen = im->len - 8 - im->hlen;
  uint8_t *b = malloc(8 + padded + dlen);
  uint64_t h = padded;
  memcpy(b, &h, 8);
  memcpy(b + 8, js, n);
  memset(b + 8 + n, ' ', padded - n);
  memcpy(b + 8 + padded, im->buf + 8 + im->hlen, dlen);
  try_mutant(b, 8 + padded + dlen, want, what, t);
  free(b);
  free(js);
}

static const char *tensor_dtype(const Image *im, const char *name) {
  return json_string_value(json_object_get(json_object_get(im->root, name), "dtype"));
}

/* Byte offset in the file of element 0 of tensor 'name', and its count. */
static size_t tensor_at(const Image *im, const char *name, size_t *count) {
  json_t *t = json_object_get(im->root, name);
  json_t *off = json_object_get(t, "data_offsets");
  size_t begin = (size_t)json_integer_value(json_array_get(off, 0));
  size_t end = (size_t)json_integer_value(json_array_get(off, 1));
  const char *dt = tensor_dtype(im, name);
  *count = (end - begin) / (!strcmp(dt, "F64") || !strcmp(dt, "I64") ? 8 : !strcmp(dt, "U8") ? 1 : 4);
  return 8 + im->hlen + begin;
}

/* The tensor names of the header, in a fixed order. */
static int tensor_names(const Image *im, const char **names, int cap) {
  int n = 0;
  const char *key;
  json_t *v;
  json_object_foreach(im->root, key, v) if (strcmp(key, "__metadata__") != 0 && n < cap) names[n++] = key;
  return n;
}

/* ------------------------------------------------------------ mutations */

static void truncations(const Image *im) {
  Tally t = {0};
  size_t data = 8 + im->hlen;
  size_t fixed[] = {0, 1, 7, 8, 9, data / 2, data - 1, data, data + 1, data + 3, im->len - 1, im->len - 4};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) try_mutant(im->buf, fixed[i], REFUSED, "truncated", &t);
  for (int i = 1; i <= 36; i++) try_mutant(im->buf, im->len * (size_t)i / 37, REFUSED, "truncated", &t);
  report(im, "truncations at 48 offsets", &t);
}

static void header_lengths(const Image *im) {
  Tally t = {0};
  uint64_t n = im->hlen;
  const uint64_t lens[] = {0, 1, n - 1, n + 1, n - 8, n + 8, n * 2, im->len - 8, im->len, UINT64_MAX,
                           (uint64_t)1 << 40, 100000001};
  uint8_t *b = malloc(im->len);
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    memcpy(b, im->buf, im->len);
    memcpy(b, &lens[i], 8);
    try_mutant(b, im->len, REFUSED, "header length", &t);
  }
  free(b);
  report(im, "header length field", &t);
}

static void edit_offsets(json_t *root, const char *name, int64_t db, int64_t de) {
  json_t *off = json_object_get(json_object_get(root, name), "data_offsets");
  json_array_set_new(off, 0, json_integer(json_integer_value(json_array_get(off, 0)) + db));
  json_array_set_new(off, 1, json_integer(json_integer_value(json_array_get(off, 1)) + de));
}

static void offsets(const Image *im, const char **names, int nn) {
  Tally t = {0};
  const int64_t moves[][2] = {{4, 0}, {0, -4}, {4, 4}, {-4, -4}, {0, 1 << 20}, {-1, 0}};
  for (int i = 0; i < nn; i += 1 + nn / 12)
    for (size_t k = 0; k < sizeof moves / sizeof moves[0]; k++) {
      json_t *root = json_deep_copy(im->root);
      edit_offsets(root, names[i], moves[k][0], moves[k][1]);
      try_header(im, root, REFUSED, "data offsets", &t);
      json_decref(root);
    }
  report(im, "data offsets moved", &t);
}

/* Every other dtype, and a name no reader knows: all refused (same-size
** swaps too: an I32 where floats belong, F32 tokenizer ids, I64 history). */
static void dtypes(const Image *im, const char **names, int nn) {
  Tally t = {0};
  static const char *const all[] = {"F32", "F64", "I32", "I64", "U8", "F16", "BF16", "F33", "f32"};
  for (int i = 0; i < nn; i += 1 + nn / 10)
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
      if (!strcmp(all[k], tensor_dtype(im, names[i]))) continue;
      json_t *root = json_deep_copy(im->root);
      json_object_set_new(json_object_get(root, names[i]), "dtype", json_string(all[k]));
      try_header(im, root, REFUSED, "dtype", &t);
      json_decref(root);
    }
  report(im, "dtypes changed", &t);
}

/* Same element count, other shape: transposed, flattened, an added 1. */
static void shapes(const Image *im, const char **names, int nn) {
  Tally t = {0};
  for (int i = 0; i < nn; i++) {
    json_t *shape = json_object_get(json_object_get(im->root, names[i]), "shape");
    size_t nd = json_array_size(shape);
    json_int_t a = json_integer_value(json_array_get(shape, 0));
    json_int_t b = nd > 1 ? json_integer_value(json_array_get(shape, 1)) : 1;
    json_t *alt[3] = {nd == 2 && a != b ? json_pack("[I,I]", b, a) : NULL, nd == 2 ? json_pack("[I]", a * b) : NULL,
                      nd == 1 ? json_pack("[I,I]", a, (json_int_t)1) : json_pack("[I,I,I]", a, b, (json_int_t)1)};
    for (int k = 0; k < 3; k++) {
      if (!alt[k]) continue;
      json_t *root = json_deep_copy(im->root);
      json_object_set_new(json_object_get(root, names[i]), "shape", alt[k]);
      try_header(im, root, REFUSED, "shape", &t);
      json_decref(root);
    }
  }
  report(im, "shapes changed, sizes kept", &t);
}

static void set_f32(uint8_t *b, size_t at, float x) { memcpy(b + at, &x, 4); }

/* NaN and infinities in every float tensor; the history (F64) holds NaN
** legitimately and is left to the next class. */
static void values(const Image *im, const char **names, int nn) {
  Tally bad = {0}, fine = {0};
  uint8_t *b = malloc(im->len);
  for (int i = 0; i < nn; i++) {
    if (strcmp(tensor_dtype(im, names[i]), "F32") != 0) continue;
    size_t count, at = tensor_at(im, names[i], &count);
    if (count == 0) continue;
    const float poison[] = {NAN, INFINITY, -INFINITY};
    size_t k = (size_t)rng_below(&rng, count);
    for (int p = 0; p < 3; p++) {
      memcpy(b, im->buf, im->len);
      set_f32(b, at + 4 * (i % 2 ? k : count - 1), poison[p]);
      try_mutant(b, im->len, REFUSED, names[i], &bad);
    }
    /* The lowest mantissa bit: a legitimate, different weight. */
    memcpy(b, im->buf, im->len);
    b[at + 4 * k] ^= 1;
    int moment_v = strncmp(names[i], "optim.v.", 8) == 0;
    float x;
    memcpy(&x, b + at + 4 * k, 4);
    try_mutant(b, im->len, isfinite(x) && (!moment_v || x >= 0) ? LOADS : REFUSED, names[i], &fine);
    if (moment_v) {   /* a negative second moment, and a negative first one */
      memcpy(b, im->buf, im->len);
      set_f32(b, at + 4 * k, -1e-3f);
      try_mutant(b, im->len, REFUSED, names[i], &bad);
      char m[128];
      snprintf(m, sizeof m, "optim.m.%s", names[i] + 8);
      size_t mc, mat = tensor_at(im, m, &mc);
      memcpy(b, im->buf, im->len);
      set_f32(b, mat + 4 * (k % mc), -0.25f);
      try_mutant(b, im->len, LOADS, m, &fine);
    }
  }
  free(b);
  report(im, "NaN, infinities and negative second moments in every float tensor", &bad);
  report(im, "lowest mantissa bits and negative first moments (legitimate)", &fine);
}

static void history_values(const Image *im) {
  if (!json_object_get(im->root, "history")) return;
  Tally t = {0};
  size_t count, at = tensor_at(im, "history", &count);
  uint8_t *b = malloc(im->len);
  const double bad[] = {NAN, 0, -1, 1e300};
  for (size_t e = 0; e < 6 && e < count; e++)
    for (int k = 0; k < 4; k++) {
      memcpy(b, im->buf, im->len);
      memcpy(b + at + 8 * e, &bad[k], 8);
      try_mutant(b, im->len, e == 5 && k == 1 ? EITHER : REFUSED, "history head", &t);
    }
  free(b);
  report(im, "history header values", &t);
}

/* Keys whose damage must be refused when removed. */
static int required(const Image *im, const char *key) {
  static const char *const ckpt[] = {"step", "adam_t", "lens_steps", "loss", "n_head", "version"};
  if (!im->checkpoint) return !strcmp(key, "n_head");
  for (size_t i = 0; i < sizeof ckpt / sizeof ckpt[0]; i++)
    if (!strcmp(key, ckpt[i])) return 1;
  return 0;
}

/* Keys that fix a tensor's shape, or must agree with one that does. */
static int shaping(const Image *im, const char *key) {
  static const char *const keys[] = {"vocab_size", "n_embd", "n_layer", "block_size", "opt.vocab",
                                     "opt.dim",    "opt.layers", "opt.ctx", "adam_t"};
  if (im->checkpoint && (!strcmp(key, "n_head") || !strcmp(key, "opt.heads"))) return 1;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (!strcmp(key, keys[i])) return 1;
  return 0;
}

static void try_meta(const Image *im, const char *key, json_t *value, Expect want, Tally *t) {
  json_t *root = json_deep_copy(im->root), *meta = json_object_get(root, "__metadata__");
  if (value) json_object_set_new(meta, key, value);
  else json_object_del(meta, key);
  char what[128];
  snprintf(what, sizeof what, "metadata %s = '%.40s'", key, value ? json_string_value(value) : "(removed)");
  try_header(im, root, want, what, t);
  json_decref(root);
}

static void metadata(const Image *im) {
  Tally t = {0};
  json_t *meta = json_object_get(im->root, "__metadata__");
  const char *key;
  json_t *v;
  json_object_foreach(meta, key, v) {
    const char *s = json_string_value(v);
    double x;
    int numeric = num_parse(s, &x) == 0;
    char buf[200];
    /* Loosely written numbers and garbage: refused where a number belongs. */
    const char *forms[] = {" %s", "%s ", "%s,5", "abc", "", "0x%s", "%s\n"};
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
      snprintf(buf, sizeof buf, forms[k], s);
      try_meta(im, key, json_string(buf), numeric ? REFUSED : EITHER, &t);
    }
    if (numeric) {   /* a different number: refused where shapes follow from it */
      snprintf(buf, sizeof buf, "%.17g", x * 2 + 1);
      try_meta(im, key, json_string(buf), shaping(im, key) ? REFUSED : EITHER, &t);
      int must = !strncmp(key, "opt.", 4) || required(im, key) || shaping(im, key);
      try_meta(im, key, json_string("-1"), must ? REFUSED : EITHER, &t);
    }
    try_meta(im, key, NULL, required(im, key) ? REFUSED : EITHER, &t);
  }
  if (im->checkpoint) {
    const char *fixed[][2] = {{"adam_t", "1125899906842624"}, {"loss", "nan"}, {"loss", "inf"}, {"loss", "-0.5"},
                              {"tie", "tied"},   {"opt.tie", "tied"}, {"version", "2"}, {"n_head", "4"}};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
      try_meta(im, fixed[k][0], json_string(fixed[k][1]), REFUSED, &t);
    try_meta(im, "adam_t", json_string("0"), LOADS, &t);
    try_meta(im, "opt.name", json_string("another name"), LOADS, &t);
  } else {
    try_meta(im, "tie", json_string("untied"), REFUSED, &t);
    try_meta(im, "tie", json_string("5"), REFUSED, &t);
    try_meta(im, "n_head", json_string("3"), REFUSED, &t);
  }
  report(im, "metadata values and removed keys", &t);
}

static void byte_flips(const Image *im) {
  Tally t = {0};
  uint8_t *b = malloc(im->len);
  for (int i = 0; i < 40; i++) {
    memcpy(b, im->buf, im->len);
    size_t at = i < 20 ? 8 + (size_t)rng_below(&rng, im->hlen) : (size_t)rng_below(&rng, im->len);
    b[at] ^= (uint8_t)(1u << rng_below(&rng, 8));
    try_mutant(b, im->len, EITHER, i < 20 ? "a flipped header bit" : "a flipped bit", &t);
  }
  free(b);
  report(im, "random single-bit flips", &t);
}

static void mutate_all(Image *im) {
  const char *names[256];
  int nn = tensor_names(im, names, 256);
  truncations(im);
  header_lengths(im);
  offsets(im, names, nn);
  dtypes(im, names, nn);
  shapes(im, names, nn);
  values(im, names, nn);
  history_values(im);
  metadata(im);
  byte_flips(im);
}

/* ------------------------------------------------------------ the originals */

static int make_checkpoint(const char *path, Err *err) {
  RunOptions o;
  run_options_default(&o);
  const char *kv[][2] = {{"name", "base"},      {"vocab", "264"},     {"dim", "16"},      {"layers", "1"},
                         {"heads", "2"},        {"ctx", "8"},         {"batch", "2"},     {"tie", "untied"},
                         {"threads", "1"},      {"lens_every", "2"},  {"eval_every", "3"}, {"align_every", "0"}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (run_options_set_text(&o, kv[i][0], kv[i][1], err) < 0) return -1;
  Run *r = lab_add_run(lab, &o, err);   /* stays in the lab: its corpus is shared by every load */
  if (!r) return -1;
  for (int i = 0; i < 6; i++)
    if (run_step(r, err) < 0) return -1;
  return run_save(r, path, err);
}

static int make_weights(const char *path, Err *err) {
  ModelConfig c = {.vocab = 64, .dim = 16, .layers = 1, .heads = 2, .ctx = 8, .batch = 2, .tie_k = 16};
  Model *m = model_create(&c, 1, err);
  if (!m) return -1;
  model_init(m, 5);
  int rc = weights_save(m, path, err);
  model_free(m);
  return rc;
}

static void run_on(const char *label, const char *path, int checkpoint) {
  Image im = {.label = label, .checkpoint = checkpoint};
  Err err;
  if (read_image(&im, path) < 0) {
    ok(0, "%s: cannot read %s back", label, path);
    return;
  }
  Run *r = lab_load(lab, path, "original", &err);
  ok(r != NULL, "%s: the original loads %s", label, r ? "" : err.msg);
  if (r) lab_remove_run(lab, r);
  mutate_all(&im);
  free_image(&im);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/tielab-mutants-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return bail_out("cannot create a temporary folder in %s", dir);
  char ckpt[300], weights[300];
  snprintf(ckpt, sizeof ckpt, "%s/ckpt.safetensors", dir);
  snprintf(weights, sizeof weights, "%s/weights.safetensors", dir);
  snprintf(mutant, sizeof mutant, "%s/mutant.safetensors", dir);
  rng_seed(&rng, 20261201);
  signal(SIGALRM, on_alarm);
  Err err;
  lab = lab_new(&err);
  if (!lab || make_checkpoint(ckpt, &err) < 0 || make_weights(weights, &err) < 0) {
    printf("Bail out! cannot make the originals: %s\n", err.msg);
    return 1;
  }
  struct rlimit lim;
  if (!TAP_UNDER_ASAN && getrlimit(RLIMIT_AS, &lim) == 0 && (lim.rlim_max == RLIM_INFINITY || lim.rlim_max > ADDRESS_SPACE)) {
    lim.rlim_cur = ADDRESS_SPACE;
    setrlimit(RLIMIT_AS, &lim);
  }
  clock_t t0 = clock();
  run_on("checkpoint", ckpt, 1);
  run_on("weights-only", weights, 0);
  diag("%d mutants in %.1f s of CPU", total, (double)(clock() - t0) / CLOCKS_PER_SEC);
  lab_free(lab);
  unlink(ckpt);
  unlink(weights);
  unlink(mutant);
  rmdir(dir);
  return tap_done();
}
