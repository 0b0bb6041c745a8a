/*
** lmatrix.c -- lab.matrix: the matrix userdata 'tielab.matrix', its
** memory, its constructors, views of the lab's memory, element access,
** copies, and the metatable that puts the methods together. The
** arithmetic is in lmatrix_ops.c, the decompositions in lmatrix_lapack.c.
**
** An owned matrix keeps its floats in its own userdata, after the header,
** so that they count against the heap cap (--lua-mem) as any Lua value
** does. One that would not fit is refused before anything is allocated,
** with its shape and its size in the message, never half built. A view's
** header points at memory the lab owns; once the lab expires it, every use
** raises, and its pointer is gone, so nothing can read what was freed.
*/
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/num.h"
#include "base/sysmem.h"
#include "luaapi/linternal.h"

/* BLAS and LAPACK count in int: a matrix holds at most INT_MAX numbers. */
#define LMATRIX_MAX_COUNT INT_MAX
/* Below this a block is not worth reading /proc for: if the machine
** refuses it, the allocator fails and Lua raises "not enough memory". */
#define LMATRIX_ASK_MACHINE ((size_t)64 << 20)
/* What __tostring shows of the numbers. */
#define LMATRIX_SHOW_ROWS 3
#define LMATRIX_SHOW_COLS 4

size_t lmatrix_count(const LMatrix *m) { return (size_t)m->rows * (size_t)m->cols; }

static int owned(const LMatrix *m) { return m->data == (const float *)(m + 1); }

/* ------------------------------------------------------------ memory */

/* Whether 'bytes' more fit under the heap cap, which under the sandbox the
** script's runs share. */
static int heap_fits(const LuaApi *api, size_t bytes) {
  size_t used = api->mem_used + api->own_runs_bytes;
  return !api->mem_cap || (bytes <= api->mem_cap && used <= api->mem_cap - bytes);
}

/* Raise unless a block of 'bytes' ('what': "a 3x4 matrix") may be had:
** within the heap cap, and, for a large one, within what this process can
** still get from the machine (which overcommits: malloc would say yes and
** the kernel kill the lab later). */
static void check_room(lua_State *L, size_t bytes, const char *fname, const char *what) {
  LuaApi *api = lapi_get(L);
  char need[NUM_TEXT_MAX], left[NUM_TEXT_MAX];
  if (!heap_fits(api, bytes)) {
    lua_gc(L, LUA_GCCOLLECT);   /* the allocator would collect before it refused */
    if (!heap_fits(api, bytes)) {
      size_t used = api->mem_used + api->own_runs_bytes;
      lua_Integer mib = (lua_Integer)((api->mem_cap + (1 << 20) - 1) >> 20);
      luaL_error(L, "%s: %s needs %s, more than the %s left of the Lua heap (--lua-mem %I MiB)", fname, what,
                 num_bytes(need, sizeof need, bytes),
                 num_bytes(left, sizeof left, used < api->mem_cap ? api->mem_cap - used : 0), mib);
    }
  }
  if (bytes < LMATRIX_ASK_MACHINE) return;
  char whole[160];
  Err err;
  snprintf(whole, sizeof whole, "%s: %s", fname, what);
  if (sysmem_check(bytes, whole, &err) < 0) luaL_error(L, "%s", err.msg);
}

void *lmatrix_scratch(lua_State *L, size_t bytes, const char *fname) {
  check_room(L, bytes, fname, "its workspace");
  return lua_newuserdatauv(L, bytes, 0);
}

LMatrix *lmatrix_alloc(lua_State *L, int rows, int cols, const char *fname) {
  char what[64];
  snprintf(what, sizeof what, "a %dx%d matrix", rows, cols);
  if (rows < 1 || cols < 1) luaL_error(L, "%s: %s has no numbers (the sizes start at 1)", fname, what);
  uint64_t count = (uint64_t)rows * (uint64_t)cols;
  if (count > LMATRIX_MAX_COUNT) {
    char need[NUM_TEXT_MAX];
    luaL_error(L, "%s: %s would hold %I numbers (%s), more than the %d a matrix may hold", fname, what,
               (lua_Integer)count, num_bytes(need, sizeof need, count * sizeof(float)), LMATRIX_MAX_COUNT);
  }
  size_t bytes = sizeof(LMatrix) + (size_t)count * sizeof(float);
  check_room(L, bytes, fname, what);
  LMatrix *m = lua_newuserdatauv(L, bytes, 0);
  *m = (LMatrix){.rows = rows, .cols = cols, .data = (float *)(m + 1), .writable = 1};
  memset(m->data, 0, (size_t)count * sizeof(float));
  luaL_setmetatable(L, LMATRIX_META);
  return m;
}

