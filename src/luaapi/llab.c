/*
** llab.c -- the module table "tielab" (the global 'lab'): creating,
** loading, listing and removing runs, stepping every run in lockstep,
** alignment between two runs, on_step callbacks, key bindings, custom
** series, captions, the settings table, and (lmatrix.c) lab.matrix.
**
** Programming errors raise (a misspelled key, a wrong type); expected
** failures return nil and a message (a file that cannot be loaded).
*/
#include "base/clock.h"
#include "base/sysmem.h"
#include "base/text.h"
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lab/released.h"
#include "luaapi/linternal.h"
#include "luaapi/lmatrix.h"

/* ------------------------------------------------------------ runs */

/* lab.run(base, extra): the keys of 'extra' over a copy of 'base', so that
** experiments share one table of common settings. */
static void merge_options(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_newtable(L);
  for (int from = 1; from <= 2; from++) {
    lua_pushnil(L);
    while (lua_next(L, from)) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_settable(L, 3);
    }
  }
  lua_replace(L, 1);
  lua_settop(L, 1);
}

/* The sandbox's rule for a corpus a script names: it must be readable, and
** the run reads the name checked. */
static int corpus_rule(LuaApi *api, RunOptions *o, Err *err) {
  if (!o->corpus[0]) return 0;
  char real[PATH_MAX];
  PathVerdict v = lapi_path_resolve(api, o->corpus, 0, real);
  if (v != PATH_OK) return err_set(err, "'%.900s' %s", o->corpus, lapi_path_refusal(v));
  if (strlen(real) >= sizeof o->corpus) return err_set(err, "the corpus path is too long");
  strcpy(o->corpus, real);
  o->corpus_nofollow = api->opt.sandbox;   /* what is read is what was checked */
  return 0;
}

