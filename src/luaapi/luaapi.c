/*
** luaapi.c -- the Lua state of the lab: a counting allocator with a cap,
** the standard libraries with their output routed to the host, os.exit
** turned into an error, the "tielab" module preloaded and set as the global
** 'lab', and, for scripts of unknown origin, the sandbox (lsandbox.c).
**
** The LuaApi lives in the state's extra space ('lua_getextraspace'), which
** Lua copies into every new thread, so C functions and the hook reach it
** from any coroutine without a global variable.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lualib.h>

#include "base/text.h"
#include "base/utf8.h"
#include "lab/lab.h"
#include "luaapi/linternal.h"

LuaApi *lapi_get(lua_State *L) { return *(LuaApi **)lua_getextraspace(L); }

/* ------------------------------------------------------------ the lab lock
** Recursive on our side, so that a Lua error that skipped an unlock (caught
** by a pcall in the script) can never deadlock: the top-level call and every
** wait for steps release whatever is still held. */

int lapi_push_list_copy(lua_State *L, const char *key, lua_Integer *n) {
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  *n = luaL_len(L, -1);
  lua_createtable(L, (int)*n, 0);
  for (lua_Integer i = 1; i <= *n; i++) {
    lua_rawgeti(L, -2, i);
    lua_rawseti(L, -2, i);
  }
  return lua_gettop(L);
}

/* Inside a step hook the thread that steps is parked until the hook
** returns: the lab is lent as it is (waiting for it would wait for ever). */
Lab *lapi_lock(LuaApi *api) {
  if (api->locks++ == 0) api->lab = api->in_hook ? api->hook_lab : api->host->acquire(api->host);
  return api->lab;
}

void lapi_unlock(LuaApi *api) {
  if (api->locks > 0 && --api->locks == 0 && !api->in_hook) api->host->release(api->host);
}

void lapi_unlock_all(LuaApi *api) {
  if (api->locks > 0) {
    api->locks = 0;
    if (!api->in_hook) api->host->release(api->host);
  }
}

/* Read the lab without changing it: through the host's published view,
** which never waits for a step, or, with a host that has none (or while
** this state holds the lab and may have changed it), from the lab itself. */
int lapi_view(LuaApi *api, int id, HostViewFn fn, void *ctx) {
  Host *h = api->host;
  if (h->view && api->locks == 0) return h->view(h, id, fn, ctx);
  Lab *lab = lapi_lock(api);
  int seen = 0;
  for (int i = 0; i < lab_n_runs(lab); i++) {
    Run *r = lab_run(lab, i);
    if (id >= 0 && run_id(r) != id) continue;
    HostRunView v = {run_id(r), run_name(r), run_metrics(r), run_options(r), run_history(r)};
    if (fn) fn(ctx, &v);
    seen++;
  }
  lapi_unlock(api);
  return seen;
}

/* ------------------------------------------------------------ handles */

void lapi_set_methods(lua_State *L, const char *name, lua_CFunction index) {
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__methods");      /* for completion and documentation checks */
  /* Found there, a method has a name in argument errors even when called
  ** through pcall: "bad argument #2 to 'tielab.run.step'". */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  lua_pushcclosure(L, index, 1);
  lua_setfield(L, -2, "__index");
}

/* ------------------------------------------------------------ memory */

/* Lua's allocator contract: free on nsize 0, never fail a shrink, return
** NULL (Lua then collects and retries, then raises "not enough memory")
** when growth would pass the cap. When 'ptr' is NULL, 'osize' is a type
** tag, not a size. */
static void *lapi_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  LuaApi *api = ud;
  if (!ptr) osize = 0;
  if (nsize == 0) {
    free(ptr);
    api->mem_used -= osize;
    return NULL;
  }
  if (api->mem_cap && nsize > osize && api->mem_used + api->own_runs_bytes - osize + nsize > api->mem_cap)
    return NULL;
  void *p = realloc(ptr, nsize);
  if (!p) return nsize <= osize ? ptr : NULL;
  api->mem_used = api->mem_used - osize + nsize;
  return p;
}

