/*
** lsandbox.c -- the sandbox for scripts of unknown origin (--sandbox, and
** every replay of a journal that is not trusted): the file, load and debug
** functions a sandboxed script gets, sealed metatables, and the heap cap's
** count of the runs it makes. Why each is written so: docs/architecture.md.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luaapi/linternal.h"

/* ------------------------------------------------------------ sealed metatables */

void lapi_seal_metatable(lua_State *L, int idx) {
  static const char *const shown[] = {"__name", "__methods", "__fields"};
  idx = lua_absindex(L, idx);
  lua_createtable(L, 0, 3);
  for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
    lua_pushstring(L, shown[i]);
    lua_rawget(L, idx);
    lua_setfield(L, -2, shown[i]);
  }
  lua_setfield(L, idx, "__metatable");
}

/* setmetatable (as Lua's, written again) without finalisers. A __gc added
** to a metatable later is never called: Lua marks an object for
** finalising only when it gets a metatable that has one. */
static int sbx_setmetatable(lua_State *L) {
  int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  if (t == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL)
      return luaL_error(L, "setmetatable: no __gc in the sandbox (a finaliser cannot be interrupted)");
    lua_pop(L, 1);
  }
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL) return luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

/* ------------------------------------------------------------ io and os */

/* A handle for file 'name' (at stack index 'idx') in io.open's 'mode', or
** 0 with 'why' said: the name checked, and a follower rank's writes going
** to /dev/null as rank 0 writes the file (luaapi.c). */
static int open_checked(lua_State *L, int idx, const char *fname, int mode, char *why, size_t cap) {
  char real[PATH_MAX];
  int writes = lapi_mode_writes(mode);
  const char *path = lapi_path_arg(L, idx, fname, writes, real);
  if (!writes || !lapi_get(L)->follower) return lapi_open_handle(L, path, mode, why, cap);
  if (lapi_open_null(L)) return 1;
  snprintf(why, cap, "/dev/null: %s", strerror(errno));
  return 0;
}

/* io.open's mode argument at 'idx'. */
static int mode_arg(lua_State *L, int idx, const char *deflt) {
  int mode = lapi_file_mode(luaL_optstring(L, idx, deflt));
  luaL_argcheck(L, mode >= 0, idx, "invalid mode");
  return mode;
}

static int sbx_io_open(lua_State *L) {
  int mode = mode_arg(L, 2, "r");
  char why[256];
  if (open_checked(L, 1, "io.open", mode, why, sizeof why)) return 1;
  int e = errno;
  luaL_pushfail(L);
  lua_pushfstring(L, "%s: %s", lua_tostring(L, 1), why);
  lua_pushinteger(L, e);
  return 3;
}

/* The handle of file 'name' at 'idx' opened in 'mode', put at 'idx'; an
** error when it cannot be, as io.lines and io.input raise. */
static void open_or_raise(lua_State *L, int idx, const char *fname, const char *mode) {
  char why[256];
  if (!open_checked(L, idx, fname, lapi_file_mode(mode), why, sizeof why))
    luaL_error(L, "%s: cannot open file '%s' (%s)", fname, lua_tostring(L, idx), why);
  lua_replace(L, idx);
}