int lapi_add_run(LuaApi *api, RunOptions *o, int check_corpus, Err *err) {
  if (run_options_check(o, err) < 0) return -1;
  if (check_corpus && corpus_rule(api, o, err) < 0) return -1;
  Lab *lab = lapi_lock(api);
  size_t budget = lapi_run_budget(api);
  size_t need = lab_memory_need(lab, o);
  Run *r = lab_add_run_within(lab, o, budget, err);
  if (r && lapi_own_run(api, run_id(r), need) < 0) {
    lab_remove_run(lab, r);
    r = NULL;
    err_set(err, "out of memory");
  }
  int id = r ? run_id(r) : -1;
  lapi_unlock(api);
  if (!r && budget && need > budget) {   /* say why a run that would fit the machine is refused */
    char msg[ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    err_set(err, "%.400s (a sandboxed script's runs count against --lua-mem)", msg);
  }
  return id;
}

int luaapi_add_run(LuaApi *api, const RunOptions *o, Err *err) {
  RunOptions opt = *o;
  return lapi_add_run(api, &opt, 1, err) < 0 ? -1 : 0;
}

/* lab.run's arguments (base, extra) as run options, checked: raises as
** lab.run does. Returns whether they name a corpus: a file the script
** reads (one from the command line was chosen by the user). */
static int run_options_arg(lua_State *L, RunOptions *o) {
  Err err;
  if (!lua_isnoneornil(L, 2)) merge_options(L);
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
  largs_run_options(L, 1, "lab.run", o);
  if (run_options_check(o, &err) < 0) luaL_error(L, "lab.run: %s", err.msg);
  int named = lua_istable(L, 1) && lua_getfield(L, 1, setting_name(SETTING_CORPUS)) != LUA_TNIL;
  lua_pop(L, lua_istable(L, 1));
  return named;
}

static int check_options(lua_State *L) {
  RunOptions o;
  Err err;
  if (run_options_arg(L, &o) && corpus_rule(lapi_get(L), &o, &err) < 0) luaL_error(L, "lab.run: %s", err.msg);
  if (lab_check_memory(NULL, &o, 0, &err) < 0) luaL_error(L, "lab.run: %s", err.msg);
  return 0;
}

/* lab.check_run([base [, extra]]): what lab.run would say of these
** options, without making a run (nor reading its corpus): true, or nil and
** the message lab.run would raise. A sweep checks its grid with it before
** it hands out a single task. */
static int llab_check_run(lua_State *L) {
  lua_pushcfunction(L, check_options);
  lua_insert(L, 1);
  if (lua_pcall(L, lua_gettop(L) - 1, 0, 0) == LUA_OK) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

static int llab_run(lua_State *L) {
  lhooks_refuse(L);
  RunOptions o;
  Err err;
  int named = run_options_arg(L, &o);
  int id = lapi_add_run(lapi_get(L), &o, named, &err);
  if (id < 0) return luaL_error(L, "lab.run: %s", err.msg);
  lrun_push(L, id);
  return 1;
}

/* lab.load's second argument: a name, or {corpus = FILE, name = NAME,
** batch = B}; 'batch' (0 when not given) is for a released model, in the
** range of the setting. */
static void load_options(lua_State *L, const char **name, const char **corpus, int *batch) {
  const char *const keys[] = {setting_name(SETTING_CORPUS), setting_name(SETTING_NAME), setting_name(SETTING_BATCH)};
  const char **out[] = {corpus, name};
  const Setting *b = lab_setting(SETTING_BATCH);
  *name = *corpus = NULL;
  *batch = 0;
  if (!lua_istable(L, 2)) {
    *name = lua_isnoneornil(L, 2) ? NULL : lapi_name_arg(L, 2, "lab.load");
    return;
  }
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    lua_pop(L, 1);
    int known = 0;
    for (int i = 0; i < 3; i++)
      known |= lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), keys[i]) == 0;
    if (!known)
      luaL_error(L, "lab.load: unknown key '%s' (%s, %s, %s)", luaL_tolstring(L, -1, NULL), keys[0], keys[1], keys[2]);
  }
  for (int i = 0; i < 2; i++) {
    lua_getfield(L, 2, keys[i]);
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "lab.load: '%s' must be a string, not %s", keys[i], luaL_typename(L, -1));
    *out[i] = lua_isnil(L, -1) ? NULL : lapi_name_arg(L, -1, "lab.load");   /* the table keeps it alive */
    lua_pop(L, 1);
  }
  lua_getfield(L, 2, b->name);
  if (!lua_isnil(L, -1)) {
    int isint;
    lua_Integer v = lua_tointegerx(L, -1, &isint);
    if (!isint || v < b->min || v > b->max)
      luaL_error(L, "lab.load: '%s' must be an integer in [%d, %d]", b->name, (int)b->min, (int)b->max);
    *batch = (int)v;
  }
  lua_pop(L, 1);
}

static int llab_load(lua_State *L) {
  lhooks_refuse(L);
  LuaApi *api = lapi_get(L);
  char real[PATH_MAX];
  const char *given = lapi_name_arg(L, 1, "lab.load");
  const char *name, *corpus;
  int batch;
  load_options(L, &name, &corpus, &batch);
  Err err;
  const char *path = lapi_check_path(L, "lab.load", given, 0, real);
  if (lab_is_released_model(path, 0)) lapi_check_model_files(L, api, "lab.load", path);
  /* The checkpoint names its corpus: the loader asks the sandbox before it
  ** touches that path at all, so a script cannot even learn it exists. */
  LapiCorpusGuard guard = {.api = api};
  LabLoadOptions lo = {.name = name, .corpus_allowed = lapi_corpus_allowed, .ctx = &guard,
                       .budget = lapi_run_budget(api), .corpus = corpus,
                       .nofollow = api->opt.sandbox, .corpus_nofollow = api->opt.sandbox, .batch = batch};
  Lab *lab = lapi_lock(api);
  Run *r = lab_load_with(lab, path, &lo, &err);
  if (r && lapi_own_run(api, run_id(r), run_memory_bytes(run_options(r))) < 0) {
    lab_remove_run(lab, r);
    r = NULL;
    err_set(&err, "lab.load: out of memory");
  }
  int id = r ? run_id(r) : -1;
  lapi_unlock(api);
  if (guard.refused) {
    err_set(&err, "lab.load: the corpus '%.900s' of '%.100s' is outside the working directory (sandbox)",
            guard.corpus, given);
    return luaL_error(L, "%s", err.msg);
  }
  if (!r) {
    luaL_pushfail(L);
    lua_pushstring(L, err.msg);
    return 2;
  }
  lrun_push(L, id);
  return 1;
}

