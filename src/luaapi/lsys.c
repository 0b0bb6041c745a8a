/*
** lsys.c -- what a script needs of its process to hand work to others:
** the binary that runs it and the folder it runs in (so that it can write
** a command line that works from anywhere: GNU parallel, a Slurm job), and
** a folder it can make for its results: lab.executable, lab.cwd,
** lab.mkdir, lab.command, lab.read. What each gives, and under the
** sandbox: docs/architecture.md, 'A script's process'.
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/folder.h"
#include "base/safeopen.h"
#include "luaapi/linternal.h"

#define LSYS_READ_MAX ((lua_Integer)64 << 20)   /* lab.read's default 'max', bytes */

/* The running binary's path, or "" where /proc/self/exe cannot be read. */
static void push_executable(lua_State *L) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n < 0 || (size_t)n >= sizeof buf - 1) n = 0;
  lua_pushlstring(L, buf, (size_t)n);
}

/* Whether the folder 'dir' (absolute, as written) is the working
** directory or one above it. */
static int above_cwd(const LuaApi *api, const char *dir) {
  size_t n = strlen(dir);
  if (strcmp(dir, "/") == 0) return 1;
  return strncmp(api->cwd, dir, n) == 0 && (api->cwd[n] == '/' || api->cwd[n] == '\0');
}

/* lab.mkdir(path): each missing folder on the way, as mkdir -p does; one
** that is there already is no error, a file in its place is. Under the
** sandbox the whole path is checked by its letters before any folder on
** the way is looked at, and it is walked as so written ("a/../b" is "b"):
** no refusal, nor how far a walk got, tells what exists outside. */
static int lsys_mkdir(lua_State *L) {
  const char *path = lapi_name_arg(L, 1, "lab.mkdir");
  LuaApi *api = lapi_get(L);
  size_t n = strlen(path);
  if (n == 0 || n >= PATH_MAX) return luaL_error(L, "lab.mkdir: the path must be 1 to %d bytes", PATH_MAX - 1);
  char buf[PATH_MAX];
  PathVerdict v = lapi_path_lexical(api, path, 1, buf);
  if (v != PATH_OK) return luaL_error(L, "lab.mkdir: '%s' %s", path, lapi_path_refusal(v));
  n = strlen(buf);
  while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';   /* "out/" is "out" */
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    char real[PATH_MAX];
    struct stat st;
    /* Each folder on the way below the working directory is checked
    ** before it is looked at (a link there may lead outside) and made when
    ** missing, so the sandbox never lets one appear outside; the folders
    ** above it (/, /home) are only passed through. */
    int above = api->opt.sandbox && above_cwd(api, buf);
    if (!above && (v = lapi_path_resolve(api, buf, 1, real)) != PATH_OK)
      return luaL_error(L, "lab.mkdir: '%s' %s", path, lapi_path_refusal(v));
    if (!above && (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) && folder_make(real, FOLDER_SHARED) < 0) {
      int why = errno;
      lua_pushnil(L);
      lua_pushfstring(L, "%s: %s", path, strerror(why));
      return 2;
    }
    *p = c;
    if (c == '\0') break;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* lab.command(): {executable, "--headless", ["--sandbox",] options...}. A
** task started with these words runs its script as this process does: a
** sandboxed sweep never hands out a task line without the sandbox. */
static int lsys_command(lua_State *L) {
  LuaApi *api = lapi_get(L);
  lua_newtable(L);
  push_executable(L);
  lua_rawseti(L, -2, 1);
  lua_pushliteral(L, "--headless");
  lua_rawseti(L, -2, 2);
  lua_Integer n = 2;
  if (api->opt.sandbox) {
    lua_pushliteral(L, "--sandbox");
    lua_rawseti(L, -2, ++n);
  }
  for (const char *const *w = api->opt.task_options; w && *w; w++) {
    lua_pushstring(L, *w);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* nil, "<path>: <why>" (safeopen's message names the file it opened, which
** under the sandbox is the resolved name: the script's own name is shown),
** and the kind of failure. */
static int read_failed(lua_State *L, const char *path, const char *opened, const char *msg, const char *kind) {
  size_t n = strlen(opened);
  if (strncmp(msg, opened, n) == 0 && strncmp(msg + n, ": ", 2) == 0) msg += n + 2;
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s", path, msg);
  lua_pushstring(L, kind);
  return 3;
}

/* A userdata of argument 1 bytes: made in a protected call, so that the
** descriptor lab.read holds is closed before a memory error goes on. */
static int new_buffer(lua_State *L) {
  lua_newuserdatauv(L, (size_t)lua_tointeger(L, 1), 0);
  return 1;
}

/* Up to 'cap' bytes of 'fd' into 'buf': how many, or -1 with errno. */
static ssize_t read_all(int fd, char *buf, size_t cap) {
  size_t got = 0;
  while (got < cap) {
    ssize_t k = read(fd, buf + got, cap - got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -1;
    if (k == 0) break;
    got += (size_t)k;
  }
  return (ssize_t)got;
}

/* lab.read(path [, max]): the whole file, at most 'max' bytes. */
static int lsys_read(lua_State *L) {
  const char *path = lapi_name_arg(L, 1, "lab.read");
  lua_Integer max = luaL_optinteger(L, 2, LSYS_READ_MAX);
  luaL_argcheck(L, max >= 0, 2, "the most bytes to read must be >= 0");
  char real[PATH_MAX], msg[ERR_MSG_MAX];
  const char *name = lapi_check_path(L, "lab.read", path, 0, real);   /* the sandbox raises */
  Err err = {{0}};
  struct stat st;
  errno = 0;
  int fd = safeopen_read(name, lapi_get(L)->opt.sandbox ? SAFEOPEN_NOFOLLOW : 0, &st, &err);
  if (fd < 0) return read_failed(L, path, name, err.msg, errno == ENOENT ? "missing" : "refused");
  if (st.st_size > max) {
    close(fd);
    snprintf(msg, sizeof msg, "%lld bytes, more than the %lld read here", (long long)st.st_size, (long long)max);
    return read_failed(L, path, name, msg, "refused");
  }
  size_t size = (size_t)st.st_size;
  lua_pushcfunction(L, new_buffer);
  lua_pushinteger(L, (lua_Integer)size + 1);   /* a byte more: a file that grew shows */
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    close(fd);
    return lua_error(L);
  }
  ssize_t got = read_all(fd, lua_touserdata(L, -1), size + 1);
  int e = errno;
  close(fd);
  if (got < 0) return read_failed(L, path, name, strerror(e), "failed");
  if ((size_t)got > size) return read_failed(L, path, name, "grew while it was read", "refused");
  lua_pushlstring(L, lua_touserdata(L, -1), (size_t)got);
  return 1;
}

/* Set lab.executable, lab.cwd, lab.mkdir, lab.command and lab.read in the
** table on top. */
void lsys_open(lua_State *L) {
  static const luaL_Reg fns[] = {{"mkdir", lsys_mkdir}, {"command", lsys_command}, {"read", lsys_read}, {NULL, NULL}};
  LuaApi *api = lapi_get(L);
  push_executable(L);
  lua_setfield(L, -2, "executable");
  lua_pushstring(L, api->cwd);
  lua_setfield(L, -2, "cwd");
  luaL_setfuncs(L, fns, 0);
}
