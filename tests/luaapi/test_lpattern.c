/*
** test_lpattern.c -- the library calls an interrupt stops (lpattern.c,
** lrunaway.c): string.find, match, gmatch, gsub, rep and table.move give
** what Lua 5.4's own give, compared on thousands of generated patterns,
** subjects and replacements in a state of each kind (results and error
** messages alike); each of them, stuck in a catastrophic pattern, a long
** plain search or a table.move over 2^40 slots, ends with "interrupted"
** soon after an interrupt from another thread, as Ctrl-C's handler gives
** it; and an empty string repeated 2^50 times is one at once.
*/
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "luaapi/luaapi.h"
#include "tap.h"

/* ------------------------------------------------------------ the two states */

/* The lab is never used: these calls touch no run. */
static Lab *h_acquire(Host *h) { return h->ud; }
static void h_release(Host *h) {}
static long h_submit(Host *h, int id, long n, Err *err) { return err_set(err, "no steps here"); }
static int h_poll(Host *h, long ticket, Err *err) { return 1; }
static void h_cancel(Host *h) {}

static char out[4096];
static void capture(void *ctx, const char *s, size_t n, int is_err) {
  size_t have = strlen(out);
  if (have + n >= sizeof out) n = sizeof out - 1 - have;
  memcpy(out + have, s, n);
  out[have + n] = '\0';
}

/* Run 'chunk' in 'L'; its one result (a string) into a malloc'd copy, or
** the error's message. */
static char *run(lua_State *L, const char *chunk) {
  int top = lua_gettop(L);
  int rc = luaL_loadstring(L, chunk);
  if (rc == LUA_OK) rc = lua_pcall(L, 0, 1, 0);
  const char *s = lua_tostring(L, -1);
  char *copy = strdup(s ? s : "(no string)");
  if (rc != LUA_OK) fprintf(stderr, "# %s\n", copy);
  lua_settop(L, top);
  return copy;
}

/* ------------------------------------------------------------ the same answers */

