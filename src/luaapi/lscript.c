/*
** lscript.c -- running Lua: the one protected call with a traceback
** handler, the interrupt hook, script files run to the end (headless) or as
** coroutines (the UI), waiting for training steps, and the pump that
** resumes coroutines whose wait is over.
**
** Interrupts: 'luaapi_interrupt' only stores an atomic flag. A count hook,
** installed on the main thread before any coroutine exists (new threads
** inherit it), raises "interrupted" while the flag is set, and re-arms
** itself to fire on every instruction, so a pcall in the script cannot
** swallow the interrupt: the next instruction after the pcall raises again.
** The flag clears when the outermost call returns, or in luaapi_pump when
** no Lua code runs (it then stops the scripts that wait).
*/
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/folder.h"
#include "luaapi/linternal.h"


static void nap(double seconds) {
  struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&ts, NULL);
}

void luaapi_interrupt(LuaApi *api) { atomic_store(&api->interrupt, 1); }
int luaapi_interrupted(const LuaApi *api) { return atomic_load((atomic_int *)&api->interrupt); }
int luaapi_stopping(const LuaApi *api) { return lapi_stop_pending(api); }
int luaapi_scripts(const LuaApi *api) { return api->n_scripts; }

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

/* ------------------------------------------------------------ scripts */

static int script_of(const LuaApi *api, const lua_State *L) {
  for (int i = 0; i < api->n_scripts; i++)
    if (api->scripts[i].co == L) return i;
  return -1;
}

/* Make a coroutine of the function and 'nargs' arguments on top of L. */
int lapi_new_script(LuaApi *api, lua_State *L, int nargs, int repl) {
  if (api->n_scripts == api->cap_scripts) {
    int cap = api->cap_scripts ? 2 * api->cap_scripts : 4;
    Script *s = realloc(api->scripts, sizeof *s * (size_t)cap);
    if (!s) return luaL_error(L, "not enough memory");
    api->scripts = s;
    api->cap_scripts = cap;
  }
  lua_State *co = lua_newthread(L);
  lua_insert(L, -(nargs + 2));
  lua_xmove(L, co, nargs + 1);
  Script *s = &api->scripts[api->n_scripts];
  memset(s, 0, sizeof *s);
  s->co = co;
  s->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  s->repl = repl;
  s->nargs = nargs;
  s->wait = WAIT_READY;
  return api->n_scripts++;
}

static void close_thread(lua_State *co, lua_State *L) {
#if LUA_VERSION_RELEASE_NUM >= 50406
  lua_closethread(co, L);
#else
  (void)L;
  lua_resetthread(co);
#endif
}

int lapi_file_scripts(const LuaApi *api) {
  int n = 0;
  for (int i = 0; i < api->n_scripts; i++) n += !api->scripts[i].repl;
  return n;
}

/* The last script file to end hands what the script files printed to the
** results (however it ended: an error or Ctrl-C keeps what came before). */
static void keep_results(LuaApi *api) {
  if (api->printed.n == 0 && !api->printed.cut) return;
  static const char cut[] = "\n(more output than the results keep)\n";
  Buf t = api->results;
  api->results = api->printed;
  if (api->results.cut && api->results.n + sizeof cut <= api->results.cap) {
    memcpy(api->results.s + api->results.n, cut, sizeof cut - 1);
    api->results.n += sizeof cut - 1;
  }
  api->results.cut = 0;
  t.n = 0;
  t.cut = 0;
  api->printed = t;
  api->results_seq++;
}

static void end_script(LuaApi *api, int i) {
  Script *s = &api->scripts[i];
  int last_file = !s->repl && lapi_file_scripts(api) == 1;
  close_thread(s->co, api->L);
  luaL_unref(api->L, LUA_REGISTRYINDEX, s->ref);
  memmove(s, s + 1, sizeof *s * (size_t)(api->n_scripts - i - 1));
  api->n_scripts--;
  if (last_file) keep_results(api);
}

void lapi_free_scripts(LuaApi *api) {
  while (api->n_scripts > 0) end_script(api, api->n_scripts - 1);
}

