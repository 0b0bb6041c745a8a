/*
** lhooks.c -- a run's step hooks in Lua: r:on_grad(fn) and
** r:on_hidden(position, fn), removed with lab.off(handle). How a call in
** the middle of a step reaches Lua, on which thread, and what a hook may
** not do: docs/architecture.md, 'Step hooks in Lua'.
*/
#include <stdlib.h>
#include <string.h>

#include "core/step.h"
#include "luaapi/linternal.h"
#include "luaapi/lmatrix.h"

#define HOOKS_KEY "tielab.step_hooks"   /* registry: the list of {id, run, pos, fn} */
#define HOOK_GRAD (-1)                  /* the 'pos' of an on_grad entry */
#define MAX_POSITION 63                 /* the highest residual position a hook takes (a 64-bit mask) */

struct RunHooks {
  StepHooks sh;        /* what the run holds */
  LuaApi *api;
  Lab *lab;            /* lent to the Lua calls a hook makes */
  int run_id;
  struct RunHooks *next;
};

/* One call of a hook point, handed to the Lua thread. */
typedef struct HookCall {
  RunHooks *rh;
  Model *m;
  int pos;             /* HOOK_GRAD, or the residual position */
  const float *h;
  float *dh;
  int n, d;
  long step;
  double aux;
  lua_Integer calling;   /* the handle of the hook being called, 0 before one */
  Err *err;
  int n_views, cap_views;
  LMatrix *views[];      /* what the call lent: every gradient, or h and dh */
} HookCall;

/* ------------------------------------------------------------ refusals */

int lhooks_refuse(lua_State *L) {
  LuaApi *api = lapi_get(L);
  if (!api->in_hook) return 0;
  lua_Debug ar;
  int known = lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name;
  const char *owner = known && strcmp(ar.namewhat, "method") == 0 ? "r:" : "lab.";
  return luaL_error(L, "%s%s cannot be called inside a step hook: the step is in progress "
                       "(a hook reads and writes through its arguments and r:param)",
                    known ? owner : "", known ? ar.name : "this call");
}

/* ------------------------------------------------------------ the call on the Lua thread */

/* A view of the step's memory, kept in the call's anchor table (argument
** 2 of call_body) until run_call expires it, whatever the hook did. */
static void lend(lua_State *L, HookCall *c, float *data, int rows, int cols, int writable, const char *what) {
  if (c->n_views >= c->cap_views) luaL_error(L, "a step hook lends at most %d matrices", c->cap_views);
  c->views[c->n_views++] = lmatrix_view(L, data, rows, cols, writable, what);
  lua_pushvalue(L, -1);
  lua_rawseti(L, 2, c->n_views);
}

/* g: every parameter's gradient by name, E_in and E_out beside. */
static void push_gradients(lua_State *L, HookCall *c) {
  Model *m = c->m;
  float *g = model_grads(m);
  lua_createtable(L, 0, model_tensor_count(m) + 2);
  for (int i = 0; i < model_tensor_count(m); i++) {
    const TensorInfo *t = model_tensor(m, i);
    int rows, cols;
    tensor_matrix_shape(t, &rows, &cols);
    int is_in = strcmp(t->name, "transformer.wte.weight") == 0, is_out = strcmp(t->name, "lm_head.weight") == 0;
    lend(L, c, g + t->offset, rows, cols, 1, is_in ? "g.E_in" : is_out ? "g.E_out" : "a gradient of a step hook");
    if (is_in || is_out) {
      lua_pushvalue(L, -1);
      lua_setfield(L, -3, is_in ? "E_in" : "E_out");
    }
    lua_setfield(L, -2, t->name);
  }
}

/* Call every Lua function registered for this run and point; a number an
** on_hidden function returns adds to the step's aux_loss. */
static int call_body(lua_State *L) {
  HookCall *c = lua_touserdata(L, 1);
  lua_settop(L, 2);   /* the call, the anchor */
  if (c->pos == HOOK_GRAD) {
    push_gradients(L, c);
  } else {
    lend(L, c, (float *)c->h, c->n, c->d, 0, "h of a step hook");
    lend(L, c, c->dh, c->n, c->d, 1, "dh of a step hook");
  }
  int args = lua_gettop(L) - 2;
  lua_Integer n;
  int copy = lapi_push_list_copy(L, HOOKS_KEY, &n);   /* a hook may add or remove hooks */
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, copy, i);
    lua_getfield(L, -1, "run");
    lua_getfield(L, -2, "pos");
    int mine = lua_tointeger(L, -2) == c->rh->run_id && lua_tointeger(L, -1) == c->pos;
    lua_pop(L, 2);
    int live = mine && lua_getfield(L, -1, "removed") == LUA_TNIL;
    if (mine) lua_pop(L, 1);
    if (live) {
      lua_getfield(L, -1, "id");
      c->calling = lua_tointeger(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "fn");
      for (int a = 3; a <= 2 + args; a++) lua_pushvalue(L, a);
      lua_pushinteger(L, c->step);
      lua_call(L, args + 1, 1);
      if (c->pos != HOOK_GRAD && lua_type(L, -1) == LUA_TNUMBER) c->aux += lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);   /* the entry */
  }
  return 0;
}

