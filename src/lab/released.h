/*
** released.h -- released models measured as the paper measures them: one
** model's embedding statistics, and the paper's Table 1 for a pair -- the
** first model's input matrix (the tied one) against the second's input
** and output matrices.
**
** Two released models rarely share a tokenizer, and row i of one
** embedding is not row i of the other: rows are paired by the bytes their
** tokens stand for (hftok.h), through both tokenizers, and only the tokens
** both know are compared. Embedding rows that no token names (a vocabulary
** padded to a multiple of 64 or 128) are left out and counted.
*/
#ifndef TIELAB_RELEASED_H
#define TIELAB_RELEASED_H

#include <stddef.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"
#include "core/hfmodel.h"
#include "core/hftok.h"
#include "lab/align.h"

/* A released model and its tokenizer, opened together. */
typedef struct Released {
  HfModel *model;
  HfTok *tok;              /* NULL when the folder holds none */
  char tok_problem[ERR_MSG_MAX];   /* why 'tok' is NULL */
} Released;

int released_open(Released *r, const char *path, Err *err);
void released_close(Released *r);

/* Rows of two embeddings that stand for the same token. */
typedef struct TokenPairs {
  int n;                  /* shared tokens */
  int32_t *a, *b;         /* [n] the row of each in A and in B, A's order */
  int a_only, b_only;     /* tokens one has and the other lacks */
  int a_blank, b_blank;   /* embedding rows no token names */
} TokenPairs;

/* Pair the first 'rows_a' rows of A with the first 'rows_b' of B. */
int released_pair(const HfTok *ta, int rows_a, const HfTok *tb, int rows_b, TokenPairs *p, Err *err);
void token_pairs_free(TokenPairs *p);

/* Row norms of an embedding, against token frequency in a corpus. */
typedef struct EmbedStats {
  int rows;                        /* rows that name a token */
  double norm_mean, norm_std, norm_min, norm_max;
  double in_out_cosine;            /* untied: mean row cosine of E_in and E_out; NAN tied */
  /* with a corpus */
  long corpus_tokens;              /* 0: no corpus */
  int seen;                        /* tokens that occur in it */
  double spearman;                 /* rank correlation of row norm and frequency, over seen tokens */
  double norm_frequent;            /* mean norm of the most frequent tenth of the seen tokens */
  double norm_rare;                /* of the least frequent tenth */
  double norm_unseen;              /* of the tokens that never occur; NAN when none */
} EmbedStats;

/* Statistics of 'e' ([rows,dim] E_in) and, untied, 'out' (E_out, or NULL);
** 'corpus' (NULL: none) tokenized with the model's tokenizer. */
int released_stats(const Released *r, const float *e, const float *out, const uint8_t *corpus, size_t len,
                   const Cancel *cancel, EmbedStats *st, Err *err);

/* The paper's Table 1 for (A, B): B's E_in and E_out, as the sources of the
** maps, against A's input matrix, over the rows both tokenizers share. */
typedef struct Table1 {
  TokenPairs pairs;
  AlignResult vs_in, vs_out;
  double seconds_read, seconds_align;
} Table1;

int released_table1(const Released *a, const Released *b, int threads, Table1 *t, Err *err);
/* The same on matrices already read: 'a_in' [vocab,dim] of A, 'b_in' and
** 'b_out' of B (the same pointer for a tied B). */
int released_table1_of(const Released *a, const float *a_in, const Released *b, const float *b_in,
                       const float *b_out, int threads, Table1 *t, Err *err);
void table1_free(Table1 *t);

/* The four metrics Table 1 reports, in its order, for the printers. */
typedef struct Table1Metric {
  const char *key;       /* "linear", as the JSON keys spell it */
  const char *label;     /* "linear map" */
  double (*get)(const AlignScores *s);
} Table1Metric;

const Table1Metric *table1_metrics(int *n);

/* Each figure of 't' by the name --json gives it -- "linear_in",
** "random_linear_in", "linear_out", ... -- in the table's order. */
typedef void (*Table1Visit)(void *ctx, const char *key, double value);
void table1_each(const Table1 *t, Table1Visit visit, void *ctx);

/* Rows 'rows' [n] of the [*,d] matrix 'm' into 'out' [n,d]. */
void released_gather(float *out, const float *m, const int32_t *rows, int n, int d);

#endif