/* The text of the error value at 1 that ended coroutine 2, with its
** traceback (none for a bad script argument: the user's mistake). Its
** __tostring is the script's code and may raise: this runs protected. */
static int script_error_text(lua_State *L) {
  lua_State *co = lua_tothread(L, 2);
  const char *msg;
  if (lua_touserdata(L, 1) == &lapi_exit_marker) msg = "os.exit ends a script, never the lab";
  else if ((msg = largs_usage_message(L, 1))) {
    lua_pushstring(L, msg);
    return 1;
  } else if (!(msg = lua_tostring(L, 1))) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) msg = lua_tostring(L, -1);
    else msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, co, msg, 0);
  return 1;
}

/* Report the error that ended coroutine 'co'. Nothing here raises, so the
** caller ends the script whatever its error value does. */
static void report_script_error(LuaApi *api, lua_State *co) {
  lua_State *L = api->L;
  int top = lua_gettop(L), exiting = api->exiting;
  lua_pushcfunction(L, script_error_text);
  lua_xmove(co, L, 1);
  lua_pushthread(co);
  lua_xmove(co, L, 1);
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    lua_pushliteral(L, "(error object whose __tostring failed)");
  }
  api->exiting = exiting;   /* an os.exit in a __tostring ends nothing more */
  lapi_report(api, L, LUA_ERRRUN);
  lua_settop(L, top);
}

/* Resume script 'i'. Returns LUAAPI_RUNNING while it lives, else how it
** ended (it is then gone from the list). */
int lapi_resume(LuaApi *api, int i) {
  Script *s = &api->scripts[i];
  lua_State *co = s->co;
  int nargs = s->nargs, nres = 0;
  s->nargs = 0;
  s->wait = WAIT_READY;
  api->running = i;
  api->slice_end = clock_seconds() + LAPI_SLICE_SECONDS;
  int status = lua_resume(co, api->L, nargs, &nres);
  api->running = -1;
  lapi_unlock_all(api);
  /* An os.exit ends this script however it came back: by an error, by
  ** ending (it was raised where errors are only warnings, in a __gc), or
  ** by a yield (from a __close while the exit unwound), and never outlives
  ** it, so the other scripts go on. */
  int exited = api->exiting;
  api->exiting = 0;
  if (status == LUA_YIELD && !exited) {
    lua_pop(co, nres);
    return LUAAPI_RUNNING;
  }
  LuaApiStatus result = LUAAPI_OK;
  if (exited && !api->scripts[i].repl) {
    result = LUAAPI_EXIT;
  } else if (exited) {
    lua_pushlightuserdata(co, &lapi_exit_marker);
    report_script_error(api, co);
    result = LUAAPI_ERROR;
  } else if (status == LUA_OK) {
    if (api->scripts[i].repl && nres > 0) {
      lua_xmove(co, api->L, nres);
      lrepl_print_values(api, api->L, lua_gettop(api->L) - nres + 1, nres);
      lua_pop(api->L, nres);
    }
  } else {
    result = luaapi_interrupted(api) ? LUAAPI_INTERRUPTED : LUAAPI_ERROR;
    report_script_error(api, co);
  }
  end_script(api, i);
  return result;
}

static int ready(LuaApi *api, Script *s) {
  switch (s->wait) {
    case WAIT_READY: return 1;
    case WAIT_TIME: return clock_seconds() >= s->wake_at;
    case WAIT_KEY: return s->wake_at > 0 && clock_seconds() >= s->wake_at;
    case WAIT_TICKET: {
      int st = api->host->poll(api->host, s->ticket, &s->err);
      if (st == 0) return 0;
      s->result = st;
      return 1;
    }
  }
  return 0;
}

static int pump_body(lua_State *L) {
  LuaApi *api = lua_touserdata(L, 1);
  for (int i = 0; i < api->n_scripts;) {
    if (api->paused || !ready(api, &api->scripts[i])) {
      i++;
      continue;
    }
    if (lapi_resume(api, i) == LUAAPI_RUNNING) i++;
    if (luaapi_interrupted(api)) break;
  }
  return 0;
}

static void kill_scripts(LuaApi *api, const char *why) {
  if (api->n_scripts == 0) return;
  api->host->cancel(api->host);
  char line[128];
  int n = snprintf(line, sizeof line, "%s: %d script%s stopped\n", why, api->n_scripts,
                   api->n_scripts == 1 ? "" : "s");
  lapi_write(api, line, (size_t)n, 1);
  lapi_free_scripts(api);
}

