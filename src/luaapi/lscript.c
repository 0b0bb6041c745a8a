/*
** lscript.c -- script files: where a script named without a folder is
** found, dofile and loadfile beside the running script, running a file
** to the end (headless) or as a coroutine (the UI), and the init file.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/folder.h"
#include "luaapi/linternal.h"

/* ------------------------------------------------------------ finding scripts
** A script named without a '/' ("paper.lua") is looked for along a search
** path, as a shell looks for a command, so that an installed tielab runs
** its scripts from any folder: the working directory, then the user's
** $XDG_DATA_HOME/tielab, then the installed data directory (for the binary
** in the folder it was built in, the lua/ folder of its sources). A name with a
** '/' is a path and is used as given. The running script's own folder is
** where require looks first (lapi_script_searcher), and where dofile and
** loadfile look for a bare name the working directory does not have. */

int lapi_user_data_dir(char dir[PATH_MAX]) { return folder_xdg(FOLDER_DATA, "tielab", dir, PATH_MAX, NULL) > 0; }

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* The folder of the running binary, into 'exe'; 0 when unknown. */
static int binary_folder(char exe[PATH_MAX]) {
  ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  *slash = '\0';
  return 1;
}

/* The lua/ folder of the sources for the binary in the folder it was built
** in, into 'dir' (0 for any other binary): run from there it is the
** version its sources' scripts are, which an installed data directory of
** another version need not be. */
static int in_build_tree(char dir[PATH_MAX]) {
  char exe[PATH_MAX], built[PATH_MAX];
  if (!binary_folder(exe) || !realpath(TIELAB_BUILDDIR, built) || strcmp(exe, built) != 0) return 0;
  int k = snprintf(dir, PATH_MAX, "%s", TIELAB_SOURCE_SCRIPTS);
  return k > 0 && k < PATH_MAX && is_dir(dir);
}

/* PREFIX/share/tielab for a binary that is PREFIX/bin/tielab, into 'dir'
** when that folder exists; 0 otherwise. */
static int beside_binary(char dir[PATH_MAX]) {
  char exe[PATH_MAX];
  if (!binary_folder(exe)) return 0;   /* PREFIX/bin */
  size_t len = strlen(exe);
  if (len < 4 || strcmp(exe + len - 4, "/bin") != 0) return 0;
  exe[len - 4] = '\0';
  int k = snprintf(dir, PATH_MAX, "%s/share/tielab", exe);
  return k > 0 && k < PATH_MAX && is_dir(dir);
}

/* A binary installed with its data (and moved since, or installed with
** DESTDIR) takes the data beside it: that is its own version's; so does
** the binary in its build tree, its sources' scripts. Anywhere else the
** configured folder serves. */
const char *lapi_data_dir(void) {
  static char dir[PATH_MAX];
  if (!dir[0] && !in_build_tree(dir) && !beside_binary(dir)) snprintf(dir, sizeof dir, "%s", TIELAB_DATADIR);
  return dir;
}

const char *luaapi_data_dir(void) { return lapi_data_dir(); }

int luaapi_find_script(const char *name, char found[PATH_MAX], Err *err) {
  if (strlen(name) >= PATH_MAX) return err_set(err, "script name too long: '%.40s...'", name);
  /* In the working directory the name stays as given: arg[0] is "paper.lua". */
  snprintf(found, PATH_MAX, "%s", name);
  if (strchr(name, '/')) {   /* a path: it must be there, as the bare names are */
    if (is_file(name)) return 0;
    return err_set(err, "cannot open script '%s': %s", name,
                   access(name, R_OK) < 0 ? strerror(errno) : "a folder, not a file");
  }
  if (is_file(name)) return 0;
  char user[PATH_MAX];
  const char *dirs[] = {lapi_user_data_dir(user) ? user : NULL, lapi_data_dir()};
  char tried[ERR_MSG_MAX - 64] = ".";
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    if (!dirs[i]) continue;
    int n = snprintf(found, PATH_MAX, "%s/%s", dirs[i], name);
    if (n > 0 && n < PATH_MAX && is_file(found)) return 0;
    size_t len = strlen(tried);
    snprintf(tried + len, sizeof tried - len, ", %s", dirs[i]);
  }
  return err_set(err, "cannot find script '%s' (looked in %s)", name, tried);
}

/* dofile and loadfile (upvalue 1, the function they wrap) with a bare name
** that is no file in the working directory take the file of that name
** beside the running script, as require does: an installed script loads
** its siblings from any folder. The sandbox checks the name that results. */
static int finish_beside(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  return lua_gettop(L) - (int)ctx;
}