/* io.input and io.output: the default file, by name or handle. */
static int default_file(lua_State *L, const char *key, const char *fname, const char *mode) {
  if (!lua_isnoneornil(L, 1)) {
    if (lua_isstring(L, 1)) open_or_raise(L, 1, fname, mode);
    else if (!((luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE))->closef)
      return luaL_error(L, "attempt to use a closed file");
    lua_settop(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  return 1;
}

static int sbx_io_input(lua_State *L) { return default_file(L, "_IO_input", "io.input", "r"); }
static int sbx_io_output(lua_State *L) { return default_file(L, "_IO_output", "io.output", "w"); }

/* The iterator of io.lines(name): the file's own lines iterator (upvalue
** 1), and the file (upvalue 2) closed at its end, as Lua's io.lines does. */
static int lines_next(lua_State *L) {
  lua_settop(L, 0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 0, LUA_MULTRET);
  if (lua_gettop(L) > 0 && lua_toboolean(L, 1)) return lua_gettop(L);
  lapi_close_handle(L, lua_upvalueindex(2));
  return 0;
}

/* io.lines([name, ...]): as Lua's, through file:lines on a checked file;
** with no name, the default input's lines. */
static int sbx_io_lines(lua_State *L) {
  int named = !lua_isnoneornil(L, 1);
  if (lua_isnone(L, 1)) lua_pushnil(L);
  if (named) {
    open_or_raise(L, 1, "io.lines", "r");
  } else {
    lua_getfield(L, LUA_REGISTRYINDEX, "_IO_input");
    lua_replace(L, 1);
  }
  if (!((luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE))->closef)
    return luaL_error(L, "io.lines: the default input file is closed");
  lua_getfield(L, 1, "lines");
  lua_insert(L, 1);
  lua_pushvalue(L, 2);
  lua_insert(L, 1);   /* file, lines, file, formats... */
  lua_call(L, lua_gettop(L) - 2, 1);
  if (!named) return 1;
  lua_pushvalue(L, 1);
  lua_pushcclosure(L, lines_next, 2);
  lua_pushnil(L);
  lua_pushnil(L);
  lua_pushvalue(L, 1);   /* the to-be-closed value of a generic for */
  return 4;
}

/* os.remove and os.rename act on a name itself, a link not followed: it
** is checked (resolved) but kept as given. A follower rank does nothing. */
static int sbx_os_remove(lua_State *L) {
  char real[PATH_MAX];
  const char *name = lapi_name_arg(L, 1, "os.remove");
  lapi_check_path(L, "os.remove", name, 1, real);
  if (lapi_get(L)->follower) return lua_pushboolean(L, 1), 1;
  errno = 0;
  return luaL_fileresult(L, remove(name) == 0, name);
}

static int sbx_os_rename(lua_State *L) {
  char real[PATH_MAX];
  const char *from = lapi_name_arg(L, 1, "os.rename"), *to = lapi_name_arg(L, 2, "os.rename");
  lapi_check_path(L, "os.rename", from, 1, real);
  lapi_check_path(L, "os.rename", to, 1, real);
  if (lapi_get(L)->follower) return lua_pushboolean(L, 1), 1;
  errno = 0;
  return luaL_fileresult(L, rename(from, to) == 0, NULL);
}

/* ------------------------------------------------------------ loading code */

/* What load and loadfile return: the chunk, its environment set from
** argument 'env' (0: none given), or fail and the message. */
static int loaded(lua_State *L, int status, int env) {
  if (status != LUA_OK) {
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
  }
  if (env) {
    lua_pushvalue(L, env);
    if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
  }
  return 1;
}

/* Text only: a binary chunk is not checked by Lua and can crash the VM. */
#define SANDBOX_MODE "t"
enum { READER_SLOT = 5 };   /* where load keeps the reader's last piece */

static const char *call_reader(lua_State *L, void *ud, size_t *size) {
  (void)ud;
  luaL_checkstack(L, 2, "too many nested functions");
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    *size = 0;
    return NULL;
  }
  if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
  lua_replace(L, READER_SLOT);
  return lua_tolstring(L, READER_SLOT, size);
}

/* load(chunk [, chunkname [, mode [, env]]]), as Lua's, in text mode
** whatever mode is asked. An error the reader raised is returned, as Lua
** does; a pending stop (an interrupt, os.exit) is raised instead. */
static int sbx_load(lua_State *L) {
  size_t n;
  const char *s = lua_tolstring(L, 1, &n);
  int env = lua_isnone(L, 4) ? 0 : 4, status;
  if (s) {
    status = luaL_loadbufferx(L, s, n, luaL_optstring(L, 2, s), SANDBOX_MODE);
  } else {
    const char *chunkname = luaL_optstring(L, 2, "=(load)");
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, READER_SLOT);
    status = lua_load(L, call_reader, NULL, chunkname, SANDBOX_MODE);
  }
  if (lapi_stop_pending(lapi_get(L))) return lapi_raise_stop(L);
  return loaded(L, status, env);
}

/* The chunk of file 'name' at argument 1 (none: standard input), checked. */
static int load_checked(lua_State *L, const char *fname) {
  char real[PATH_MAX];
  if (lua_isnoneornil(L, 1)) return luaL_loadfilex(L, NULL, SANDBOX_MODE);
  const char *name = lapi_name_arg(L, 1, fname);
  return lapi_load_file(L, lapi_check_path(L, fname, name, 0, real), name, SANDBOX_MODE);
}

static int sbx_loadfile(lua_State *L) {
  int env = lua_isnone(L, 3) ? 0 : 3;
  return loaded(L, load_checked(L, "loadfile"), env);
}

static int dofile_k(lua_State *L, int status, lua_KContext ctx) {
  (void)status, (void)ctx;
  return lua_gettop(L) - 1;
}

