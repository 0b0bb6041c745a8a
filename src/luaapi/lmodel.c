/*
** lmodel.c -- released models in Lua: lab.open_model(path) gives what
** --inspect says of a model and its embedding matrices as lab.matrix
** values; lab.shared_rows(a, b) pairs two models' rows by token string;
** lab.compare_models(a, b) is --inspect --against's Table 1; lab.align
** accepts two matrices (llab.c).
**
** A model is a userdata 'tielab.model' holding the opened files (for its
** tokenizer) and a table of its fields, which its __index reads; the
** matrices are owned by that table, counted against the script's memory.
*/
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/sysmem.h"
#include "lab/released.h"
#include "luaapi/linternal.h"
#include "luaapi/lmatrix.h"

#define MODEL_META "tielab.model"

typedef struct LModel {
  Released r;
} LModel;

static LModel *check_model(lua_State *L, int idx) { return luaL_checkudata(L, idx, MODEL_META); }

static int model_gc(lua_State *L) {
  released_close(&check_model(L, 1)->r);
  return 0;
}

/* Under the sandbox every file a model folder holds must pass the rule
** the folder did, before any is opened: a shard index, a link or a linked
** subfolder could name one outside, and even a parse error quotes a file's
** first bytes. A folder is walked a few levels deep (a Hugging Face cache's
** snapshot links into its blobs, which must be inside too). */
enum { TREE_DEPTH = 4, TREE_ENTRIES = 4096 };

static int tree_allowed(LuaApi *api, const char *dir, int depth, int *seen, char *bad, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) return 1;   /* what cannot be listed will not be opened either */
  struct dirent *e;
  int ok = 1;
  while (ok && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[PATH_MAX];
    struct stat st;
    if (++*seen > TREE_ENTRIES || snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) {
      snprintf(bad, cap, "%s (too many files to check)", dir);
      ok = 0;
    } else if (!lapi_path_ok(api, path, 0)) {
      snprintf(bad, cap, "%s", path);
      ok = 0;
    } else if (depth > 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
      ok = tree_allowed(api, path, depth - 1, seen, bad, cap);
    }
  }
  closedir(d);
  return ok;
}

void lapi_check_model_files(lua_State *L, LuaApi *api, const char *fname, const char *path) {
  if (!api->opt.sandbox) return;
  struct stat st;
  char dir[PATH_MAX], bad[PATH_MAX + 64];
  snprintf(dir, sizeof dir, "%s", path);
  if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {   /* a file reads its folder's config and tokenizer */
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
  }
  int seen = 0;
  if (!tree_allowed(api, dir, TREE_DEPTH, &seen, bad, sizeof bad))
    luaL_error(L, "%s: '%s' is outside the folders this script may read (sandbox)", fname, bad);
}

/* A tensor read into a new matrix, pushed. */
static LMatrix *push_tensor(lua_State *L, const Released *r, const HfTensor *t) {
  const HfInfo *in = hf_info(r->model);
  Err err;
  if (sysmem_check(hf_tensor_f32_bytes(t), t->name, &err) < 0) luaL_error(L, "lab.open_model: %s", err.msg);
  LMatrix *m = lmatrix_new(L, in->vocab, in->dim);
  if (hf_read_f32(r->model, t, m->data, (size_t)in->vocab * in->dim, &err) < 0)
    luaL_error(L, "lab.open_model: %s", err.msg);
  return m;
}

static void set_string(lua_State *L, const char *key, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, key);
}

static void set_int(lua_State *L, const char *key, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, key);
}

/* The model's fields, as --inspect prints them, into the table on top. */
static void push_fields(lua_State *L, const Released *r) {
  const HfInfo *in = hf_info(r->model);
  set_string(L, "path", hf_path(r->model));
  set_string(L, "family", in->family);
  set_string(L, "model_type", in->model_type);
  /* the shape by the names a run's shape has */
  set_int(L, setting_name(SETTING_VOCAB), in->vocab);
  set_int(L, setting_name(SETTING_DIM), in->dim);
  set_int(L, setting_name(SETTING_LAYERS), in->layers);
  set_int(L, setting_name(SETTING_HEADS), in->heads);
  set_int(L, setting_name(SETTING_CTX), in->ctx);
  set_string(L, "dtype", st_dtype_name(in->dtype));
  lua_pushboolean(L, in->tied);
  lua_setfield(L, -2, "tied");
  if (in->config_tied >= 0) {
    lua_pushboolean(L, in->config_tied);
    lua_setfield(L, -2, "config_tied");
  }
  set_string(L, "embed_name", in->embed->name);
  set_string(L, "head_name", in->head->name);
  if (r->tok) {
    set_int(L, "tokens", hftok_count(r->tok));
    set_string(L, "tokenizer", hftok_kind(r->tok));
  } else {
    set_string(L, "tokenizer_problem", r->tok_problem);
  }
}

