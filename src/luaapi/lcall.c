/*
** lcall.c -- calling Lua: the one protected call with a traceback handler,
** the interrupt and os.exit that no pcall can swallow, and the count hook
** that raises them and gives the screen a turn. How an interrupt travels:
** docs/architecture.md.
*/
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "luaapi/linternal.h"

void luaapi_interrupt(LuaApi *api) { atomic_store(&api->interrupt, 1); }
int luaapi_interrupted(const LuaApi *api) { return atomic_load((atomic_int *)&api->interrupt); }
int luaapi_stopping(const LuaApi *api) { return lapi_stop_pending(api); }

/* ------------------------------------------------------------ top-level calls */

/* An interrupt that came before the outermost call stays in force: it was
** meant for this code (a script whose Ctrl-C came while it was starting).
** A host that does not want that interrupts only while Lua code runs. */
void lapi_enter(LuaApi *api) { api->depth++; }

void lapi_leave(LuaApi *api) {
  if (--api->depth > 0) return;
  lapi_unlock_all(api);
  api->stepping = NULL;
  api->in_callback = 0;
  api->exiting = 0;
  atomic_store(&api->interrupt, 0);
}

/* The message handler of every call: text for any error value, then the
** traceback. The os.exit marker passes through untouched. */
int lapi_message(lua_State *L) {
  if (lua_touserdata(L, 1) == &lapi_exit_marker || largs_usage_message(L, 1)) return 1;
  const char *msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

int lapi_docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, lapi_message);
  lua_insert(L, base);
  int status = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  return status;
}

/* Turn the outcome of a call into a status; report an error (its value on
** top of L, popped) through 'out'. */
LuaApiStatus lapi_report(LuaApi *api, lua_State *L, int status) {
  /* The pending exit decides, not the error value: a message handler or a
  ** failing __close may have replaced the marker, and an exit raised in a
  ** __gc reaches no one. */
  if (api->exiting) {
    if (status != LUA_OK) lua_pop(L, 1);
    return LUAAPI_EXIT;
  }
  if (status == LUA_OK) return LUAAPI_OK;
  const char *usage = largs_usage_message(L, -1);
  if (usage) {   /* a bad script argument: one line, the status of a usage error */
    snprintf(api->last_error, sizeof api->last_error, "%s", usage);
    lapi_write(api, "tielab: ", 8, 1);
    lapi_write(api, usage, strlen(usage), 1);
    lapi_write(api, "\n", 1, 1);
    lua_pop(L, 1);
    api->exit_code = 2;
    return LUAAPI_EXIT;
  }
  const char *msg = lua_tostring(L, -1);
  if (!msg) msg = "(error object is not a string)";
  snprintf(api->last_error, sizeof api->last_error, "%s", msg);
  char *nl = strchr(api->last_error, '\n');
  if (nl) *nl = '\0';
  int interrupted = luaapi_interrupted(api);
  /* Where an interrupt stopped the code says nothing to the user: its
  ** message goes without the traceback, or to the host alone. */
  if (api->errors_to_caller) {
    /* the caller reports last_error in its own words */
  } else if (!interrupted) {
    lapi_write(api, msg, strlen(msg), 1);
    lapi_write(api, "\n", 1, 1);
  } else if (!api->opt.quiet_interrupt) {
    lapi_write(api, api->last_error, strlen(api->last_error), 1);
    lapi_write(api, "\n", 1, 1);
  }
  lua_pop(L, 1);
  return interrupted ? LUAAPI_INTERRUPTED : LUAAPI_ERROR;
}

/* Run 'f(ud)' in protected mode, so that running out of memory in the
** glue itself is an error, never a panic. */
int lapi_protect(LuaApi *api, lua_CFunction f, void *ud) {
  lua_State *L = api->L;
  lua_pushcfunction(L, f);
  lua_pushlightuserdata(L, ud);
  int status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) lapi_report(api, L, status);
  return status;
}

/* ------------------------------------------------------------ stopping
** An interrupt or an os.exit ends the script, whatever catches errors on the
** way out: the hook raises again while either is pending, and pcall, xpcall,
** coroutine.resume and coroutine.close hand the error on instead of
** returning it. (The hook alone is not enough: each coroutine has its own
** instruction count, so the caller of a dead coroutine could run on for
** up to LAPI_HOOK_EVERY instructions.) */

int lapi_stop_pending(const LuaApi *api) {
  return api->exiting || atomic_load_explicit((atomic_int *)&api->interrupt, memory_order_relaxed);
}

/* Raise what the pending stop raises: the os.exit marker or "interrupted". */
int lapi_raise_stop(lua_State *L) {
  LuaApi *api = lapi_get(L);
  if (api->exiting) {
    lua_pushlightuserdata(L, &lapi_exit_marker);
    return lua_error(L);
  }
  return luaL_error(L, "interrupted");
}

