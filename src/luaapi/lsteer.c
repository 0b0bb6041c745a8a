/*
** lsteer.c -- the verbs of lab/steer.h as Lua functions of the 'ui' table,
** defined here once for whoever defines 'ui': the lab's screen and a
** replay get the same functions, so a key, a typed ui call and a replayed
** one are checked, said and applied alike.
**
** A verb reads its arguments, finds its run in the host's view (never
** waiting for a step) and then posts the change, made by the host between
** two steps, its line said from the view. A verb that must read the value
** it moves (the ladder), or a host that cannot post, holds the lab for an
** instant instead and makes the change itself.
*/
#include <string.h>

#include "lab/steer.h"
#include "luaapi/linternal.h"

static const SteerVerb *verb_at(int i) {
  int n;
  const SteerVerb *v = steer_verbs(&n);
  return i >= 0 && i < n ? &v[i] : NULL;
}

/* ------------------------------------------------------------ posted */

typedef struct Posted {
  int verb, id;
  SteerArgs a;   /* checked: 'key' NULL, 'setting' found */
} Posted;

_Static_assert(sizeof(Posted) <= HOST_POST_MAX, "a posted verb fits the host's queue");

static int posted_change(Lab *lab, const void *arg, Err *err) {
  const Posted *p = arg;
  Run *r = lab_run_by_id(lab, p->id);
  if (!r) return err_set(err, "run %d was removed", p->id);
  SteerPlan plan;
  return steer_do(r, verb_at(p->verb), &p->a, "x", &plan, err);
}

/* ------------------------------------------------------------ the run */

/* The run a verb acts on, copied out of the view. */
typedef struct Found {
  const char *want;   /* its name, or NULL: the first run */
  int seen, hit;
  int id;
  RunCopy c;
} Found;

static void look(void *ctx, const HostRunView *v) {
  Found *f = ctx;
  int is = f->want && strcmp(v->name, f->want) == 0;
  if (is || (f->seen == 0 && !f->hit)) {
    f->id = v->id;
    lrun_copy(&f->c, v);
  }
  f->hit |= is;
  f->seen++;
}

/* The run named by argument 'arg', or the owner's selected one (the first
** run when that is gone). */
static void find_run(lua_State *L, const LuaApiSteerOwner *o, int arg, Found *f) {
  int named = !lua_isnoneornil(L, arg);
  memset(f, 0, sizeof *f);
  f->want = named ? luaapi_name_arg(L, arg, "ui") : o->selected ? o->selected(o->ctx) : NULL;
  lapi_view(lapi_get(L), -1, look, f);
  if (named && !f->hit) luaL_error(L, "no run named '%s'", f->want);
  if (f->seen == 0) luaL_error(L, "there is no run");
}

/* ------------------------------------------------------------ the call */

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

/* Upvalues: the verb's index in the table, the owner. */
static int lsteer_call(lua_State *L) {
  int verb = (int)lua_tointeger(L, lua_upvalueindex(1));
  const SteerVerb *v = verb_at(verb);
  const LuaApiSteerOwner *o = lua_touserdata(L, lua_upvalueindex(2));
  SteerArgs a = {0};
  int reads = 0, nargs = read_args(L, v, &a, &reads);
  Found f;
  find_run(L, o, nargs + 1, &f);
  if (reads) {
    lua_pushnumber(L, steer_value(&f.c.o, steer_verb_setting(v)));
    return 1;
  }
  Err err;
  int bad = steer_check(v, &a, &err);
  if (bad) return luaL_argerror(L, bad, err.msg);
  const char *times = o->times ? o->times(o->ctx) : "x";
  SteerPlan p;
  if (v->needs_now || !lapi_get(L)->host->post) change_now(L, v, f.id, &a, times, &p);
  else change_later(L, verb, &f, &a, times, &p);
  if (o->say) o->say(o->ctx, p.warn, p.note);
  if (!p.has_result) return 0;
  lua_pushnumber(L, p.result);
  return 1;
}

void luaapi_open_steer(LuaApi *api, const LuaApiSteerOwner *owner) {
  lua_State *L = api->L;
  int n;
  steer_verbs(&n);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, i);
    LuaApiSteerOwner *o = lua_newuserdatauv(L, sizeof *o, 0);
    *o = *owner;
    lua_pushcclosure(L, lsteer_call, 2);
    lua_setfield(L, -2, steer_verb_name(verb_at(i)));
  }
}