/* ------------------------------------------------------------ output */

/* A script file's output is kept too: its results, shown after it ends.
** That is what it prints, and what on_step callbacks print while it
** lives (headless they print into the same stdout). */
static int printing_script(const LuaApi *api) {
  if (api->running >= 0) return !api->scripts[api->running].repl;
  return api->in_callback && lapi_file_scripts(api) > 0;
}

static void write_raw(LuaApi *api, const char *s, size_t n, int is_err) {
  if (!is_err && printing_script(api)) buf_add(&api->printed, s, n);   /* past its max, only cut */
  if (api->opt.out) {
    api->opt.out(api->opt.ctx, s, n, is_err);
    return;
  }
  fwrite(s, 1, n, is_err ? stderr : stdout);
}

/* Error reports always, and a script's output when the host shows it on a
** screen, have their control characters escaped: a script (or a file name
** in a message) must not clear the screen or retitle the window. Pieces
** end on a character boundary, so no valid character is cut in two. */
static void write_escaped(LuaApi *api, const char *s, size_t n, int is_err) {
  enum { PIECE = 1024 };
  char out[4 * PIECE + 1];
  while (n > 0) {
    size_t k = n < PIECE ? n : PIECE;
    if (k < n) k -= utf8_incomplete_tail(s, k);   /* k >= PIECE - 3 */
    write_raw(api, out, text_escape(s, k, out, sizeof out), is_err);
    s += k;
    n -= k;
  }
}

void lapi_write(LuaApi *api, const char *s, size_t n, int is_err) {
  if (!(is_err || api->opt.escape_output)) {
    write_raw(api, s, n, is_err);
    return;
  }
  /* A character split over two writes (a byte-level token at a time) is
  ** held back until its end arrives. */
  char *carry = api->carry[is_err];
  size_t *nc = &api->n_carry[is_err];
  while (*nc > 0 && n > 0 && *nc < 4 && utf8_is_continuation((unsigned char)*s) &&
         utf8_incomplete_tail(carry, *nc) == *nc) {
    carry[(*nc)++] = *s++;
    n--;
  }
  if (*nc > 0 && (n > 0 || utf8_incomplete_tail(carry, *nc) != *nc)) {
    write_escaped(api, carry, *nc, is_err);
    *nc = 0;
  }
  size_t tail = utf8_incomplete_tail(s, n);
  if (tail > 0 && tail <= sizeof api->carry[0] - 1) {
    memcpy(carry, s + n - tail, tail);
    *nc = tail;
    n -= tail;
  }
  if (!text_needs_escape(s, n)) write_raw(api, s, n, is_err);
  else write_escaped(api, s, n, is_err);
}

static int lapi_print(lua_State *L) {
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, NULL);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, '\n');
  luaL_pushresult(&b);
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  lapi_write(lapi_get(L), s, len, 0);
  return 0;
}

