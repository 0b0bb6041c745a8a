/*
** lrunaway.c -- the standard library calls a runaway script could stay in
** for good, replaced by ones an interrupt stops: string.rep, table.move
** and os.execute here, the pattern functions in lpattern.c. Why they are
** needed and how each stops: docs/architecture.md, 'Runaway calls'.
*/
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "luaapi/linternal.h"

#define RUNAWAY_EVERY (1u << 20)   /* units between two questions: about a millisecond; a slot counts 256 */

void lapi_spend(lua_State *L, LuaApi *api, size_t *work, size_t units) {
  *work += units;
  if (*work < RUNAWAY_EVERY) return;
  *work = 0;
  if (lapi_stop_pending(api)) lapi_raise_stop(L);
}

/* string.rep(s, n [, sep]): the result is at most INT_MAX bytes, as Lua's. */
static int lrunaway_rep(lua_State *L) {
  size_t l, lsep, work = 0;
  const char *s = luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  const char *sep = luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || l + lsep == 0) {   /* nothing, however often */
    lua_pushliteral(L, "");
    return 1;
  }
  if (l + lsep < l || l + lsep > (size_t)INT_MAX / (size_t)n) return luaL_error(L, "resulting string too large");
  size_t total = (size_t)n * l + (size_t)(n - 1) * lsep;
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, total);
  LuaApi *api = lapi_get(L);
  for (lua_Integer i = 0; i < n; i++) {
    if (i > 0 && lsep > 0) {
      memcpy(p, sep, lsep);
      p += lsep;
    }
    memcpy(p, s, l);
    p += l;
    lapi_spend(L, api, &work, l + lsep);
  }
  luaL_pushresultsize(&b, total);
  return 1;
}

/* Whether the metatable on top of the stack has the field 'name'. */
static int has_meta(lua_State *L, const char *name) {
  lua_pushstring(L, name);
  int has = lua_rawget(L, -2) != LUA_TNIL;
  lua_pop(L, 1);
  return has;
}

/* Argument 'arg' is a table, or behaves like one for reading ('write' 0:
** __index) or writing (1: __newindex). */
static void check_table(lua_State *L, int arg, int write) {
  if (lua_type(L, arg) == LUA_TTABLE) return;
  int like = lua_getmetatable(L, arg) && has_meta(L, write ? "__newindex" : "__index");
  if (like) {
    lua_pop(L, 1);
    return;
  }
  luaL_checktype(L, arg, LUA_TTABLE);   /* the usual error */
}

/* table.move(a1, f, e, t [, a2]): a1[f..e] into a2[t..], a2 (a1 when not
** given) returned; back to front when the two ranges overlap upwards. */
static int lrunaway_move(lua_State *L) {
  lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3), t = luaL_checkinteger(L, 4);
  int tt = !lua_isnoneornil(L, 5) ? 5 : 1;
  check_table(L, 1, 0);
  check_table(L, tt, 1);
  if (e >= f) {
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
    lua_Integer n = e - f + 1;
    luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
    int back = t > f && t <= e && (tt == 1 || lua_compare(L, 1, tt, LUA_OPEQ));
    LuaApi *api = lapi_get(L);
    size_t work = 0;
    for (lua_Integer k = 0; k < n; k++) {
      lua_Integer i = back ? n - 1 - k : k;
      lua_geti(L, 1, f + i);
      lua_seti(L, tt, t + i);
      lapi_spend(L, api, &work, 256);
    }
  }
  lua_pushvalue(L, tt);
  return 1;
}

extern char **environ;

/* The command's own start: the signals tielab ignores or handles are the
** defaults again, and none is blocked. */
static int spawn_shell(pid_t *pid, const char *cmd) {
  posix_spawnattr_t a;
  sigset_t none, reset;
  sigemptyset(&none);
  sigemptyset(&reset);
  const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGWINCH};
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) sigaddset(&reset, handled[i]);
  posix_spawnattr_init(&a);
  posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setsigdefault(&a, &reset);
  posix_spawnattr_setsigmask(&a, &none);
  char *argv[] = {"sh", "-c", (char *)cmd, NULL};
  int rc = posix_spawn(pid, "/bin/sh", NULL, &a, argv, environ);
  posix_spawnattr_destroy(&a);
  return rc;
}

#define COMMAND_GRACE_MS 1000   /* for a stopped command to end on SIGTERM */

/* End the command 'pid' (its shell: a command it started itself may live
** on, as after any shell's end): SIGTERM, then SIGKILL when it does not
** end within COMMAND_GRACE_MS. */
static void end_command(pid_t pid) {
  kill(pid, SIGTERM);
  for (int ms = 0; ms < COMMAND_GRACE_MS; ms += 10) {
    if (waitpid(pid, NULL, WNOHANG) != 0) return;   /* ended (or not ours any more) */
    usleep(10000);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

/* os.execute([command]): as Lua's; a stop while the command runs ends it. */
static int lrunaway_execute(lua_State *L) {
  const char *cmd = luaL_optstring(L, 1, NULL);
  if (!cmd) {   /* is there a shell? */
    lua_pushboolean(L, access("/bin/sh", X_OK) == 0);
    return 1;
  }
  pid_t pid;
  int rc = spawn_shell(&pid, cmd);
  if (rc != 0) {
    errno = rc;
    return luaL_fileresult(L, 0, NULL);
  }
  /* A signal's handler restarts waitpid; the watchdog's nudge, which comes
  ** while a signal waits to be taken, does not: then the stop is asked. */
  LuaApi *api = lapi_get(L);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return luaL_fileresult(L, 0, NULL);
    if (lapi_stop_pending(api)) {
      end_command(pid);
      lapi_raise_stop(L);
    }
  }
  if (lapi_stop_pending(api)) lapi_raise_stop(L);
  errno = 0;   /* luaL_execresult reads a non-zero errno as a failure to run */
  return luaL_execresult(L, status);
}

void lrunaway_open(lua_State *L) {
  lua_getglobal(L, "os");
  lua_pushcfunction(L, lrunaway_execute);
  lua_setfield(L, -2, "execute");
  lua_pop(L, 1);
  lua_getglobal(L, "string");
  lua_pushcfunction(L, lrunaway_rep);
  lua_setfield(L, -2, "rep");
  lua_getglobal(L, "table");
  lua_pushcfunction(L, lrunaway_move);
  lua_setfield(L, -2, "move");
  lua_pop(L, 2);
  lpattern_open(L);
}