/* lab.align(x, y): two matrices of one shape, x the source of the maps;
** the scores and, under 'baseline', x against a random matrix. */
static int align_matrices(lua_State *L) {
  LMatrix *x = lmatrix_check(L, 1), *y = lmatrix_check(L, 2);
  if (x->rows != y->rows || x->cols != y->cols)
    return luaL_error(L, "lab.align: shapes differ (%d x %d and %d x %d): rows are paired, columns compared",
                      x->rows, x->cols, y->rows, y->cols);
  AlignResult res;
  Err err;
  if (sysmem_check(align_memory_bytes(x->rows, x->cols, align_default_options().knn_k), "the alignment's workspace",
                      &err) < 0)
    return luaL_error(L, "lab.align: %s", err.msg);
  if (align_compare(x->data, y->data, x->rows, x->cols, NULL, &res, &err) < 0)
    return luaL_error(L, "lab.align: %s", err.msg);
  lmetrics_push_scores(L, &res.score);
  lua_pushinteger(L, res.topk);
  lua_setfield(L, -2, "topk");
  lmetrics_push_scores(L, &res.baseline);
  lua_setfield(L, -2, "baseline");
  return 1;
}

static int llab_align(lua_State *L) {
  lhooks_refuse(L);
  if (lmatrix_test(L, 1) || lmatrix_test(L, 2)) return align_matrices(L);
  LuaApi *api = lapi_get(L);
  lrun_check(L, 1);
  lrun_check(L, 2);
  AlignStats st;
  Err err;
  Run *a = lrun_lock(L, 1, api);
  Run *b = lrun_lock(L, 2, api);
  int rc = lab_align(a, b, &st, &err);
  lapi_unlock(api);
  lapi_unlock(api);
  if (rc < 0) return luaL_error(L, "lab.align: %s", err.msg);
  lmetrics_push_align(L, &st);
  return 1;
}

#define MAX_LISTED 1024

/* Listing reads the host's view: it never waits for a training step. */
typedef struct IdList {
  int ids[MAX_LISTED];
  int n, cap;
  const char *name;   /* find this run, by name */
  int found;
} IdList;

static void add_id(void *ctx, const HostRunView *v) {
  IdList *l = ctx;
  if (l->n < l->cap) l->ids[l->n++] = v->id;
  if (l->name && l->found < 0 && strcmp(v->name, l->name) == 0) l->found = v->id;
}

/* Ids of every run, in the lab's order, into 'ids' (at most 'cap'). */
static int run_ids(LuaApi *api, int *ids, int cap) {
  IdList l = {.cap = cap < MAX_LISTED ? cap : MAX_LISTED, .found = -1};
  lapi_view(api, -1, add_id, &l);
  memcpy(ids, l.ids, sizeof *ids * (size_t)l.n);
  return l.n;
}