/* file:write for every file: text for io.stdout and io.stderr goes to the
** host, other files to the original method (upvalue 1). */
static int lapi_file_write(lua_State *L) {
  luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if (p->closef && (p->f == stdout || p->f == stderr)) {
    int n = lua_gettop(L);
    for (int i = 2; i <= n; i++) {
      size_t len;
      const char *s = luaL_checklstring(L, i, &len);
      lapi_write(lapi_get(L), s, len, p->f == stderr);
    }
    lua_settop(L, 1);
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* io.write: the same, on the current default output file. */
static int lapi_io_write(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "_IO_output");
  lua_insert(L, 1);
  return lapi_file_write(L);
}

/* Lua's warnings ("@on", "@off", pieces to be continued) to the host. */
static void lapi_warnf(void *ud, const char *msg, int tocont) {
  LuaApi *api = ud;
  if (!api->warn_cont && *msg == '@') {
    if (strcmp(msg, "@on") == 0) api->warn_on = 1;
    else if (strcmp(msg, "@off") == 0) api->warn_on = 0;
    return;
  }
  if (api->warn_on) {
    if (!api->warn_cont) lapi_write(api, "Lua warning: ", 13, 1);
    lapi_write(api, msg, strlen(msg), 1);
    if (!tocont) lapi_write(api, "\n", 1, 1);
  }
  api->warn_cont = tocont;
}

static void route_output(lua_State *L) {
  lua_pushcfunction(L, lapi_print);
  lua_setglobal(L, "print");
  luaL_getmetatable(L, LUA_FILEHANDLE);
  lua_getfield(L, -1, "__index");          /* the method table */
  lua_getfield(L, -1, "write");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, lapi_file_write, 1);
  lua_setfield(L, -3, "write");
  lua_getglobal(L, "io");
  lua_insert(L, -2);                        /* io, original write */
  lua_pushcclosure(L, lapi_io_write, 1);
  lua_setfield(L, -2, "write");
  lua_pop(L, 3);
}

/* ------------------------------------------------------------ os.exit */

/* The error object os.exit raises: headless mode turns it into the exit
** status; in the lab it only ends the script. */
char lapi_exit_marker;

static int lapi_os_exit(lua_State *L) {
  LuaApi *api = lapi_get(L);
  if (lua_isboolean(L, 1)) api->exit_code = lua_toboolean(L, 1) ? 0 : 1;
  else api->exit_code = (int)luaL_optinteger(L, 1, 0);
  api->exiting = 1;
  lapi_hook_soon(L);
  return lapi_raise_stop(L);
}

/* ------------------------------------------------------------ other ranks */

/* Under mpirun every rank runs the script and takes the same path through
** it; rank 0 alone writes. On the others a file opened to write (io.open,
** io.output) is /dev/null, and os.remove and os.rename succeed doing
** nothing, so that no two ranks race on one file and none fails where rank
** 0 did not. (The lab's own files, r:save and r:export, are rank 0's in the
** lab itself.) */
static int writes_to_null(lua_State *L, int mode_arg) {
  const char *mode = luaL_optstring(L, mode_arg, "r");
  if (lua_type(L, 1) != LUA_TSTRING || !strpbrk(mode, "wa+")) return 0;
  lua_pushliteral(L, "/dev/null");
  lua_replace(L, 1);
  return 1;
}

static int lapi_call_original(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static int lapi_follower_open(lua_State *L) {
  writes_to_null(L, 2);
  return lapi_call_original(L);
}

static int lapi_follower_output(lua_State *L) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    lua_settop(L, 1);
    lua_pushliteral(L, "w");
    writes_to_null(L, 2);
    lua_settop(L, 1);
  }
  return lapi_call_original(L);
}

static int lapi_follower_nothing(lua_State *L) {
  lua_pushboolean(L, 1);
  return 1;
}