/* Generates cases from a seeded generator and writes one line per call:
** what it was, and what came back (values with their types, or the error).
** Patterns are pieces taken at random, so many are malformed on purpose. */
static const char generator[] =
    "local seed, count = ...\n"
    "math.randomseed(seed)\n"
    "local R = math.random\n"
    "local atoms = {'.', 'a', 'b', 'c', '%a', '%d', '%s', '%w', '%A', '%S', '%%', '%.', '%-', '[ab]', '[^a]',\n"
    "  '[a-c]', '[%a_]', '[]]', '[^]]', '[a-]', '%bab', '%b()', '%f[%a]', '%f[^a]', '%f', '(', ')', '()', '%1',\n"
    "  '%2', '%0', '$', '^', '[', '%', '%z', 'x', ' ', '\\0', '%b', '[%', '%x'}\n"
    "local quants = {'', '', '', '*', '+', '-', '?'}\n"
    "local chars = {'a', 'a', 'b', 'b', 'c', '(', ')', ' ', '1', 'x', '.', '%', '-', ']', '\\0', 'A', '_'}\n"
    "local function pattern()\n"
    "  local p = {}\n"
    "  for i = 1, R(0, 5) do p[#p + 1] = atoms[R(#atoms)] .. quants[R(#quants)] end\n"
    "  return table.concat(p)\n"
    "end\n"
    "local function subject()\n"
    "  local s = {}\n"
    "  for i = 1, R(0, 10) do s[#s + 1] = chars[R(#chars)] end\n"
    "  return table.concat(s)\n"
    "end\n"
    "local function show(ok, ...)\n"
    "  local t = {ok and 'ok' or 'error'}\n"
    "  for i = 1, select('#', ...) do\n"
    "    local v = select(i, ...)\n"
    "    t[#t + 1] = type(v) == 'string' and string.format('%q', v) or tostring(v)\n"
    "  end\n"
    "  return table.concat(t, ' ')\n"
    "end\n"
    "local function gm(s, p, init)\n"
    "  local t = {}\n"
    "  for a, b in string.gmatch(s, p, init) do\n"
    "    t[#t + 1] = tostring(a) .. '|' .. tostring(b)\n"
    "    if #t > 20 then break end\n"
    "  end\n"
    "  return table.concat(t, ',')\n"
    "end\n"
    "local reps = {'<%0>', '%1', '%%', 'x%2', '%', '', '%1%1', '%a', 7,\n"
    "  {a = 'A', b = false, ['1'] = 'one'}, function(a, b) return b and a or nil end,\n"
    "  function(a) if a == 'b' then return {} end return a .. a end}\n"
    "local lines = {}\n"
    "for i = 1, count do\n"
    "  local s, p = subject(), pattern()\n"
    "  local init = R(-4, 6)\n"
    "  local rep, max = reps[R(#reps)], R(0, 3) == 0 and R(0, 2) or nil\n"
    "  lines[#lines + 1] = string.format('%q %q %d: find %s | plain %s | match %s | gmatch %s | gsub %s', s, p, init,\n"
    "    show(pcall(string.find, s, p, init)), show(pcall(string.find, s, p, init, true)),\n"
    "    show(pcall(string.match, s, p, init)), show(pcall(gm, s, p, init)),\n"
    "    show(pcall(string.gsub, s, p, rep, max)))\n"
    "end\n"
    "local extra = {\n"
    "  show(pcall(string.rep, 'ab', 3, ',')), show(pcall(string.rep, '', 5, '-')), show(pcall(string.rep, 'x', 0)),\n"
    "  show(pcall(string.rep, 'x', -2, 'y')), show(pcall(string.rep, 'x', 2^31)), show(pcall(string.rep, '', 7)),\n"
    "  show(pcall(string.rep)), show(pcall(string.rep, 'x', 1.5)), show(pcall(string.rep, 'x', 2, {})),\n"
    "  show(pcall(string.gsub, 'abc', 'b', true)), show(pcall(string.find, 'a', 'a', 'x')),\n"
    "  show(pcall(string.find, ('x'):rep(300), ('(x)'):rep(33))), show(pcall(string.find, 'a', ('a?'):rep(300))),\n"
    "  show(('hello world'):find('o w')), show(('hello'):match('(h)(e)')), show(('abc'):gsub('%w', '%0%0')),\n"
    "}\n"
    "local function mv(...) local ok, t = pcall(table.move, ...)\n"
    "  if not ok then return 'error ' .. t end\n"
    "  local r = {} for i = -1, 8 do r[#r + 1] = tostring(t[i]) end return table.concat(r, ',') end\n"
    "local a = {1, 2, 3, 4, 5}\n"
    "for _, args in ipairs{{a, 1, 3, 2}, {a, 2, 5, 1}, {a, 1, 5, 3}, {a, 3, 1, 1}, {a, 1, 3, 1, {9, 9}},\n"
    "    {a, -1, 2, 4}, {a, 0, math.maxinteger, 1}, {a, math.mininteger, -1, 1}, {a, 1, 2, math.maxinteger},\n"
    "    {a, 1, 1, math.maxinteger}, {1, 1, 1, 1}, {a, 1, 1, 1, 'x'}, {a, 'x', 1, 1},\n"
    "    {setmetatable({}, {__index = function(_, k) return k * 10 end}), 1, 3, 1, {}},\n"
    "    {a, 1, 2, 1, setmetatable({}, {__newindex = function(t, k, v) rawset(t, k, v + 1) end})}} do\n"
    "  extra[#extra + 1] = mv(table.unpack(args, 1, 5))\n"
    "end\n"
    "return table.concat(lines, '\\n') .. '\\n' .. table.concat(extra, '\\n')\n";

/* The first line where 'a' and 'b' differ, in 'line' (cut); 0 when none. */
static int first_difference(const char *a, const char *b, char *line, size_t cap) {
  int n = 1;
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n') n++;
  if (!*a && !*b) return 0;
  while (a > b && a[-1] != '\n') a--;   /* never before the start: the strings agree up to here */
  snprintf(line, cap, "%.*s", (int)strcspn(a, "\n"), a);
  return n;
}

static void test_same_answers(LuaApi *api) {
  lua_State *stock = luaL_newstate(), *ours = luaapi_state(api);
  luaL_openlibs(stock);
  lua_pushstring(stock, generator);
  lua_setglobal(stock, "generator");
  lua_pushstring(ours, generator);
  lua_setglobal(ours, "generator");
  static const struct {
    int seed, count;
  } rounds[] = {{1, 4000}, {2, 4000}, {3, 4000}};
  for (size_t r = 0; r < sizeof rounds / sizeof rounds[0]; r++) {
    char chunk[64];
    snprintf(chunk, sizeof chunk, "return load(generator)(%d, %d)", rounds[r].seed, rounds[r].count);
    char *want = run(stock, chunk), *got = run(ours, chunk);
    char line[300] = "";
    int at = first_difference(got, want, line, sizeof line);
    ok(at == 0 && strlen(want) > 100000, "seed %d: %d cases, every answer Lua's own (%zu bytes)%s%s", rounds[r].seed,
       rounds[r].count, strlen(want), at ? "; first difference: " : "", line);
    free(want);
    free(got);
  }
  lua_close(stock);
}