LMatrix *lmatrix_new(lua_State *L, int rows, int cols) { return lmatrix_alloc(L, rows, cols, "lab.matrix"); }

LMatrix *lmatrix_copy(lua_State *L, const LMatrix *a, const char *fname) {
  LMatrix *m = lmatrix_alloc(L, a->rows, a->cols, fname);
  memcpy(m->data, a->data, lmatrix_count(a) * sizeof(float));
  return m;
}

/* ------------------------------------------------------------ views */

LMatrix *lmatrix_view(lua_State *L, float *data, int rows, int cols, int writable, const char *what) {
  if (rows < 1 || cols < 1 || (uint64_t)rows * (uint64_t)cols > LMATRIX_MAX_COUNT)
    luaL_error(L, "lmatrix_view: %s cannot be %dx%d", what ? what : "a view", rows, cols);
  LMatrix *m = lua_newuserdatauv(L, sizeof *m, 0);
  *m = (LMatrix){.rows = rows, .cols = cols, .data = data, .writable = writable != 0, .what = what ? what : "a view"};
  luaL_setmetatable(L, LMATRIX_META);
  return m;
}

void lmatrix_expire(LMatrix *m) {
  if (owned(m)) return;
  m->expired = 1;
  m->writable = 0;
  m->data = NULL;
}

LMatrix *lmatrix_test(lua_State *L, int idx) { return luaL_testudata(L, idx, LMATRIX_META); }

LMatrix *lmatrix_check(lua_State *L, int idx) {
  LMatrix *m = luaL_checkudata(L, idx, LMATRIX_META);
  if (m->expired) luaL_error(L, "%s was valid only during its hook call", m->what);
  return m;
}

LMatrix *lmatrix_writable(lua_State *L, int idx, const char *fname) {
  LMatrix *m = lmatrix_check(L, idx);
  if (!m->writable) luaL_error(L, "%s: %s is read-only", fname, m->what);
  return m;
}

void lmatrix_same_shape(lua_State *L, const LMatrix *a, const LMatrix *b, const char *fname) {
  if (a->rows != b->rows || a->cols != b->cols)
    luaL_error(L, "%s: shapes differ (%dx%d and %dx%d)", fname, a->rows, a->cols, b->rows, b->cols);
}

/* ------------------------------------------------------------ lab.matrix */

/* A size argument: a whole number from 1 to INT_MAX. */
static int size_arg(lua_State *L, int idx, const char *which) {
  int exact;
  lua_Integer n = lua_tointegerx(L, idx, &exact);
  if (!exact || lua_type(L, idx) != LUA_TNUMBER || n < 1 || n > INT_MAX)
    luaL_error(L, "lab.matrix: %s must be a whole number from 1 to %d, not %s", which, INT_MAX,
               luaL_tolstring(L, idx, NULL));
  return (int)n;
}

/* The length of the row at the top of the stack, which must be a table. */
static lua_Integer row_length(lua_State *L, lua_Integer i) {
  if (!lua_istable(L, -1)) luaL_error(L, "lab.matrix: row %I is a %s, not a table of numbers", i, luaL_typename(L, -1));
  return luaL_len(L, -1);
}