static int llab_runs(lua_State *L) {
  int ids[MAX_LISTED];
  int n = run_ids(lapi_get(L), ids, MAX_LISTED);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lrun_push(L, ids[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* lab.runs is also a live view: lab.runs[1], lab.runs.tied, #lab.runs,
** ipairs(lab.runs), pairs(lab.runs); calling it gives a fresh array. */
static int runs_call(lua_State *L) {
  lua_settop(L, 0);
  return llab_runs(L);
}

static int runs_index(lua_State *L) {
  IdList l = {.cap = MAX_LISTED, .found = -1};
  int id = -1;
  if (lua_isinteger(L, 2)) {
    lua_Integer i = lua_tointeger(L, 2);
    lapi_view(lapi_get(L), -1, add_id, &l);
    if (i >= 1 && i <= l.n) id = l.ids[i - 1];
  } else if (lua_type(L, 2) == LUA_TSTRING) {
    size_t n;
    l.name = lua_tolstring(L, 2, &n);
    if (strlen(l.name) != n) return 0;   /* no run's name holds a NUL byte */
    lapi_view(lapi_get(L), -1, add_id, &l);
    id = l.found;
  }
  if (id < 0) return 0;
  lrun_push(L, id);
  return 1;
}

static int runs_len(lua_State *L) {
  lua_pushinteger(L, lapi_view(lapi_get(L), -1, NULL, NULL));
  return 1;
}

static int runs_next(lua_State *L) {
  lua_Integer i = luaL_optinteger(L, 2, 0) + 1;
  if (lua_rawgeti(L, 1, i) == LUA_TNIL) return 0;
  lua_pushinteger(L, i);
  lua_insert(L, -2);
  return 2;
}

static int runs_pairs(lua_State *L) {
  lua_pushcfunction(L, runs_next);
  llab_runs(L);
  lua_pushnil(L);
  return 3;
}

static int runs_readonly(lua_State *L) { return luaL_error(L, "lab.runs is read-only: use lab.run{...}"); }

static int runs_tostring(lua_State *L) {
  lua_pushfstring(L, "lab.runs (%d)", (int)luaL_len(L, 1));
  return 1;
}

static void push_runs_view(lua_State *L) {
  static const luaL_Reg meta[] = {{"__call", runs_call},   {"__index", runs_index},
                                  {"__len", runs_len},     {"__pairs", runs_pairs},
                                  {"__newindex", runs_readonly}, {"__tostring", runs_tostring},
                                  {NULL, NULL}};
  lua_newtable(L);
  luaL_newlib(L, meta);
  lua_setmetatable(L, -2);
}

static int llab_remove(lua_State *L) {
  lhooks_refuse(L);
  lrun_check(L, 1);
  lua_settop(L, 1);
  lua_getfield(L, 1, "remove");
  lua_insert(L, 1);
  lua_call(L, 1, 0);
  return 0;
}

/* ------------------------------------------------------------ stepping */

static int llab_step_k(lua_State *L, int status, lua_KContext ctx) {
  if (status == LUA_YIELD) lapi_step_result(L);
  return 0;
}

static int llab_step(lua_State *L) {
  lua_Integer n = luaL_optinteger(L, 1, 1);
  luaL_argcheck(L, n >= 0 && n <= 1000000000, 1, "steps must be in [0, 1e9]");
  int ids[1];
  if (run_ids(lapi_get(L), ids, 1) == 0) return luaL_error(L, "lab.step: the lab has no runs");
  if (n == 0) return 0;
  return lapi_wait_steps(L, -1, (long)n, 0, llab_step_k);
}

/* While there are callbacks, a host that steps on another thread hands
** every step over to them (headless, each step calls them anyway). */
static void watch_steps(lua_State *L) {
  LuaApi *api = lapi_get(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.hooks");
  int want = luaL_len(L, -1) > 0;
  lua_pop(L, 1);
  if (want == api->watching || !api->host->handover) return;
  api->watching = want;
  api->host->handover(api->host, want);
}

void llab_unwatch(LuaApi *api) {
  if (api->watching && api->host->handover) api->host->handover(api->host, 0);
  api->watching = 0;
}

static int llab_on_step(lua_State *L) {
  LuaApi *api = lapi_get(L);
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.hooks");
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "fn");
  lua_pushinteger(L, ++api->next_hook);
  lua_setfield(L, -2, "id");
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
  lua_pop(L, 1);
  watch_steps(L);
  lua_pushinteger(L, api->next_hook);
  return 1;
}

/* Remove the callback with 'id' (or function 'fn' at index 'fidx'). */
static int remove_hook(lua_State *L, lua_Integer id, int fidx) {
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.hooks");
  int t = lua_gettop(L), found = 0;
  lua_Integer n = luaL_len(L, t);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, t, i);
    lua_getfield(L, -1, "id");
    lua_getfield(L, -2, "fn");
    int match = fidx ? lua_rawequal(L, -1, fidx) : lua_tointeger(L, -2) == id;
    if (match && !found) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -4, "removed");   /* a running walk skips it */
      found = 1;
    }
    lua_pop(L, 3);
    if (found) {
      for (lua_Integer j = i; j < n; j++) {
        lua_rawgeti(L, t, j + 1);
        lua_rawseti(L, t, j);
      }
      lua_pushnil(L);
      lua_rawseti(L, t, n);
      break;
    }
  }
  lua_pop(L, 1);
  if (found) watch_steps(L);
  return found;
}

