/*
** lrun.c -- the run handle, userdata 'tielab.run'. A handle holds the
** run's id, never a pointer: once the run is removed every use raises
** "attempt to use a removed run" (as liolib.c does for a closed file).
** Handles are cached per id in a weak table, so the same run is always the
** same Lua value (usable as a table key, equal with ==).
**
** Methods copy what they need out of the lab and build Lua values after.
** Those that only read (metrics, options, history, events, the name) copy
** from the host's view, which in the lab is the trainer's newest
** publication: they never wait for a training step. Those that change the
** run or need its model hold the lab's lock.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab/lensfit.h"
#include "luaapi/linternal.h"

typedef struct LRun {
  int id;           /* -1 once removed */
  char name[64];    /* kept for tostring after removal */
} LRun;

static LRun *handle(lua_State *L, int idx) { return luaL_checkudata(L, idx, LAPI_RUN_META); }

/* ------------------------------------------------------------ copies out of the view */

void lrun_copy(void *ctx, const HostRunView *v) {
  RunCopy *c = ctx;
  snprintf(c->name, sizeof c->name, "%s", v->name);
  c->m = *v->m;
  c->o = *v->o;
}

static void copy_name(void *ctx, const HostRunView *v) { snprintf(ctx, 64, "%s", v->name); }

/* Run 'id' as the view has it; raises when it is gone. */
static void read_run(lua_State *L, int id, RunCopy *c) {
  if (lapi_view(lapi_get(L), id, lrun_copy, c) == 0) luaL_error(L, "attempt to use a removed run");
}

static void forget(lua_State *L, LRun *h) {
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.handles");
  lua_pushnil(L);
  lua_rawseti(L, -2, h->id);
  lua_pop(L, 1);
  h->id = -1;
}

void lrun_push(lua_State *L, int id) {
  LuaApi *api = lapi_get(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.handles");
  if (lua_rawgeti(L, -1, id) == LUA_TUSERDATA) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  LRun *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->id = -1;                       /* consistent before anything can fail */
  h->name[0] = '\0';
  luaL_setmetatable(L, LAPI_RUN_META);
  if (lapi_view(api, id, copy_name, h->name) > 0) h->id = id;
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, id);
  lua_remove(L, -2);
}

int lrun_check(lua_State *L, int idx) {
  LuaApi *api = lapi_get(L);
  LRun *h = handle(L, idx);
  if (h->id >= 0 && lapi_view(api, h->id, NULL, NULL) == 0) forget(L, h);
  if (h->id < 0) luaL_error(L, "attempt to use a removed run");
  return h->id;
}

/* The run behind handle 'idx' with the lab locked; the caller unlocks. */
Run *lrun_lock(lua_State *L, int idx, LuaApi *api) {
  int id = lrun_check(L, idx);
  lhooks_refuse(L);
  Run *r = lab_run_by_id(lapi_lock(api), id);
  if (!r) {
    lapi_unlock(api);
    luaL_error(L, "attempt to use a removed run");
  }
  return r;
}

/* Push the current metrics of run 'id' (with its name). */
static int push_metrics(lua_State *L, int id) {
  RunCopy c;
  read_run(L, id, &c);
  lmetrics_push(L, &c.m, c.name);
  return 1;
}

/* ------------------------------------------------------------ training */

static int lrun_step_k(lua_State *L, int status, lua_KContext ctx) {
  if (status == LUA_YIELD) lapi_step_result(L);
  return push_metrics(L, (int)ctx);
}

static int lrun_step(lua_State *L) {
  int id = lrun_check(L, 1);
  lua_Integer n = luaL_optinteger(L, 2, 1);
  luaL_argcheck(L, n >= 0 && n <= 1000000000, 2, "steps must be in [0, 1e9]");
  if (n == 0) return push_metrics(L, id);
  return lapi_wait_steps(L, id, (long)n, id, lrun_step_k);
}

