/*
** test_params.c -- a run's parameters, tokenizer and hidden states as a
** client reaches them (lab.h: params.c, tokens.c, run_hidden): names and
** shapes of tied, untied and partly tied runs, reads against the arena,
** writes that round-trip and keep the moments, the tie's rule for E_in and
** E_out, refusals that name what is wrong, text through the tokenizer and
** back, and hidden states checked by hand, leaving the next batch alone.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "lab/run.h"
#include "tap.h"

#define WTE "transformer.wte.weight"
#define LM_HEAD "lm_head.weight"

static RunOptions tiny(const char *name, const char *tie, const char *vocab) {
  RunOptions o;
  Err err;
  run_options_default(&o);
  const char *kv[][2] = {{"vocab", vocab}, {"dim", "32"},     {"layers", "2"},     {"heads", "2"},
                         {"ctx", "16"},    {"batch", "4"},    {"tie", tie},        {"threads", "1"},
                         {"lens_every", "0"}, {"eval_every", "0"}, {"align_every", "0"}, {"name", name}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (run_options_set_text(&o, kv[i][0], kv[i][1], &err) < 0) diag("setting %s: %s", kv[i][0], err.msg);
  return o;
}

static Run *add(Lab *lab, const char *name, const char *tie) {
  Err err;
  RunOptions o = tiny(name, tie, "320");
  Run *r = lab_add_run(lab, &o, &err);
  if (!r) diag("run %s: %s", name, err.msg);
  return r;
}

/* The arena's copy of tensor 'name'. */
static const float *stored(Run *r, const char *name) {
  return model_params(r->model) + model_find_tensor(r->model, name)->offset;
}

/* Parameter 'name' read into a new buffer of its shape. */
static float *read_param(Run *r, const char *name, int *rows, int *cols) {
  Err err;
  if (run_param_shape(r, name, rows, cols, &err) < 0) {
    diag("%s: %s", name, err.msg);
    return NULL;
  }
  float *m = malloc(sizeof *m * (size_t)*rows * *cols);
  if (m && run_param_read(r, name, m, *rows, *cols, &err) < 0) {
    diag("%s: %s", name, err.msg);
    free(m);
    return NULL;
  }
  return m;
}

static float *random_matrix(int rows, int cols, uint64_t seed) {
  Rng g;
  rng_seed(&g, seed);
  float *m = malloc(sizeof *m * (size_t)rows * cols);
  for (int i = 0; m && i < rows * cols; i++) m[i] = (float)(rng_uniform(&g) - 0.5);
  return m;
}

/* Columns [c0, c1) of every row of a and b (rows x stride) are equal. */
static int same_columns(const float *a, const float *b, int rows, int stride, int c0, int c1) {
  for (int i = 0; i < rows; i++)
    if (memcmp(a + (size_t)i * stride + c0, b + (size_t)i * stride + c0, sizeof *a * (size_t)(c1 - c0)) != 0)
      return 0;
  return 1;
}

/* ------------------------------------------------------------ names and shapes */

static void test_names_and_shapes(Run *tied, Run *untied, Run *partial) {
  Err err;
  Run *runs[] = {tied, untied, partial};
  for (int k = 0; k < 3; k++) {
    Run *r = runs[k];
    int n = run_param_count(r), rows, cols, in_order = n == model_tensor_count(r->model);
    for (int i = 0; i < n && in_order; i++) in_order = strcmp(run_param_name(r, i), model_tensor(r->model, i)->name) == 0;
    ok(in_order && strcmp(run_param_name(r, 0), WTE) == 0 && strcmp(run_param_name(r, n - 1), LM_HEAD) == 0 &&
           !run_param_name(r, n) && !run_param_name(r, -1),
       "%s: %d parameters, the model's tensors in order, wte first and lm_head last", run_name(r), n);
    ok(run_param_shape(r, "E_in", &rows, &cols, &err) == 0 && rows == 320 && cols == 32, "%s: E_in is V x d",
       run_name(r));
    ok(run_param_shape(r, "E_out", &rows, &cols, &err) == 0 && rows == 320 && cols == 32, "%s: E_out is V x d",
       run_name(r));
  }
  int rows, cols;
  ok(run_param_shape(tied, "transformer.h.1.attn.c_attn.weight", &rows, &cols, &err) == 0 && rows == 96 &&
         cols == 32, "a 2-D weight is rows x cols as stored (c_attn 3d x d)");
  ok(run_param_shape(tied, "transformer.h.0.mlp.c_fc.bias", &rows, &cols, &err) == 0 && rows == 128 && cols == 1,
     "a 1-D tensor is a column (c_fc.bias 4d x 1)");
  ok(run_param_shape(tied, "transformer.wpe.weight", &rows, &cols, &err) == 0 && rows == 16 && cols == 32,
     "wpe is T x d");
  ok(run_param_shape(tied, "e_in", &rows, &cols, &err) < 0 && strstr(err.msg, "no parameter 'e_in'"),
     "an unknown name is an error naming it: %s", err.msg);
}

