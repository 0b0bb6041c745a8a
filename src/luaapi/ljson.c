/*
** ljson.c -- lab.json: JSON text to and from Lua values, through jansson,
** so that a script keeps records a later process (or another program)
** reads back exactly.
**
**   local text = lab.json.encode(value [, {indent = 2}])
**   local value = lab.json.decode(text)
**   lab.json.null   -- JSON's null, both ways (nil cannot sit in a table)
**
** How numbers and tables map, and how memory is kept and charged:
** docs/architecture.md, 'lab.json'.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "core/jsonmem.h"
#include "luaapi/linternal.h"

#define LJSON_BOX_META "tielab.json.box"
#define LJSON_MAX_DEPTH 1000   /* nesting of tables: far past any record, far below the C stack */
#define LJSON_PATH_MAX 256

/* The null sentinel: the address of this byte, as a light userdata. */
static char ljson_null_tag;

typedef struct JsonBox {
  json_t *root;
  char *text;    /* the encoded text, until pushed */
  size_t len, cap;
} JsonBox;

/* Collect the script's garbage: asked before jansson is refused a block,
** as Lua's allocator collects before it fails. */
static void ljson_collect(void *L) { lua_gc(L, LUA_GCCOLLECT); }

/* The budget for jansson: the Lua heap's counter, and what the heap may
** hold (less the script's runs under the sandbox, as for the heap). */
static void ljson_budget(lua_State *L, JsonMem *m) {
  LuaApi *api = lapi_get(L);
  size_t cap = api->mem_cap, runs = api->own_runs_bytes;
  *m = (JsonMem){.used = &api->mem_used, .limit = !cap ? 0 : cap > runs ? cap - runs : 1,
                 .reclaim = ljson_collect, .ctx = L};
}

/* The error for a refused block, in the words of the heap's cap. */
static int ljson_nomem(lua_State *L, const char *fn) {
  lua_Integer mib = (lua_Integer)((lapi_get(L)->mem_cap + (1 << 20) - 1) >> 20);
  return luaL_error(L, "lab.json.%s: not enough memory (--lua-mem %I MiB)", fn, mib);
}

/* Free what 'b' holds, in a window: its blocks were counted. */
static void box_free(lua_State *L, JsonBox *b) {
  JsonMem m;
  ljson_budget(L, &m);
  jsonmem_enter(&m);
  json_decref(b->root);
  jsonmem_free(b->text);
  jsonmem_leave(&m);
  *b = (JsonBox){NULL, NULL, 0, 0};
}

static int box_gc(lua_State *L) {
  box_free(L, luaL_checkudata(L, 1, LJSON_BOX_META));
  return 0;
}

static JsonBox *push_box(lua_State *L) {
  JsonBox *b = lua_newuserdatauv(L, sizeof *b, 0);
  *b = (JsonBox){NULL, NULL, 0, 0};
  if (luaL_newmetatable(L, LJSON_BOX_META)) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
    lapi_seal_metatable(L, -1);
  }
  lua_setmetatable(L, -2);
  return b;
}

/* ------------------------------------------------------------ encode */

/* Where the encoder is in the value, for its messages: "[3].val_ppl". */
typedef struct Encoder {
  lua_State *L;
  int seen;                   /* stack index of the tables being encoded (cycles) */
  int depth;
  char path[LJSON_PATH_MAX];
  size_t n;
  JsonMem mem;                /* what the tree is charged to */
} Encoder;

static int enc_error(Encoder *e, const char *what) {
  if (e->n == 0) return luaL_error(e->L, "lab.json.encode: %s", what);
  return luaL_error(e->L, "lab.json.encode: %s (at %s)", what, e->path);
}

static size_t enc_push_index(Encoder *e, lua_Integer i) {
  size_t old = e->n;
  int k = snprintf(e->path + e->n, sizeof e->path - e->n, "[%lld]", (long long)i);
  if (k > 0) e->n += (size_t)k < sizeof e->path - e->n ? (size_t)k : sizeof e->path - e->n - 1;
  return old;
}

static size_t enc_push_key(Encoder *e, const char *key) {
  size_t old = e->n;
  int k = snprintf(e->path + e->n, sizeof e->path - e->n, "%s%s", e->n ? "." : "", key);
  if (k > 0) e->n += (size_t)k < sizeof e->path - e->n ? (size_t)k : sizeof e->path - e->n - 1;
  return old;
}

static void enc_pop(Encoder *e, size_t old) {
  e->n = old;
  e->path[old] = '\0';
}