static int lrun_set(lua_State *L) {
  LuaApi *api = lapi_get(L);
  lrun_check(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  LargsPair pairs[64];
  int n = largs_live_pairs(L, 2, "r:set", pairs, 64);
  Err err;
  int rc = steer_set(lrun_lock(L, 1, api), pairs, n, &err);
  lapi_unlock(api);
  if (rc < 0) return luaL_error(L, "r:set: %s", err.msg);
  lua_settop(L, 1);
  return 1;
}

static int set_paused(lua_State *L, int paused) {
  LuaApi *api = lapi_get(L);
  run_set_paused(lrun_lock(L, 1, api), paused);
  lapi_unlock(api);
  lua_settop(L, 1);
  return 1;
}

static int lrun_pause(lua_State *L) { return set_paused(L, 1); }
static int lrun_resume(lua_State *L) { return set_paused(L, 0); }

static int lrun_remove(lua_State *L) {
  LuaApi *api = lapi_get(L);
  Run *r = lrun_lock(L, 1, api);
  Err err;
  if (run_refuse_if_fitting(r, "be removed", &err) < 0) {
    lapi_unlock(api);
    return luaL_error(L, "r:remove: %s", err.msg);
  }
  lapi_forget_run(api, run_id(r));
  lab_remove_run(api->lab, r);
  lapi_unlock(api);
  forget(L, handle(L, 1));
  return 0;
}

/* ------------------------------------------------------------ reading */

static int lrun_metrics(lua_State *L) { return push_metrics(L, lrun_check(L, 1)); }

static int lrun_options(lua_State *L) {
  RunCopy c;
  read_run(L, lrun_check(L, 1), &c);
  largs_push_options(L, &c.o);
  return 1;
}

/* What a history read asks of the view: the names of the series, one
** series into 'b' (room for 'cap' buckets; 'n' says how many there were),
** or the events into 'e'. */
typedef struct HistRead {
  const char *series;
  HistBucket *b;
  int cap, n, found;
  char (*names)[64];
  HistEvent *e;
} HistRead;

static void read_names(void *ctx, const HostRunView *v) {
  HistRead *q = ctx;
  q->n = v->hist ? history_n_series(v->hist) : 0;
  if (q->n > q->cap) q->n = q->cap;
  for (int i = 0; i < q->n; i++) snprintf(q->names[i], sizeof q->names[i], "%s", history_series_name(v->hist, i));
}

static void read_series(void *ctx, const HostRunView *v) {
  HistRead *q = ctx;
  const HistBucket *b = v->hist ? history_series(v->hist, q->series, &q->n) : NULL;
  q->found = b != NULL;
  if (!b) q->n = 0;
  if (b && q->b) memcpy(q->b, b, sizeof *b * (size_t)(q->n < q->cap ? q->n : q->cap));
}

static void read_events(void *ctx, const HostRunView *v) {
  HistRead *q = ctx;
  const HistEvent *e = v->hist ? history_events(v->hist, &q->n) : NULL;
  if (!e) q->n = 0;
  if (q->n > q->cap) q->n = q->cap;
  if (q->n > 0) memcpy(q->e, e, sizeof *e * (size_t)q->n);
}

static void read_history(lua_State *L, int id, HostViewFn fn, HistRead *q) {
  if (lapi_view(lapi_get(L), id, fn, q) == 0) luaL_error(L, "attempt to use a removed run");
}

static int series_names(lua_State *L, int id) {
  static char names[HISTORY_MAX_SERIES][64];
  HistRead q = {.cap = HISTORY_MAX_SERIES, .names = names};
  read_history(L, id, read_names, &q);
  lua_createtable(L, q.n, 0);
  for (int i = 0; i < q.n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* r:history() lists the series; r:history(name) gives one (nil, message
** when there is no such series yet). */
static int lrun_history(lua_State *L) {
  int id = lrun_check(L, 1);
  if (lua_isnoneornil(L, 2)) return series_names(L, id);
  HistRead q = {.series = lapi_name_arg(L, 2, "r:history")};
  read_history(L, id, read_series, &q);   /* how many buckets */
  q.cap = q.n + 64;                       /* the trainer may add a bucket meanwhile */
  q.b = lua_newuserdatauv(L, sizeof *q.b * (size_t)q.cap, 0);
  read_history(L, id, read_series, &q);
  if (!q.found) {
    luaL_pushfail(L);
    lua_pushfstring(L, "no series '%s' (r:history() lists them)", q.series);
    return 2;
  }
  return lmetrics_push_history(L, q.b, q.n < q.cap ? q.n : q.cap);
}

static int lrun_events(lua_State *L) {
  int id = lrun_check(L, 1);
  HistRead q = {.cap = HISTORY_MAX_EVENTS};
  q.e = lua_newuserdatauv(L, sizeof *q.e * HISTORY_MAX_EVENTS, 0);
  read_history(L, id, read_events, &q);
  lua_createtable(L, q.n, 0);
  for (int i = 0; i < q.n; i++) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, q.e[i].step);
    lua_setfield(L, -2, "step");
    lua_pushstring(L, q.e[i].text);
    lua_setfield(L, -2, "text");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ------------------------------------------------------------ evaluate */

/* Read 'batch' (B arrays of T+1 token ids) into a buffer on the stack;
** errors start with 'fname'. */
int32_t *lrun_read_batch(lua_State *L, int idx, const ModelConfig *c, const char *fname, int *b, int *t) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer nb = luaL_len(L, idx);
  if (nb < 1 || nb > c->batch) luaL_error(L, "%s: the batch needs 1 to %d rows, got %d", fname, c->batch, (int)nb);
  if (lua_rawgeti(L, idx, 1) != LUA_TTABLE) luaL_error(L, "%s: row 1 is not a table", fname);
  lua_Integer len = luaL_len(L, -1);
  lua_pop(L, 1);
  if (len < 2 || len > c->ctx + 1)
    luaL_error(L, "%s: rows need 2 to %d token ids (T+1), got %d", fname, c->ctx + 1, (int)len);
  int32_t *rows = lua_newuserdatauv(L, sizeof *rows * (size_t)(nb * len), 0);
  for (lua_Integer i = 1; i <= nb; i++) {
    if (lua_rawgeti(L, idx, i) != LUA_TTABLE || luaL_len(L, -1) != len)
      luaL_error(L, "%s: row %d must be a table of %d token ids", fname, (int)i, (int)len);
    for (lua_Integer j = 1; j <= len; j++) {
      lua_rawgeti(L, -1, j);
      int isint;
      lua_Integer v = lua_tointegerx(L, -1, &isint);
      if (!isint || v < 0 || v >= c->vocab)
        luaL_error(L, "%s: row %d, position %d: token ids are integers in [0, %d)", fname, (int)i, (int)j,
                   c->vocab);
      rows[(i - 1) * len + (j - 1)] = (int32_t)v;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  *b = (int)nb;
  *t = (int)len - 1;
  return rows;
}

/* The shape of the run at 'idx' (which may be gone by the next lock). */
static ModelConfig run_shape(lua_State *L, LuaApi *api, int idx) {
  ModelConfig c = *run_config(lrun_lock(L, idx, api));
  lapi_unlock(api);
  return c;
}

static void set_number(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/* NaN when the denominator is 0 (no input row got a gradient), as the
** metrics' ratios are. */
static double safe_ratio(double num, double den) { return den > 0 ? num / den : NAN; }

static int lrun_evaluate(lua_State *L) {
  LuaApi *api = lapi_get(L);
  Run *r = lrun_lock(L, 1, api);
  ModelConfig c = *run_config(r);
  int nt = run_tensor_count(r);
  lapi_unlock(api);
  int b, t;
  int32_t *rows = lrun_read_batch(L, 2, &c, "r:evaluate", &b, &t);
  char(*names)[64] = lua_newuserdatauv(L, (sizeof *names + sizeof(double)) * (size_t)nt, 0);
  double *norms = (double *)(names + nt);
  EvalResult res;
  Err err;
  r = lrun_lock(L, 1, api);
  int rc = run_evaluate(r, rows, b, t, &res, &err);
  if (rc == 0) {
    if (res.n_tensors < nt) nt = res.n_tensors;
    memcpy(names, res.names, sizeof *names * (size_t)nt);
    memcpy(norms, res.grad_norm, sizeof *norms * (size_t)nt);
  }
  lapi_unlock(api);
  if (rc < 0) return luaL_error(L, "r:evaluate: %s", err.msg);
  const GradStats *g = &res.grad;
  lua_createtable(L, 0, 12);
  set_number(L, "loss", res.loss);
  set_number(L, "grad_in", g->in_l2);
  set_number(L, "grad_in_act", g->in_act_l2);
  set_number(L, "grad_out", g->out_l2);
  set_number(L, "grad_in_l1", g->in_l1);
  set_number(L, "grad_in_act_l1", g->in_act_l1);
  set_number(L, "grad_out_l1", g->out_l1);
  set_number(L, "grad_ratio", safe_ratio(g->out_l2, g->in_l2));
  set_number(L, "grad_ratio_act", safe_ratio(g->out_l2, g->in_act_l2));
  set_number(L, "rows_touched", g->rows_touched);
  set_number(L, "total_norm", g->total_norm);
  lua_createtable(L, 0, nt);
  for (int i = 0; i < nt; i++) set_number(L, names[i], norms[i]);
  lua_setfield(L, -2, "grad_norm");
  return 1;
}

/* ------------------------------------------------------------ files */

typedef int (*RunFileFn)(Run *r, const char *path, Err *err);

static int to_file(lua_State *L, const char *fname, RunFileFn fn) {
  LuaApi *api = lapi_get(L);
  char real[PATH_MAX];
  const char *path = lapi_path_arg(L, 2, fname, 1, real);
  Err err;
  Run *r = lrun_lock(L, 1, api);
  int rc = fn(r, path, &err);
  rc = run_agree(r, fname, rc, &err);   /* rank 0 wrote: every rank returns its result */
  lapi_unlock(api);
  if (rc < 0) {
    luaL_pushfail(L);
    lua_pushstring(L, err.msg);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int lrun_save(lua_State *L) { return to_file(L, "r:save", run_save); }
/* r:export(path [, {wide = true}]) */
static int lrun_export(lua_State *L) {
  int wide = 0;
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 3)) {
      lua_pop(L, 1);
      if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "wide") != 0)
        return luaL_error(L, "r:export: unknown key '%s' (wide)", luaL_tolstring(L, -1, NULL));
    }
    lua_getfield(L, 3, "wide");
    wide = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  lua_settop(L, 2);
  /* The sidecars are written beside the file: the sandbox checks them too. */
  char real[PATH_MAX], side[PATH_MAX], side_real[PATH_MAX];
  const char *path = lapi_path_arg(L, 2, "r:export", 1, real);
  static const char *const suffixes[] = {RUN_EXPORT_EVENTS, RUN_EXPORT_META};
  for (int i = 0; i < 2; i++)
    if (run_export_sidecar(path, suffixes[i], side, sizeof side))
      lapi_check_path(L, "r:export", side, 1, side_real);
  return to_file(L, "r:export", wide ? run_export_wide : run_export);
}

/* ------------------------------------------------------------ sampling */

static int lrun_sample(lua_State *L) {
  static const char *const keys[] = {"n", "temp", "seed", "prompt", NULL};
  LuaApi *api = lapi_get(L);
  lrun_check(L, 1);
  lua_settop(L, 2);
  if (!lua_isnil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
      lua_pop(L, 1);
      int known = 0;
      for (int i = 0; keys[i] && lua_type(L, -1) == LUA_TSTRING; i++)
        if (strcmp(lua_tostring(L, -1), keys[i]) == 0) known = 1;
      if (!known)
        return luaL_error(L, "r:sample: unknown key '%s' (n, temp, seed, prompt)", luaL_tolstring(L, -1, NULL));
    }
  } else {
    lua_newtable(L);
    lua_replace(L, 2);
  }
  lua_getfield(L, 2, "n");
  lua_getfield(L, 2, "temp");
  lua_getfield(L, 2, "seed");
  lua_getfield(L, 2, "prompt");
  lua_Integer n = luaL_optinteger(L, 3, 64);
  double temp = luaL_optnumber(L, 4, 1.0);
  lua_Integer seed = luaL_optinteger(L, 5, 1);
  const char *prompt = luaL_optstring(L, 6, NULL);
  luaL_argcheck(L, n >= 1 && n <= 10000, 2, "'n' must be in [1, 10000]");
  luaL_argcheck(L, temp > 0 && temp <= 100, 2, "'temp' must be in (0, 100]");
  luaL_argcheck(L, seed >= 0, 2, "'seed' must be >= 0");
  size_t cap = (size_t)n * 64 + (prompt ? strlen(prompt) : 0) + 64;
  char *out = lua_newuserdatauv(L, cap, 0);
  Err err;
  int rc = run_sample(lrun_lock(L, 1, api), prompt, (int)n, temp, (uint64_t)seed, out, cap, &err);
  lapi_unlock(api);
  if (rc < 0) return luaL_error(L, "r:sample: %s", err.msg);
  lua_pushstring(L, out);
  return 1;
}

/* ------------------------------------------------------------ row norms */

static void set_array(lua_State *L, const char *key, const double *v, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, key);
}

/* {norm_in=, norm_out=, log_freq=}: one entry per token seen in training. */
static int lrun_row_norms(lua_State *L) {
  LuaApi *api = lapi_get(L);
  lrun_check(L, 1);
  Run *r = lrun_lock(L, 1, api);
  int v = run_config(r)->vocab;
  double *buf = lua_newuserdatauv(L, sizeof(double) * 3 * (size_t)v, 0);
  Err err;
  int n = run_row_norms(r, buf, buf + v, buf + 2 * v, v, &err);
  lapi_unlock(api);
  if (n < 0) return luaL_error(L, "r:row_norms: %s", err.msg);
  lua_createtable(L, 0, 3);
  set_array(L, "norm_in", buf, n);
  set_array(L, "norm_out", buf + v, n);
  set_array(L, "log_freq", buf + 2 * v, n);
  return 1;
}

/* ------------------------------------------------------------ explicit batches */

/* r:train_on(batch) -> metrics after one optimizer step on the given rows. */
static int lrun_train_on(lua_State *L) {
  LuaApi *api = lapi_get(L);
  int id = lrun_check(L, 1);
  /* a step inside a step's callbacks: the others would see it half done */
  if (api->in_callback) return luaL_error(L, "r:train_on: training cannot be stepped from an on_step callback");
  ModelConfig c = run_shape(L, api, 1);
  int b, t;
  int32_t *rows = lrun_read_batch(L, 2, &c, "r:train_on", &b, &t);
  Err err;
  int rc = run_train_on(lrun_lock(L, 1, api), rows, b, t, &err);
  lapi_unlock(api);
  if (rc < 0) return luaL_error(L, "r:train_on: %s", err.msg);
  return push_metrics(L, id);
}

/* r:batch([k]) -> the B rows of T+1 ids training step k trains on
** (default: the next step). */
static int lrun_batch(lua_State *L) {
  LuaApi *api = lapi_get(L);
  RunCopy now;
  read_run(L, lrun_check(L, 1), &now);
  lua_Integer k = luaL_optinteger(L, 2, now.m.step + 1);
  luaL_argcheck(L, k >= 1, 2, "training steps count from 1");
  ModelConfig c = run_shape(L, api, 1);
  int len = c.ctx + 1;
  int32_t *rows = lua_newuserdatauv(L, sizeof *rows * (size_t)c.batch * (size_t)len, 0);
  Err err;
  int rc = run_batch(lrun_lock(L, 1, api), (long)k, rows, &err);
  lapi_unlock(api);
  if (rc < 0) return luaL_error(L, "r:batch: %s", err.msg);
  lua_createtable(L, c.batch, 0);
  for (int i = 0; i < c.batch; i++) {
    lua_createtable(L, len, 0);
    for (int j = 0; j < len; j++) {
      lua_pushinteger(L, rows[(size_t)i * len + j]);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ------------------------------------------------------------ the fitted lens */

/* r:fit_lens's options besides the fit's own: where its progress goes. */
typedef struct FitExtras {
  LProgress *progress;      /* a lab.progress object the fit advances (NULL: none) */
  long units;               /* of it, the whole fit's share (0: its step limit) */
} FitExtras;

#define FIT_KEYS "steps, lr, tokens_per_step, tol, patience, progress, units"

/* An integer option >= 1 (an error naming 'key' otherwise). */
static long fit_integer(lua_State *L, const char *key) {
  int isint = 0;
  lua_Integer v = lua_tointegerx(L, -1, &isint);
  if (!isint || v < 1 || v > INT32_MAX) luaL_error(L, "r:fit_lens: '%s' must be an integer >= 1", key);
  return (long)v;
}

static double fit_number(lua_State *L, const char *key) {
  int isnum = 0;
  double v = lua_tonumberx(L, -1, &isnum);
  if (!isnum || !(v > 0)) luaL_error(L, "r:fit_lens: '%s' must be a number > 0", key);
  return v;
}

/* One option, the key and value on top of the stack. */
static void read_fit_option(lua_State *L, const char *key, LensFitOptions *o, FitExtras *x) {
  if (!strcmp(key, "steps")) o->steps = (int)fit_integer(L, key);
  else if (!strcmp(key, "tokens_per_step")) o->tokens_per_step = (int)fit_integer(L, key);
  else if (!strcmp(key, "patience")) o->patience = (int)fit_integer(L, key);
  else if (!strcmp(key, "units")) x->units = fit_integer(L, key);
  else if (!strcmp(key, "lr")) o->lr = fit_number(L, key);
  else if (!strcmp(key, "tol")) o->tol = fit_number(L, key);
  else if (!strcmp(key, "progress") && !(x->progress = lprogress_test(L, -1)))
    luaL_error(L, "r:fit_lens: 'progress' must be a lab.progress object, got %s", luaL_typename(L, -1));
}

/* r:fit_lens's options: unknown keys and bad values are errors that name
** the key. */
static void read_fit_options(lua_State *L, int idx, LensFitOptions *o, FitExtras *x) {
  static const char *const keys[] = {"steps", "lr", "tokens_per_step", "tol", "patience", "progress", "units", NULL};
  lensfit_default_options(o);
  *x = (FitExtras){NULL, 0};
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int k = -1;
    for (int i = 0; keys[i] && lua_type(L, -2) == LUA_TSTRING; i++)
      if (strcmp(lua_tostring(L, -2), keys[i]) == 0) k = i;
    if (k < 0) luaL_error(L, "r:fit_lens: unknown key '%s' (" FIT_KEYS ")", luaL_tolstring(L, -2, NULL));
    read_fit_option(L, keys[k], o, x);
    lua_pop(L, 1);
  }
  if (x->units && !x->progress) luaL_error(L, "r:fit_lens: 'units' needs 'progress'");
  Err err;
  if (lensfit_check_options(o, &err) < 0) luaL_error(L, "r:fit_lens: %s", err.msg);
}

/* A fit as a job (host.h): what it needs and what it gives, in memory of
** its own, since the host may still run it after the script that asked
** for it is gone. */
typedef struct FitJob {
  int run_id;
  char name[64];
  LensFitOptions o;
  LensFitResult res;
  HostJobProgress *p;
  /* The script's lab.progress, advanced as the fit goes only where the
  ** job runs on the Lua thread (an inline host, or none): elsewhere the
  ** fit's thread never touches it, and it takes the whole share at the end. */
  LuaApi *api;
  FitExtras x;
  int on_lua_thread;
  long units_added;
  LensFitPoint curve[];   /* res.curve_cap points */
} FitJob;

/* The fit's share of the script's progress: 'units' in all, by the share
** of the step limit done ('step' of 'steps'). */
static void fit_advance(FitJob *j, long step, long steps) {
  if (!j->x.progress) return;
  long due = (long)((double)j->x.units * step / steps);
  if (due > j->units_added) lprogress_add(j->api, j->x.progress, due - j->units_added);
  if (due > j->units_added) j->units_added = due;
}

/* After every lens step: the host shows how far the fit is and says
** whether to stop (a cancel, an interrupt). */
static int fit_progress(void *ctx, int step, int steps) {
  FitJob *j = ctx;
  char what[80];
  snprintf(what, sizeof what, "fitting lens %s", j->name);
  if (j->on_lua_thread) fit_advance(j, step, steps);
  return j->p->report(j->p, what, step, steps);
}

static int fit_job(Lab *lab, void *arg, HostJobProgress *p, Err *err) {
  FitJob *j = arg;
  j->p = p;
  j->o.progress = fit_progress;
  j->o.ctx = j;
  if (fit_progress(j, 0, j->o.steps)) return err_set(err, "r:fit_lens: interrupted before the fit started");
  /* Looked up after that report, which may lend the lab (a removal), and
  ** with no report before the fit marks it. */
  Run *r = lab_run_by_id(lab, j->run_id);
  if (!r) return err_set(err, "r:fit_lens: run '%s' was removed", j->name);
  if (run_fit_lens(r, &j->o, &j->res, err) == 0) return 0;
  if (j->res.cancelled)
    return err_set(err, "r:fit_lens: interrupted at lens step %d of %d; the weights and the fitted lens are as "
                   "before", (int)j->res.info.steps, j->o.steps);
  char msg[ERR_MSG_MAX];
  memcpy(msg, err->msg, sizeof msg);
  return err_set(err, "r:fit_lens: %s", msg);
}

/* KL per position of a lens table ('s'), as a field 'key' (nothing when
** never measured). */
static void push_kl(lua_State *L, const char *key, const LensStats *s) {
  if (s->n <= 0) return;
  lua_createtable(L, s->n, 0);
  for (int i = 0; i < s->n; i++) {
    lua_pushnumber(L, s->kl[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, key);
}

static void push_curve(lua_State *L, const LensFitResult *res) {
  lua_createtable(L, res->n_curve, 0);
  for (int i = 0; i < res->n_curve; i++) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, res->curve[i].step);
    lua_setfield(L, -2, "step");
    lua_pushnumber(L, res->curve[i].kl);
    lua_setfield(L, -2, "kl");
    lua_pushnumber(L, res->curve[i].kept);
    lua_setfield(L, -2, "kept");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "curve");
}

/* The result table, from the job that ended (the handle at 'ctx'). */
static int lrun_fit_lens_k(lua_State *L, int status, lua_KContext ctx) {
  if (status == LUA_YIELD) lapi_step_result(L);
  FitJob *j = ((LapiJob *)lua_touserdata(L, (int)ctx))->arg;
  const LensFitResult *res = &j->res;
  fit_advance(j, 1, 1);   /* the rest of its share: a fit that stopped early is whole */
  lmetrics_push_fitted(L, &res->stats, &res->info);
  lua_pushboolean(L, res->diverged);   /* the live lens ended well above the kept one */
  lua_setfield(L, -2, "diverged");
  push_kl(L, "chosen_kl", &res->chosen);   /* the kept lens where it was chosen: biased low */
  push_kl(L, "start_kl", &res->start);
  push_kl(L, "lsq_kl", &res->lsq);
  push_curve(L, res);
  return 1;
}

/* r:fit_lens{...}: the host fits while the script waits as for steps (in
** the UI on the trainer thread, the screen live). */
static int lrun_fit_lens(lua_State *L) {
  LuaApi *api = lapi_get(L);
  int id = lrun_check(L, 1);
  LensFitOptions o;
  FitExtras x;
  read_fit_options(L, 2, &o, &x);
  lua_settop(L, 2);
  int cap = lensfit_curve_cap(&o);
  FitJob *j = malloc(sizeof *j + sizeof j->curve[0] * (size_t)cap);
  if (!j) return luaL_error(L, "r:fit_lens: not enough memory");
  memset(j, 0, sizeof *j);
  j->run_id = id;
  lapi_view(api, id, copy_name, j->name);
  j->o = o;
  j->res.curve = j->curve;
  j->res.curve_cap = cap;
  j->api = api;
  j->x = x;
  if (!j->x.units) j->x.units = o.steps;
  j->on_lua_thread = !api->host->submit_job || api->host->inline_steps;
  LapiJob *h = lapi_push_job(L, j, free);   /* index 3 */
  if (x.progress) lua_getfield(L, 2, "progress");   /* held here too: the table may change while the fit runs */
  return lapi_wait_job(L, h, fit_job, 3, lrun_fit_lens_k);
}

/* ------------------------------------------------------------ metamethods */

static int lrun_index(lua_State *L) {
  const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL || !key) return 1;
  LRun *h = handle(L, 1);
  if (strcmp(key, "id") == 0) {
    lua_pushinteger(L, h->id);
    return 1;
  }
  if (strcmp(key, setting_name(SETTING_NAME)) == 0) {
    if (h->id >= 0) lapi_view(lapi_get(L), h->id, copy_name, h->name);
    lua_pushstring(L, h->name);
    return 1;
  }
  return 0;
}

static int lrun_tostring(lua_State *L) {
  LRun *h = handle(L, 1);
  if (h->id < 0) lua_pushfstring(L, "tielab.run '%s' (removed)", h->name);
  else lua_pushfstring(L, "tielab.run '%s' (id %d)", h->name, h->id);
  return 1;
}

static const luaL_Reg methods[] = {
  {"step", lrun_step},       {"set", lrun_set},         {"metrics", lrun_metrics},
  {"history", lrun_history}, {"events", lrun_events},   {"evaluate", lrun_evaluate},
  {"save", lrun_save},       {"export", lrun_export},   {"sample", lrun_sample},
  {"pause", lrun_pause},     {"resume", lrun_resume},   {"remove", lrun_remove},
  {"options", lrun_options}, {"row_norms", lrun_row_norms},
  /* explicit batches */
  {"train_on", lrun_train_on}, {"batch", lrun_batch},
  /* the fitted lens */
  {"fit_lens", lrun_fit_lens},
  {NULL, NULL}};

void lrun_open(lua_State *L) {
  lua_newtable(L);                       /* the handle cache, weak values */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "tielab.handles");

  luaL_newmetatable(L, LAPI_RUN_META);
  luaL_newlib(L, methods);
  lhooks_open(L, lua_gettop(L));         /* r:on_grad, r:on_hidden */
  lrun_data_methods(L);                  /* the tokenizer, the parameters, hidden states */
  lapi_set_methods(L, LAPI_RUN_META, lrun_index);
  lua_pushcfunction(L, lrun_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_createtable(L, 2, 0);
  lua_pushstring(L, setting_name(SETTING_NAME));
  lua_rawseti(L, -2, 1);
  lua_pushliteral(L, "id");
  lua_rawseti(L, -2, 2);
  lua_setfield(L, -2, "__fields");
  lapi_seal_metatable(L, -1);
  lua_pop(L, 1);
}
