/*
** inspect.c -- tielab --inspect MODEL [--against MODEL] [--json]: what a
** released model is, its embedding's statistics, and with --against the
** paper's Table 1 for the pair (lab/released.h computes them; this file
** only reads the command line's choices and prints).
**
** The report is for a person; with --json its last line is one JSON object
** for a script. Timings go to stderr, so that stdout is the same from run
** to run.
*/
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "app/inspect.h"
#include "base/clock.h"
#include "core/corpus.h"
#include "lab/released.h"

/* ---------------------------------------------------------------- text */


static void print_tying(const HfInfo *in) {
  if (in->tied && in->head == in->embed)
    printf("  tied       yes: no output head is stored; %s serves both sides\n", in->embed->name);
  else if (in->tied)
    printf("  tied       yes: %s holds the same bytes as %s\n", in->head->name, in->embed->name);
  else
    printf("  tied       no: %s (E_in) and %s (E_out)\n", in->embed->name, in->head->name);
  if (in->config_tied >= 0) printf("             config.json agrees (%s)\n", in->config_tied ? "tied" : "untied");
}

static void print_model(const char *role, const Released *r) {
  const HfInfo *in = hf_info(r->model);
  printf("%s %s\n", role, hf_path(r->model));
  printf("  family     %s%s%s\n", in->family, in->model_type[0] ? ", model_type " : "", in->model_type);
  printf("  embedding  %d x %d, %s", in->vocab, in->dim, st_dtype_name(in->dtype));
  if (in->layers) printf(", %d layers, %d heads, context %d", in->layers, in->heads, in->ctx);
  printf("\n");
  print_tying(in);
  if (r->tok)
    printf("  tokenizer  %s, %s, %d tokens\n", hftok_file(r->tok), hftok_kind(r->tok), hftok_count(r->tok));
  else
    printf("  tokenizer  none read: %s\n", r->tok_problem);
  printf("  files      %d safetensors file%s, %d tensors\n", in->n_files, in->n_files == 1 ? "" : "s",
         in->n_tensors);
}

static void print_stats(const EmbedStats *st, const char *corpus) {
  printf("  row norms  mean %.4g, sd %.4g, min %.4g, max %.4g over %d rows that name a token\n", st->norm_mean,
         st->norm_std, st->norm_min, st->norm_max, st->rows);
  if (!isnan(st->in_out_cosine)) printf("  E_in/E_out mean row cosine %.4f\n", st->in_out_cosine);
  if (!st->corpus_tokens) return;
  printf("  frequency  in %s: %ld tokens, %d distinct tokens occur\n", corpus, st->corpus_tokens, st->seen);
  printf("             Spearman(row norm, frequency) %.4f; mean norm of the most frequent tenth %.4g, "
         "the rarest tenth %.4g, tokens never seen %.4g\n",
         st->spearman, st->norm_frequent, st->norm_rare, st->norm_unseen);
}

static void print_table(const Table1 *t, const Released *a, const Released *b) {
  const HfInfo *ia = hf_info(a->model), *ib = hf_info(b->model);
  const TokenPairs *p = &t->pairs;
  printf("\nTable 1: A's input matrix against B's, rows paired by token string\n");
  printf("  shared tokens %d (A has %d tokens B lacks, B has %d A lacks; rows with no token: A %d, B %d)\n", p->n,
         p->a_only, p->b_only, p->a_blank, p->b_blank);
  if (!ia->tied)
    printf("  note: A is untied; its input matrix is compared (the paper's A is a tied model%s)\n",
           ib->tied ? ": give the two the other way round" : "");
  if (ib->tied) printf("  note: B is tied; its E_in and E_out are one matrix, so the two columns agree\n");
  printf("\n  %-16s %12s %8s %12s %8s\n", "", "vs B's E_in", "random", "vs B's E_out", "random");
  int n, closer_out = 0;
  const Table1Metric *m = table1_metrics(&n);
  for (int i = 0; i < n; i++) {
    double in = m[i].get(&t->vs_in.score), out = m[i].get(&t->vs_out.score);
    printf("  %-16s %12.4f %8.4f %12.4f %8.4f\n", m[i].label, in, m[i].get(&t->vs_in.baseline), out,
           m[i].get(&t->vs_out.baseline));
    closer_out += out > in;
  }
  printf("\n  A's matrix is closer to B's output matrix than to its input matrix on %d of %d measures\n",
         closer_out, n);
}

/* ---------------------------------------------------------------- json */