static int llab_off(lua_State *L) {
  int found = lua_type(L, 1) == LUA_TFUNCTION ? remove_hook(L, 0, 1)
                                               : remove_hook(L, luaL_checkinteger(L, 1), 0);
  if (!found && lua_type(L, 1) != LUA_TFUNCTION) found = lhooks_off(L, lua_tointeger(L, 1));
  lua_pushboolean(L, found);
  return 1;
}

/* Call every on_step callback with the step; a failing one is reported
** with its traceback and removed, and training goes on. */
static int after_body(lua_State *L) {
  LuaApi *api = lapi_get(L);
  long step = *(const long *)lua_touserdata(L, 1);
  lua_Integer n;
  int copy = lapi_push_list_copy(L, "tielab.hooks", &n);   /* callbacks may add or remove */
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, copy, i);
    if (lua_getfield(L, -1, "removed") != LUA_TNIL) {
      lua_pop(L, 2);
      continue;
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, "id");
    lua_getfield(L, -2, "fn");
    lua_pushinteger(L, step);
    if (lapi_docall(L, 1, 0) != LUA_OK) {
      if (lapi_stop_pending(api)) {
        /* It goes too: one that never returns would hang the next step.
        ** An os.exit ends the script that waits for this step; with none
        ** (a callback of the interactive lab) it ends only the callback. */
        static const char interrupted[] = "lab.on_step: callback removed: interrupted\n";
        static const char exited[] = "lab.on_step: callback removed: os.exit ends a script, never the lab\n";
        lua_pop(L, 1);
        remove_hook(L, lua_tointeger(L, -1), 0);
        if (!api->exiting) lapi_write(api, interrupted, sizeof interrupted - 1, 1);
        else if (api->depth == 1) lapi_write(api, exited, sizeof exited - 1, 1);
        return 0;   /* the step reports the stop */
      }
      static const char head[] = "lab.on_step: callback removed after an error: ";
      lapi_write(api, head, sizeof head - 1, 1);
      lapi_report(api, L, LUA_ERRRUN);
      remove_hook(L, lua_tointeger(L, -1), 0);
    }
    lua_pop(L, 2);
  }
  return 0;
}

void llab_after_step(void *ctx, long step) {
  LuaApi *api = ctx;
  api->lab_step = step;
  if (api->in_callback) return;
  lua_State *L = api->stepping ? api->stepping : api->L;
  lapi_enter(api);
  api->in_callback = 1;
  lua_pushcfunction(L, after_body);
  lua_pushlightuserdata(L, &step);
  int status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) lapi_report(api, L, status);
  api->in_callback = 0;
  lapi_leave(api);
}

/* Seconds on the monotonic clock, for timing experiments (os.clock counts
** the CPU time of every thread). */
static int llab_clock(lua_State *L) {
  lua_pushnumber(L, clock_seconds());
  return 1;
}