static int sbx_dofile(lua_State *L) {
  lua_settop(L, 1);
  if (load_checked(L, "dofile") != LUA_OK) return lua_error(L);
  lua_callk(L, 0, LUA_MULTRET, 0, dofile_k);
  return dofile_k(L, LUA_OK, 0);
}

/* package.searchpath(name, path [, sep [, rep]]) under the rule: names
** outside are listed as not looked at, whether they exist or not. */
/* require (upvalue 1, Lua's) with a name that holds a NUL byte refused:
** Lua would go on with the name cut at the NUL. */
static int sbx_require(lua_State *L) {
  lapi_name_arg(L, 1, "require");
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 1, 2);
  return 2;
}

static int sbx_searchpath(lua_State *L) {
  const char *name = lapi_name_arg(L, 1, "package.searchpath");
  const char *path = lapi_name_arg(L, 2, "package.searchpath");
  return lapi_searchpath(L, name, path, luaL_optstring(L, 3, "."), luaL_optstring(L, 4, LUA_DIRSEP)) ? 1 : 2;
}

/* ------------------------------------------------------------ debug */

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void set_str(lua_State *L, const char *k, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

/* The fields of getinfo's options that hand out no function. */
static void info_fields(lua_State *L, const char *options, const lua_Debug *ar) {
  if (strchr(options, 'S')) {
    lua_pushlstring(L, ar->source, ar->srclen);
    lua_setfield(L, -2, "source");
    set_str(L, "short_src", ar->short_src);
    set_int(L, "linedefined", ar->linedefined);
    set_int(L, "lastlinedefined", ar->lastlinedefined);
    set_str(L, "what", ar->what);
  }
  if (strchr(options, 'l')) set_int(L, "currentline", ar->currentline);
  if (strchr(options, 'u')) {
    set_int(L, "nups", ar->nups);
    set_int(L, "nparams", ar->nparams);
    lua_pushboolean(L, ar->isvararg);
    lua_setfield(L, -2, "isvararg");
  }
  if (strchr(options, 'n')) {
    set_str(L, "name", ar->name);
    set_str(L, "namewhat", ar->namewhat);
  }
  if (strchr(options, 'r')) {
    set_int(L, "ftransfer", ar->ftransfer);
    set_int(L, "ntransfer", ar->ntransfer);
  }
  if (strchr(options, 't')) {
    lua_pushboolean(L, ar->istailcall);
    lua_setfield(L, -2, "istailcall");
  }
}

/* debug.getinfo([thread,] f | level [, what]), as Lua's, without option
** 'f' (the function itself: from a level, that would hand out whatever C
** function runs there) and 'L'. */
static int sbx_getinfo(lua_State *L) {
  int arg = lua_isthread(L, 1);
  lua_State *L1 = arg ? lua_tothread(L, 1) : L;
  const char *options = luaL_optstring(L, arg + 2, "lnSrtu");
  lua_Debug ar;
  if (options[strspn(options, "lnSrtu")] != '\0')
    return luaL_argerror(L, arg + 2, "the sandbox's getinfo takes the options l, n, S, r, t and u only");
  if (lua_isfunction(L, arg + 1)) {
    options = lua_pushfstring(L, ">%s", options);
    if (L1 != L && !lua_checkstack(L1, 1)) return luaL_error(L, "stack overflow");
    lua_pushvalue(L, arg + 1);
    lua_xmove(L, L1, 1);
  } else if (!lua_getstack(L1, (int)luaL_checkinteger(L, arg + 1), &ar)) {
    luaL_pushfail(L);
    return 1;
  }
  if (!lua_getinfo(L1, options, &ar)) return luaL_argerror(L, arg + 2, "invalid option");
  lua_newtable(L);
  info_fields(L, options, &ar);
  return 1;
}

/* Keep of the debug library only what hands out no function, no local,
** no upvalue, no metatable and no registry, in place. */
static void cut_debug(lua_State *L) {
  lua_getglobal(L, "debug");
  int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "traceback") == 0) continue;
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lua_rawset(L, t);   /* clearing a field while traversing is allowed */
  }
  lua_pushcfunction(L, sbx_getinfo);
  lua_setfield(L, t, "getinfo");
  lua_pop(L, 1);
}

/* ------------------------------------------------------------ putting it in place */

