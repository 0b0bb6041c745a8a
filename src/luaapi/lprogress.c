/*
** lprogress.c -- lab.progress(total): a script says how far its long work
** has come, in units of its own choosing (steps of all its runs, say),
** and the host shows it (headless: the progress line on stderr; the lab's
** screen: nothing, its charts already move). Only the newest progress
** object is shown; an older one's calls are ignored.
**
**   local p = lab.progress(total)
**   p:step(k [, label])   -- k more units done (1 by default); p(k) too
**   p:done()              -- the work ended: the line goes away
**   p.total, p.count      -- the units to do, and done so far
*/
#include <string.h>

#include "base/text.h"
#include "luaapi/linternal.h"

#define LAPI_PROGRESS_META "tielab.progress"

struct LProgress {
  long id;          /* which lab.progress call made it */
  lua_Integer total, done;
  int ended;
};

static void tell(LuaApi *api, LuaApiProgress what, const LProgress *p, const char *label) {
  if (api->opt.progress && p->id == api->progress_id)
    api->opt.progress(api->opt.ctx, what, (long)p->done, (long)p->total, label);
}

/* 'k' (>= 0) more units done; a count past the total stays at the total
** (and never wraps around). */
static void advance(LuaApi *api, LProgress *p, lua_Integer k, const char *label) {
  lua_Integer room = (p->total > 0 ? p->total : LUA_MAXINTEGER) - p->done;
  p->done += k < room ? k : room;
  char text[256];
  if (label) text_escape(label, strlen(label), text, sizeof text);
  tell(api, LUAAPI_PROGRESS_STEP, p, label ? text : NULL);
}

static int progress_step(lua_State *L) {
  LProgress *p = luaL_checkudata(L, 1, LAPI_PROGRESS_META);
  lua_Integer k = luaL_optinteger(L, 2, 1);
  const char *label = luaL_optstring(L, 3, NULL);
  luaL_argcheck(L, k >= 0, 2, "the units done cannot go back");
  if (p->ended) return luaL_error(L, "p:step: the progress has ended (p:done)");
  advance(lapi_get(L), p, k, label);
  lua_pushinteger(L, p->done);
  return 1;
}

LProgress *lprogress_test(lua_State *L, int idx) { return luaL_testudata(L, idx, LAPI_PROGRESS_META); }

void lprogress_add(LuaApi *api, LProgress *p, long k) {
  if (!p->ended && k > 0) advance(api, p, k, NULL);
}

static int progress_done(lua_State *L) {
  LProgress *p = luaL_checkudata(L, 1, LAPI_PROGRESS_META);
  if (!p->ended) tell(lapi_get(L), LUAAPI_PROGRESS_DONE, p, NULL);
  p->ended = 1;
  return 0;
}

static int progress_index(lua_State *L) {
  LProgress *p = luaL_checkudata(L, 1, LAPI_PROGRESS_META);
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "total") == 0) lua_pushinteger(L, p->total);
  else if (strcmp(key, "count") == 0) lua_pushinteger(L, p->done);
  else if (strcmp(key, "step") == 0) lua_pushcfunction(L, progress_step);
  else if (strcmp(key, "done") == 0) lua_pushcfunction(L, progress_done);
  else lua_pushnil(L);
  return 1;
}

/* p(k, label) is p:step(k, label). */
static int progress_call(lua_State *L) { return progress_step(L); }

static int progress_tostring(lua_State *L) {
  LProgress *p = luaL_checkudata(L, 1, LAPI_PROGRESS_META);
  lua_pushfstring(L, "progress %I/%I", p->done, p->total);
  return 1;
}

int lprogress_new(lua_State *L) {
  lua_Integer total = luaL_checkinteger(L, 1);
  luaL_argcheck(L, total > 0, 1, "the total must be positive");
  LuaApi *api = lapi_get(L);
  LProgress *p = lua_newuserdatauv(L, sizeof *p, 0);
  *p = (LProgress){++api->progress_id, total, 0, 0};
  if (luaL_newmetatable(L, LAPI_PROGRESS_META)) {
    static const luaL_Reg meta[] = {{"__index", progress_index}, {"__call", progress_call},
                                    {"__close", progress_done},  {"__gc", progress_done},
                                    {"__tostring", progress_tostring}, {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    lapi_seal_metatable(L, -1);
  }
  lua_setmetatable(L, -2);
  tell(api, LUAAPI_PROGRESS_START, p, NULL);
  return 1;
}