/* ------------------------------------------------------------ reading */

static void test_read(Run *tied, Run *untied, Run *partial) {
  int rows, cols, k = model_config(partial->model)->tie_k;
  float *in = read_param(tied, "E_in", &rows, &cols), *out = read_param(tied, "E_out", &rows, &cols);
  ok(in && out && memcmp(in, stored(tied, WTE), sizeof *in * rows * cols) == 0 &&
         memcmp(in, out, sizeof *in * rows * cols) == 0,
     "tied: E_in is wte, and E_out reads the same shared matrix");
  free(in), free(out);
  in = read_param(untied, "E_in", &rows, &cols), out = read_param(untied, "E_out", &rows, &cols);
  ok(in && out && memcmp(out, stored(untied, LM_HEAD), sizeof *out * rows * cols) == 0 &&
         !same_columns(in, out, rows, cols, 0, cols),
     "untied: E_out is lm_head, its own matrix");
  free(in), free(out);
  in = read_param(partial, "E_in", &rows, &cols), out = read_param(partial, "E_out", &rows, &cols);
  ok(k > 0 && k < cols && in && out && same_columns(in, out, rows, cols, 0, k) &&
         !same_columns(in, out, rows, cols, k, cols) &&
         memcmp(out, stored(partial, LM_HEAD), sizeof *out * rows * cols) == 0,
     "partly tied (k %d): E_out's first k columns are E_in's, the rest its own", k);
  free(in), free(out);
  float *b = read_param(tied, "transformer.h.0.ln_1.weight", &rows, &cols);
  ok(b && rows == 32 && cols == 1 && b[0] == 1 && b[31] == 1, "a LayerNorm weight reads as its ones");
  free(b);
  Err err;
  float small[4];
  ok(run_param_read(tied, "E_in", small, 2, 2, &err) < 0 && strstr(err.msg, "320x32") && strstr(err.msg, "2x2"),
     "a read into a buffer of the wrong shape names both shapes: %s", err.msg);
}

/* ------------------------------------------------------------ writing */

static void test_write_round_trip(Run *r) {
  Err err;
  for (int i = 0; i < 3; i++) run_step(r, &err);   /* moments that are not zero */
  Model *m = r->model;
  size_t n = model_n_floats(m);
  float *m0 = malloc(sizeof *m0 * n), *v0 = malloc(sizeof *v0 * n);
  memcpy(m0, model_adam_m(m), sizeof *m0 * n);
  memcpy(v0, model_adam_v(m), sizeof *v0 * n);
  long t0 = model_adam_t(m);
  const char *name = "transformer.h.1.mlp.c_fc.weight";
  int rows, cols;
  run_param_shape(r, name, &rows, &cols, &err);
  float *x = random_matrix(rows, cols, 11);
  r->dirty = 0;
  int rc = run_param_write(r, name, x, rows, cols, &err);
  float *back = read_param(r, name, &rows, &cols);
  ok(rc == 0 && back && memcmp(back, x, sizeof *x * rows * cols) == 0, "a write reads back exactly (%s)",
     rc ? err.msg : "ok");
  ok(memcmp(m0, model_adam_m(m), sizeof *m0 * n) == 0 && memcmp(v0, model_adam_v(m), sizeof *v0 * n) == 0 &&
         model_adam_t(m) == t0,
     "the optimizer's moments and step count are untouched");
  ok(r->dirty, "the run is marked changed, for the next save");
  free(back), free(x);

  float bias[128];
  for (int i = 0; i < 128; i++) bias[i] = (float)i / 128;
  ok(run_param_write(r, "transformer.h.0.mlp.c_fc.bias", bias, 128, 1, &err) == 0 &&
         memcmp(stored(r, "transformer.h.0.mlp.c_fc.bias"), bias, sizeof bias) == 0,
     "a 1-D tensor is written from a column");
  ok(run_step(r, &err) == 0 && isfinite(run_metrics(r)->loss), "the run trains on after the writes");
  free(m0), free(v0);
}

