/*
** lrun_data.c -- a run's data for scripts: its tokenizer (r:tokenize,
** r:detokenize, r:token, r:tokenizer), its parameters as lab.matrix copies
** (r:param_names, r:param, r:set_param), the hidden states of a forward
** (r:hidden) and its validation loss now (r:evaluate_val). The rules
** (aliases, shapes, the tie) are lab.h's, under params.c and tokens.c. How
** a data call may touch a run: docs/architecture.md, 'A run's data'.
*/
#include <stdint.h>
#include <string.h>

#include "luaapi/linternal.h"

/* What a data call does to its run: a forward overwrites the activations
** a backward would need, and a write changes the weights the optimizer
** steps. */
typedef enum DataUse { DATA_READ, DATA_FORWARD, DATA_WRITE } DataUse;

/* The run behind the handle at 'idx', held for a call that 'use's it,
** until 'data_done'. It is taken between two steps: the lab's lock
** (lapi_lock, the host's acquire) waits for the step in progress, so a
** write lands between that step and the next. A hook runs inside a step
** (its trainer parked there): it reads a run in place, and DATA_FORWARD
** and DATA_WRITE raise, for the step's backward and update are still to
** come. */
static Run *data_run(lua_State *L, int idx, DataUse use) {
  LuaApi *api = lapi_get(L);
  if (!api->in_hook) return lrun_lock(L, idx, api);   /* between steps every use is safe */
  int id = lrun_check(L, idx);
  if (use != DATA_READ) lhooks_refuse(L);
  Run *r = lab_run_by_id(lapi_lock(api), id);          /* lent as it is at this step */
  if (!r) {
    lapi_unlock(api);
    luaL_error(L, "attempt to use a removed run");
  }
  return r;
}

static void data_done(lua_State *L) { lapi_unlock(lapi_get(L)); }

/* The shape of the run at 'idx'. */
static ModelConfig data_shape(lua_State *L, int idx) {
  ModelConfig c = *run_config(data_run(L, idx, DATA_READ));
  data_done(L);
  return c;
}

/* ------------------------------------------------------------ the tokenizer */

/* r:tokenize(text) -> {id, ...} */
static int lrun_tokenize(lua_State *L) {
  size_t len, n;
  const char *text = luaL_checklstring(L, 2, &len);
  int32_t *ids = lua_newuserdatauv(L, sizeof *ids * (len ? len : 1), 0);   /* a token is at least a byte */
  Err err;
  int rc = run_tokenize(data_run(L, 1, DATA_READ), text, len, ids, len, &n, &err);
  data_done(L);
  if (rc < 0) return luaL_error(L, "r:tokenize: %s", err.msg);
  LuaApi *api = lapi_get(L);
  size_t work = 0;
  lua_createtable(L, n < INT32_MAX ? (int)n : INT32_MAX, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushinteger(L, ids[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
    lapi_spend(L, api, &work, 1);
  }
  return 1;
}

/* The bytes 'n' ids decode to, pushed as a string: the length with the
** run held, the room made with the lab free, then the bytes. */
static void push_decoded(lua_State *L, const int32_t *ids, size_t n, const char *fname) {
  size_t need, len;
  Err err;
  int rc = run_detokenize(data_run(L, 1, DATA_READ), ids, n, NULL, 0, &need, &err);
  data_done(L);
  if (rc < 0) luaL_error(L, "%s: %s", fname, err.msg);
  char *out = lua_newuserdatauv(L, need ? need : 1, 0);
  rc = run_detokenize(data_run(L, 1, DATA_READ), ids, n, out, need, &len, &err);
  data_done(L);
  if (rc < 0) luaL_error(L, "%s: %s", fname, err.msg);
  lua_pushlstring(L, out, len < need ? len : need);
}

/* A token id argument: an integer (its range is the tokenizer's to say). */
static int32_t id_value(lua_State *L, int idx, const char *fname, lua_Integer position) {
  int exact;
  lua_Integer id = lua_tointegerx(L, idx, &exact);
  if (!exact || id < INT32_MIN || id > INT32_MAX) {
    if (position > 0) luaL_error(L, "%s: entry %I is not a token id (an integer)", fname, position);
    luaL_argerror(L, idx, "a token id (an integer)");
  }
  return (int32_t)id;
}

/* r:detokenize({id, ...}) -> the bytes they make */
static int lrun_detokenize(lua_State *L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 2);
  int32_t *ids = lua_newuserdatauv(L, sizeof *ids * (size_t)(n > 0 ? n : 1), 0);
  LuaApi *api = lapi_get(L);
  size_t work = 0;
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 2, i);
    ids[i - 1] = id_value(L, -1, "r:detokenize", i);
    lua_pop(L, 1);
    lapi_spend(L, api, &work, 1);
  }
  push_decoded(L, ids, (size_t)n, "r:detokenize");
  return 1;
}