static int llab_sleep(lua_State *L) {
  lhooks_refuse(L);
  double s = luaL_checknumber(L, 1);
  luaL_argcheck(L, s >= 0 && s <= 86400, 1, "seconds must be in [0, 86400]");
  return lapi_sleep(L, s);
}

/* ------------------------------------------------------------ messages */

/* The message of lab.log and lab.caption: a format and its arguments, or
** one value as tostring shows it. */
static const char *message(lua_State *L) {
  if (lua_gettop(L) > 1) {
    lua_getglobal(L, "string");
    lua_getfield(L, -1, "format");
    lua_remove(L, -2);
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return lua_tostring(L, -1);
  }
  return luaL_tolstring(L, 1, NULL);
}

static void emit(LuaApi *api, LuaApiLog kind, const char *text) {
  char msg[4096];   /* a screen line or two: longer messages are cut */
  text_escape(text, strlen(text), msg, sizeof msg);
  if (api->opt.log) {
    api->opt.log(api->opt.ctx, kind, msg);
    return;
  }
  lapi_write(api, msg, strlen(msg), 1);
  lapi_write(api, "\n", 1, 1);
}

static int llab_log(lua_State *L) {
  luaL_checkany(L, 1);
  emit(lapi_get(L), LUAAPI_LOG_INFO, message(L));
  return 0;
}

static int llab_caption(lua_State *L) {
  LuaApi *api = lapi_get(L);
  const char *text = lua_isnoneornil(L, 1) ? "" : message(L);
  snprintf(api->caption, sizeof api->caption, "%s", text);
  emit(api, LUAAPI_LOG_CAPTION, api->caption);
  return 0;
}

/* lab.phase: the caption of the next phase of a talk; returns its number.
** The speaker's '.' ends the wait that follows it (lab.wait_key, lab.sleep).
** Each run's history records it at the run's step, so that the charts
** rule off where a phase began. */
static int llab_phase(lua_State *L) {
  LuaApi *api = lapi_get(L);
  luaL_checkstring(L, 1);   /* a format and its arguments, as lab.caption */
  llab_caption(L);
  char text[sizeof api->caption + 32];   /* the history cuts it, on a character boundary */
  snprintf(text, sizeof text, HISTORY_EVENT_PHASE " %d: %s", ++api->phase, api->caption);
  Lab *lab = lapi_lock(api);
  for (int i = 0; i < lab_n_runs(lab); i++) {
    Run *r = lab_run(lab, i);
    history_event(run_history(r), run_metrics(r)->step, text);
  }
  lapi_unlock(api);
  lua_pushinteger(L, api->phase);
  return 1;
}

static int llab_wait_key(lua_State *L) {
  lhooks_refuse(L);
  double s = luaL_optnumber(L, 1, 0);
  luaL_argcheck(L, s >= 0 && s <= 86400, 1, "seconds must be in [0, 86400]");
  return lapi_wait_key(L, s);
}

/* ------------------------------------------------------------ custom series */

/* The lab's last step: the furthest any run has come. The lab hands its
** steps to Lua only while a script waits on them, so the step last handed
** over may be behind. */
static void newest_step(void *ctx, const HostRunView *v) {
  long *step = ctx;
  if (v->m->step > *step) *step = v->m->step;
}

static int llab_plot(lua_State *L) {
  LuaApi *api = lapi_get(L);
  const char *name = lapi_name_arg(L, 1, "lab.plot");
  luaL_argcheck(L, strlen(name) < 64, 1, "series names have at most 63 bytes");   /* see history.c */
  int n;
  const HistBucket *b = history_series(api->plots, name, &n);
  if (lua_isnoneornil(L, 2)) {
    if (!b) return 0;
    return lmetrics_push_history(L, b, n);
  }
  double v = luaL_checknumber(L, 2);
  long last = api->lab_step;
  if (lua_isnoneornil(L, 3)) lapi_view(api, -1, newest_step, &last);
  lua_Integer step = luaL_optinteger(L, 3, last);
  luaL_argcheck(L, step >= 0 && step <= HISTORY_MAX_STEP, 3, "steps are whole numbers >= 0");
  if (b && n > 0 && step < b[n - 1].step_last) step = b[n - 1].step_last;
  if (history_push(api->plots, name, (long)step, v) == 0) return 0;
  if (!b && history_n_series(api->plots) >= HISTORY_MAX_SERIES)
    return luaL_error(L, "lab.plot: cannot add series '%s' (at most %d series)", name, HISTORY_MAX_SERIES);
  if (!b)
    return luaL_error(L, "lab.plot: '%s' is not a series name (printable text, 1 to 63 bytes)", name);
  return luaL_error(L, "lab.plot: out of memory adding to series '%s'", name);
  return 0;
}