static int lmodel_open(lua_State *L) {
  lhooks_refuse(L);
  LuaApi *api = lapi_get(L);
  char real[PATH_MAX];
  const char *path = lapi_path_arg(L, 1, "lab.open_model", 0, real);
  lapi_check_model_files(L, api, "lab.open_model", path);
  LModel *m = lua_newuserdatauv(L, sizeof *m, 1);
  memset(m, 0, sizeof *m);
  luaL_setmetatable(L, MODEL_META);
  Err err;
  if (released_open(&m->r, path, &err) < 0) return luaL_error(L, "lab.open_model: %s", err.msg);
  const HfInfo *in = hf_info(m->r.model);
  lua_createtable(L, 0, 20);
  push_fields(L, &m->r);
  push_tensor(L, &m->r, in->embed);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "E_in");
  if (in->tied) lua_setfield(L, -2, "E_out");   /* one matrix, as the model has it */
  else {
    lua_pop(L, 1);
    push_tensor(L, &m->r, in->head);
    lua_setfield(L, -2, "E_out");
  }
  lua_setiuservalue(L, -2, 1);
  return 1;
}

/* m:token(id): the bytes token 'id' (0-based, as the tokenizer counts)
** stands for, or nil. */
static int lmodel_token(lua_State *L) {
  LModel *m = check_model(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  size_t len;
  const uint8_t *bytes = m->r.tok && id >= 0 && id <= INT32_MAX ? hftok_bytes(m->r.tok, (int32_t)id, &len) : NULL;
  if (!bytes) luaL_pushfail(L);
  else lua_pushlstring(L, (const char *)bytes, len);
  return 1;
}

/* m:id(text): the id of the token standing for these bytes, or nil. */
static int lmodel_id(lua_State *L) {
  LModel *m = check_model(L, 1);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  int32_t id = m->r.tok ? hftok_lookup(m->r.tok, (const uint8_t *)s, len) : -1;
  if (id < 0) luaL_pushfail(L);
  else lua_pushinteger(L, id);
  return 1;
}

static const luaL_Reg model_methods[] = {{"token", lmodel_token}, {"id", lmodel_id}, {NULL, NULL}};

static int model_index(lua_State *L) {
  check_model(L, 1);
  for (const luaL_Reg *f = model_methods; f->name; f++)
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), f->name) == 0) {
      lua_pushcfunction(L, f->func);
      return 1;
    }
  lua_getiuservalue(L, 1, 1);
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

static int model_newindex(lua_State *L) { return luaL_error(L, "a model's fields are read-only"); }

static int model_tostring(lua_State *L) {
  const HfInfo *in = hf_info(check_model(L, 1)->r.model);
  lua_pushfstring(L, "model %s (%s, %d x %d, %s)", hf_path(check_model(L, 1)->r.model), in->family, in->vocab,
                  in->dim, in->tied ? "tied" : "untied");
  return 1;
}

/* The matrix 'key' of the model at 'idx'. */
static const float *model_matrix(lua_State *L, int idx, const char *key) {
  lua_getiuservalue(L, idx, 1);
  lua_getfield(L, -1, key);
  LMatrix *m = lmatrix_check(L, -1);
  lua_pop(L, 2);   /* the model's table keeps it alive */
  return m->data;
}

/* The pairs of models 'a' (1) and 'b' (2), with their matrices. */
typedef struct ModelPair {
  const Released *a, *b;
  const float *a_in, *b_in, *b_out;
} ModelPair;

static ModelPair model_pair(lua_State *L) {
  ModelPair p = {.a = &check_model(L, 1)->r, .b = &check_model(L, 2)->r};
  p.a_in = model_matrix(L, 1, "E_in");
  p.b_in = model_matrix(L, 2, "E_in");
  p.b_out = model_matrix(L, 2, "E_out");
  return p;
}

#define PAIRS_META "tielab.token_pairs"

static int pairs_gc(lua_State *L) {
  token_pairs_free(luaL_checkudata(L, 1, PAIRS_META));
  return 0;
}