/* r:token(id) -> the bytes of one token (a few: pushed with the run held) */
static int lrun_token(lua_State *L) {
  int32_t id = id_value(L, 2, "r:token", 0);
  size_t len;
  Err err;
  const char *bytes = run_token(data_run(L, 1, DATA_READ), id, &len, &err);
  if (bytes) lua_pushlstring(L, bytes, len);
  data_done(L);
  if (!bytes) return luaL_error(L, "r:token: %s", err.msg);
  return 1;
}

/* r:tokenizer() -> {kind=, source=, ids=, own=, text=}: where the ids that
** r:sample, r:tokenize and r:detokenize use come from. */
static int lrun_tokenizer(lua_State *L) {
  TokenizerInfo t;
  Err err;
  int rc = run_tokenizer_info(data_run(L, 1, DATA_READ), &t, &err);
  data_done(L);
  if (rc < 0) return luaL_error(L, "r:tokenizer: %s", err.msg);
  char text[sizeof t.source + 96];
  lua_createtable(L, 0, 5);
  lua_pushstring(L, t.kind);
  lua_setfield(L, -2, "kind");
  lua_pushstring(L, t.source);
  lua_setfield(L, -2, "source");
  lua_pushinteger(L, t.ids);
  lua_setfield(L, -2, "ids");
  lua_pushboolean(L, t.own);
  lua_setfield(L, -2, "own");
  lua_pushstring(L, run_tokenizer_text(&t, text, sizeof text));
  lua_setfield(L, -2, "text");
  return 1;
}

/* ------------------------------------------------------------ parameters */

/* r:param_names() -> {name, ...}, the checkpoint's order */
static int lrun_param_names(lua_State *L) {
  Run *r = data_run(L, 1, DATA_READ);
  int n = run_param_count(r);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, run_param_name(r, i));
    lua_rawseti(L, -2, i + 1);
  }
  data_done(L);
  return 1;
}

/* r:param(name) -> a new matrix, a copy */
static int lrun_param(lua_State *L) {
  const char *name = lapi_name_arg(L, 2, "r:param");
  int rows, cols;
  Err err;
  int rc = run_param_shape(data_run(L, 1, DATA_READ), name, &rows, &cols, &err);
  data_done(L);
  if (rc < 0) return luaL_error(L, "r:param: %s", err.msg);
  LMatrix *m = lmatrix_alloc(L, rows, cols, "r:param");
  rc = run_param_read(data_run(L, 1, DATA_READ), name, m->data, rows, cols, &err);
  data_done(L);
  if (rc < 0) return luaL_error(L, "r:param: %s", err.msg);
  return 1;
}

