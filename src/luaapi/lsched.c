/*
** lsched.c -- scripts as coroutines: the list the UI resumes, the pump
** that resumes those whose wait is over, and the waits themselves (for
** steps, a job, a time, the speaker's key), which yield where they can.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "luaapi/linternal.h"

static void nap(double seconds) {
  struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&ts, NULL);
}

int luaapi_scripts(const LuaApi *api) { return api->n_scripts; }

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
  if (api->results.cut) {   /* the note goes past the cap: it says the cap was met */
    size_t max = api->results.max;
    api->results.max = 0;
    buf_add(&api->results, cut, sizeof cut - 1);
    api->results.max = max;
  }
  api->results.cut = 0;
  buf_clear(&t);
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
  lhooks_refuse(L);
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
  lhooks_refuse(L);
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

/* ------------------------------------------------------------ sleeping, keys, the pause */

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