int luaapi_pump(LuaApi *api) {
  if (luaapi_interrupted(api) && api->depth == 0) {   /* meant for the waiting scripts */
    kill_scripts(api, "interrupted");
    atomic_store(&api->interrupt, 0);
  }
  if (api->n_scripts > 0) {
    lapi_enter(api);
    lapi_protect(api, pump_body, api);
    if (luaapi_interrupted(api)) kill_scripts(api, "interrupted");
    lapi_leave(api);
  }
  /* A pause ends with the scripts it paused: later steps are not held. */
  if (api->paused && api->n_scripts == 0) luaapi_pause(api, 0);
  return api->n_scripts;
}

/* ------------------------------------------------------------ waiting */

/* The outcome of the ticket a script waited for (after a yield). */
int lapi_step_result(lua_State *L) {
  LuaApi *api = lapi_get(L);
  int i = script_of(api, L);
  if (i >= 0 && api->scripts[i].result < 0) {
    char msg[ERR_MSG_MAX];
    memcpy(msg, api->scripts[i].err.msg, sizeof msg);
    return luaL_error(L, "%s", msg);
  }
  return 0;
}

/* Whether the wait for a ticket about to be asked for may yield: raises
** when it can neither yield nor wait here. */
static int wait_can_yield(lua_State *L) {
  LuaApi *api = lapi_get(L);
  Host *h = api->host;
  if (lapi_stop_pending(api)) return lapi_raise_stop(L);   /* a __close of the unwinding stop */
  if (api->in_callback) return luaL_error(L, "training cannot be stepped from an on_step callback");
  int i = script_of(api, L), can_yield = !h->inline_steps && i >= 0 && lua_isyieldable(L);
  /* Held steps would keep a wait that cannot yield, and the screen with it,
  ** until the speaker resumes: refuse it instead. */
  if (!can_yield && !h->inline_steps && api->paused)
    return luaL_error(L, "the scripts are paused (',' resumes them): this step cannot wait here");
  /* The lab is held for the journal (the entry and its effect at one step):
  ** the trainer could not take a step this wait needs. A replay holds it
  ** too, and refuses the same steps (those that could not yield). */
  if (api->lab_held && !(i >= 0 && lua_isyieldable(L)))
    return luaL_error(L, "the journal holds the lab during this call: a step that cannot yield cannot wait here");
  lapi_unlock_all(api);
  return can_yield;
}

/* Continue with 'k' once 'ticket' ended: after a yield in a script
** coroutine, else by waiting here (still interruptible, serving the host
** so that handed-over steps get their callbacks). */
static int wait_ticket(lua_State *L, long ticket, int can_yield, lua_KContext ctx, lua_KFunction k) {
  LuaApi *api = lapi_get(L);
  Host *h = api->host;
  Err err;
  if (can_yield) {
    Script *s = &api->scripts[script_of(api, L)];
    s->wait = WAIT_TICKET;
    s->ticket = ticket;
    s->result = 0;
    return lua_yieldk(L, 0, ctx, k);
  }
  lua_State *prev = api->stepping;
  for (;;) {
    int st = h->poll(h, ticket, &err);
    if (st < 0) return luaL_error(L, "%s", err.msg);
    if (st > 0) break;
    if (h->serve) {   /* the on_step callbacks of the steps handed over, or they never end */
      api->stepping = L;
      h->serve(h);
      api->stepping = prev;
    }
    if (lapi_stop_pending(api)) {
      h->cancel(h);
      return lapi_raise_stop(L);
    }
    nap(0.002);
  }
  if (lapi_stop_pending(api)) return lapi_raise_stop(L);
  return k(L, LUA_OK, ctx);
}

