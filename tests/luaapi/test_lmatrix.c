/*
** test_lmatrix.c -- lab.matrix's views of the lab's memory, as the lab's
** hooks lend them (lmatrix_view, lmatrix_expire): a script reads a view
** and writes through a writable one into the C array; a read-only view
** serves every method that only reads and refuses every write, naming
** itself; once expired (its memory then freed here, so that a sanitizer
** build catches any read), every method, field and operator raises "...
** was valid only during its hook call", and a copy taken before stays.
** And lmatrix_new, lmatrix_test and lmatrix_check called from C.
*/
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "luaapi/lmatrix.h"
#include "luaapi/luaapi.h"
#include "tap.h"

/* A host that lends the lab and nothing more: matrices touch no run, and
** no script here waits for a step. */
static Lab *h_acquire(Host *h) { return h->ud; }
static void h_release(Host *h) {}

/* What the last chunk returned (a string) or its error's message. */
static char said[2048];

/* Run 'chunk' in 'L': 1 when it ran, 0 when it raised; 'said' gets its
** result or the message. */
static int run(lua_State *L, const char *chunk) {
  int top = lua_gettop(L);
  int rc = luaL_loadstring(L, chunk);
  if (rc == LUA_OK) rc = lua_pcall(L, 0, 1, 0);
  const char *s = luaL_tolstring(L, -1, NULL);
  snprintf(said, sizeof said, "%s", s);
  lua_settop(L, top);
  return rc == LUA_OK;
}

/* Run 'chunk', which must raise a message containing 'want'. */
static int raises(lua_State *L, const char *chunk, const char *want) {
  return !run(L, chunk) && strstr(said, want) != NULL;
}

static void test_writable_view(lua_State *L, float *grad) {
  lmatrix_view(L, grad, 2, 3, 1, "g.E_in");
  lua_setglobal(L, "g");
  ok(run(L, "return string.format('%d %d %g %g', g.rows, g.cols, g:get(2, 3), g:sum())") &&
         strcmp(said, "2 3 6 21") == 0,
     "a script reads a view of a C array: %s", said);
  ok(run(L, "g:set(1, 1, 10) g:scale(2) g:add(lab.matrix(2, 3, 1)) return 'done'") && grad[0] == 21 && grad[5] == 13,
     "m:set, m:scale and m:add through a writable view land in the C array: %g %g (%s)", grad[0], grad[5], said);
  ok(run(L, "keep = g:copy() keep:set(1, 1, 0) return tostring(keep)") && grad[0] == 21 &&
         strcmp(said, "matrix 2x3 [0 5 7; 9 11 13]") == 0,
     "m:copy() of a view is a matrix of its own: %s", said);
  ok(run(L, "local u, s, v = g:svd() return string.format('%g %s %s', (g * g:t()):sum(), tostring(g:center()), "
            "tostring(g))") &&
         strstr(said, "(g.E_in)") != NULL,
     "a view serves the methods that make new matrices: %s", said);
}

static void test_read_only_view(lua_State *L, float *hidden) {
  lmatrix_view(L, hidden, 2, 2, 0, "h.hidden");
  lua_setglobal(L, "h");
  ok(run(L, "local x = h:lstsq(h) return string.format('%g %g %g %g %s', h:get(2, 2), (h + h):sum(), h:mul(h):get(1, 1), "
            "x:get(1, 1), tostring(h))") &&
         strcmp(said, "4 20 7 1 matrix 2x2 (h.hidden, read-only) [1 2; 3 4]") == 0,
     "a read-only view reads, and serves every method that only reads: %s", said);
  static const char *const writes[][2] = {
    {"h:set(1, 1, 0)", "m:set: h.hidden is read-only"},
    {"h:scale(2)", "m:scale: h.hidden is read-only"},
    {"h:add(h)", "m:add: h.hidden is read-only"},
  };
  for (size_t k = 0; k < sizeof writes / sizeof writes[0]; k++)
    ok(raises(L, writes[k][0], writes[k][1]), "%s is refused: %s", writes[k][0], said);
  ok(hidden[0] == 1 && hidden[3] == 4, "and the C array is as it was");
  ok(run(L, "local c = lab.matrix(2, 2) c:add(h, 2) return c:sum()") && strcmp(said, "20.0") == 0,
     "a read-only view is fine as the other operand: %s", said);
}

/* Every method with the expired view as 'self', and as the other operand
** of those that take two matrices; every field; every operator. */
static const char expired_probe[] =
    "local who, name = ...\n"
    "local want = name .. ' was valid only during its hook call'\n"
    "local v, meta, bad, tried = _G[who], getmetatable(keep), {}, 0\n"
    "local function must_fail(what, f)\n"
    "  tried = tried + 1\n"
    "  local okay, err = pcall(f)\n"
    "  if okay or not tostring(err):find(want, 1, true) then bad[#bad + 1] = what .. ': ' .. tostring(err) end\n"
    "end\n"
    "for name, fn in pairs(meta.__methods) do\n"
    "  must_fail('v:' .. name, function() return fn(v, keep) end)\n"
    "  must_fail('v.' .. name, function() return v[name] end)\n"
    "end\n"
    "for _, name in ipairs{'add', 'mul', 'hadamard', 'dot', 'cosine_rows', 'lstsq'} do\n"
    "  must_fail('keep:' .. name .. '(v)', function() return meta.__methods[name](keep, v) end)\n"
    "end\n"
    "for _, name in ipairs(meta.__fields) do must_fail('v.' .. name, function() return v[name] end) end\n"
    "must_fail('v + keep', function() return v + keep end)\n"
    "must_fail('keep - v', function() return keep - v end)\n"
    "must_fail('v * keep', function() return v * keep end)\n"
    "must_fail('2 * v', function() return 2 * v end)\n"
    "must_fail('-v', function() return -v end)\n"
    "return #bad == 0 and 'all ' .. tried .. ' raised' or table.concat(bad, '; ')\n";