/* The kind of the table at 'idx': its length n when its keys are exactly
** 1..n (n > 0), 0 when they are all strings (or none), and an error else. */
static lua_Integer table_kind(Encoder *e, int idx) {
  lua_State *L = e->L;
  lua_Integer count = 0, strings = 0, max = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    count++;
    if (lua_type(L, -1) == LUA_TSTRING) strings++;
    else if (lua_isinteger(L, -1) && lua_tointeger(L, -1) > 0) {
      if (lua_tointeger(L, -1) > max) max = lua_tointeger(L, -1);
    } else {
      lua_pop(L, 1);
      return enc_error(e, "a table key that is neither a string nor an array index");
    }
  }
  if (strings == count) return 0;
  if (strings > 0) return enc_error(e, "a table with both string keys and array indices");
  if (max != count) return enc_error(e, "an array with holes (its keys are not 1..n)");
  return count;
}

/* Raise for a Lua value that has no JSON form. */
static void enc_check(Encoder *e, int idx) {
  lua_State *L = e->L;
  switch (lua_type(L, idx)) {
  case LUA_TNIL: case LUA_TBOOLEAN: case LUA_TSTRING: case LUA_TTABLE: return;
  case LUA_TNUMBER: {
    double x = lua_tonumber(L, idx);
    if (!lua_isinteger(L, idx) && !isfinite(x))
      enc_error(e, x != x ? "NaN has no JSON form" : "an infinity has no JSON form");
    return;
  }
  case LUA_TLIGHTUSERDATA:
    if (lua_touserdata(L, idx) != &ljson_null_tag) enc_error(e, "a light userdata has no JSON form");
    return;
  default: {
    char what[64];
    snprintf(what, sizeof what, "a %s has no JSON form", luaL_typename(L, idx));
    enc_error(e, what);
  }
  }
}

/* The jansson value for the checked Lua value at 'idx' ('kind' as
** table_kind says): jansson calls and reads of the stack only, so that it
** runs in a window. */
static json_t *enc_make(lua_State *L, int idx, lua_Integer kind) {
  size_t len;
  const char *s;
  switch (lua_type(L, idx)) {
  case LUA_TBOOLEAN: return json_boolean(lua_toboolean(L, idx));
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) return json_integer((json_int_t)lua_tointeger(L, idx));
    return json_real(lua_tonumber(L, idx));
  case LUA_TSTRING:
    s = lua_tolstring(L, idx, &len);
    return json_stringn(s, len);
  case LUA_TTABLE: return kind > 0 ? json_array() : json_object();
  default: return json_null();   /* nil, lab.json.null */
  }
}

/* A new jansson value for the Lua value at 'idx': a scalar, or, for a
** table, an empty array or object that enc_fill fills once the caller has
** attached it (so that nothing is left unowned when an error jumps out). */
static json_t *enc_node(Encoder *e, int idx) {
  enc_check(e, idx);
  lua_Integer kind = lua_istable(e->L, idx) ? table_kind(e, idx) : 0;
  jsonmem_enter(&e->mem);
  json_t *j = enc_make(e->L, idx, kind);
  jsonmem_leave(&e->mem);
  if (!j && e->mem.refused) ljson_nomem(e->L, "encode");
  if (!j) enc_error(e, lua_type(e->L, idx) == LUA_TSTRING ? "a string that is not UTF-8" : "out of memory");
  return j;
}

static void enc_fill(Encoder *e, int idx, json_t *j);

/* Attach the value at 'idx' to 'parent' (under 'key', or appended when
** 'key' is NULL), then fill it when it is a table. */
static void enc_member(Encoder *e, int idx, json_t *parent, const char *key) {
  json_t *v = enc_node(e, idx);
  jsonmem_enter(&e->mem);
  int rc = key ? json_object_set_new(parent, key, v) : json_array_append_new(parent, v);
  jsonmem_leave(&e->mem);
  if (rc < 0 && e->mem.refused) ljson_nomem(e->L, "encode");
  if (rc < 0) enc_error(e, key ? "a key that is not UTF-8" : "out of memory");
  if (lua_istable(e->L, idx)) enc_fill(e, idx, v);
}

/* Fill the array or object 'j' from the table at 'idx'. */
static void enc_fill(Encoder *e, int idx, json_t *j) {
  lua_State *L = e->L;
  if (e->depth >= LJSON_MAX_DEPTH) enc_error(e, "tables nested deeper than 1000");
  lua_pushvalue(L, idx);
  if (lua_rawget(L, e->seen) != LUA_TNIL) enc_error(e, "a table that contains itself");
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, e->seen);
  luaL_checkstack(L, 4, "lab.json.encode: tables nested too deep");
  e->depth++;
  if (json_is_array(j)) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer i = 1; i <= n; i++) {
      size_t old = enc_push_index(e, i);
      lua_rawgeti(L, idx, i);
      enc_member(e, lua_gettop(L), j, NULL);
      lua_pop(L, 1);
      enc_pop(e, old);
    }
  } else {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      size_t len;
      const char *key = lua_tolstring(L, -2, &len);   /* a string: table_kind checked */
      size_t old = enc_push_key(e, key);
      if (strlen(key) != len) enc_error(e, "a key with a NUL byte");
      enc_member(e, lua_gettop(L), j, key);
      lua_pop(L, 1);
      enc_pop(e, old);
    }
  }
  e->depth--;
  lua_pushvalue(L, idx);
  lua_pushnil(L);
  lua_rawset(L, e->seen);
}