static void test_write_refusals(Run *r) {
  Err err;
  int rows, cols;
  float *before = read_param(r, "E_in", &rows, &cols);
  float *x = random_matrix(rows, cols, 5);
  ok(run_param_write(r, "E_in", x, 3, 4, &err) < 0 && strstr(err.msg, "320x32") && strstr(err.msg, "3x4"),
     "a write of the wrong shape names both shapes: %s", err.msg);
  x[1 * cols + 4] = NAN;
  x[7 * cols] = INFINITY;
  ok(run_param_write(r, "E_in", x, rows, cols, &err) < 0 && strstr(err.msg, "a NaN at (2, 5)"),
     "NaN is refused, naming the first bad entry: %s", err.msg);
  x[1 * cols + 4] = 0;
  ok(run_param_write(r, "E_in", x, rows, cols, &err) < 0 && strstr(err.msg, "an infinity at (8, 1)"),
     "so is an infinity: %s", err.msg);
  ok(memcmp(before, stored(r, WTE), sizeof *before * rows * cols) == 0, "a refused write changes nothing");
  x[7 * cols] = 0;
  r->fitting = 1;   /* as r:fit_lens holds it */
  ok(run_param_write(r, "E_in", x, rows, cols, &err) < 0 && strstr(err.msg, "fitting its lens"),
     "a write while a lens fit holds the weights is refused: %s", err.msg);
  r->fitting = 0;
  free(before), free(x);
}

/* Writing E_in of a tied run: E_out follows, and the forward reads it.
** With E_in all zeros the logits are all zeros, so the loss is log V. */
static void test_tied_forward_uses_write(Run *r) {
  Err err;
  int rows, cols;
  run_param_shape(r, "E_in", &rows, &cols, &err);
  float *zero = calloc((size_t)rows * cols, sizeof *zero);
  int rc = run_param_write(r, "E_in", zero, rows, cols, &err);
  float *out = read_param(r, "E_out", &rows, &cols);
  ok(rc == 0 && out && memcmp(out, zero, sizeof *out * rows * cols) == 0, "tied: after writing E_in, E_out reads it");
  int32_t rows_ids[4 * 17];
  run_batch(r, run_metrics(r)->step + 1, rows_ids, &err);
  EvalResult e;
  run_evaluate(r, rows_ids, 4, 16, &e, &err);
  ok(fabs(e.loss - log(320.0)) < 1e-4, "and the forward uses it: loss %.6f is log V %.6f", e.loss, log(320.0));
  free(zero), free(out);
}

/* The rule for E_out: its shared columns are E_in's parameters. */
static void test_write_e_out(Run *tied, Run *untied, Run *partial) {
  Err err;
  int rows, cols, k = model_config(partial->model)->tie_k;
  float *x = random_matrix(320, 32, 7);
  ok(run_param_write(tied, "E_out", x, 320, 32, &err) == 0 &&
         memcmp(stored(tied, WTE), x, sizeof *x * 320 * 32) == 0 &&
         memcmp(stored(tied, LM_HEAD), x, sizeof *x * 320 * 32) == 0,
     "tied: writing E_out writes the shared matrix, E_in too");
  float *in0 = read_param(untied, "E_in", &rows, &cols);
  ok(run_param_write(untied, "lm_head.weight", x, 320, 32, &err) == 0 &&
         memcmp(stored(untied, WTE), in0, sizeof *x * 320 * 32) == 0 &&
         memcmp(stored(untied, LM_HEAD), x, sizeof *x * 320 * 32) == 0,
     "untied: writing E_out leaves E_in alone");
  free(in0);
  in0 = read_param(partial, "E_in", &rows, &cols);
  int rc = run_param_write(partial, "E_out", x, 320, 32, &err);
  float *in = read_param(partial, "E_in", &rows, &cols), *out = read_param(partial, "E_out", &rows, &cols);
  ok(rc == 0 && same_columns(in, x, 320, 32, 0, k) && same_columns(in, in0, 320, 32, k, 32) &&
         memcmp(out, x, sizeof *x * 320 * 32) == 0,
     "partly tied: E_out's first k columns land in E_in's, E_in's own columns stay, E_out reads as written");
  free(in), free(out);
  float *y = random_matrix(320, 32, 8);
  rc = run_param_write(partial, "E_in", y, 320, 32, &err);
  out = read_param(partial, "E_out", &rows, &cols);
  ok(rc == 0 && same_columns(out, y, 320, 32, 0, k) && same_columns(out, x, 320, 32, k, 32),
     "partly tied: writing E_in re-mirrors its first k columns into E_out, the rest of E_out stays");
  free(out), free(y), free(in0), free(x);
}

