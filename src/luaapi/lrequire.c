/*
** lrequire.c -- how require finds Lua modules: first in the running
** script's own folder, then along package.path, each name looked at
** through the sandbox's rule (lpath.c; outside the sandbox every name
** passes) and each file loaded without blocking (lfile.c).
**
** Under the sandbox these searchers replace Lua's own for Lua files (and
** there are none for C modules), and package.searchpath is the one below:
** a name outside is never looked at, so a search says nothing about which
** files exist outside the working directory.
*/
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "luaapi/linternal.h"

/* Whether 'path' opens for reading (without waiting: a FIFO counts, and
** its loading refuses it). */
static int readable(const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

/* 'n' bytes of the template 't' with each '?' made 'name', into 'out'; 0
** when that is too long. */
static int fill_template(char out[PATH_MAX], const char *t, size_t n, const char *name) {
  size_t len = 0, name_len = strlen(name);
  for (size_t i = 0; i < n; i++) {
    size_t add = t[i] == '?' ? name_len : 1;
    if (len + add >= PATH_MAX) return 0;
    if (t[i] == '?') memcpy(out + len, name, name_len);
    else out[len] = t[i];
    len += add;
  }
  out[len] = '\0';
  return 1;
}

int lapi_searchpath(lua_State *L, const char *name, const char *path, const char *sep, const char *rep) {
  LuaApi *api = lapi_get(L);
  if (*sep && strchr(name, *sep)) name = luaL_gsub(L, name, sep, rep);
  luaL_Buffer tried;
  luaL_buffinit(L, &tried);
  for (const char *t = path; *t; t += *t == ';') {
    size_t n = strcspn(t, ";");
    char file[PATH_MAX], real[PATH_MAX];
    if (n > 0 && fill_template(file, t, n, name)) {
      PathVerdict v = lapi_path_resolve(api, file, 0, real);
      if (v == PATH_OK && readable(real)) {
        lua_pushstring(L, file);
        return 1;
      }
      if (luaL_bufflen(&tried) > 0) luaL_addstring(&tried, "\n\t");
      luaL_addstring(&tried, v == PATH_OK ? "no file '" : "'");
      luaL_addstring(&tried, file);
      luaL_addstring(&tried, "'");
      if (v != PATH_OK) {
        luaL_addstring(&tried, " not looked at: it ");
        luaL_addstring(&tried, lapi_path_refusal(v));
      }
    }
    t += n;
  }
  luaL_pushresult(&tried);
  luaL_pushfail(L);
  lua_insert(L, -2);
  return 0;
}

/* Find module 'name' on the template list 'path' and load it (text only
** under the sandbox, as the script itself is loaded). Returns as a
** searcher does: the loader and the file's name, or the message of what
** was tried. */
static int search_and_load(lua_State *L, const char *name, const char *path) {
  LuaApi *api = lapi_get(L);
  if (!lapi_searchpath(L, name, path, ".", LUA_DIRSEP)) return 1;
  char real[PATH_MAX];
  const char *file = lua_tostring(L, -1);
  const char *open = lapi_check_path(L, "require", file, 0, real);
  if (lapi_load_file(L, open, file, api->opt.sandbox ? "t" : NULL) != LUA_OK)
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file, lua_tostring(L, -1));
  lua_pushstring(L, file);
  return 2;
}

int lapi_path_searcher(lua_State *L) {
  const char *name = lapi_name_arg(L, 1, "require");
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  const char *path = lua_tostring(L, -1);
  return search_and_load(L, name, path ? path : "");
}

/* require's searcher for the running script's own folder ('script_dir'),
** tried before package.path: a script gets the modules shipped beside it
** (lua/tielab/stats.lua beside lua/paper.lua, in the sources and installed
** alike), never an installed copy of another version. tielab's own
** modules ("tielab.*") are looked for in the folder above too, where they
** are for the scripts in lua/interventions/; no other name is, so that a
** script in a shared folder does not load what others put above it. Under
** the sandbox the script's folder may be read, as the script itself was;
** the folder above as the sandbox's rule says. */
static int script_searcher(lua_State *L) {
  LuaApi *api = lapi_get(L);
  const char *name = lapi_name_arg(L, 1, "require");
  if (!api->script_dir[0]) {
    lua_pushliteral(L, "no script folder (no script is running)");
    return 1;
  }
  char path[2 * PATH_MAX + 16];
  if (strncmp(name, "tielab.", 7) == 0)
    snprintf(path, sizeof path, "%s/?.lua;%s/../?.lua", api->script_dir, api->script_dir);
  else
    snprintf(path, sizeof path, "%s/?.lua", api->script_dir);
  return search_and_load(L, name, path);
}

void lapi_add_script_searcher(lua_State *L) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  for (lua_Integer i = (lua_Integer)luaL_len(L, -1); i >= 2; i--) {   /* after preload */
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushcfunction(L, script_searcher);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
}