/* ------------------------------------------------------------ stopped */

typedef struct Interrupter {
  LuaApi *api;
  double after;
  volatile int done;   /* the call returned */
} Interrupter;

/* Interrupt after a while, as Ctrl-C's handler does; a call still running
** 20 s later is a failure, not a hang of the test. */
static void *interrupter(void *arg) {
  Interrupter *it = arg;
  double t0 = clock_seconds();
  while (!it->done && clock_seconds() - t0 < it->after) usleep(10000);
  if (!it->done) luaapi_interrupt(it->api);
  while (!it->done && clock_seconds() - t0 < 20) usleep(10000);
  if (!it->done) {
    printf("not ok %d - a call was not stopped 20 s after the interrupt\n", tap_n + 1);
    printf("Bail out! a call the interrupt does not stop\n");
    fflush(stdout);
    _exit(1);
  }
  return NULL;
}

static void stopped(LuaApi *api, const char *what, const char *line) {
  Interrupter it = {api, 0.3, 0};
  pthread_t th;
  pthread_create(&th, NULL, interrupter, &it);
  double t0 = clock_seconds();
  out[0] = '\0';
  LuaApiStatus st = luaapi_eval_line(api, line);
  double took = clock_seconds() - t0;
  it.done = 1;
  pthread_join(th, NULL);
  luaapi_pump(api);   /* an interrupt that came just after the call is dropped */
  ok(st == LUAAPI_INTERRUPTED && strstr(out, "interrupted") && !strstr(out, "went on") && took < 5,
     "%s stops on an interrupt, and nothing after it runs (%.2f s, status %d): %s", what, took, (int)st, out);
}

static void test_stopped(LuaApi *api) {
  static const char *const calls[][2] = {
      {"a catastrophic string.find", "string.find(('a'):rep(40), ('a*'):rep(40) .. 'b')"},
      {"the same under pcall", "pcall(string.find, ('a'):rep(40), ('a*'):rep(40) .. 'b') print('went on')"},
      {"string.match", "string.match(('a'):rep(40), ('a*'):rep(40) .. 'b')"},
      {"a gmatch iterator", "for m in string.gmatch(('a'):rep(40), ('a-'):rep(40) .. 'b') do end"},
      {"string.gsub", "string.gsub(('a'):rep(40), ('a*'):rep(40) .. 'b', '')"},
      {"a long plain find", "string.find(('a'):rep(4e6), ('a'):rep(2e6) .. 'b', 1, true)"},
      {"table.move over 2^40 slots", "table.move({}, 1, 2^40, 2)"},
      {"table.move back to front", "table.move({}, 1, 2^40, 3)"},
  };
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) stopped(api, calls[i][0], calls[i][1]);
  out[0] = '\0';
  double t0 = clock_seconds();
  ok(luaapi_eval_line(api, "print(#string.rep('', 2^50), #string.rep('', 2^50, ''))") == LUAAPI_OK &&
         strcmp(out, "0\t0\n") == 0 && clock_seconds() - t0 < 5,
     "an empty string 2^50 times is one at once: %s", out);
  out[0] = '\0';
  ok(luaapi_eval_line(api, "print(select(2, string.find(('a'):rep(2e6) .. 'b', ('a*'):rep(3) .. 'b')))") == LUAAPI_OK &&
         strcmp(out, "2000001\n") == 0,
     "without an interrupt a long match runs to its end: %s", out);
}

int main(void) {
  Err err;
  Lab *lab = lab_new(&err);
  Host host = {.acquire = h_acquire, .release = h_release, .submit = h_submit, .poll = h_poll,
               .cancel = h_cancel, .inline_steps = 1, .ud = lab};
  LuaApiOptions lo = {.out = capture};
  LuaApi *api = lab ? luaapi_new(&host, &lo, &err) : NULL;
  if (!api) return printf("Bail out! %s\n", err.msg), 1;
  test_same_answers(api);
  test_stopped(api);
  luaapi_free(api);
  lab_free(lab);
  return tap_done();
}
