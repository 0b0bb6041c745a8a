/*
** released.c -- see released.h: pairing two released models' rows by
** token, their embeddings' statistics, and the paper's Table 1.
*/
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sysmem.h"
#include "lab/released.h"

/* Whether the folder holds a tokenizer's file: one that is there and
** cannot be read is an error, not a model without a tokenizer. */
static int has_tokenizer_file(const char *folder) {
  static const char *const names[] = {"tokenizer.json", "vocab.json", "merges.txt"};
  char path[PATH_MAX];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", folder, names[i]);
    if (access(path, F_OK) == 0) return 1;
  }
  return 0;
}

int released_open(Released *r, const char *path, Err *err) {
  memset(r, 0, sizeof *r);
  r->model = hf_open(path, err);
  if (!r->model) return -1;
  Err tok_err;
  r->tok = hftok_open(hf_folder(r->model), &tok_err);
  if (r->tok) return 0;
  snprintf(r->tok_problem, sizeof r->tok_problem, "%s", tok_err.msg);
  if (!has_tokenizer_file(hf_folder(r->model))) return 0;
  err_set(err, "%s", tok_err.msg);
  released_close(r);
  return -1;
}

void released_close(Released *r) {
  if (r->tok) hftok_free(r->tok);
  if (r->model) hf_close(r->model);
  memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------- pairing */

void token_pairs_free(TokenPairs *p) {
  free(p->a);
  free(p->b);
  memset(p, 0, sizeof *p);
}

/* The id standing for token 'id''s bytes in 't' itself is 'id': the one
** row of its bytes that pairs (a byte-fallback twin does not). */
static int canonical(const HfTok *t, int32_t id, const uint8_t *bytes, size_t len) {
  return hftok_lookup(t, bytes, len) == id;
}

/* Tokens of 't' among the first 'rows' rows, and rows no token names. */
static void count_tokens(const HfTok *t, int rows, int *tokens, int *blank) {
  *tokens = *blank = 0;
  for (int32_t id = 0; id < rows; id++) {
    size_t len;
    const uint8_t *bytes = hftok_bytes(t, id, &len);
    if (!bytes) ++*blank;
    else *tokens += canonical(t, id, bytes, len);
  }
}

int released_pair(const HfTok *ta, int rows_a, const HfTok *tb, int rows_b, TokenPairs *p, Err *err) {
  memset(p, 0, sizeof *p);
  int n_max = rows_a < rows_b ? rows_a : rows_b;
  p->a = malloc(((size_t)n_max + 1) * sizeof *p->a);
  p->b = malloc(((size_t)n_max + 1) * sizeof *p->b);
  if (!p->a || !p->b) {
    token_pairs_free(p);
    return err_set(err, "out of memory pairing %d and %d tokens", rows_a, rows_b);
  }
  for (int32_t ia = 0; ia < rows_a && p->n < n_max; ia++) {
    size_t len;
    const uint8_t *bytes = hftok_bytes(ta, ia, &len);
    if (!bytes || !canonical(ta, ia, bytes, len)) continue;
    int32_t ib = hftok_lookup(tb, bytes, len);
    if (ib < 0 || ib >= rows_b) continue;
    p->a[p->n] = ia;
    p->b[p->n] = ib;
    p->n++;
  }
  int tokens_a, tokens_b;
  count_tokens(ta, rows_a, &tokens_a, &p->a_blank);
  count_tokens(tb, rows_b, &tokens_b, &p->b_blank);
  p->a_only = tokens_a - p->n;
  p->b_only = tokens_b - p->n;
  return 0;
}

/* ---------------------------------------------------------- statistics */

static double row_norm(const float *x, int d) {
  double s = 0;
  for (int j = 0; j < d; j++) s += (double)x[j] * x[j];
  return sqrt(s);
}

/* Ranks (1-based, ties averaged) of 'v' [n] into 'rank'. */
typedef struct Ranked {
  double value;
  int at;
} Ranked;

static int by_value(const void *pa, const void *pb) {
  double a = ((const Ranked *)pa)->value, b = ((const Ranked *)pb)->value;
  return (a > b) - (a < b);
}

static int ranks(const double *v, int n, double *rank) {
  Ranked *r = malloc((size_t)n * sizeof *r);
  if (!r) return -1;
  for (int i = 0; i < n; i++) r[i] = (Ranked){v[i], i};
  qsort(r, (size_t)n, sizeof *r, by_value);
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && r[j + 1].value == r[i].value) j++;
    for (int k = i; k <= j; k++) rank[r[k].at] = (i + j) / 2.0 + 1;
    i = j + 1;
  }
  free(r);
  return 0;
}