/* r:set_param(name, m) -> r */
/* Weights written while other steps of the run are on their way would land
** between two of them, where nobody asked, and a measure taken there would
** be of a step already gone when it returns: both refused instead. An
** on_step callback is where a script asked: the trainer waits for it.
** 'fname' names the call, 'doing' what to do between the steps. */
static void refuse_if_stepping(lua_State *L, Run *r, const char *fname, const char *doing) {
  LuaApi *api = lapi_get(L);
  Host *h = api->host;
  int how = h->stepping && !api->in_callback ? h->stepping(h, run_id(r)) : 0;
  if (how == 1 || (how == 2 && !run_metrics(r)->paused)) {
    data_done(L);
    luaL_error(L, "%s: run '%s' is training elsewhere (%s): %s between the steps you ask for, or pause it "
                  "first", fname, run_name(r), how == 1 ? "a request for its steps is in flight" : "the lab is running",
               doing);
  }
}

static int lrun_set_param(lua_State *L) {
  const char *name = lapi_name_arg(L, 2, "r:set_param");
  LMatrix *m = lmatrix_check(L, 3);
  Err err;
  Run *r = data_run(L, 1, DATA_WRITE);
  refuse_if_stepping(L, r, "r:set_param", "write its weights");
  int rc = run_param_write(r, name, m->data, m->rows, m->cols, &err);
  data_done(L);
  if (rc < 0) return luaL_error(L, "r:set_param: %s", err.msg);
  lua_settop(L, 1);
  return 1;
}

/* ------------------------------------------------------------ hidden states */

/* r:hidden([batch]) -> {matrix, ...}: L+1 matrices of (b*t) x d, the
** residual stream at positions 0..L, of a forward on 'batch' (rows of
** T+1 ids, as r:evaluate takes) or on the rows the next step trains on. */
static int lrun_hidden(lua_State *L) {
  ModelConfig c = data_shape(L, 1);
  int b = c.batch, t = c.ctx, given = !lua_isnoneornil(L, 2);
  int32_t *rows = given ? lrun_read_batch(L, 2, &c, "r:hidden", &b, &t)
                        : lua_newuserdatauv(L, sizeof *rows * (size_t)b * (size_t)(t + 1), 0);
  float *out[LAB_MAX_POS];
  lua_createtable(L, c.layers + 1, 0);
  for (int p = 0; p <= c.layers; p++) {
    out[p] = lmatrix_alloc(L, b * t, c.dim, "r:hidden")->data;
    lua_rawseti(L, -2, p + 1);
  }
  Err err;
  Run *r = data_run(L, 1, DATA_FORWARD);
  int rc = given ? 0 : run_batch(r, run_metrics(r)->step + 1, rows, &err);   /* drawn, not consumed */
  if (rc == 0) rc = run_hidden(r, rows, b, t, out, &err);
  data_done(L);
  if (rc < 0) return luaL_error(L, "r:hidden: %s", err.msg);
  return 1;
}

/* ------------------------------------------------------------ validation */

/* r:evaluate_val() -> {loss=, ppl=, step=}: the validation loss now, as the
** periodic evaluation measures it, kept in the run's metrics. */
static int lrun_evaluate_val(lua_State *L) {
  Err err;
  Run *r = data_run(L, 1, DATA_FORWARD);
  refuse_if_stepping(L, r, "r:evaluate_val", "measure it");
  int rc = run_measure_val(r, &err);
  RunMetrics m = *run_metrics(r);
  data_done(L);
  if (rc < 0) return luaL_error(L, "r:evaluate_val: %s", err.msg);
  lmetrics_push_val(L, &m);
  return 1;
}

static const luaL_Reg data_methods[] = {
  {"tokenize", lrun_tokenize}, {"detokenize", lrun_detokenize}, {"token", lrun_token},
  {"tokenizer", lrun_tokenizer},
  {"param_names", lrun_param_names}, {"param", lrun_param}, {"set_param", lrun_set_param},
  {"hidden", lrun_hidden}, {"evaluate_val", lrun_evaluate_val},
  {NULL, NULL}};

void lrun_data_methods(lua_State *L) { luaL_setfuncs(L, data_methods, 0); }