static void wrap(lua_State *L, const char *lib, const char *name, lua_CFunction fn) {
  lua_getglobal(L, lib);
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static void follow_rank0(lua_State *L) {
  wrap(L, "io", "open", lapi_follower_open);
  wrap(L, "io", "output", lapi_follower_output);
  wrap(L, "os", "remove", lapi_follower_nothing);
  wrap(L, "os", "rename", lapi_follower_nothing);
}

/* ------------------------------------------------------------ the state */

static int lapi_setup(lua_State *L) {
  LuaApi *api = lapi_get(L);
  luaL_openlibs(L);
  lrunaway_open(L);   /* before any copy of the library is taken */
  lua_setwarnf(L, lapi_warnf, api);
  route_output(L);

  lua_getglobal(L, "os");
  lua_pushcfunction(L, lapi_os_exit);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
  lapi_guard_catchers(L);

  /* Reproducible by default: a script wanting fresh numbers seeds itself. */
  lua_getglobal(L, "math");
  lua_getfield(L, -1, "randomseed");
  lua_pushinteger(L, 0);
  lua_call(L, 1, 0);
  lua_pop(L, 1);

  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  char user[PATH_MAX];
  if (lapi_user_data_dir(user))   /* the user's own modules before the installed ones */
    lua_pushfstring(L, "%s;%s/?.lua;%s/?.lua", lua_tostring(L, -1), user, lapi_data_dir());
  else
    lua_pushfstring(L, "%s;%s/?.lua", lua_tostring(L, -1), lapi_data_dir());
  lua_setfield(L, -3, "path");
  lua_pop(L, 1);
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_tielab);
  lua_setfield(L, -2, "tielab");
  lua_pop(L, 2);
  lapi_add_script_searcher(L);

  lrun_open(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "tielab");
  lua_call(L, 1, 1);
  lua_setglobal(L, "lab");

  Lab *lab = lapi_lock(api);
  api->follower = lab_rank(lab) > 0;
  lapi_unlock(api);
  if (api->opt.sandbox) lapi_sandbox(L);   /* its file functions write as a follower does themselves */
  else if (api->follower) follow_rank0(L);
  lapi_find_beside_script(L);   /* after the sandbox, which checks the name found */
  lapi_install_hook(L);
  return 0;
}

LuaApi *luaapi_new(Host *host, const LuaApiOptions *opt, Err *err) {
  LuaApi *api = calloc(1, sizeof *api);
  if (!api) {
    err_set(err, "out of memory creating the Lua state");
    return NULL;
  }
  api->host = host;
  if (opt) api->opt = *opt;
  api->running = -1;
  api->printed.max = api->results.max = LAPI_PRINTED_MAX;
  atomic_init(&api->interrupt, 0);
  if (!realpath(".", api->cwd)) api->cwd[0] = '\0';
  if (!realpath(lapi_data_dir(), api->data_dir)) api->data_dir[0] = '\0';
  api->plots = history_new(HISTORY_DEFAULT_CAP);
  api->L = lua_newstate(lapi_alloc, api);
  if (!api->L || !api->plots) {
    err_set(err, "out of memory creating the Lua state");
    luaapi_free(api);
    return NULL;
  }
  *(LuaApi **)lua_getextraspace(api->L) = api;
  host->after_step = llab_after_step;
  host->after_step_ctx = api;
  if (lapi_protect(api, lapi_setup, api) != LUA_OK) {
    err_set(err, "cannot set up Lua: %s", api->last_error);
    luaapi_free(api);
    return NULL;
  }
  api->mem_cap = api->opt.heap_cap;
  return api;
}

void luaapi_free(LuaApi *api) {
  if (!api) return;
  lhooks_free(api);   /* first: no step may call into a closing state */
  if (api->L) {
    api->mem_cap = 0;   /* closing must never fail for want of memory */
    lapi_free_scripts(api);
    lua_close(api->L);
  }
  if (api->host && api->host->after_step_ctx == api) {
    llab_unwatch(api);
    api->host->after_step = NULL;
    api->host->after_step_ctx = NULL;
  }
  history_free(api->plots);
  buf_free(&api->printed);
  buf_free(&api->results);
  free(api->own_runs);
  free(api->scripts);
  free(api);
}

lua_State *luaapi_state(LuaApi *api) { return api->L; }
size_t luaapi_mem_used(const LuaApi *api) { return api->mem_used; }
History *luaapi_plots(LuaApi *api) { return api->plots; }
const char *luaapi_caption(const LuaApi *api) { return api->caption; }
int luaapi_exit_code(const LuaApi *api) { return api->exit_code; }
int luaapi_phase(const LuaApi *api) { return api->phase; }

const char *luaapi_results(const LuaApi *api, size_t *n, long *seq) {
  *n = api->results.n;
  *seq = api->results_seq;
  return api->results.s ? api->results.s : "";
}