static void drop(lua_State *L, const char *lib, const char *name) {
  lua_getglobal(L, lib);
  lua_pushnil(L);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static void put(lua_State *L, const char *lib, const char *name, lua_CFunction fn) {
  lua_getglobal(L, lib);
  lua_pushcfunction(L, fn);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static void replace_searchers(lua_State *L) {
  lua_getglobal(L, "package");
  lua_pushliteral(L, "");
  lua_setfield(L, -2, "cpath");
  lua_createtable(L, 3, 0);                /* searchers: preload, the script's folder, Lua files */
  lua_getfield(L, -2, "searchers");
  for (int i = 1; i <= 2; i++) {
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -3, i);
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, lapi_path_searcher);
  lua_rawseti(L, -2, 3);
  lua_setfield(L, -2, "searchers");
  lua_pop(L, 1);
}

/* os.getenv: the environment may hold secrets (tokens, keys) that are
** none of a script's business; it sees the variables that say where and
** how it runs, and nil for any other, as for one that is not set. */
static int sbx_os_getenv(lua_State *L) {
  static const char *const names[] = {"HOME", "USER", "LOGNAME", "LANG", "TERM", "COLUMNS", "LINES", "TZ"};
  static const char *const prefixes[] = {"LC_", "TIELAB_"};
  const char *name = lapi_name_arg(L, 1, "os.getenv");
  int shown = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) shown |= strcmp(name, names[i]) == 0;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    shown |= strncmp(name, prefixes[i], strlen(prefixes[i])) == 0;
  lua_pushstring(L, shown ? getenv(name) : NULL);
  return 1;
}

void lapi_sandbox(lua_State *L) {
  /* setlocale is process-wide: it would change how the lab writes numbers. */
  static const struct {
    const char *lib, *name;
  } gone[] = {{"os", "execute"}, {"os", "tmpname"}, {"os", "setlocale"}, {"io", "popen"},
              {"io", "tmpfile"}, {"package", "loadlib"}};
  static const struct {
    const char *lib, *name;
    lua_CFunction fn;
  } checked_fns[] = {
    {"io", "open", sbx_io_open},       {"io", "lines", sbx_io_lines},     {"io", "input", sbx_io_input},
    {"io", "output", sbx_io_output},   {"os", "remove", sbx_os_remove},   {"os", "rename", sbx_os_rename},
    {"_G", "load", sbx_load},          {"_G", "loadfile", sbx_loadfile},  {"_G", "dofile", sbx_dofile},
    {"_G", "setmetatable", sbx_setmetatable}, {"package", "searchpath", sbx_searchpath},
    {"os", "getenv", sbx_os_getenv},
  };
  for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) drop(L, gone[i].lib, gone[i].name);
  for (size_t i = 0; i < sizeof checked_fns / sizeof checked_fns[0]; i++)
    put(L, checked_fns[i].lib, checked_fns[i].name, checked_fns[i].fn);
  cut_debug(L);
  replace_searchers(L);
  lua_getglobal(L, "require");
  lua_pushcclosure(L, sbx_require, 1);
  lua_setglobal(L, "require");
  luaL_getmetatable(L, LUA_FILEHANDLE);
  lapi_seal_metatable(L, -1);
  lua_pop(L, 1);
}

/* ------------------------------------------------------------ runs under the heap cap */

/* What a new run may take under the sandbox (0: no limit). A script at its
** cap gets 1 byte, which no run fits in. */
size_t lapi_run_budget(LuaApi *api) {
  if (!api->opt.sandbox || !api->mem_cap) return 0;
  size_t used = api->mem_used + api->own_runs_bytes;
  return used < api->mem_cap ? api->mem_cap - used : 1;
}

int lapi_own_run(LuaApi *api, int id, size_t bytes) {
  if (!api->opt.sandbox) return 0;
  if (api->n_own_runs == api->cap_own_runs) {
    int cap = api->cap_own_runs ? 2 * api->cap_own_runs : 8;
    void *p = realloc(api->own_runs, sizeof *api->own_runs * (size_t)cap);
    if (!p) return -1;
    api->own_runs = p;
    api->cap_own_runs = cap;
  }
  api->own_runs[api->n_own_runs].id = id;
  api->own_runs[api->n_own_runs++].bytes = bytes;
  api->own_runs_bytes += bytes;
  return 0;
}

void lapi_forget_run(LuaApi *api, int id) {
  for (int i = 0; i < api->n_own_runs; i++)
    if (api->own_runs[i].id == id) {
      api->own_runs_bytes -= api->own_runs[i].bytes;
      api->own_runs[i] = api->own_runs[--api->n_own_runs];
      return;
    }
}