static double pearson(const double *x, const double *y, int n) {
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++) mx += x[i], my += y[i];
  mx /= n, my /= n;
  for (int i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

/* Spearman's rank correlation of 'x' and 'y' [n] into '*rho'. */
static int spearman(const double *x, const double *y, int n, double *rho, Err *err) {
  double *rx = malloc((size_t)n * sizeof *rx), *ry = malloc((size_t)n * sizeof *ry);
  int rc = rx && ry && ranks(x, n, rx) == 0 && ranks(y, n, ry) == 0 ? 0 : -1;
  if (rc == 0) *rho = pearson(rx, ry, n);
  else err_set(err, "out of memory ranking %d tokens", n);
  free(rx);
  free(ry);
  return rc;
}

/* Norms of the rows that name a token, kept in 'norm' (NAN for the others). */
static void norm_summary(const HfTok *t, const float *e, int rows, int d, double *norm, EmbedStats *st) {
  double sum = 0, sq = 0;
  st->rows = 0;
  st->norm_min = INFINITY, st->norm_max = -INFINITY;
  for (int32_t id = 0; id < rows; id++) {
    size_t len;
    norm[id] = NAN;
    if (t && !hftok_bytes(t, id, &len)) continue;
    double n = norm[id] = row_norm(e + (size_t)id * d, d);
    sum += n, sq += n * n;
    st->norm_min = fmin(st->norm_min, n), st->norm_max = fmax(st->norm_max, n);
    st->rows++;
  }
  st->norm_mean = st->rows ? sum / st->rows : NAN;
  st->norm_std = st->rows > 1 ? sqrt(fmax(0, sq / st->rows - st->norm_mean * st->norm_mean)) : NAN;
}

/* Mean norm over 'k' entries of 'order' (ids) from 'from'. */
static double mean_of(const double *norm, const Ranked *order, int from, int k) {
  double s = 0;
  for (int i = 0; i < k; i++) s += norm[order[from + i].at];
  return k ? s / k : NAN;
}

/* Row norms against how often each token occurs in the corpus. */
static int frequency_stats(const HfTok *t, const double *norm, int rows, const uint8_t *corpus, size_t len,
                           const Cancel *cancel, EmbedStats *st, Err *err) {
  int32_t *ids;
  size_t n_ids;
  if (hftok_encode(t, corpus, len, &ids, &n_ids, cancel, err) < 0) return err_prefix(err, "--corpus");
  double *count = calloc((size_t)rows, sizeof *count), *freq = malloc((size_t)rows * sizeof *freq),
         *nrm = malloc((size_t)rows * sizeof *nrm);
  Ranked *order = malloc((size_t)rows * sizeof *order);
  int rc = -1;
  if (!count || !freq || !nrm || !order) {
    err_set(err, "out of memory counting %d tokens", rows);
    goto done;
  }
  for (size_t i = 0; i < n_ids; i++)
    if (ids[i] >= 0 && ids[i] < rows) count[ids[i]]++;
  st->corpus_tokens = (long)n_ids;
  int seen = 0, unseen = 0;
  double unseen_sum = 0;
  for (int id = 0; id < rows; id++) {
    if (isnan(norm[id])) continue;
    if (count[id] == 0) {
      unseen_sum += norm[id], unseen++;
      continue;
    }
    freq[seen] = count[id], nrm[seen] = norm[id];
    order[seen] = (Ranked){count[id], id};
    seen++;
  }
  st->seen = seen;
  st->norm_unseen = unseen ? unseen_sum / unseen : NAN;
  if (seen > 2 && spearman(nrm, freq, seen, &st->spearman, err) < 0) goto done;
  qsort(order, (size_t)seen, sizeof *order, by_value);   /* rarest first */
  int tenth = seen / 10 > 0 ? seen / 10 : seen;
  st->norm_rare = mean_of(norm, order, 0, tenth);
  st->norm_frequent = mean_of(norm, order, seen - tenth, tenth);
  rc = 0;
done:
  free(ids);
  free(count);
  free(freq);
  free(nrm);
  free(order);
  return rc;
}

/* Mean row cosine of 'e' and 'out' over the rows that name a token (those
** whose 'norm' is a number), as the norms are taken. */
static double token_row_cosine(const float *e, const float *out, const double *norm, int rows, int d) {
  double sum = 0;
  int n = 0;
  for (int id = 0; id < rows; id++)
    if (!isnan(norm[id])) sum += align_row_cosine(e + (size_t)id * d, out + (size_t)id * d, 1, d), n++;
  return n ? sum / n : NAN;
}

int released_stats(const Released *r, const float *e, const float *out, const uint8_t *corpus, size_t len,
                   const Cancel *cancel, EmbedStats *st, Err *err) {
  const HfInfo *in = hf_info(r->model);
  memset(st, 0, sizeof *st);
  st->spearman = st->norm_frequent = st->norm_rare = st->norm_unseen = NAN;
  double *norm = malloc((size_t)in->vocab * sizeof *norm);
  if (!norm) return err_set(err, "out of memory for %d row norms", in->vocab);
  norm_summary(r->tok, e, in->vocab, in->dim, norm, st);
  st->in_out_cosine = out ? token_row_cosine(e, out, norm, in->vocab, in->dim) : NAN;
  int rc = 0;
  if (corpus) {
    if (!r->tok) rc = err_set(err, "--corpus needs the model's tokenizer: %s", r->tok_problem);
    else if (!hftok_can_encode(r->tok))
      rc = err_set(err, "--corpus: %s is a %s tokenizer, which tielab reads but cannot encode with",
                   hftok_file(r->tok), hftok_kind(r->tok));
    else rc = frequency_stats(r->tok, norm, in->vocab, corpus, len, cancel, st, err);
  }
  free(norm);
  return rc;
}

/* -------------------------------------------------------------- table 1 */

static double get_linear(const AlignScores *s) { return s->linear; }
static double get_procrustes(const AlignScores *s) { return s->procrustes; }
static double get_knn(const AlignScores *s) { return s->knn; }
static double get_cka(const AlignScores *s) { return s->cka; }

static const Table1Metric metrics[] = {
  {"linear", "linear map", get_linear},
  {"procrustes", "Procrustes", get_procrustes},
  {"knn", "kNN@10 overlap", get_knn},
  {"cka", "CKA", get_cka},
};

const Table1Metric *table1_metrics(int *n) {
  *n = (int)(sizeof metrics / sizeof metrics[0]);
  return metrics;
}

void table1_free(Table1 *t) { token_pairs_free(&t->pairs); }

void table1_each(const Table1 *t, Table1Visit visit, void *ctx) {
  static const char *const side_names[2] = {"in", "out"};
  const AlignResult *side[2] = {&t->vs_in, &t->vs_out};
  char key[64];
  for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
    for (int s = 0; s < 2; s++) {
      snprintf(key, sizeof key, "%s_%s", metrics[i].key, side_names[s]);
      visit(ctx, key, metrics[i].get(&side[s]->score));
      snprintf(key, sizeof key, "random_%s_%s", metrics[i].key, side_names[s]);
      visit(ctx, key, metrics[i].get(&side[s]->baseline));
    }
}

void released_gather(float *out, const float *m, const int32_t *rows, int n, int d) {
  for (int i = 0; i < n; i++) memcpy(out + (size_t)i * d, m + (size_t)rows[i] * d, (size_t)d * sizeof *out);
}

static float *gather_rows(const float *m, const int32_t *rows, int n, int d, const char *what, Err *err);

/* Tensor 't' of 'm', only the rows 'rows' [n], into a new [n,dim] matrix:
** the whole tensor is read once and dropped, so at most one full matrix is
** held at a time. */
static float *paired_rows(const HfModel *m, const HfTensor *t, const int32_t *rows, int n, Err *err) {
  const HfInfo *in = hf_info(m);
  size_t d = (size_t)in->dim;
  if (sysmem_check(hf_tensor_f32_bytes(t) + (size_t)n * d * sizeof(float), t->name, err) < 0) return NULL;
  float *full = hf_read_f32_alloc(m, t, err);
  if (!full) return NULL;
  float *out = gather_rows(full, rows, n, (int)d, t->name, err);
  free(full);
  return out;
}

static int check_pair(const Released *a, const Released *b, Err *err) {
  const HfInfo *ia = hf_info(a->model), *ib = hf_info(b->model);
  const Released *no_tok = !a->tok ? a : !b->tok ? b : NULL;
  if (no_tok)
    return err_set(err, "%s: rows are paired by token string and this model's tokenizer cannot be read: %s",
                   hf_path(no_tok->model), no_tok->tok_problem);
  if (ia->dim != ib->dim)
    return err_set(err, "the widths differ (%s: %d, %s: %d): Table 1's maps compare matrices of one width",
                   hf_path(a->model), ia->dim, hf_path(b->model), ib->dim);
  return 0;
}

/* The options Table 1 is computed with: align.h's defaults, its four metrics. */
static AlignOptions table1_options(int threads) {
  AlignOptions o = align_default_options();
  o.threads = threads;
  o.metrics = ALIGN_TABLE1;
  return o;
}

/* Rows 'rows' [n] of a [*,d] matrix, in a new [n,d] one. */
static float *gather_rows(const float *m, const int32_t *rows, int n, int d, const char *what, Err *err) {
  float *out = malloc((size_t)n * d * sizeof *out);
  if (!out) err_set(err, "out of memory for %d rows of %s", n, what);
  else released_gather(out, m, rows, n, d);
  return out;
}

/* Table 1's two comparisons on paired rows: B's matrices are the sources
** of the maps (align.h: the untied matrix mapped onto the tied one). */
static int table1_align(Table1 *t, const float *a_in, const float *b_in, const float *b_out, int d, int threads,
                        Err *err) {
  AlignOptions opt = table1_options(threads);
  int n = t->pairs.n, rc = -1;
  double start = clock_seconds();
  /* One workspace for both: the baseline and its factorisation are made once. */
  AlignWork *w = align_work_new();
  if (!w) return err_set(err, "out of memory for the alignment's workspace");
  if (sysmem_check(align_memory_bytes(n, d, opt.knn_k), "the alignment's workspace", err) == 0 &&
      align_compare_in(w, b_in, a_in, n, d, &opt, &t->vs_in, err) == 0 &&
      align_compare_in(w, b_out, a_in, n, d, &opt, &t->vs_out, err) == 0)
    rc = 0;
  align_work_free(w);
  t->seconds_align = clock_seconds() - start;
  return rc;
}

/* Pair the two models' tokens, refusing a pair Table 1 cannot measure. */
static int table1_pairs(const Released *a, const Released *b, Table1 *t, Err *err) {
  memset(t, 0, sizeof *t);
  if (check_pair(a, b, err) < 0) return -1;
  const HfInfo *ia = hf_info(a->model), *ib = hf_info(b->model);
  if (released_pair(a->tok, ia->vocab, b->tok, ib->vocab, &t->pairs, err) < 0) return -1;
  if (t->pairs.n < 2 * ia->dim) {
    err_set(err, "only %d tokens are shared by the two tokenizers; the maps need at least twice the width (%d)",
            t->pairs.n, 2 * ia->dim);
    token_pairs_free(&t->pairs);
    return -1;
  }
  return 0;
}

int released_table1(const Released *a, const Released *b, int threads, Table1 *t, Err *err) {
  if (table1_pairs(a, b, t, err) < 0) return -1;
  const HfInfo *ia = hf_info(a->model), *ib = hf_info(b->model);
  int n = t->pairs.n;
  double start = clock_seconds();
  float *a_in = paired_rows(a->model, ia->embed, t->pairs.a, n, err), *b_in = NULL, *b_out = NULL;
  if (a_in) b_in = paired_rows(b->model, ib->embed, t->pairs.b, n, err);
  if (b_in) b_out = ib->tied ? b_in : paired_rows(b->model, ib->head, t->pairs.b, n, err);
  t->seconds_read = clock_seconds() - start;
  int rc = b_out ? table1_align(t, a_in, b_in, b_out, ia->dim, threads, err) : -1;
  if (b_out != b_in) free(b_out);
  free(b_in);
  free(a_in);
  return rc;
}

int released_table1_of(const Released *a, const float *a_in, const Released *b, const float *b_in,
                       const float *b_out, int threads, Table1 *t, Err *err) {
  if (table1_pairs(a, b, t, err) < 0) return -1;
  int n = t->pairs.n, d = hf_info(a->model)->dim, rc = -1;
  float *pa = gather_rows(a_in, t->pairs.a, n, d, "A's input matrix", err), *pb_in = NULL, *pb_out = NULL;
  if (pa) pb_in = gather_rows(b_in, t->pairs.b, n, d, "B's input matrix", err);
  if (pb_in) pb_out = gather_rows(b_out, t->pairs.b, n, d, "B's output matrix", err);
  if (pb_out) rc = table1_align(t, pa, pb_in, pb_out, d, threads, err);
  free(pb_out);
  free(pb_in);
  free(pa);
  return rc;
}
