/*
** lmetrics.c -- the lab's numbers as Lua tables: a run's metrics (with the
** online tuned lens, the logit lens and the fitted lens per layer position,
** and the last alignment), the result of lab.align, and a history series.
** Arrays are 1-based: lens position p (0 = after the embeddings) is
** element p+1.
*/
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lab/lensfit.h"
#include "luaapi/linternal.h"

static void num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void integer(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void array(lua_State *L, const char *k, const double *v, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, k);
}

static void push_lens(lua_State *L, const LensStats *s) {
  int n = s->step < 0 ? 0 : s->n;
  lua_createtable(L, 0, 8);
  integer(L, "step", s->step);
  integer(L, "n", n);
  array(L, "kl", s->kl, n);
  array(L, "ce", s->ce, n);
  array(L, "entropy", s->entropy, n);
  array(L, "acc", s->acc, n);
  array(L, "agree", s->agree, n);
  array(L, "contrib", s->contrib, n);
}

/* Each score against the partner's E_in ('_in') and E_out ('_out'). */
typedef struct ScoreField {
  const char *name;
  size_t offset;
} ScoreField;

static const ScoreField score_fields[] = {
  {"cos", offsetof(AlignScores, cos_raw)},      {"procrustes", offsetof(AlignScores, procrustes)},
  {"linear", offsetof(AlignScores, linear)},    {"cka", offsetof(AlignScores, cka)},
  {"cca", offsetof(AlignScores, cca)},          {"svcca", offsetof(AlignScores, svcca)},
  {"subspace", offsetof(AlignScores, subspace)}, {"knn", offsetof(AlignScores, knn)},
};

static double score(const AlignScores *s, size_t offset) { return *(const double *)((const char *)s + offset); }

static void push_scores(lua_State *L, const AlignScores *in, const AlignScores *out) {
  char key[32];
  for (size_t i = 0; i < sizeof score_fields / sizeof *score_fields; i++) {
    snprintf(key, sizeof key, "%s_in", score_fields[i].name);
    num(L, key, score(in, score_fields[i].offset));
    snprintf(key, sizeof key, "%s_out", score_fields[i].name);
    num(L, key, score(out, score_fields[i].offset));
  }
}

void lmetrics_push_scores(lua_State *L, const AlignScores *s) {
  lua_createtable(L, 0, 10);
  for (size_t i = 0; i < sizeof score_fields / sizeof *score_fields; i++)
    num(L, score_fields[i].name, score(s, score_fields[i].offset));
}

void lmetrics_push_align(lua_State *L, const AlignStats *a) {
  lua_createtable(L, 0, 24);
  integer(L, "step", a->step);
  lua_pushstring(L, a->partner);
  lua_setfield(L, -2, setting_name(SETTING_PARTNER));
  lua_pushboolean(L, a->partner_shares_init);
  lua_setfield(L, -2, "shares_init");
  integer(L, "topk", a->vs_in.topk);
  push_scores(L, &a->vs_in.score, &a->vs_out.score);
  lua_createtable(L, 0, 16);
  push_scores(L, &a->vs_in.baseline, &a->vs_out.baseline);
  lua_setfield(L, -2, "baseline");
}

void lmetrics_push_val(lua_State *L, const RunMetrics *m) {
  lua_createtable(L, 0, 3);
  num(L, "loss", m->val_loss);
  num(L, "ppl", m->val_ppl);
  integer(L, "step", m->val_step);
}

void lmetrics_push(lua_State *L, const RunMetrics *m, const char *name) {
  const GradStats *g = &m->grad;
  char tie_buf[16];
  const char *tie = config_tie_name(m->tie_k, m->dim, tie_buf);
  lua_createtable(L, 0, 37);
  lua_pushstring(L, name);
  lua_setfield(L, -2, setting_name(SETTING_NAME));
  integer(L, "step", m->step);
  num(L, "loss", m->loss);
  num(L, "aux_loss", m->aux_loss);
  num(L, "val_loss", m->val_loss);
  num(L, "val_ppl", m->val_ppl);
  integer(L, "val_step", m->val_step);
  num(L, "grad_in", g->in_l2);
  num(L, "grad_in_act", g->in_act_l2);
  num(L, "grad_out", g->out_l2);
  num(L, "grad_in_l1", g->in_l1);
  num(L, "grad_in_act_l1", g->in_act_l1);
  num(L, "grad_out_l1", g->out_l1);
  num(L, "grad_ratio", m->grad_ratio);
  num(L, "grad_ratio_act", m->grad_ratio_act);
  num(L, "grad_ratio_l1", m->grad_ratio_l1);
  num(L, "grad_ratio_act_l1", m->grad_ratio_act_l1);
  num(L, "rows_touched", g->rows_touched);
  num(L, "grad_norm", g->total_norm);
  num(L, "tokens_per_s", m->tokens_per_s);
  num(L, "drift_in", m->drift_in);
  num(L, "normfreq_in", m->normfreq_in);
  num(L, "normfreq_out", m->normfreq_out);
  num(L, "drift_out", m->drift_out);
  integer(L, "tie_k", m->tie_k);
  lua_pushstring(L, tie);
  lua_setfield(L, -2, setting_name(SETTING_TIE));
  integer(L, setting_name(SETTING_DIM), m->dim);
  num(L, setting_name(SETTING_IN_SCALE), m->in_scale);
  num(L, setting_name(SETTING_OUT_SCALE), m->out_scale);
  num(L, setting_name(SETTING_LR), m->lr);
  num(L, "emb_lr", m->emb_lr);
  lua_pushboolean(L, m->paused);
  lua_setfield(L, -2, "paused");
  push_lens(L, &m->lens);
  lua_setfield(L, -2, "lens");
  push_lens(L, &m->logit_lens);
  lua_setfield(L, -2, "logit_lens");
  if (m->align.step >= 0) {
    lmetrics_push_align(L, &m->align);
    lua_setfield(L, -2, "align");
  }
  if (m->fitted_lens.step >= 0) {
    lmetrics_push_fitted(L, &m->fitted_lens, &m->fitted);
    lua_setfield(L, -2, "fitted_lens");
  }
}

/* The fitted lens: a lens table plus how its fit went. */
void lmetrics_push_fitted(lua_State *L, const LensStats *s, const LensFitInfo *f) {
  push_lens(L, s);
  integer(L, "steps", f->steps);
  lua_pushboolean(L, f->converged);
  lua_setfield(L, -2, "converged");
  num(L, "lr", f->lr);
  num(L, "tol", f->tol);
  integer(L, "tokens_per_step", f->tokens_per_step);
  integer(L, "patience", f->patience);
  lua_pushstring(L, lensfit_stop_name(f->stopped));
  lua_setfield(L, -2, "stopped");
  num(L, "seconds", f->seconds);
}

/* {steps=, values=, min=, max=, n=}: one entry per bucket, at the bucket's
** last step, with the bucket's mean, min and max. */
int lmetrics_push_history(lua_State *L, const HistBucket *b, int n) {
  lua_createtable(L, 0, 5);
  integer(L, "n", n);
  const char *keys[] = {"steps", "values", "min", "max"};
  for (int k = 0; k < 4; k++) {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
      if (k == 0) lua_pushinteger(L, b[i].step_last);
      else lua_pushnumber(L, k == 1 ? b[i].mean : k == 2 ? b[i].min : b[i].max);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, keys[k]);
  }
  return 1;
}