/* json_dump_callback's sink: the text grows in the box, counted (the
** window is open), so that it is built once. */
static int dump_to_box(const char *buf, size_t size, void *data) {
  JsonBox *b = data;
  if (size > b->cap - b->len) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < size) {
      if (cap > SIZE_MAX / 3) return -1;
      cap += cap / 2;
    }
    char *p = jsonmem_realloc(b->text, cap);
    if (!p) return -1;
    b->text = p;
    b->cap = cap;
  }
  memcpy(b->text + b->len, buf, size);
  b->len += size;
  return 0;
}

/* lab.json.encode(value [, {indent = N}]) */
static int ljson_encode(lua_State *L) {
  luaL_checkany(L, 1);
  size_t flags = JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_REAL_PRECISION(17);
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
      lua_pop(L, 1);
      if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "indent") != 0)
        return luaL_error(L, "lab.json.encode: unknown option '%s' (known: indent)", luaL_tolstring(L, -1, NULL));
    }
    lua_getfield(L, 2, "indent");
    if (!lua_isnil(L, -1)) {
      int ok;
      lua_Integer n = lua_tointegerx(L, -1, &ok);
      if (!ok || n < 0 || n > 31) return luaL_error(L, "lab.json.encode: 'indent' must be a whole number 0..31");
      flags |= JSON_INDENT((size_t)n);
    } else {
      flags |= JSON_COMPACT;
    }
    lua_pop(L, 1);
  } else {
    flags |= JSON_COMPACT;
  }
  lua_settop(L, 1);
  JsonBox *b = push_box(L);   /* 2 */
  lua_newtable(L);            /* 3: the tables being encoded */
  Encoder e = {L, 3, 0, "", 0, {0}};
  ljson_budget(L, &e.mem);
  b->root = enc_node(&e, 1);
  if (lua_istable(L, 1)) enc_fill(&e, 1, b->root);
  jsonmem_enter(&e.mem);
  int rc = json_dump_callback(b->root, dump_to_box, b, flags);
  json_decref(b->root);   /* before the text is copied: one less at the peak */
  b->root = NULL;
  jsonmem_leave(&e.mem);
  if (rc < 0) {
    box_free(L, b);
    return e.mem.refused ? ljson_nomem(L, "encode") : luaL_error(L, "lab.json.encode: out of memory");
  }
  lua_pushlstring(L, b->text, b->len);
  box_free(L, b);   /* now rather than at the next collection */
  return 1;
}

/* ------------------------------------------------------------ decode */

static void dec_value(lua_State *L, json_t *j) {
  luaL_checkstack(L, 4, "lab.json.decode: nested too deep");
  size_t i;
  json_t *v;
  const char *key;
  switch (json_typeof(j)) {
  case JSON_OBJECT:
    lua_createtable(L, 0, (int)json_object_size(j));
    json_object_foreach(j, key, v) {
      dec_value(L, v);
      lua_setfield(L, -2, key);
    }
    break;
  case JSON_ARRAY:
    lua_createtable(L, (int)json_array_size(j), 0);
    json_array_foreach(j, i, v) {
      dec_value(L, v);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    break;
  case JSON_STRING: lua_pushlstring(L, json_string_value(j), json_string_length(j)); break;
  case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(j)); break;
  case JSON_REAL: lua_pushnumber(L, json_real_value(j)); break;
  case JSON_TRUE: lua_pushboolean(L, 1); break;
  case JSON_FALSE: lua_pushboolean(L, 0); break;
  case JSON_NULL: lua_pushlightuserdata(L, &ljson_null_tag); break;
  }
}

/* lab.json.decode(text) */
static int ljson_decode(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  lua_settop(L, 1);
  JsonBox *b = push_box(L);
  json_error_t je;
  JsonMem m;
  ljson_budget(L, &m);
  jsonmem_enter(&m);
  b->root = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
  jsonmem_leave(&m);
  if (!b->root && m.refused) return ljson_nomem(L, "decode");
  if (!b->root) {
    if (je.line > 0) return luaL_error(L, "lab.json.decode: line %d, column %d: %s", je.line, je.column, je.text);
    return luaL_error(L, "lab.json.decode: %s", je.text);
  }
  dec_value(L, b->root);
  box_free(L, b);   /* the tree is counted until freed: free it now */
  return 1;
}

/* ------------------------------------------------------------ the table */

/* Push the table lab.json. */
void ljson_open(lua_State *L) {
  static const luaL_Reg fns[] = {{"encode", ljson_encode}, {"decode", ljson_decode}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_pushlightuserdata(L, &ljson_null_tag);
  lua_setfield(L, -2, "null");
}