/* The end of pcall and xpcall (as in Lua's lbaselib.c), but an error that
** is a pending stop goes on up. */
static int finish_pcall(lua_State *L, int status, lua_KContext extra) {
  if (status != LUA_OK && status != LUA_YIELD) {
    if (lapi_stop_pending(lapi_get(L))) return lapi_raise_stop(L);
    lua_pushboolean(L, 0);
    lua_pushvalue(L, -2);
    return 2;
  }
  return lua_gettop(L) - (int)extra;
}

static int lapi_pcall(lua_State *L) {
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  int status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, 0, finish_pcall);
  return finish_pcall(L, status, 0);
}

static int lapi_xpcall(lua_State *L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushboolean(L, 1);
  lua_pushvalue(L, 1);
  lua_rotate(L, 3, 2);
  int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_pcall);
  return finish_pcall(L, status, 2);
}

/* coroutine.resume, coroutine.close and load (upvalue 1, the original)
** return an error instead of raising it (load's from its reader); with a
** stop pending they raise the stop instead of returning. */
static int finish_catcher(lua_State *L, int status, lua_KContext ctx) {
  (void)status, (void)ctx;
  if (lapi_stop_pending(lapi_get(L))) return lapi_raise_stop(L);
  return lua_gettop(L);
}

static int lapi_catcher(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, finish_catcher);
  return finish_catcher(L, LUA_OK, 0);
}

/* coroutine.close (upvalue 1, the original), nested no deeper than
** LAPI_CLOSE_DEPTH calls and LAPI_CLOSE_STACK bytes of C stack. Lua 5.4.4
** runs the '__close' handlers of the closed coroutine on a count of C
** calls of its own, not its caller's, so a handler that closes another
** coroutine, whose handler closes a third... passes LUAI_MAXCCALLS and
** overflows the C stack. (resume and wrap carry the caller's count on:
** close is the one that starts afresh.) Each handler may still nest up to
** LUAI_MAXCCALLS calls of its own before closing the next, so the depth
** alone is no bound on the stack: the distance from the outermost close
** is. The call is protected so that the depth comes down however it ends. */
static size_t stack_distance(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x > y ? x - y : y - x;
}

static int lapi_coclose(lua_State *L) {
  LuaApi *api = lapi_get(L);
  char here;
  if (api->close_depth == 0) api->close_base = &here;
  else if (api->close_depth >= LAPI_CLOSE_DEPTH || stack_distance(api->close_base, &here) > LAPI_CLOSE_STACK)
    return luaL_error(L, "coroutine.close nested too deep");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  api->close_depth++;
  int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  api->close_depth--;
  if (status != LUA_OK) return lua_error(L);
  return finish_catcher(L, LUA_OK, 0);
}

void lapi_guard_catchers(lua_State *L) {
  lua_pushcfunction(L, lapi_pcall);
  lua_setglobal(L, "pcall");
  lua_pushcfunction(L, lapi_xpcall);
  lua_setglobal(L, "xpcall");
  static const struct { const char *lib, *name; lua_CFunction fn; } catchers[] = {
    {"coroutine", "resume", lapi_catcher}, {"coroutine", "close", lapi_coclose}, {"_G", "load", lapi_catcher}};
  for (size_t i = 0; i < sizeof catchers / sizeof catchers[0]; i++) {
    lua_getglobal(L, catchers[i].lib);
    lua_getfield(L, -1, catchers[i].name);
    lua_pushcclosure(L, catchers[i].fn, 1);
    lua_setfield(L, -2, catchers[i].name);
    lua_pop(L, 1);
  }
}

/* ------------------------------------------------------------ the hook */

static void lapi_hook(lua_State *L, lua_Debug *ar) {
  LuaApi *api = lapi_get(L);
  if (lapi_stop_pending(api)) {
    lua_sethook(L, lapi_hook, LUA_MASKCOUNT, 1);
    lapi_raise_stop(L);
  }
  if (lua_gethookcount(L) != LAPI_HOOK_EVERY) lua_sethook(L, lapi_hook, LUA_MASKCOUNT, LAPI_HOOK_EVERY);
  /* A UI script that computes for long gives the screen a turn. */
  if (api->running >= 0 && api->scripts[api->running].co == L && lua_isyieldable(L) &&
      clock_seconds() >= api->slice_end) {
    api->scripts[api->running].wait = WAIT_READY;
    lua_yield(L, 0);
  }
}

void lapi_install_hook(lua_State *L) { lua_sethook(L, lapi_hook, LUA_MASKCOUNT, LAPI_HOOK_EVERY); }

/* The hook fires at the next instruction of this thread: where an error
** cannot be raised (a finaliser), the stop is raised as soon as it ends. */
void lapi_hook_soon(lua_State *L) { lua_sethook(L, lapi_hook, LUA_MASKCOUNT, 1); }
