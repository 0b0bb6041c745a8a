/*
** test_luaapi.c -- the Lua binding as the UI drives it: REPL entries
** (expressions, '=', incomplete statements, errors), the pretty-printer,
** script coroutines that yield while a host that does not step inline
** works, time slices and interrupts of waiting and of runaway scripts, key
** bindings, custom series, captions, tab completion, the heap cap, the
** sandbox, and the 'ui' table's training functions, whose changes land as
** r:set's do by whichever route they take. The host here is a stand-in for the trainer thread: steps asked
** for are done only when the test says so.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "luaapi/luaapi.h"
#include "tap.h"

/* ------------------------------------------------------------ a deferred host */

typedef struct Deferred {
  Lab *lab;
  long submitted, done;   /* tickets */
  int id;
  long n;
  int cancelled;
} Deferred;

static Lab *d_acquire(Host *h) { return ((Deferred *)h->ud)->lab; }
static void d_release(Host *h) {}

static long d_submit(Host *h, int id, long n, Err *err) {
  Deferred *d = h->ud;
  d->id = id;
  d->n = n;
  return ++d->submitted;
}

static int d_poll(Host *h, long ticket, Err *err) {
  Deferred *d = h->ud;
  if (ticket <= d->done) return 1;
  if (d->cancelled) return err_set(err, "stopped");
  return 0;
}

static void d_cancel(Host *h) { ((Deferred *)h->ud)->cancelled = 1; }

/* The trainer's part: do the steps of the last ticket. */
static void d_work(Host *h) {
  Deferred *d = h->ud;
  Err err;
  for (long k = 0; k < d->n; k++) {
    if (d->id < 0) lab_step(d->lab, &err);
    else run_step(lab_run_by_id(d->lab, d->id), &err);
    if (h->after_step) h->after_step(h->after_step_ctx, k + 1);
  }
  d->done = d->submitted;
}

/* ------------------------------------------------------------ captured output */

static char out[65536];
static size_t out_n;

static void capture(void *ctx, const char *s, size_t n, int is_err) {
  if (out_n + n >= sizeof out) n = sizeof out - 1 - out_n;
  memcpy(out + out_n, s, n);
  out_n += n;
  out[out_n] = '\0';
}

static void clear(void) {
  out_n = 0;
  out[0] = '\0';
}

static int printed(const char *s) { return strstr(out, s) != NULL; }

/* The output on one line, for a test's description. */
static const char *flat(void) {
  static char buf[256];
  size_t i = 0;
  for (; i < sizeof buf - 1 && out[i]; i++) buf[i] = out[i] == '\n' ? '|' : out[i];
  buf[i] = '\0';
  return buf;
}

static LuaApiStatus eval(LuaApi *api, const char *line) {
  clear();
  return luaapi_eval_line(api, line);
}

/* Evaluate and pump until the entry ends (a long one yields time slices). */
static int printed_after(LuaApi *api, const char *line, const char *what) {
  clear();
  luaapi_eval_line(api, line);
  while (luaapi_scripts(api) > 0) luaapi_pump(api);
  return printed(what);
}

/* ------------------------------------------------------------ the tests */

static void test_repl(LuaApi *api) {
  ok(eval(api, "1 + 1") == LUAAPI_OK && strcmp(out, "2\n") == 0, "an expression prints its value");
  ok(eval(api, "=2 * 3") == LUAAPI_OK && strcmp(out, "6\n") == 0, "'=' means return");
  ok(eval(api, "x = 5") == LUAAPI_OK && out_n == 0, "a statement prints nothing");
  ok(eval(api, "return x, 'a'") == LUAAPI_OK && strcmp(out, "5\ta\n") == 0, "several values, tab-separated");
  ok(eval(api, "for i = 1, 2 do") == LUAAPI_INCOMPLETE, "an open block asks for more");
  ok(eval(api, "for i = 1, 2 do\nprint(i)\nend") == LUAAPI_OK && strcmp(out, "1\n2\n") == 0,
     "the completed block runs");
  ok(eval(api, "y = ") == LUAAPI_INCOMPLETE, "a dangling '=' asks for more");
  ok(eval(api, "y = = 2") == LUAAPI_ERROR && printed("unexpected symbol"), "a syntax error is reported");
  ok(eval(api, "error('bad thing')") == LUAAPI_ERROR && printed("bad thing") && printed("stack traceback"),
     "a runtime error comes with a traceback");
  ok(eval(api, "return {b = 2, a = 1, 3, 'x', t = {1}, ['a b'] = true}") == LUAAPI_OK &&
         strcmp(out, "{3, \"x\", a = 1, [\"a b\"] = true, b = 2, t = {1}}\n") == 0,
     "tables print with sorted keys: %s", flat());
  ok(eval(api, "local t = {} t.self = t return t") == LUAAPI_OK && strcmp(out, "{self = {...}}\n") == 0,
     "a cycle prints as {...}: %s", flat());
  eval(api, "local t = {} for i = 1, 30 do t['key' .. i] = i end return t");
  ok(strncmp(out, "{\n  key1 = 1,\n", 13) == 0, "a wide table prints one entry a line");
  ok(eval(api, "os.exit(3)") == LUAAPI_ERROR && eval(api, "return 7") == LUAAPI_OK && strcmp(out, "7\n") == 0,
     "os.exit in the REPL ends the entry, not the lab");
  eval(api, "io.stderr:write('to err\\n') io.write('to out\\n')");
  ok(printed("to err") && printed("to out"), "io.write and io.stderr go to the output callback");
}

