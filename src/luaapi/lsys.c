/*
** lsys.c -- what a script needs of its process to hand work to others:
** the binary that runs it and the folder it runs in (so that it can write
** a command line that works from anywhere: GNU parallel, a Slurm job), and
** a folder it can make for its results.
**
**   lab.executable   absolute path of the running tielab (/proc/self/exe)
**   lab.cwd          the working directory, absolute, links resolved
**   lab.mkdir(path)  make a folder and its missing parents: true, or nil
**                    and a message
**
** Under the sandbox lab.mkdir makes folders only under the working
** directory, each one checked before it is made.
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "luaapi/linternal.h"

/* The running binary's path, or "" where /proc/self/exe cannot be read. */
static void push_executable(lua_State *L) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n < 0 || (size_t)n >= sizeof buf - 1) n = 0;
  lua_pushlstring(L, buf, (size_t)n);
}

/* Make 'dir' if it is not a folder yet; 0, or -1 and 'why' (an errno). */
static int make_one(const char *dir, int *why) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    *why = ENOTDIR;
    return -1;
  }
  if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;   /* EEXIST: another process made it */
  *why = errno;
  return -1;
}

/* lab.mkdir(path): each missing folder on the way, as mkdir -p does; one
** that is there already is no error, a file in its place is. */
static int lsys_mkdir(lua_State *L) {
  const char *path = lapi_name_arg(L, 1, "lab.mkdir");
  LuaApi *api = lapi_get(L);
  size_t n = strlen(path);
  if (n == 0 || n >= PATH_MAX) return luaL_error(L, "lab.mkdir: the path must be 1 to %d bytes", PATH_MAX - 1);
  char buf[PATH_MAX];
  memcpy(buf, path, n + 1);
  while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';   /* "out/" is "out" */
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    char real[PATH_MAX];
    struct stat st;
    int why = 0;
    /* Each folder to be made is checked before it is made, so the sandbox
    ** never lets one appear outside the working directory; folders that
    ** exist on the way (/, /home) are only passed through. */
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
      PathVerdict v = lapi_path_resolve(api, buf, 1, real);
      if (v != PATH_OK) return luaL_error(L, "lab.mkdir: '%s' %s", buf, lapi_path_refusal(v));
      if (make_one(real, &why) < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", buf, strerror(why));
        return 2;
      }
    }
    *p = c;
    if (c == '\0') break;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* Set lab.executable, lab.cwd and lab.mkdir in the table on top. */
void lsys_open(lua_State *L) {
  LuaApi *api = lapi_get(L);
  push_executable(L);
  lua_setfield(L, -2, "executable");
  lua_pushstring(L, api->cwd);
  lua_setfield(L, -2, "cwd");
  lua_pushcfunction(L, lsys_mkdir);
  lua_setfield(L, -2, "mkdir");
}