static int llab_plots(lua_State *L) {
  LuaApi *api = lapi_get(L);
  int n = history_n_series(api->plots);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, history_series_name(api->plots, i));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ------------------------------------------------------------ keys */

typedef struct KeyName {
  const char *name;
  int code;
} KeyName;

static const KeyName key_names[] = {{"Tab", 9}, {"Enter", 10}, {"Esc", 27}, {"Space", 32},
                                    {"Backspace", 127}};

static int key_code(lua_State *L, int idx, const char *fname) {
  if (lua_isinteger(L, idx)) return (int)lua_tointeger(L, idx);
  const char *s = lapi_name_arg(L, idx, fname);
  size_t len = strlen(s);
  int f;
  char extra;
  if (len == 1) return (unsigned char)s[0];
  if (len == 3 && s[0] == 'C' && s[1] == '-') return s[2] & 0x1f;
  if (sscanf(s, "F%d%c", &f, &extra) == 1 && f >= 1 && f <= 12) return LUAAPI_KEY_F(f);
  for (size_t i = 0; i < sizeof key_names / sizeof *key_names; i++)
    if (strcmp(s, key_names[i].name) == 0) return key_names[i].code;
  return luaL_error(L, "%s: unknown key '%s' (a character, C-x, F1..F12, Tab, Enter, Esc, Space, Backspace)", fname, s);
}

static int llab_bind(lua_State *L) {
  int key = key_code(L, 1, "lab.bind");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  const char *help = luaL_optstring(L, 3, "");
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.keys");
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "fn");
  luaL_tolstring(L, 1, NULL);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, help);
  lua_setfield(L, -2, "help");
  lua_rawseti(L, -2, key);
  return 0;
}

static int llab_unbind(lua_State *L) {
  int key = key_code(L, 1, "lab.unbind");
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.keys");
  lua_pushboolean(L, lua_rawgeti(L, -1, key) != LUA_TNIL);
  lua_pushnil(L);
  lua_rawseti(L, -4, key);
  return 1;
}

/* ------------------------------------------------------------ the rest */

static int llab_settings(lua_State *L) {
  int n;
  const Setting *s = lab_settings(&n);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 7);
    lua_pushstring(L, s[i].name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, setting_type_name(s[i].type));
    lua_setfield(L, -2, "type");
    if (s[i].type == SET_INT || s[i].type == SET_NUMBER) {
      lua_pushnumber(L, s[i].min);
      lua_setfield(L, -2, "min");
      lua_pushnumber(L, s[i].max);
      lua_setfield(L, -2, "max");
      lua_pushboolean(L, (s[i].open & OPEN_MIN) != 0);
      lua_setfield(L, -2, "min_open");
      lua_pushboolean(L, (s[i].open & OPEN_MAX) != 0);
      lua_setfield(L, -2, "max_open");
    }
    lua_pushstring(L, s[i].deflt);
    lua_setfield(L, -2, "default");
    lua_pushboolean(L, s[i].live);
    lua_setfield(L, -2, "live");
    lua_pushstring(L, s[i].help);
    lua_setfield(L, -2, "help");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int llab_mem(lua_State *L) {
  LuaApi *api = lapi_get(L);
  lua_pushinteger(L, (lua_Integer)api->mem_used);
  lua_pushinteger(L, (lua_Integer)api->mem_cap);
  lua_pushinteger(L, (lua_Integer)api->own_runs_bytes);
  return 3;
}