static void test_coroutines(LuaApi *api, Host *h) {
  Deferred *d = h->ud;
  ok(eval(api, "r = lab.run{name='c', vocab=256, dim=32, layers=2, heads=2, ctx=16, batch=2}") == LUAAPI_OK,
     "a run is created from the REPL (%s)", flat());
  ok(eval(api, "m = r:step(3)") == LUAAPI_RUNNING && luaapi_scripts(api) == 1,
     "r:step yields while the host works");
  ok(luaapi_pump(api) == 1, "pumping before the steps are done changes nothing");
  d_work(h);
  ok(luaapi_pump(api) == 0, "the entry ends once the steps are done");
  ok(eval(api, "return m.step, r:metrics().step") == LUAAPI_OK && strcmp(out, "3\t3\n") == 0,
     "the metrics after the yield: %s", flat());

  eval(api, "r:step(100)");
  ok(luaapi_scripts(api) == 1, "a second wait");
  clear();
  luaapi_interrupt(api);
  ok(luaapi_pump(api) == 0 && d->cancelled && printed("interrupted"), "an interrupt stops a waiting script");
  d->cancelled = 0;
  d->done = d->submitted;

  int alive = 0;
  ok(eval(api, "while true do pcall(function() end) end") == LUAAPI_RUNNING,
     "a runaway entry yields its time slice");
  for (int i = 0; i < 3; i++) alive += luaapi_pump(api);
  ok(alive == 3, "and keeps running across pumps");
  luaapi_interrupt(api);
  clear();
  ok(luaapi_pump(api) == 0 && printed("interrupted"), "an interrupt stops it despite pcall");
  ok(eval(api, "return 1") == LUAAPI_OK, "the REPL works after an interrupt");

  FILE *f = fopen("tests/test_luaapi_script.lua", "w");
  fputs("local r = lab.runs.c\nlab.sleep(0.01)\nlocal m = r:step(2)\nprint('script', m.step, ...)\n", f);
  fclose(f);
  char *argv[] = {"hello"};
  Err err;
  clear();
  ok(luaapi_start_script(api, "tests/test_luaapi_script.lua", 1, argv, &err) == LUAAPI_RUNNING,
     "a script starts as a coroutine");
  for (int i = 0; i < 200 && luaapi_scripts(api) > 0; i++) {
    usleep(1000);
    if (d->done < d->submitted) d_work(h);
    luaapi_pump(api);
  }
  ok(luaapi_scripts(api) == 0 && printed("script\t5\thello"), "it sleeps, steps and ends: %s", flat());
  remove("tests/test_luaapi_script.lua");
}

static void add_word(void *ctx, const char *w) {
  char *buf = ctx;
  strcat(buf, w);
  strcat(buf, " ");
}

static void test_completion(LuaApi *api) {
  char buf[4096] = "";
  luaapi_complete(api, "x = lab.ru", add_word, buf);
  ok(strcmp(buf, "lab.run lab.runs ") == 0, "fields of lab: %s", buf);
  buf[0] = '\0';
  luaapi_complete(api, "r:st", add_word, buf);
  ok(strcmp(buf, "r:step ") == 0, "methods of a run: %s", buf);
  buf[0] = '\0';
  luaapi_complete(api, "r.na", add_word, buf);
  ok(strcmp(buf, "r.name ") == 0, "fields of a run: %s", buf);
  buf[0] = '\0';
  luaapi_complete(api, "pri", add_word, buf);
  ok(strcmp(buf, "print ") == 0, "globals: %s", buf);
  buf[0] = '\0';
  luaapi_complete(api, "string.for", add_word, buf);
  ok(strcmp(buf, "string.format ") == 0, "library fields: %s", buf);
  buf[0] = '\0';
  ok(luaapi_complete(api, "nosuch.x", add_word, buf) == 0, "nothing for an unknown table");
}

static int seen_key;
static char seen_help[64];

static void each_binding(void *ctx, int key, const char *name, const char *help) {
  if (key == 'x') {
    seen_key = key;
    snprintf(seen_help, sizeof seen_help, "%s", help);
  }
}