static int lapi_beside_script(lua_State *L) {
  LuaApi *api = lapi_get(L);
  size_t len = 0;
  const char *name = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &len) : NULL;
  char beside[PATH_MAX];
  if (name && strlen(name) != len) name = NULL;   /* a NUL byte: the function refuses the name */
  if (name && !strchr(name, '/') && !is_file(name) && api->script_dir[0]) {
    int n = snprintf(beside, sizeof beside, "%s/%s", api->script_dir, name);
    if (n > 0 && n < (int)sizeof beside && is_file(beside)) {
      lua_pushstring(L, beside);
      lua_replace(L, 1);
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, finish_beside);
  return finish_beside(L, LUA_OK, 0);
}

void lapi_find_beside_script(lua_State *L) {
  static const char *const fns[] = {"dofile", "loadfile"};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    lua_getglobal(L, fns[i]);
    lua_pushcclosure(L, lapi_beside_script, 1);
    lua_setglobal(L, fns[i]);
  }
}

/* ------------------------------------------------------------ script files */

typedef struct FileCall {
  const char *path;
  int argc;
  char **argv;
  int as_script;
  LuaApiStatus status;
} FileCall;

static int file_body(lua_State *L) {
  FileCall *fc = lua_touserdata(L, 1);
  LuaApi *api = lapi_get(L);
  lapi_set_script_dir(api, fc->path);
  lua_createtable(L, fc->argc, 2);
  lua_pushliteral(L, "tielab");
  lua_rawseti(L, -2, -1);
  lua_pushstring(L, fc->path);
  lua_rawseti(L, -2, 0);
  for (int i = 0; i < fc->argc; i++) {
    lua_pushstring(L, fc->argv[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setglobal(L, "arg");
  int status = lapi_load_script(L, fc->path, api->opt.sandbox ? "t" : NULL);
  if (status != LUA_OK) {
    fc->status = lapi_report(api, L, status);
    return 0;
  }
  luaL_checkstack(L, fc->argc, "too many arguments to the script");
  for (int i = 0; i < fc->argc; i++) lua_pushstring(L, fc->argv[i]);
  if (fc->as_script) {
    int i = lapi_new_script(api, L, fc->argc, 0);
    fc->status = lapi_resume(api, i);
  } else {
    fc->status = lapi_report(api, L, lapi_docall(L, fc->argc, 0));
  }
  return 0;
}

static LuaApiStatus run_file(LuaApi *api, FileCall *fc, Err *err) {
  lapi_enter(api);
  api->last_error[0] = '\0';
  fc->status = LUAAPI_ERROR;
  lapi_protect(api, file_body, fc);
  if (fc->status == LUAAPI_INTERRUPTED || (fc->status == LUAAPI_ERROR && luaapi_interrupted(api)))
    fc->status = LUAAPI_INTERRUPTED;
  lapi_leave(api);
  if (fc->status != LUAAPI_OK && fc->status != LUAAPI_RUNNING)
    err_set(err, "%s", fc->status == LUAAPI_EXIT ? "os.exit" : api->last_error);
  return fc->status;
}

LuaApiStatus luaapi_run_file(LuaApi *api, const char *path, int argc, char **argv, Err *err) {
  FileCall fc = {path, argc, argv, 0, LUAAPI_ERROR};
  return run_file(api, &fc, err);
}

LuaApiStatus luaapi_start_script(LuaApi *api, const char *path, int argc, char **argv, Err *err) {
  FileCall fc = {path, argc, argv, 1, LUAAPI_ERROR};
  return run_file(api, &fc, err);
}

/* ------------------------------------------------------------ the init file */

int luaapi_init_path(char *buf, size_t cap) {
  return folder_xdg(FOLDER_CONFIG, "tielab/init.lua", buf, cap, NULL) > 0 && access(buf, F_OK) == 0;
}

/* The init file is the user's own code: never in a sandbox, and it leaves
** require's folder to the script. */
LuaApiStatus luaapi_run_init(LuaApi *api, Err *err) {
  char path[PATH_MAX], dir[PATH_MAX];
  if (api->opt.sandbox || !luaapi_init_path(path, sizeof path)) return LUAAPI_OK;
  memcpy(dir, api->script_dir, sizeof dir);
  FileCall fc = {path, 0, NULL, 0, LUAAPI_ERROR};
  api->errors_to_caller = 1;
  LuaApiStatus st = run_file(api, &fc, err);
  api->errors_to_caller = 0;
  memcpy(api->script_dir, dir, sizeof dir);
  if (st != LUAAPI_OK) {
    char msg[ERR_MSG_MAX];
    memcpy(msg, err->msg, sizeof msg);
    err_set(err, "init file %s: %s (--no-init skips it)", path, msg);
  }
  return st;
}