/* Ask the host for 'n' steps of run 'id' (-1: every run) and continue with
** 'k' when they are done: at once with an inline host, after a yield in a
** script coroutine of the UI, else by waiting here (still interruptible). */
int lapi_wait_steps(lua_State *L, int id, long n, lua_KContext ctx, lua_KFunction k) {
  LuaApi *api = lapi_get(L);
  Host *h = api->host;
  Err err;
  int can_yield = wait_can_yield(L);
  lua_State *prev = api->stepping;
  api->stepping = L;
  long ticket = h->submit(h, id, n, &err);
  api->stepping = prev;
  if (ticket < 0 && lapi_stop_pending(api)) return lapi_raise_stop(L);
  if (ticket < 0) return luaL_error(L, "%s", err.msg);
  return wait_ticket(L, ticket, can_yield, ctx, k);
}

/* ------------------------------------------------------------ jobs
** A job's memory is the host's once submitted; the coroutine that waits
** for it holds a handle, a to-be-closed value on its stack, whose closing
** drops the job: when the call returns or raises, and when the coroutine
** is closed while it waits (the host then stops the job and frees the
** memory when it ends). '__gc' drops it too, should a state be closed
** with the coroutine still suspended. */

#define LAPI_JOB_META "tielab.job"

/* Before the host has it, the memory is the handle's to free; after, the
** host's, and the handle only drops the job. */
static int job_close(lua_State *L) {
  LapiJob *j = luaL_checkudata(L, 1, LAPI_JOB_META);
  if (j->ticket >= 0) j->host->drop_job(j->host, j->ticket);
  else if (j->arg && j->free_arg) j->free_arg(j->arg);
  j->ticket = -1;
  j->arg = NULL;
  return 0;
}

LapiJob *lapi_push_job(lua_State *L, void *arg, HostJobFree free_arg) {
  LapiJob *j = lua_newuserdatauv(L, sizeof *j, 0);
  *j = (LapiJob){lapi_get(L)->host, -1, arg, free_arg};
  if (luaL_newmetatable(L, LAPI_JOB_META)) {
    lua_pushcfunction(L, job_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, job_close);
    lua_setfield(L, -2, "__gc");
    lapi_seal_metatable(L, -1);
  }
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);
  return j;
}

/* A host without jobs (a replay): the job runs here with the lab locked,
** stopped by an interrupt as an inline host's is; 'arg' stays the
** handle's. */
static int here_report(HostJobProgress *p, const char *what, long done, long total) {
  (void)what, (void)done, (void)total;
  return lapi_stop_pending(p->ud);
}

static int run_here(lua_State *L, LapiJob *j, HostJobFn fn, lua_KContext ctx, lua_KFunction k) {
  LuaApi *api = lapi_get(L);
  HostJobProgress p = {here_report, api};
  Err err;
  if (lapi_stop_pending(api)) return lapi_raise_stop(L);
  int rc = fn(lapi_lock(api), j->arg, &p, &err);
  lapi_unlock(api);
  if (rc < 0 && api->exiting) return lapi_raise_stop(L);
  if (rc < 0) return luaL_error(L, "%s", err.msg);
  return k(L, LUA_OK, ctx);
}

int lapi_wait_job(lua_State *L, LapiJob *j, HostJobFn fn, lua_KContext ctx, lua_KFunction k) {
  LuaApi *api = lapi_get(L);
  Host *h = api->host;
  Err err;
  if (!h->submit_job) return run_here(L, j, fn, ctx, k);
  int can_yield = wait_can_yield(L);
  void *arg = j->arg;
  j->arg = NULL;   /* the host's from here on, even when it refuses */
  long ticket = h->submit_job(h, fn, arg, j->free_arg, &err);
  /* A job stopped by the interrupt says where it stopped (the hook raises
  ** the stop again after); an os.exit goes on as itself. */
  if (ticket < 0 && api->exiting) return lapi_raise_stop(L);
  if (ticket < 0) return luaL_error(L, "%s", err.msg);
  j->ticket = ticket;
  j->arg = arg;   /* to read once the job ended */
  return wait_ticket(L, ticket, can_yield, ctx, k);
}

static int sleep_k(lua_State *L, int status, lua_KContext ctx) { return 0; }