/* Copy row 'i' (the table on top of the stack, 'cols' long) into 'out'. */
static void read_row(lua_State *L, lua_Integer i, int cols, float *out) {
  lua_Integer n = row_length(L, i);
  if (n != cols) luaL_error(L, "lab.matrix: ragged rows: row %I has length %I, row 1 has length %d", i, n, cols);
  for (int j = 0; j < cols; j++) {
    if (lua_geti(L, -1, j + 1) != LUA_TNUMBER)
      luaL_error(L, "lab.matrix: row %I, column %d is a %s, not a number", i, j + 1, luaL_typename(L, -1));
    out[j] = (float)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
}

/* lab.matrix{{...}, {...}}: rows of numbers, all of one length. */
static int from_rows(lua_State *L) {
  lua_Integer rows = luaL_len(L, 1);
  if (rows < 1) return luaL_error(L, "lab.matrix: no rows (give a table of rows of numbers)");
  lua_geti(L, 1, 1);
  lua_Integer cols = row_length(L, 1);
  lua_pop(L, 1);
  if (cols < 1) return luaL_error(L, "lab.matrix: row 1 is empty");
  if (rows > INT_MAX || cols > INT_MAX) return luaL_error(L, "lab.matrix: %I rows of %I numbers is too many", rows, cols);
  LMatrix *m = lmatrix_alloc(L, (int)rows, (int)cols, "lab.matrix");
  size_t work = 0;
  for (lua_Integer i = 1; i <= rows; i++) {
    lua_geti(L, 1, i);
    read_row(L, i, m->cols, m->data + (size_t)(i - 1) * m->cols);
    lua_pop(L, 1);
    lapi_spend(L, lapi_get(L), &work, (size_t)cols);
  }
  return 1;
}

/* lab.matrix(rows, cols [, value]) or lab.matrix{rows}. */
static int lmatrix_lab_matrix(lua_State *L) {
  if (lua_istable(L, 1)) return from_rows(L);
  int rows = size_arg(L, 1, "rows"), cols = size_arg(L, 2, "cols");
  float value = (float)luaL_optnumber(L, 3, 0);
  LMatrix *m = lmatrix_alloc(L, rows, cols, "lab.matrix");
  if (value != 0)
    for (size_t k = 0; k < lmatrix_count(m); k++) m->data[k] = value;
  return 1;
}

/* ------------------------------------------------------------ access and copies */

/* Index argument 'arg' (1-based) of 'fname', checked against 1..n. */
static int index_arg(lua_State *L, int arg, int n, const char *what, const char *fname) {
  lua_Integer i = luaL_checkinteger(L, arg);
  if (i < 1 || i > n) luaL_error(L, "%s: %s %I is outside 1..%d", fname, what, i, n);
  return (int)i - 1;
}

/* The element at (i, j), arguments 2 and 3. */
static float *element(lua_State *L, LMatrix *m, const char *fname) {
  int i = index_arg(L, 2, m->rows, "row", fname);
  int j = index_arg(L, 3, m->cols, "column", fname);
  return m->data + (size_t)i * m->cols + j;
}

static int lmatrix_get(lua_State *L) {
  LMatrix *m = lmatrix_check(L, 1);
  lua_pushnumber(L, *element(L, m, "m:get"));
  return 1;
}

static int lmatrix_set(lua_State *L) {
  LMatrix *m = lmatrix_writable(L, 1, "m:set");
  float *x = element(L, m, "m:set");
  *x = (float)luaL_checknumber(L, 4);
  lua_settop(L, 1);
  return 1;
}

static int lmatrix_copy_method(lua_State *L) {
  lmatrix_copy(L, lmatrix_check(L, 1), "m:copy");
  return 1;
}

/* m:t(): a new matrix, the transpose. */
static int lmatrix_t(lua_State *L) {
  LMatrix *a = lmatrix_check(L, 1);
  LMatrix *t = lmatrix_alloc(L, a->cols, a->rows, "m:t");
  for (int i = 0; i < a->rows; i++)
    for (int j = 0; j < a->cols; j++) t->data[(size_t)j * t->cols + i] = a->data[(size_t)i * a->cols + j];
  return 1;
}

/* m:row(i): a new 1 x cols matrix, a copy of row i. */
static int lmatrix_row(lua_State *L) {
  LMatrix *a = lmatrix_check(L, 1);
  int i = index_arg(L, 2, a->rows, "row", "m:row");
  LMatrix *r = lmatrix_alloc(L, 1, a->cols, "m:row");
  memcpy(r->data, a->data + (size_t)i * a->cols, (size_t)a->cols * sizeof(float));
  return 1;
}

/* m:totable(): {{row 1}, {row 2}, ...}. */
static int lmatrix_totable(lua_State *L) {
  LMatrix *m = lmatrix_check(L, 1);
  size_t work = 0;
  lua_createtable(L, m->rows, 0);
  for (int i = 0; i < m->rows; i++) {
    const float *row = m->data + (size_t)i * m->cols;
    lua_createtable(L, m->cols, 0);
    for (int j = 0; j < m->cols; j++) {
      lua_pushnumber(L, row[j]);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
    lapi_spend(L, lapi_get(L), &work, (size_t)m->cols);
  }
  return 1;
}

/* ------------------------------------------------------------ metamethods */

static int field_rows(const LMatrix *m) { return m->rows; }
static int field_cols(const LMatrix *m) { return m->cols; }

static const struct {
  const char *name;
  int (*get)(const LMatrix *m);
} fields[] = {{"rows", field_rows}, {"cols", field_cols}};

/* m.rows, m.cols, then the methods (upvalue 1). An expired view raises for
** any of them, so that a script learns at its first touch. */
static int lmatrix_index(lua_State *L) {
  LMatrix *m = lmatrix_check(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING)
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
      if (strcmp(lua_tostring(L, 2), fields[k].name) == 0) {
        lua_pushinteger(L, fields[k].get(m));
        return 1;
      }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

/* "matrix 2x3 [1 2 3; 4 5 6]": the corner of a large one, then "...";
** a view says its name, and an expired one no numbers. */
static int lmatrix_tostring(lua_State *L) {
  LMatrix *m = luaL_checkudata(L, 1, LMATRIX_META);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "matrix %dx%d", m->rows, m->cols);
  luaL_addvalue(&b);
  if (!owned(m)) {
    lua_pushfstring(L, " (%s%s)", m->what, m->expired ? ", expired" : m->writable ? "" : ", read-only");
    luaL_addvalue(&b);
  }
  if (m->expired) {
    luaL_pushresult(&b);
    return 1;
  }
  luaL_addstring(&b, " [");
  for (int i = 0; i < m->rows && i < LMATRIX_SHOW_ROWS; i++) {
    if (i > 0) luaL_addstring(&b, "; ");
    for (int j = 0; j < m->cols && j < LMATRIX_SHOW_COLS; j++) {
      char num[32];
      snprintf(num, sizeof num, "%s%.4g", j > 0 ? " " : "", m->data[(size_t)i * m->cols + j]);
      luaL_addstring(&b, num);
    }
    if (m->cols > LMATRIX_SHOW_COLS) luaL_addstring(&b, " ...");
  }
  luaL_addstring(&b, m->rows > LMATRIX_SHOW_ROWS ? "; ...]" : "]");
  luaL_pushresult(&b);
  return 1;
}

/* ------------------------------------------------------------ registering */

static const luaL_Reg access_methods[] = {
  {"get", lmatrix_get}, {"set", lmatrix_set},         {"copy", lmatrix_copy_method},
  {"t", lmatrix_t},     {"row", lmatrix_row},         {"totable", lmatrix_totable},
  {NULL, NULL}};

/* The metatable on top of the stack gets the methods of every matrix file
** (__methods, and __index over them and the fields), __fields, __tostring
** and the operators, and is sealed. */
static void fill_metatable(lua_State *L) {
  const luaL_Reg *const method_lists[] = {access_methods, lmatrix_ops_methods, lmatrix_lapack_methods};
  lua_newtable(L);
  for (size_t k = 0; k < sizeof method_lists / sizeof method_lists[0]; k++) luaL_setfuncs(L, method_lists[k], 0);
  lapi_set_methods(L, LMATRIX_META, lmatrix_index);
  lua_createtable(L, sizeof fields / sizeof fields[0], 0);
  for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
    lua_pushstring(L, fields[k].name);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "__fields");
  lua_pushcfunction(L, lmatrix_tostring);
  lua_setfield(L, -2, "__tostring");
  luaL_setfuncs(L, lmatrix_ops_meta, 0);
  lapi_seal_metatable(L, -1);
}

void lmatrix_register(lua_State *L) {
  if (luaL_newmetatable(L, LMATRIX_META)) fill_metatable(L);
  lua_pop(L, 1);
  lua_pushcfunction(L, lmatrix_lab_matrix);
  lua_setfield(L, -2, "matrix");
}