/* A TokenPairs owned by a userdata on the stack, so that an error raised
** while it is held (a matrix too large for the script) frees it. */
static TokenPairs *push_pairs(lua_State *L) {
  TokenPairs *tp = lua_newuserdatauv(L, sizeof *tp, 0);
  memset(tp, 0, sizeof *tp);
  luaL_setmetatable(L, PAIRS_META);
  return tp;
}

static void push_rows(lua_State *L, const float *m, const int32_t *rows, int n, int d) {
  released_gather(lmatrix_new(L, n, d)->data, m, rows, n, d);
}

/* lab.shared_rows(a, b) -> A's E_in, B's E_in and B's E_out on the rows of
** the tokens both know (A's order), and the list of those tokens' ids in
** each: {a = {...}, b = {...}} (0-based, as the tokenizers count). */
static int lmodel_shared_rows(lua_State *L) {
  ModelPair p = model_pair(L);
  const HfInfo *ia = hf_info(p.a->model), *ib = hf_info(p.b->model);
  if (!p.a->tok || !p.b->tok)
    return luaL_error(L, "lab.shared_rows: rows are paired by token string: %s",
                      p.a->tok ? p.b->tok_problem : p.a->tok_problem);
  if (ia->dim != ib->dim) return luaL_error(L, "lab.shared_rows: the widths differ (%d, %d)", ia->dim, ib->dim);
  TokenPairs *tp = push_pairs(L);
  Err err;
  if (released_pair(p.a->tok, ia->vocab, p.b->tok, ib->vocab, tp, &err) < 0)
    return luaL_error(L, "lab.shared_rows: %s", err.msg);
  if (tp->n == 0) return luaL_error(L, "lab.shared_rows: the two tokenizers share no token");
  push_rows(L, p.a_in, tp->a, tp->n, ia->dim);
  push_rows(L, p.b_in, tp->b, tp->n, ia->dim);
  push_rows(L, p.b_out, tp->b, tp->n, ia->dim);
  lua_createtable(L, 0, 2);
  const int32_t *ids[2] = {tp->a, tp->b};
  const char *names[2] = {"a", "b"};
  for (int s = 0; s < 2; s++) {
    lua_createtable(L, tp->n, 0);
    for (int i = 0; i < tp->n; i++) {
      lua_pushinteger(L, ids[s][i]);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, names[s]);
  }
  return 4;   /* the pairs' userdata below them goes with the stack */
}

/* A figure into the table on top; one not computed stays nil. */
static void lua_figure(void *ctx, const char *key, double v) {
  lua_State *L = ctx;
  if (isnan(v)) return;
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}

/* lab.compare_models(a, b [, {threads = N}]) -> Table 1 as --inspect
** --json has it: linear_in, ..., random_linear_in, ..., shared_tokens. */
static int lmodel_compare(lua_State *L) {
  lhooks_refuse(L);
  ModelPair p = model_pair(L);
  int threads = 2;
  if (lua_istable(L, 3)) {
    lua_getfield(L, 3, setting_name(SETTING_THREADS));
    if (!lua_isnil(L, -1)) threads = (int)luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    if (threads < 1 || threads > 256) return luaL_error(L, "lab.compare_models: threads %d is outside 1..256", threads);
  }
  Table1 t;
  Err err;
  if (released_table1_of(p.a, p.a_in, p.b, p.b_in, p.b_out, threads, &t, &err) < 0) {
    table1_free(&t);
    return luaL_error(L, "lab.compare_models: %s", err.msg);
  }
  int shared = t.pairs.n;
  table1_free(&t);   /* before anything that can raise */
  lua_createtable(L, 0, 20);
  set_int(L, "shared_tokens", shared);
  table1_each(&t, lua_figure, L);
  return 1;
}

static const luaL_Reg model_functions[] = {
  {"open_model", lmodel_open}, {"shared_rows", lmodel_shared_rows}, {"compare_models", lmodel_compare}, {NULL, NULL}};

void lmodel_register(lua_State *L) {
  luaL_setfuncs(L, model_functions, 0);
  luaL_newmetatable(L, MODEL_META);
  static const luaL_Reg meta[] = {{"__index", model_index},
                                  {"__newindex", model_newindex},
                                  {"__gc", model_gc},
                                  {"__tostring", model_tostring},
                                  {NULL, NULL}};
  luaL_setfuncs(L, meta, 0);
  lua_pop(L, 1);
  luaL_newmetatable(L, PAIRS_META);
  lua_pushcfunction(L, pairs_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}