/* ------------------------------------------------------------ the tokenizer */

static void test_tokenizer(Lab *lab, Run *bpe_run) {
  Err err;
  RunOptions o = tiny("bytes", "tied", "256");
  Run *bytes = lab_add_run(lab, &o, &err);
  if (!bytes) {
    ok(0, "a byte-level run: %s", err.msg);
    return;
  }
  int32_t ids[16];
  size_t n, len;
  ok(run_tokenize(bytes, "Ab\n", 3, ids, 16, &n, &err) == 0 && n == 3 && ids[0] == 'A' && ids[1] == 'b' &&
         ids[2] == '\n',
     "byte-level: each byte is its own id");
  const char *tok = run_token(bytes, 'A', &len, &err);
  ok(tok && len == 1 && tok[0] == 'A', "byte-level: token 65 is 'A'");
  ok(!run_token(bytes, 256, &len, &err) && strstr(err.msg, "token id 256 is outside the tokenizer's ids [0, 256)"),
     "an id past the tokenizer is an error: %s", err.msg);
  ok(!run_token(bytes, -1, &len, &err) && strstr(err.msg, "-1"), "so is a negative id");

  /* BPE: a stretch of the corpus decoded, encoded again, decoded again */
  const Dataset *ds = &bpe_run->data->ds;
  ok(run_token_count(bpe_run, &err) == tokenizer_size(ds->tok) && tokenizer_size(ds->tok) > 256,
     "BPE: %d ids with merges", tokenizer_size(ds->tok));
  size_t need;
  run_detokenize(bpe_run, ds->tokens, 200, NULL, 0, &need, &err);
  char *text = malloc(need);
  int32_t *again = malloc(sizeof *again * need);
  run_detokenize(bpe_run, ds->tokens, 200, text, need, &len, &err);
  int rc = run_tokenize(bpe_run, text, len, again, need, &n, &err);
  char *back = malloc(need);
  size_t back_len;
  run_detokenize(bpe_run, again, n, back, need, &back_len, &err);
  ok(rc == 0 && n < len && back_len == len && memcmp(back, text, len) == 0,
     "BPE: %zu bytes of the corpus are %zu tokens, and decode back to the same bytes", len, n);
  int32_t bad[] = {5, 17, 9999};
  ok(run_detokenize(bpe_run, bad, 3, back, need, &back_len, &err) < 0 && strstr(err.msg, "9999 at position 3"),
     "a bad id in a list is an error naming it and where: %s", err.msg);
  ok(run_tokenize(bpe_run, text, len, again, 1, &n, &err) < 0, "too little room for the ids is an error");
  free(text), free(again), free(back);

  /* no tokenizer: a model below the 256 byte ids */
  RunOptions small = tiny("small", "tied", "256");
  small.model.vocab = 64;   /* below the settings' range: as a weights file made for tests can be */
  Model *m = model_create(&small.model, 1, &err);
  model_init(m, 1);
  Run *none = lab_adopt(lab, run_create(lab, &small, m, &err), &err);
  ok(none && run_tokenize(none, "a", 1, ids, 16, &n, &err) < 0 && strstr(err.msg, "has no tokenizer"),
     "a run without a tokenizer says so: %s", none ? err.msg : "not created");
  ok(none && run_measure_val(none, &err) < 0 && strstr(err.msg, "no held-out text") && strstr(err.msg, "64"),
     "nor has it a validation loss to measure: %s", none ? err.msg : "not created");
}

/* ------------------------------------------------------------ hidden states */