static int remove_body(lua_State *L) {
  lhooks_off(L, lua_tointeger(L, 1));
  return 0;
}

/* What a failed call says, and the hook that failed removed (or a run the
** keyboard steps would fail at every step), the error value on top of L. */
static void failed(lua_State *L, LuaApi *api, HookCall *c) {
  const char *what = c->pos == HOOK_GRAD ? "r:on_grad" : "r:on_hidden";
  const char *msg = lua_tostring(L, -1);
  if (api->exiting) msg = "os.exit in a step hook ends a script, never the lab";
  if (!msg) msg = "(error object is not a string)";
  if (!c->calling) {
    err_set(c->err, "%s: %s", what, msg);
    return;
  }
  err_set(c->err, "%s hook removed after an error: %s", what, msg);
  lua_pushcfunction(L, remove_body);
  lua_pushinteger(L, c->calling);
  lua_pcall(L, 1, 0, 0);   /* a failure here (no memory) leaves the entry: its next call fails again */
}

/* On the Lua thread: every hook of this point, with the state of the call
** that may be under way on this thread (the lab's lock count, a script's
** exit) kept as it was: a hook is a call inside it, never its end. */
static int run_call(void *arg) {
  HookCall *c = arg;
  LuaApi *api = c->rh->api;
  lua_State *L = api->hook_L;
  if (api->in_hook) return err_set(c->err, "a step hook cannot step a run");
  int locks = api->locks, exiting = api->exiting;
  Lab *lab = api->lab;
  api->locks = 0;
  api->in_hook = 1;
  api->hook_model = c->m;
  api->hook_lab = c->rh->lab;
  api->hook_run = c->rh->run_id;
  lapi_enter(api);
  lua_createtable(L, c->cap_views, 0);   /* the anchor of the views lent */
  lua_pushcfunction(L, call_body);
  lua_pushlightuserdata(L, c);
  lua_pushvalue(L, -3);
  int status = lapi_docall(L, 2, 0);
  for (int i = 0; i < c->n_views; i++) lmatrix_expire(c->views[i]);
  if (status != LUA_OK) failed(L, api, c);
  lua_settop(L, 0);
  lapi_leave(api);
  api->in_hook = 0;
  api->hook_model = NULL;
  api->locks = locks;
  api->lab = lab;
  api->exiting |= exiting;
  return status == LUA_OK ? 0 : -1;
}

/* The StepHooks functions, on the thread that steps. */
static int hand_over(HookCall *c) {
  Host *host = c->rh->api->host;
  int rc = host->call ? host->call(host, run_call, c) : run_call(c);
  if (rc < 0 && !c->err->msg[0]) err_set(c->err, "the lab closed while a step hook waited");
  return rc;
}

static HookCall *new_call(RunHooks *rh, Model *m, int pos, int views, Err *err) {
  HookCall *c = malloc(sizeof *c + (size_t)views * sizeof c->views[0]);
  if (!c) return err_set(err, "out of memory calling a step hook"), NULL;
  *c = (HookCall){.rh = rh, .m = m, .pos = pos, .err = err, .cap_views = views};
  return c;
}

static int on_grad(void *ctx, Model *m, long step, Err *err) {
  HookCall *c = new_call(ctx, m, HOOK_GRAD, model_tensor_count(m), err);
  if (!c) return -1;
  c->step = step;
  int rc = hand_over(c);
  free(c);
  return rc;
}

static int on_hidden(void *ctx, Model *m, int p, const float *h, float *dh, int n, int d, long step, double *aux,
                     Err *err) {
  HookCall *c = new_call(ctx, m, p, 2, err);
  if (!c) return -1;
  c->h = h, c->dh = dh, c->n = n, c->d = d, c->step = step;
  int rc = hand_over(c);
  *aux += c->aux;
  free(c);
  return rc;
}

/* ------------------------------------------------------------ registering */

static RunHooks *run_hooks(LuaApi *api, int run_id, int create) {
  for (RunHooks *rh = api->run_hooks; rh; rh = rh->next)
    if (rh->run_id == run_id) return rh;
  if (!create) return NULL;
  RunHooks *rh = calloc(1, sizeof *rh);
  if (!rh) return NULL;
  rh->api = api;
  rh->run_id = run_id;
  rh->sh.ctx = rh;
  rh->next = api->run_hooks;
  api->run_hooks = rh;
  return rh;
}