int lapi_sleep(lua_State *L, double seconds) {
  LuaApi *api = lapi_get(L);
  if (lapi_stop_pending(api)) return lapi_raise_stop(L);
  int i = script_of(api, L);
  if (!api->host->inline_steps && i >= 0 && lua_isyieldable(L)) {
    api->scripts[i].wait = WAIT_TIME;
    api->scripts[i].wake_at = clock_seconds() + seconds;
    return lua_yieldk(L, 0, 0, sleep_k);
  }
  double end = clock_seconds() + seconds;
  for (double now = clock_seconds(); now < end; now = clock_seconds()) {
    if (lapi_stop_pending(api)) return lapi_raise_stop(L);
    nap(end - now < 0.02 ? end - now : 0.02);
  }
  return 0;
}

/* lab.wait_key: true when the speaker's '.' ended the wait, false when
** 'seconds' (> 0) passed first; at once false headless or where the
** script cannot yield (a key binding), since no key could come. Every
** answer goes through the host's 'wait_answer', which may journal it or
** (a replay) give the recorded one: a script that branches on it takes
** the same branch again. */
static int wait_key_k(lua_State *L, int status, lua_KContext ctx) {
  LuaApi *api = lapi_get(L);
  Host *h = api->host;
  int i = script_of(api, L);
  int pressed = status == LUA_YIELD && i >= 0 && api->scripts[i].advanced;
  if (h->wait_answer) pressed = h->wait_answer(h->wait_answer_ctx, pressed) != 0;
  if (lapi_stop_pending(api)) return lapi_raise_stop(L);   /* a replay that went apart here */
  lua_pushboolean(L, pressed);
  return 1;
}

int lapi_wait_key(lua_State *L, double seconds) {
  LuaApi *api = lapi_get(L);
  if (lapi_stop_pending(api)) return lapi_raise_stop(L);
  int i = script_of(api, L);
  if (api->host->inline_steps || i < 0 || !lua_isyieldable(L)) return wait_key_k(L, LUA_OK, 0);
  Script *s = &api->scripts[i];
  s->wait = WAIT_KEY;
  s->advanced = 0;
  s->wake_at = seconds > 0 ? clock_seconds() + seconds : 0;
  return lua_yieldk(L, 0, 0, wait_key_k);
}

int luaapi_advance(LuaApi *api) {
  int woke = 0;
  for (int i = 0; i < api->n_scripts; i++) {
    Script *s = &api->scripts[i];
    if (s->wait != WAIT_KEY && s->wait != WAIT_TIME) continue;
    s->wait = WAIT_READY;
    s->advanced = 1;
    woke++;
  }
  return woke;
}

int luaapi_waiting_key(const LuaApi *api) {
  for (int i = 0; i < api->n_scripts; i++)
    if (api->scripts[i].wait == WAIT_KEY) return 1;
  return 0;
}

void luaapi_pause(LuaApi *api, int on) {
  api->paused = on != 0;
  if (api->host->hold) api->host->hold(api->host, api->paused);
}

int luaapi_paused(const LuaApi *api) { return api->paused; }

void luaapi_hold_lab(LuaApi *api, int on) {
  if (api) api->lab_held += on ? 1 : (api->lab_held > 0 ? -1 : 0);
}

/* ------------------------------------------------------------ finding scripts
** A script named without a '/' ("paper.lua") is looked for along a search
** path, as a shell looks for a command, so that an installed tielab runs
** its scripts from any folder: the working directory, then the user's
** $XDG_DATA_HOME/tielab, then the installed data directory. A name with a
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

/* PREFIX/share/tielab for a binary that is PREFIX/bin/tielab, into 'dir'
** when that folder exists; 0 otherwise. */
static int beside_binary(char dir[PATH_MAX]) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  *slash = '\0';   /* PREFIX/bin */
  size_t len = strlen(exe);
  if (len < 4 || strcmp(exe + len - 4, "/bin") != 0) return 0;
  exe[len - 4] = '\0';
  int k = snprintf(dir, PATH_MAX, "%s/share/tielab", exe);
  return k > 0 && k < PATH_MAX && is_dir(dir);
}

/* A binary installed with its data (and moved since, or installed with
** DESTDIR) takes the data beside it: that is its own version's. Anywhere
** else (the build tree) the configured folder serves. */
const char *lapi_data_dir(void) {
  static char dir[PATH_MAX];
  if (!dir[0] && !beside_binary(dir)) snprintf(dir, sizeof dir, "%s", TIELAB_DATADIR);
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