static void test_hidden(Run *r) {
  Err err;
  const ModelConfig *c = model_config(r->model);
  int B = c->batch, T = c->ctx, d = c->dim, L = c->layers;
  int32_t *rows = malloc(sizeof *rows * (size_t)B * (T + 1));
  run_batch(r, run_metrics(r)->step + 1, rows, &err);
  float *buf = malloc(sizeof *buf * (size_t)(L + 1) * B * T * d);
  float *pos[L + 1];
  for (int p = 0; p <= L; p++) pos[p] = buf + (size_t)p * B * T * d;
  ok(run_hidden(r, rows, B, T, pos, &err) == 0, "hidden states of the next batch");
  const float *wte = stored(r, WTE), *wpe = stored(r, "transformer.wpe.weight");
  double worst = 0;
  for (int i = 0; i < B; i++)
    for (int j = 0; j < T; j++)
      for (int k = 0; k < d; k++) {
        int32_t tok = rows[i * (T + 1) + j];
        double want = (double)wte[(size_t)tok * d + k] + wpe[(size_t)j * d + k];
        worst = fmax(worst, fabs(pos[0][((size_t)i * T + j) * d + k] - want));
      }
  ok(worst < 1e-6, "position 0 is wte[token] + wpe[position] (largest difference %g)", worst);

  EvalResult e;
  run_evaluate(r, rows, B, T, &e, &err);
  ok(memcmp(pos[L], model_residual(r->model, L), sizeof(float) * B * T * d) == 0,
     "position L is the residual stream a forward leaves after the last block");
  ok(memcmp(pos[1], pos[0], sizeof(float) * B * T * d) != 0, "the blocks change the stream");

  /* a part of the batch: rows of fewer tokens */
  int32_t part[2 * 6] = {1, 2, 3, 4, 5, 0, 9, 8, 7, 6, 5, 0};
  float *small[L + 1];
  for (int p = 0; p <= L; p++) small[p] = buf + (size_t)p * 2 * 5 * d;
  ok(run_hidden(r, part, 2, 5, small, &err) == 0 &&
         fabs(small[0][(1 * 5 + 2) * d + 3] - (wte[7 * d + 3] + wpe[2 * d + 3])) < 1e-6,
     "on given rows of fewer tokens, row 2 position 3 is wte[7] + wpe[2]");
  part[3] = 320;
  ok(run_hidden(r, part, 2, 5, small, &err) < 0 && strstr(err.msg, "320"), "a token id out of range is refused: %s",
     err.msg);
  ok(run_hidden(r, part, B + 1, 5, small, &err) < 0, "so are more rows than the batch");
  free(rows), free(buf);
}

/* Two runs alike: hidden states taken of one's next batch leave it the
** batch its next step trains on. */
static void test_hidden_keeps_the_batch(Lab *lab) {
  Err err;
  Run *a = add(lab, "same_a", "tied"), *b = add(lab, "same_b", "tied");
  if (!a || !b) return;
  run_step(a, &err), run_step(b, &err);
  const ModelConfig *c = model_config(a->model);
  int32_t *rows = malloc(sizeof *rows * (size_t)c->batch * (c->ctx + 1));
  float *buf = malloc(sizeof *buf * (size_t)(c->layers + 1) * c->batch * c->ctx * c->dim);
  float *pos[c->layers + 1];
  for (int p = 0; p <= c->layers; p++) pos[p] = buf + (size_t)p * c->batch * c->ctx * c->dim;
  run_batch(a, run_metrics(a)->step + 1, rows, &err);
  run_hidden(a, rows, c->batch, c->ctx, pos, &err);
  run_step(a, &err), run_step(b, &err);
  ok(run_metrics(a)->loss == run_metrics(b)->loss && run_metrics(a)->step == 2,
     "a step after hidden states trains on the same batch as without them (loss %.9g and %.9g)",
     run_metrics(a)->loss, run_metrics(b)->loss);
  free(rows), free(buf);
}

int main(void) {
  Err err;
  Lab *lab = lab_new(&err);
  Run *tied = add(lab, "tied", "tied"), *untied = add(lab, "untied", "untied"), *partial = add(lab, "partial", "8");
  if (!tied || !untied || !partial) {
    ok(0, "three runs, tied, untied and partly tied, are created");
    return tap_done();
  }
  test_names_and_shapes(tied, untied, partial);
  test_read(tied, untied, partial);
  test_write_round_trip(untied);
  test_write_refusals(untied);
  test_write_e_out(tied, untied, partial);
  test_tied_forward_uses_write(tied);
  test_tokenizer(lab, partial);
  test_hidden(untied);
  test_hidden_keeps_the_batch(lab);
  lab_free(lab);
  return tap_done();
}