/* Give run 'run_id' the StepHooks its Lua entries call for (none: NULL, so
** that its steps cost nothing), with the lab held: no step reads them
** meanwhile. Inside a hook nothing changes here (the step in progress is
** the lab's): a removed entry is skipped by the calls, and the StepHooks
** catch up at the next change made outside a hook. */
static void sync_run(lua_State *L, LuaApi *api, int run_id) {
  uint64_t positions = 0;
  int grad = 0;
  if (api->in_hook || api->hooks_closed) return;
  lua_getfield(L, LUA_REGISTRYINDEX, HOOKS_KEY);
  lua_Integer n = luaL_len(L, -1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    lua_getfield(L, -1, "run");
    lua_getfield(L, -2, "pos");
    if (lua_tointeger(L, -2) == run_id) {
      int pos = (int)lua_tointeger(L, -1);
      if (pos == HOOK_GRAD) grad = 1;
      else positions |= (uint64_t)1 << pos;
    }
    lua_pop(L, 3);
  }
  lua_pop(L, 1);
  RunHooks *rh = run_hooks(api, run_id, grad || positions);
  if (!rh) {
    if (grad || positions) luaL_error(L, "out of memory installing a step hook");
    return;
  }
  rh->lab = lapi_lock(api);
  rh->sh.on_grad = grad ? on_grad : NULL;
  rh->sh.on_hidden = positions ? on_hidden : NULL;
  rh->sh.hidden_positions = positions;
  Run *r = lab_run_by_id(rh->lab, run_id);
  if (r) lab_run_set_hooks(r, grad || positions ? &rh->sh : NULL);
  lapi_unlock(api);
}

static int add_entry(lua_State *L, int run_id, int pos, int fn_idx) {
  LuaApi *api = lapi_get(L);
  if (api->hooks_closed) return luaL_error(L, "the Lua state is closing: no step hook can be added");
  lua_getfield(L, LUA_REGISTRYINDEX, HOOKS_KEY);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, ++api->next_hook);
  lua_setfield(L, -2, "id");
  lua_pushinteger(L, run_id);
  lua_setfield(L, -2, "run");
  lua_pushinteger(L, pos);
  lua_setfield(L, -2, "pos");
  lua_pushvalue(L, fn_idx);
  lua_setfield(L, -2, "fn");
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
  lua_pop(L, 1);
  sync_run(L, api, run_id);
  lua_pushinteger(L, api->next_hook);
  return 1;
}

static int lhooks_on_grad(lua_State *L) {
  int id = lrun_check(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lhooks_refuse(L);
  return add_entry(L, id, HOOK_GRAD, 2);
}

static int lhooks_on_hidden(lua_State *L) {
  LuaApi *api = lapi_get(L);
  Run *r = lrun_lock(L, 1, api);
  int layers = run_config(r)->layers, id = run_id(r);
  lapi_unlock(api);
  lua_Integer pos = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  if (pos < 0 || pos > layers)
    return luaL_error(L, "r:on_hidden: position %I is not in 0..%d (0 after the embeddings, %d before ln_f)", pos,
                      layers, layers);
  if (pos > MAX_POSITION)
    return luaL_error(L, "r:on_hidden: position %I is beyond %d, the highest a step hook takes", pos, MAX_POSITION);
  return add_entry(L, id, (int)pos, 3);
}

int lhooks_off(lua_State *L, lua_Integer id) {
  LuaApi *api = lapi_get(L);
  lua_getfield(L, LUA_REGISTRYINDEX, HOOKS_KEY);
  int t = lua_gettop(L), run = -1;
  lua_Integer n = luaL_len(L, t);
  for (lua_Integer i = 1; i <= n && run < 0; i++) {
    lua_rawgeti(L, t, i);
    lua_getfield(L, -1, "id");
    if (lua_tointeger(L, -1) == id) {
      lua_getfield(L, -2, "run");
      run = (int)lua_tointeger(L, -1);
      lua_pop(L, 1);
      lua_pushboolean(L, 1);
      lua_setfield(L, -3, "removed");   /* a call walking its copy skips it */
      for (lua_Integer j = i; j < n; j++) {
        lua_rawgeti(L, t, j + 1);
        lua_rawseti(L, t, j);
      }
      lua_pushnil(L);
      lua_rawseti(L, t, n);
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  if (run >= 0) sync_run(L, api, run);
  return run >= 0;
}

void lhooks_open(lua_State *L, int methods) {
  LuaApi *api = lapi_get(L);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, HOOKS_KEY);
  api->hook_L = lua_newthread(L);   /* made after the count hook is set: it inherits it */
  api->hook_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lapi_install_hook(api->hook_L);   /* Ctrl-C stops a hook that never returns */
  lua_pushcfunction(L, lhooks_on_grad);
  lua_setfield(L, methods, "on_grad");
  lua_pushcfunction(L, lhooks_on_hidden);
  lua_setfield(L, methods, "on_hidden");
}

void lhooks_free(LuaApi *api) {
  api->hooks_closed = 1;   /* finalisers that run as the state closes add none */
  if (api->run_hooks && api->host) {
    Lab *lab = lapi_lock(api);
    for (RunHooks *rh = api->run_hooks; rh; rh = rh->next) {
      Run *r = lab_run_by_id(lab, rh->run_id);
      if (r) lab_run_set_hooks(r, NULL);
    }
    lapi_unlock(api);
  }
  while (api->run_hooks) {
    RunHooks *next = api->run_hooks->next;
    free(api->run_hooks);
    api->run_hooks = next;
  }
}