static void test_ui_hooks(LuaApi *api) {
  eval(api, "hits = 0 lab.bind('x', function() hits = hits + 1 end, 'count hits') lab.bind('F5', function() f5 = true end)");
  ok(luaapi_key(api, 'x') == 1 && luaapi_key(api, 'x') == 1 && luaapi_key(api, 'y') == 0, "bound keys are handled");
  ok(luaapi_key(api, LUAAPI_KEY_F(5)) == 1, "function keys are bound by name");
  ok(eval(api, "return hits, f5") == LUAAPI_OK && strcmp(out, "2\ttrue\n") == 0, "the bindings ran: %s", flat());
  luaapi_bindings(api, each_binding, NULL);
  ok(seen_key == 'x' && strcmp(seen_help, "count hits") == 0, "bindings are listed with their help");
  eval(api, "lab.unbind('x')");
  ok(luaapi_key(api, 'x') == 0, "an unbound key is not handled");

  eval(api, "lab.plot('acc', 0.25, 1) lab.plot('acc', 0.5, 2)");
  int n;
  const HistBucket *b = history_series(luaapi_plots(api), "acc", &n);
  ok(b && n == 2 && b[1].last == 0.5, "custom series reach the host");
  eval(api, "lab.caption('phase %d', 2)");
  ok(strcmp(luaapi_caption(api), "phase 2") == 0, "the caption is kept for the host");
}

static void test_cap_and_sandbox(Host *h) {
  Err err;
  LuaApiOptions o = {.heap_cap = 8u << 20, .sandbox = 1, .out = capture};
  LuaApi *api = luaapi_new(h, &o, &err);
  ok(api != NULL, "a capped, sandboxed state");
  if (!api) return;
  ok(printed_after(api, "local t = {} for i = 1, 1e8 do t[i] = i end", "not enough memory"),
     "a runaway allocation hits the cap: %s", flat());
  ok(eval(api, "return 1 + 1") == LUAAPI_OK, "the state works after hitting the cap");
  ok(eval(api, "return os.execute, io.popen, package.loadlib, debug.sethook") == LUAAPI_OK &&
         strcmp(out, "nil\tnil\tnil\tnil\n") == 0,
     "no os.execute, io.popen, package.loadlib, debug.sethook: %s", flat());
  ok(eval(api, "return io.open('/etc/hostname')") == LUAAPI_ERROR && printed("sandbox"),
     "files outside the working directory are refused");
  ok(eval(api, "return load(string.dump(function() end))") == LUAAPI_OK && printed("nil\t") &&
         printed("binary"),
     "binary chunks are refused: %s", flat());
  ok(eval(api, "return package.cpath") == LUAAPI_OK && strcmp(out, "\n") == 0, "no C modules");
  ok(eval(api, "local f = io.open('tests/sandbox_ok.txt', 'w') f:write('x') f:close() return os.remove('tests/sandbox_ok.txt')") ==
         LUAAPI_OK && printed("true"),
     "files in the working directory are fine: %s", flat());
  luaapi_free(api);
}

/* A host that runs no jobs (a replay's): the Lua layer fits in place,
** with the lab acquired, and the call does not yield. */
static void test_jobs_in_place(LuaApi *api) {
  ok(eval(api, "f = lab.runs.c:fit_lens{steps = 3, tokens_per_step = 16}") == LUAAPI_OK && luaapi_scripts(api) == 0,
     "r:fit_lens on a host without jobs runs in place (%s)", flat());
  ok(eval(api, "return f.steps, #f.curve, lab.runs.c:metrics().fitted_lens.steps") == LUAAPI_OK &&
         strcmp(out, "3\t2\t3\n") == 0,
     "with its result: %s", flat());
}

/* ------------------------------------------------------------ one route per action */

/* The host's queue of posted changes, as the trainer keeps it: made when
** the test says so, the last error kept as the trainer's message. */
static struct {
  HostPostFn fn[8];
  unsigned char arg[8][HOST_POST_MAX];
  int n;
  char error[ERR_MSG_MAX];
} posts;

static int d_post(Host *h, HostPostFn fn, const void *arg, size_t n, Err *err) {
  if (posts.n == 8 || n > HOST_POST_MAX) return err_set(err, "the queue is full");
  posts.fn[posts.n] = fn;
  memcpy(posts.arg[posts.n++], arg, n);
  return 0;
}

static void run_posts(Host *h) {
  Err err;
  posts.error[0] = '\0';
  for (int i = 0; i < posts.n; i++)
    if (posts.fn[i](((Deferred *)h->ud)->lab, posts.arg[i], &err) < 0) snprintf(posts.error, sizeof posts.error, "%s", err.msg);
  posts.n = 0;
}