/* The probe on the view in global 'who', named 'name' in its errors. */
static int probe_expired(lua_State *L, const char *who, const char *name) {
  int top = lua_gettop(L);
  int rc = luaL_loadstring(L, expired_probe);
  lua_pushstring(L, who);
  lua_pushstring(L, name);
  if (rc == LUA_OK) rc = lua_pcall(L, 2, 1, 0);
  snprintf(said, sizeof said, "%s", lua_tostring(L, -1));
  lua_settop(L, top);
  return rc == LUA_OK && strncmp(said, "all ", 4) == 0;
}

static int call_check(lua_State *L) {
  lmatrix_check(L, 1);
  return 0;
}

static void test_expired(lua_State *L, float *grad, float *hidden) {
  LMatrix *views[2];
  const char *names[] = {"g", "h"};
  for (int k = 0; k < 2; k++) {
    lua_getglobal(L, names[k]);
    views[k] = lmatrix_test(L, -1);
    lua_pop(L, 1);
  }
  ok(views[0] && views[1], "lmatrix_test finds both views");
  if (!views[0] || !views[1]) return;
  lmatrix_expire(views[0]);
  lmatrix_expire(views[1]);
  free(grad);     /* what the lab does once the hook call has ended */
  free(hidden);
  ok(probe_expired(L, "g", "g.E_in"), "every method, field and operator of an expired view raises, naming it: %s", said);
  ok(probe_expired(L, "h", "h.hidden"), "the read-only one too: %s", said);
  ok(run(L, "return tostring(g)") && strcmp(said, "matrix 2x3 (g.E_in, expired)") == 0,
     "tostring of an expired view says so, and reads nothing: %s", said);
  ok(run(L, "return tostring(keep)") && strcmp(said, "matrix 2x3 [0 5 7; 9 11 13]") == 0,
     "the copy taken before stays: %s", said);
  lua_pushcfunction(L, call_check);
  lua_getglobal(L, "g");
  ok(lua_pcall(L, 1, 0, 0) != LUA_OK && strstr(lua_tostring(L, -1), "g.E_in was valid only during its hook call"),
     "lmatrix_check from C raises for it: %s", lua_tostring(L, -1));
  lua_pop(L, 1);
}

static int new_zero_rows(lua_State *L) {
  lmatrix_new(L, 0, 2);
  return 1;
}

static int new_too_large(lua_State *L) {
  lmatrix_new(L, 100000, 100000);
  return 1;
}

static void test_new_from_c(lua_State *L) {
  int top = lua_gettop(L);
  LMatrix *m = lmatrix_new(L, 3, 2);
  int zeros = 1;
  for (int k = 0; k < 6; k++) zeros &= m->data[k] == 0;
  ok(m->rows == 3 && m->cols == 2 && zeros && m->writable && !m->what, "lmatrix_new: a 3x2 matrix of zeros, owned");
  ok(lmatrix_test(L, -1) == m && lmatrix_check(L, -1) == m, "lmatrix_test and lmatrix_check find it");
  lmatrix_expire(m);
  ok(!m->expired && m->data, "lmatrix_expire leaves an owned matrix as it is");
  lua_newtable(L);
  ok(lmatrix_test(L, -1) == NULL, "lmatrix_test of a table is NULL");
  static const struct {
    lua_CFunction fn;
    const char *want;
  } refusals[] = {
    {new_zero_rows, "lab.matrix: a 0x2 matrix has no numbers"},
    {new_too_large, "lab.matrix: a 100000x100000 matrix would hold 10000000000 numbers"},
  };
  for (size_t k = 0; k < sizeof refusals / sizeof refusals[0]; k++) {
    lua_pushcfunction(L, refusals[k].fn);
    ok(lua_pcall(L, 0, 1, 0) != LUA_OK && strstr(lua_tostring(L, -1), refusals[k].want),
       "lmatrix_new refuses: %s", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

int main(void) {
  Err err;
  Lab *lab = lab_new(&err);
  Host host = {.acquire = h_acquire, .release = h_release, .inline_steps = 1, .ud = lab};
  LuaApiOptions lo = {0};
  LuaApi *api = lab ? luaapi_new(&host, &lo, &err) : NULL;
  float *grad = malloc(6 * sizeof *grad), *hidden = malloc(4 * sizeof *hidden);
  if (!api || !grad || !hidden) return printf("Bail out! %s\n", api ? "out of memory" : err.msg), 1;
  for (int k = 0; k < 6; k++) grad[k] = (float)(k + 1);
  for (int k = 0; k < 4; k++) hidden[k] = (float)(k + 1);
  lua_State *L = luaapi_state(api);
  test_writable_view(L, grad);
  test_read_only_view(L, hidden);
  test_expired(L, grad, hidden);
  test_new_from_c(L);
  luaapi_free(api);
  lab_free(lab);
  return tap_done();
}
