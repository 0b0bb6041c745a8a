/*
** lui.c -- the functions of the 'ui' table that change training, defined
** here once for whoever defines 'ui': the lab's screen and a replay get the
** same functions, so a key, a typed ui call and a replayed one are checked,
** said and applied alike. The owner (LuaApiUiOwner) keeps what is its own:
** which run is selected, whether the lab trains, where lines go.
**
** A verb of lab/steer.h reads its arguments, finds its run in the host's
** view (never waiting for a step) and posts the change, made by the host
** between two steps, its line said from the view. A verb that must read
** the value it moves (the ladder), or a host that cannot post, holds the
** lab for an instant instead and makes the change itself.
*/
#include <string.h>

#include "lab/steer.h"
#include "luaapi/linternal.h"

static const LuaApiUiOwner *owner_of(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

static void say(const LuaApiUiOwner *o, int warn, const char *line) {
  if (o->say) o->say(o->ctx, warn, line);
}

/* ------------------------------------------------------------ runs by name */

/* A run copied out of the view: the one named 'want', or the one at index
** 'pick' (-1: the first when 'want' is not there). */
typedef struct Found {
  const char *want;
  int pick;
  int seen, at;   /* runs seen; the index of 'want', or -1 */
  int id;
  RunCopy c;
} Found;

static void look(void *ctx, const HostRunView *v) {
  Found *f = ctx;
  int is = f->want && strcmp(v->name, f->want) == 0;
  if (is) f->at = f->seen;
  if (f->pick >= 0 ? f->seen == f->pick : is || (f->seen == 0 && f->at < 0)) {
    f->id = v->id;
    lrun_copy(&f->c, v);
  }
  f->seen++;
}

static void find(lua_State *L, const char *want, int pick, Found *f) {
  memset(f, 0, sizeof *f);
  f->want = want;
  f->pick = pick;
  f->at = -1;
  lapi_view(lapi_get(L), -1, look, f);
}

static const char *selected(const LuaApiUiOwner *o) { return o->selected ? o->selected(o->ctx) : NULL; }

/* The run named by argument 'arg', or the selected one (the first run when
** that is gone). */
static void run_arg(lua_State *L, int arg, Found *f) {
  int named = !lua_isnoneornil(L, arg);
  find(L, named ? luaapi_name_arg(L, arg, "ui") : selected(owner_of(L)), -1, f);
  if (named && f->at < 0) luaL_error(L, "no run named '%s'", f->want);
  if (f->seen == 0) luaL_error(L, "there is no run");
}

/* ------------------------------------------------------------ verbs */

typedef struct Posted {
  int verb, id;
  SteerArgs a;   /* checked: 'key' NULL, 'setting' found */
} Posted;

_Static_assert(sizeof(Posted) <= HOST_POST_MAX, "a posted verb fits the host's queue");

static const SteerVerb *verb_at(int i) {
  int n;
  const SteerVerb *v = steer_verbs(&n);
  return i >= 0 && i < n ? &v[i] : NULL;
}

/* On the host's side, between two steps: the run as it is then, which
** the line said when it was posted need not be. */
static int posted_change(Lab *lab, const void *arg, Err *err) {
  const Posted *p = arg;
  Run *r = lab_run_by_id(lab, p->id);
  if (!r) return err_set(err, "run %d was removed", p->id);
  SteerPlan plan;
  return steer_do(r, verb_at(p->verb), &p->a, "x", &plan, err);
}

/* The arguments before the run into 'a'; how many a verb takes. '*reads':
** none given to a verb that then only reads its setting. */
static int read_args(lua_State *L, const SteerVerb *v, SteerArgs *a, int *reads) {
  static const char *const moves[] = {"up", "down", NULL};
  switch (v->takes) {
    case STEER_NOTHING: return 0;
    case STEER_FACTOR:
      a->key = luaL_checkstring(L, 1);
      a->factor = luaL_checknumber(L, 2);
      return 2;
    case STEER_RUNG:
      if (lua_isnoneornil(L, 1)) *reads = 1;
      else if (lua_type(L, 1) == LUA_TSTRING) a->dir = luaL_checkoption(L, 1, NULL, moves) == 0 ? 1 : -1;
      else a->value = luaL_checknumber(L, 1);
      return 1;
  }
  return 0;
}

/* Make the change on the run itself, the lab held for an instant. */
static void change_now(lua_State *L, const SteerVerb *v, int id, const SteerArgs *a, const char *times,
                       SteerPlan *p) {
  LuaApi *api = lapi_get(L);
  Err err;
  Run *r = lab_run_by_id(lapi_lock(api), id);
  int rc = r ? steer_do(r, v, a, times, p, &err) : err_set(&err, "run %d was removed", id);
  lapi_unlock(api);
  if (rc < 0) luaL_error(L, "%s", err.msg);
}

/* Post the change; its line is planned on the view. */
static void change_later(lua_State *L, int verb, const Found *f, const SteerArgs *a, const char *times,
                         SteerPlan *p) {
  Host *h = lapi_get(L)->host;
  SteerRun view = {f->c.name, &f->c.m, &f->c.o};
  Posted post = {.verb = verb, .id = f->id, .a = *a};
  post.a.key = NULL;
  Err err;
  if (steer_plan(verb_at(verb), &view, a, times, p, &err) < 0 ||
      h->post(h, posted_change, &post, sizeof post, &err) < 0)
    luaL_error(L, "%s", err.msg);
}

/* Upvalues: the owner, the verb's index in the table. */
static int lui_verb(lua_State *L) {
  const LuaApiUiOwner *o = owner_of(L);
  int verb = (int)lua_tointeger(L, lua_upvalueindex(2));
  const SteerVerb *v = verb_at(verb);
  SteerArgs a = {0};
  int reads = 0, nargs = read_args(L, v, &a, &reads);
  Err err;
  int bad = reads ? 0 : steer_check(v, &a, &err);   /* the arguments first, as before any run is looked for */
  if (bad) return luaL_argerror(L, bad, err.msg);
  Found f;
  run_arg(L, nargs + 1, &f);
  if (reads) {
    lua_pushnumber(L, steer_value(&f.c.o, steer_verb_setting(v)));
    return 1;
  }
  const char *times = o->times ? o->times(o->ctx) : "x";
  SteerPlan p;
  if (v->needs_now || !lapi_get(L)->host->post) change_now(L, v, f.id, &a, times, &p);
  else change_later(L, verb, &f, &a, times, &p);
  say(o, p.warn, p.note);
  if (!p.has_result) return 0;
  lua_pushnumber(L, p.result);
  return 1;
}

/* ------------------------------------------------------------ training */

static int running(const LuaApiUiOwner *o, int on) { return o->running ? o->running(o->ctx, on) : 0; }

static int lui_toggle(lua_State *L) {
  const LuaApiUiOwner *o = owner_of(L);
  int on = !running(o, -1);
  running(o, on);
  say(o, 0, on ? "training runs" : "training paused");
  lua_pushboolean(L, on);
  return 1;
}

static int lui_running(lua_State *L) {
  const LuaApiUiOwner *o = owner_of(L);
  int on = lua_isnoneornil(L, 1) ? -1 : lua_toboolean(L, 1);
  lua_pushboolean(L, running(o, on));
  return 1;
}

static int lui_step(lua_State *L) {
  Host *h = lapi_get(L)->host;
  lua_Integer n = luaL_optinteger(L, 1, 1);
  luaL_argcheck(L, n >= 1, 1, "must be at least 1");
  Err err;
  if (h->submit(h, -1, (long)n, &err) < 0) return luaL_error(L, "%s", err.msg);
  char line[64];
  snprintf(line, sizeof line, "%lld more step%s of every run", (long long)n, n == 1 ? "" : "s");
  say(owner_of(L), 0, line);
  return 0;
}

/* ------------------------------------------------------------ the selected run */

/* ui.select([name]): that run, or the one after the selected. */
static int lui_select(lua_State *L) {
  const LuaApiUiOwner *o = owner_of(L);
  Found f;
  if (!lua_isnoneornil(L, 1)) {
    run_arg(L, 1, &f);
  } else {
    find(L, selected(o), -1, &f);
    if (f.seen > 0) find(L, NULL, (f.at + 1) % f.seen, &f);
  }
  if (f.seen == 0) {
    lua_pushnil(L);
    return 1;
  }
  if (o->select) o->select(o->ctx, f.id, f.c.name);
  char line[128];
  snprintf(line, sizeof line, "selected: %s (tab: the next run)", f.c.name);
  say(o, 0, line);
  lua_pushstring(L, f.c.name);
  return 1;
}

static int lui_selected(lua_State *L) {
  Found f;
  find(L, selected(owner_of(L)), -1, &f);
  if (f.seen > 0) lua_pushstring(L, f.c.name);
  else lua_pushnil(L);
  return 1;
}

static const luaL_Reg funcs[] = {
    {"toggle", lui_toggle}, {"running", lui_running},   {"step", lui_step},
    {"select", lui_select}, {"selected", lui_selected}, {NULL, NULL},
};

void luaapi_open_ui(LuaApi *api, const LuaApiUiOwner *owner) {
  lua_State *L = api->L;
  LuaApiUiOwner *o = lua_newuserdatauv(L, sizeof *o, 0);
  *o = *owner;
  int n;
  steer_verbs(&n);
  for (int i = 0; i < n; i++) {
    lua_pushvalue(L, -1);
    lua_pushinteger(L, i);
    lua_pushcclosure(L, lui_verb, 2);
    lua_setfield(L, -3, steer_verb_name(verb_at(i)));
  }
  luaL_setfuncs(L, funcs, 1);   /* pops the owner */
}