/* The 'ui' table's lines, as the message line shows them. */
static char said[256];
static void ui_say(void *ctx, int warn, const char *line) { snprintf(said, sizeof said, "%s", line); }
static const char *ui_selected_run(void *ctx) { return "a"; }

/* Evaluate 'chunk' and keep what it returns, one line (no end of line). */
static const char *value_of(LuaApi *api, const char *chunk) {
  static char buf[512];
  eval(api, chunk);
  snprintf(buf, sizeof buf, "%s", flat());
  buf[strcspn(buf, "|")] = '\0';
  return buf;
}

/* Each change made through ui.* (posted, or with the lab held) and through
** r:set lands alike: the same value and the same event; a refusal is
** the same message whichever route it took. */
static void test_routes(Host *base) {
  Err err;
  Host h = *base;
  h.post = d_post;
  LuaApiOptions o = {.out = capture};
  LuaApi *api = luaapi_new(&h, &o, &err);
  if (!api) return;
  lua_State *L = luaapi_state(api);
  lua_newtable(L);
  LuaApiUiOwner owner = {.selected = ui_selected_run, .say = ui_say};
  luaapi_open_ui(api, &owner);
  lua_setglobal(L, "ui");
  eval(api, "local m = {vocab=256, dim=32, layers=1, heads=2, ctx=8, batch=2}"
            " for _, n in ipairs{'a', 'b'} do m.name = n lab.run(m) end a, b = lab.runs.a, lab.runs.b");
  static const struct {
    const char *ui, *set, *said;
  } same[] = {
      {"ui.scale('out_scale', 2)", "b:set{out_scale = 2}", "a: out_scale x 2"},
      {"ui.in_scale('up')", "b:set{in_scale = 2}", "a: in_scale 2 (+ - step, 0 resets)"},
      {"ui.cycle_tie()", "b:set{tie = 'untied'}", "a: tie untied"},
      {"ui.in_scale(1/3, 'a')", "b:set{in_scale = 1/3}", "a: in_scale 1/3 (+ - step, 0 resets)"},
  };
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    said[0] = '\0';
    eval(api, same[i].ui);
    run_posts(&h);
    eval(api, same[i].set);
    char a[512];
    snprintf(a, sizeof a, "%s", value_of(api, "local e = a:events() return e[#e].text, a:options().in_scale, a:options().out_scale, a:options().tie"));
    const char *b = value_of(api, "local e = b:events() return e[#e].text, b:options().in_scale, b:options().out_scale, b:options().tie");
    ok(strcmp(a, b) == 0 && strcmp(said, same[i].said) == 0, "%s and %s land alike (%s | %s), saying '%s'", same[i].ui,
       same[i].set, a, b, said);
  }
  /* The same refusal by each route: raised, or the trainer's message. */
  char set[512];
  snprintf(set, sizeof set, "%s", value_of(api, "return select(2, pcall(b.set, b, {in_scale = 2e6}))"));
  ok(strstr(set, "r:set: 'in_scale' must be a number in [0, 1000000], got 2000000") != NULL, "r:set refuses: %s", set);
  const char *held = value_of(api, "return select(2, pcall(ui.in_scale, 2e6))");
  ok(strcmp(held, set + strlen("r:set: ")) == 0, "ui.in_scale refuses with its message: %s", held);
  eval(api, "ui.scale('in_scale', 2e6 / a:options().in_scale)");
  run_posts(&h);
  ok(strcmp(posts.error, set + strlen("r:set: ")) == 0, "a posted ui.scale refuses with it too: %s", posts.error);
  const char *bad = value_of(api, "return select(2, pcall(ui.scale, 'dim', 2))");
  ok(strstr(bad, "invalid option 'dim'") != NULL, "ui.scale takes live numbers only: %s", bad);
  ok(strcmp(value_of(api, "return ui.in_scale(), ui.selected(), ui.select(), ui.selected()"), "0.33333333333333\ta\tb\ta") == 0,
     "ui.in_scale() reads; ui.select() moves to the next run, which the owner keeps: %s", flat());
  luaapi_free(api);
}

int main(void) {
  Err err;
  Deferred d = {0};
  d.lab = lab_new(&err);
  Host h = {.acquire = d_acquire, .release = d_release, .submit = d_submit, .poll = d_poll, .cancel = d_cancel, .ud = &d};
  LuaApiOptions o = {.out = capture};
  LuaApi *api = d.lab ? luaapi_new(&h, &o, &err) : NULL;
  ok(api != NULL, "the state is created");
  if (!api) return tap_done();
  test_repl(api);
  test_coroutines(api, &h);
  test_jobs_in_place(api);
  test_completion(api);
  test_ui_hooks(api);
  luaapi_free(api);
  test_routes(&h);
  test_cap_and_sandbox(&h);
  lab_free(d.lab);
  return tap_done();
}