/* lab.workers([n]): how many runs lab.step steps at once; n sets it.
** Returns the number before. */
static int llab_workers(lua_State *L) {
  LuaApi *api = lapi_get(L);
  int set = !lua_isnoneornil(L, 1), whole = 0;
  lua_Integer n = 0;
  if (set) {
    lhooks_refuse(L);
    if (lua_type(L, 1) == LUA_TNUMBER) n = lua_tointegerx(L, 1, &whole);
    if (!whole || n < 1 || n > LAB_WORKERS_MAX) {
      const char *got = lua_type(L, 1) == LUA_TNUMBER ? luaL_tolstring(L, 1, NULL)
                                                      : lua_pushfstring(L, "a %s", luaL_typename(L, 1));
      return luaL_error(L, "lab.workers: the runs stepped at once must be a whole number from 1 to %d, not %s",
                        LAB_WORKERS_MAX, got);
    }
  }
  Lab *lab = lapi_lock(api);
  int before = lab_workers(lab);
  Err err;
  int rc = set ? lab_set_workers(lab, (int)n, &err) : 0;
  lapi_unlock(api);
  if (rc < 0) return luaL_error(L, "lab.workers: %s", err.msg);
  lua_pushinteger(L, before);
  return 1;
}

static const luaL_Reg lablib[] = {
  {"run", llab_run},         {"check_run", llab_check_run}, {"load", llab_load}, {"align", llab_align},
  {"remove", llab_remove},   {"step", llab_step},       {"on_step", llab_on_step},
  {"off", llab_off},         {"sleep", llab_sleep},     {"clock", llab_clock},     {"log", llab_log},
  {"caption", llab_caption}, {"phase", llab_phase},     {"wait_key", llab_wait_key},
  {"plot", llab_plot},       {"plots", llab_plots},
  {"bind", llab_bind},       {"unbind", llab_unbind},   {"settings", llab_settings},
  {"mem", llab_mem},         {"args", largs_args},      {"progress", lprogress_new},
  {"workers", llab_workers},
  {NULL, NULL}};

static int lab_newindex(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char *key = lua_tostring(L, 2);
    static const char *const fixed[] = {"runs", "version", "rank", "world"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
      if (strcmp(key, fixed[i]) == 0) return luaL_error(L, "lab.%s is read-only", key);
  }
  lua_rawset(L, 1);
  return 0;
}

static void registry_table(lua_State *L, const char *name) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, name) == LUA_TNIL) {
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, name);
  }
  lua_pop(L, 1);
}

int luaopen_tielab(lua_State *L) {
  registry_table(L, "tielab.hooks");
  registry_table(L, "tielab.keys");
  luaL_newlib(L, lablib);
  ljson_open(L);
  lua_setfield(L, -2, "json");
  lsys_open(L);
  lmatrix_register(L);
  lmodel_register(L);
  /* 'runs', 'version', 'rank' and 'world' are read through the metatable,
  ** so that assigning to them is an error rather than a lost view;
  ** functions stay plain fields (a script may wrap one) and new fields may
  ** be added. Under mpirun every rank runs the script: 'rank' is this
  ** process's (0 prints and writes), 'world' how many share each batch. */
  LuaApi *api = lapi_get(L);
  Lab *lab = lapi_lock(api);
  int rank = lab_rank(lab), world = lab_world(lab);
  lapi_unlock(api);
  lua_createtable(L, 0, 2);
  lua_createtable(L, 0, 4);
  push_runs_view(L);
  lua_setfield(L, -2, "runs");
  lua_pushliteral(L, PACKAGE_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushinteger(L, rank);
  lua_setfield(L, -2, "rank");
  lua_pushinteger(L, world);
  lua_setfield(L, -2, "world");
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, lab_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  return 1;
}