static json_t *number(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *model_json(const Released *r) {
  const HfInfo *in = hf_info(r->model);
  json_t *o = json_object();
  json_object_set_new(o, "path", json_string(hf_path(r->model)));
  json_object_set_new(o, "family", json_string(in->family));
  json_object_set_new(o, setting_name(SETTING_VOCAB), json_integer(in->vocab));
  json_object_set_new(o, setting_name(SETTING_DIM), json_integer(in->dim));
  json_object_set_new(o, "dtype", json_string(st_dtype_name(in->dtype)));
  json_object_set_new(o, "tied", json_boolean(in->tied));
  json_object_set_new(o, "embed", json_string(in->embed->name));
  json_object_set_new(o, "head", json_string(in->head->name));
  json_object_set_new(o, "tokens", r->tok ? json_integer(hftok_count(r->tok)) : json_null());
  return o;
}

static void stats_json(json_t *o, const EmbedStats *st) {
  json_object_set_new(o, "norm_mean", number(st->norm_mean));
  json_object_set_new(o, "norm_std", number(st->norm_std));
  json_object_set_new(o, "in_out_cosine", number(st->in_out_cosine));
  if (!st->corpus_tokens) return;
  json_object_set_new(o, "corpus_tokens", json_integer(st->corpus_tokens));
  json_object_set_new(o, "spearman_norm_frequency", number(st->spearman));
  json_object_set_new(o, "norm_frequent", number(st->norm_frequent));
  json_object_set_new(o, "norm_rare", number(st->norm_rare));
  json_object_set_new(o, "norm_unseen", number(st->norm_unseen));
}

static void json_figure(void *o, const char *key, double v) { json_object_set_new(o, key, number(v)); }

static void table_json(json_t *o, const Table1 *t) {
  json_object_set_new(o, "shared_tokens", json_integer(t->pairs.n));
  table1_each(t, json_figure, o);
}

static int print_json(json_t *o) {
  char *line = json_dumps(o, JSON_COMPACT);
  if (!line) return -1;
  printf("%s\n", line);
  free(line);
  return 0;
}

/* ----------------------------------------------------------- the steps */

/* Model A's statistics: its matrices read, the corpus counted. */
static int inspect_stats(const Released *a, const CliOptions *o, EmbedStats *st, Err *err) {
  const HfInfo *in = hf_info(a->model);
  double start = clock_seconds();
  float *e = hf_read_f32_alloc(a->model, in->embed, err), *out = NULL;
  if (!e) return -1;
  if (!in->tied && !(out = hf_read_f32_alloc(a->model, in->head, err))) {
    free(e);
    return -1;
  }
  Corpus c = {0};
  int rc = 0;
  if (o->run.corpus[0]) rc = corpus_read_max(&c, o->run.corpus, (uint64_t)o->run.corpus_max_mb << 20, 0, err);
  if (rc == 0) rc = released_stats(a, e, out, c.text, c.len, NULL, st, err);
  fprintf(stderr, "tielab: read and measured %s in %.1f s\n", hf_path(a->model), clock_seconds() - start);
  corpus_free(&c);
  free(out);
  free(e);
  return rc;
}

static int inspect_pair(const Released *a, const Released *b, const CliOptions *o, Table1 *t, Err *err) {
  if (released_table1(a, b, o->run.threads, t, err) < 0) return -1;
  fprintf(stderr, "tielab: Table 1 (threads=%d) read the matrices in %.1f s and measured them in %.1f s\n",
          o->run.threads, t->seconds_read, t->seconds_align);
  return 0;
}

static int report(const CliOptions *o, Released *a, Released *b, Err *err) {
  EmbedStats st;
  Table1 t = {0};
  print_model("A", a);
  if (inspect_stats(a, o, &st, err) < 0) return -1;
  print_stats(&st, o->run.corpus);
  if (b->model) {
    printf("\n");
    print_model("B", b);
    if (inspect_pair(a, b, o, &t, err) < 0) return -1;
    print_table(&t, a, b);
  }
  int rc = 0;
  if (o->json) {
    json_t *j = json_object(), *models = json_array();
    json_array_append_new(models, model_json(a));
    if (b->model) json_array_append_new(models, model_json(b));
    json_object_set_new(j, "models", models);
    stats_json(j, &st);
    if (b->model) table_json(j, &t);
    if (print_json(j) < 0) rc = err_set(err, "out of memory writing the JSON line");
    json_decref(j);
  }
  table1_free(&t);
  return rc;
}

int inspect_main(const CliOptions *o) {
  Released a = {0}, b = {0};
  Err err;
  int rc = released_open(&a, o->inspect, &err);
  if (rc == 0 && o->against) rc = released_open(&b, o->against, &err);
  if (rc == 0) rc = report(o, &a, &b, &err);
  fflush(stdout);
  if (rc < 0) fprintf(stderr, "tielab: %s\n", err.msg);
  released_close(&b);
  released_close(&a);
  return rc < 0 ? EXIT_RUNTIME : EXIT_OK;
}
