/*
** lrepl.c -- the REPL's side of the binding: one entry read as lua.c reads
** it (expressions first, '=' prefix, "<eof>" means keep reading), values
** pretty-printed (tables included, keys sorted, cycles and depth bounded),
** key bindings called, and tab completion of globals, fields and methods.
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "luaapi/linternal.h"

/* ------------------------------------------------------------ pretty-printing */

#define PRETTY_MAX 8192     /* bytes of one printed value */
#define PRETTY_DEPTH 4      /* nested tables shown */
#define PRETTY_ITEMS 64     /* entries shown per table */
#define PRETTY_WIDTH 78     /* a wider top-level table prints one entry a line */

static void puts_(Buf *o, const char *s) { buf_add(o, s, strlen(s)); }

static void put_quoted(Buf *o, const char *s, size_t len) {
  puts_(o, "\"");
  for (size_t i = 0; i < len && o->n < PRETTY_MAX - 8; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') buf_printf(o, "\\%c", c);
    else if (c == '\n') puts_(o, "\\n");
    else if (c == '\t') puts_(o, "\\t");
    else if (c < 32 || c == 127) buf_printf(o, "\\%d", c);
    else buf_add(o, (const char *)&c, 1);
  }
  puts_(o, "\"");
}

static int is_identifier(const char *s) {
  static const char *const reserved[] = {"and", "break", "do", "else", "elseif", "end", "false",
                                         "for", "function", "goto", "if", "in", "local", "nil",
                                         "not", "or", "repeat", "return", "then", "true", "until",
                                         "while"};
  if (!isalpha((unsigned char)*s) && *s != '_') return 0;
  for (const char *p = s; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return 0;
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (strcmp(s, reserved[i]) == 0) return 0;
  return 1;
}

/* Any value as Lua's tostring shows it. */
static void put_tostring(lua_State *L, int idx, Buf *o) {
  size_t len;
  const char *s = luaL_tolstring(L, idx, &len);
  buf_add(o, s, len);
  lua_pop(L, 1);
}

/* Order of keys: numbers, then strings, then the rest as found. */
static int key_rank(lua_State *L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER: return 0;
    case LUA_TSTRING: return 1;
    default: return 2;
  }
}

static int key_before(lua_State *L, int a, int b) {
  int ra = key_rank(L, a), rb = key_rank(L, b);
  if (ra != rb) return ra < rb;
  if (ra == 0) return lua_compare(L, a, b, LUA_OPLT);
  if (ra == 1) return strcmp(lua_tostring(L, a), lua_tostring(L, b)) < 0;
  return 0;
}

/* Push an array of the keys of table 't' that are not 1..n, sorted
** (insertion sort: at most PRETTY_ITEMS+1 keys are kept). */
static int sorted_keys(lua_State *L, int t, lua_Integer n) {
  lua_newtable(L);
  int keys = lua_gettop(L), count = 0;
  lua_pushnil(L);
  while (lua_next(L, t) && count <= PRETTY_ITEMS) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= n) continue;
    lua_pushvalue(L, -1);
    int j = count++;
    lua_rawseti(L, keys, j + 1);
    for (; j > 0; j--) {          /* sift the new key down */
      lua_rawgeti(L, keys, j);
      lua_rawgeti(L, keys, j + 1);
      int swap = key_before(L, -1, -2);
      if (swap) {
        lua_rawseti(L, keys, j);
        lua_rawseti(L, keys, j + 1);
      } else {
        lua_pop(L, 2);
        break;
      }
    }
  }
  if (lua_gettop(L) > keys) lua_pop(L, 2);   /* left the loop early: key and value */
  return count;
}

static void pretty(lua_State *L, int idx, int depth, int multiline, int seen, Buf *o);

static void pretty_key(lua_State *L, int idx, int seen, Buf *o) {
  if (lua_type(L, idx) == LUA_TSTRING && is_identifier(lua_tostring(L, idx))) {
    puts_(o, lua_tostring(L, idx));
  } else {
    puts_(o, "[");
    pretty(L, idx, PRETTY_DEPTH, 0, seen, o);
    puts_(o, "]");
  }
  puts_(o, " = ");
}

static void pretty_table(lua_State *L, int t, int depth, int multiline, int seen, Buf *o) {
  lua_pushvalue(L, t);
  if (lua_rawget(L, seen) != LUA_TNIL || depth >= PRETTY_DEPTH) {
    lua_pop(L, 1);
    puts_(o, "{...}");
    return;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, t);
  lua_pushboolean(L, 1);
  lua_rawset(L, seen);
  const char *sep = multiline ? "\n  " : "";
  int shown = 0;
  puts_(o, "{");
  lua_Integer n = 0;
  while (lua_rawgeti(L, t, n + 1) != LUA_TNIL) {
    if (shown < PRETTY_ITEMS) {
      puts_(o, shown ? (multiline ? ",\n  " : ", ") : sep);
      pretty(L, lua_gettop(L), depth + 1, 0, seen, o);
      shown++;
    }
    lua_pop(L, 1);
    n++;
  }
  lua_pop(L, 1);
  int nkeys = sorted_keys(L, t, n);
  int keys = lua_gettop(L);
  for (int i = 1; i <= nkeys && shown <= PRETTY_ITEMS; i++, shown++) {
    puts_(o, shown ? (multiline ? ",\n  " : ", ") : sep);
    if (shown == PRETTY_ITEMS) {
      puts_(o, "...");
      break;
    }
    lua_rawgeti(L, keys, i);
    pretty_key(L, lua_gettop(L), seen, o);
    lua_rawget(L, t);
    pretty(L, lua_gettop(L), depth + 1, 0, seen, o);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  puts_(o, multiline && shown ? ",\n}" : "}");
  lua_pushvalue(L, t);
  lua_pushnil(L);
  lua_rawset(L, seen);
}

static void pretty(lua_State *L, int idx, int depth, int multiline, int seen, Buf *o) {
  luaL_checkstack(L, 8, "value too deeply nested to print");
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      if (depth == 0) buf_add(o, s, len);
      else put_quoted(o, s, len);
      return;
    }
    case LUA_TTABLE:
      if (!luaL_getmetafield(L, idx, "__tostring")) {
        pretty_table(L, idx, depth, multiline, seen, o);
        return;
      }
      lua_pop(L, 1);
      /* fall through */
    default: put_tostring(L, idx, o); return;
  }
}

/* Print 'n' values from index 'first' of L, tab-separated, one line. */
void lrepl_print_values(LuaApi *api, lua_State *L, int first, int n) {
  lua_newtable(L);
  int seen = lua_gettop(L);
  static Buf out = {.max = PRETTY_MAX - 1};   /* the Lua state is used by one thread only */
  for (int i = 0; i < n; i++) {
    int idx = first + i;
    buf_clear(&out);
    pretty(L, idx, 0, 0, seen, &out);
    if (lua_type(L, idx) == LUA_TTABLE && out.n > PRETTY_WIDTH && !out.cut) {
      buf_clear(&out);
      pretty(L, idx, 0, 1, seen, &out);
    }
    if (i > 0) lapi_write(api, "\t", 1, 0);
    lapi_write(api, out.s ? out.s : "", out.n, 0);
  }
  lapi_write(api, "\n", 1, 0);
  lua_pop(L, 1);
}

/* ------------------------------------------------------------ REPL entries */

typedef struct Eval {
  const char *text;
  LuaApiStatus status;
} Eval;

static int incomplete(lua_State *L) {
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  return msg && len >= 5 && strcmp(msg + len - 5, "<eof>") == 0;
}

/* An entry is text: under the sandbox (a journal's line entry) never a
** binary chunk, which Lua does not check. */
static int load_entry(lua_State *L, const char *text, int *is_incomplete) {
  const char *mode = lapi_get(L)->opt.sandbox ? "t" : NULL;
  *is_incomplete = 0;
  const char *code = text[0] == '=' ? text + 1 : text;
  const char *ret = lua_pushfstring(L, "return %s;", code);
  int status = luaL_loadbufferx(L, ret, strlen(ret), "=repl", mode);
  lua_remove(L, -2);
  if (status == LUA_OK || text[0] == '=') {
    *is_incomplete = status == LUA_ERRSYNTAX && incomplete(L);
    return status;
  }
  lua_pop(L, 1);
  status = luaL_loadbufferx(L, text, strlen(text), "=repl", mode);
  *is_incomplete = status == LUA_ERRSYNTAX && incomplete(L);
  return status;
}

static int eval_body(lua_State *L) {
  Eval *ev = lua_touserdata(L, 1);
  LuaApi *api = lapi_get(L);
  int more;
  int status = load_entry(L, ev->text, &more);
  if (more) {
    lua_pop(L, 1);
    ev->status = LUAAPI_INCOMPLETE;
    return 0;
  }
  if (status != LUA_OK) {
    ev->status = lapi_report(api, L, status);
    return 0;
  }
  if (!api->host->inline_steps) {
    ev->status = lapi_resume(api, lapi_new_script(api, L, 0, 1));
    return 0;
  }
  int base = lua_gettop(L) - 1;
  status = lapi_docall(L, 0, LUA_MULTRET);
  if (status == LUA_OK && lua_gettop(L) > base) lrepl_print_values(api, L, base + 1, lua_gettop(L) - base);
  if (status == LUA_OK) lua_settop(L, base);
  ev->status = lapi_report(api, L, status);
  return 0;
}

LuaApiStatus luaapi_eval_line(LuaApi *api, const char *text) {
  Eval ev = {text, LUAAPI_ERROR};
  lapi_enter(api);
  lapi_protect(api, eval_body, &ev);
  if (ev.status == LUAAPI_ERROR && luaapi_interrupted(api)) ev.status = LUAAPI_INTERRUPTED;
  lapi_leave(api);
  return ev.status;
}

/* ------------------------------------------------------------ key bindings */

typedef struct KeyCall {
  int key;
  int found;
} KeyCall;

static int key_body(lua_State *L) {
  KeyCall *kc = lua_touserdata(L, 1);
  LuaApi *api = lapi_get(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.keys");
  if (lua_rawgeti(L, -1, kc->key) != LUA_TTABLE) return 0;
  kc->found = 1;
  lua_getfield(L, -1, "fn");
  if (api->host->inline_steps) lapi_report(api, L, lapi_docall(L, 0, 0));
  else lapi_resume(api, lapi_new_script(api, L, 0, 0));
  return 0;
}

int luaapi_key(LuaApi *api, int key) {
  KeyCall kc = {key, 0};
  lapi_enter(api);
  lapi_protect(api, key_body, &kc);
  lapi_leave(api);
  return kc.found;
}

typedef struct KeyWalk {
  void (*each)(void *ctx, int key, const char *name, const char *help);
  void *ctx;
} KeyWalk;

static int bindings_body(lua_State *L) {
  KeyWalk *kw = lua_touserdata(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "tielab.keys");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "help");
    kw->each(kw->ctx, (int)lua_tointeger(L, -4), lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 3);
  }
  return 0;
}

void luaapi_bindings(LuaApi *api, void (*each)(void *ctx, int key, const char *name, const char *help),
                     void *ctx) {
  KeyWalk kw = {each, ctx};
  lapi_protect(api, bindings_body, &kw);
}

/* ------------------------------------------------------------ completion */

#define COMPLETE_MAX 256

typedef struct Complete {
  const char *line;
  void (*add)(void *ctx, const char *word);
  void *ctx;
  int count;
} Complete;

static const char *const keywords[] = {"and", "break", "do", "else", "elseif", "end", "false",
                                       "for", "function", "goto", "if", "in", "local", "nil",
                                       "not", "or", "repeat", "return", "then", "true", "until",
                                       "while"};

/* Add the string keys of the table on top that start with 'part' to the
** candidate set 'set' (a table used as a set), following __index tables. */
static void add_keys(lua_State *L, int set, const char *part, int methods_only) {
  size_t plen = strlen(part);
  for (int hops = 0; hops < 4 && lua_type(L, -1) == LUA_TTABLE; hops++) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_type(L, -2) == LUA_TSTRING && strncmp(lua_tostring(L, -2), part, plen) == 0 &&
          is_identifier(lua_tostring(L, -2)) && (!methods_only || lua_type(L, -1) == LUA_TFUNCTION) &&
          lua_rawlen(L, set) < COMPLETE_MAX) {
        lua_pushvalue(L, -2);
        lua_pushboolean(L, 1);
        lua_rawset(L, set);
      }
      lua_pop(L, 1);
    }
    if (!lua_getmetatable(L, -1)) break;
    lua_getfield(L, -1, "__index");
    lua_remove(L, -2);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
}

/* Candidates for a value: a run handle lists its methods (after ':') or
** fields (after '.'), a table its keys, a string the string library. */
static void add_members(lua_State *L, int set, const char *part, int colon) {
  if (lua_type(L, -1) == LUA_TSTRING) {
    lua_pop(L, 1);
    lua_getglobal(L, "string");
    add_keys(L, set, part, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE && luaL_getmetafield(L, -1, colon ? "__methods" : "__fields")) {
    lua_remove(L, -2);
    if (!colon) {   /* __fields is an array of names */
      lua_newtable(L);
      for (lua_Integer i = 1; lua_rawgeti(L, -2, i) == LUA_TSTRING; i++) {
        lua_pushboolean(L, 1);
        lua_rawset(L, -3);
      }
      lua_pop(L, 1);
      lua_remove(L, -2);
    }
    add_keys(L, set, part, colon);
    return;
  }
  add_keys(L, set, part, colon);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char **)a, *(const char **)b); }

static int complete_body(lua_State *L) {
  Complete *c = lua_touserdata(L, 1);
  const char *line = c->line, *end = line + strlen(line), *start = end;
  while (start > line && (isalnum((unsigned char)start[-1]) || strchr("_.:", start[-1]))) start--;
  const char *part = start, *p;
  for (p = start; p < end; p++)
    if (*p == '.' || *p == ':') part = p + 1;
  int colon = part > start && part[-1] == ':';
  lua_newtable(L);
  int set = lua_gettop(L);
  lua_pushglobaltable(L);
  for (const char *seg = start; seg < part - 1 && part > start;) {   /* walk the chain */
    const char *dot = seg;
    while (dot < part - 1 && *dot != '.' && *dot != ':') dot++;
    lua_pushlstring(L, seg, (size_t)(dot - seg));
    if (lua_type(L, -2) == LUA_TTABLE) lua_rawget(L, -2);
    else {
      lua_pop(L, 1);
      lua_pushnil(L);
    }
    lua_remove(L, -2);
    seg = dot + 1;
  }
  if (part == start) {
    add_keys(L, set, part, 0);
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
      if (strncmp(keywords[i], part, strlen(part)) == 0) {
        lua_pushstring(L, keywords[i]);
        lua_pushboolean(L, 1);
        lua_rawset(L, set);
      }
  } else {
    add_members(L, set, part, colon);
  }
  const char *words[COMPLETE_MAX];
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, set) && n < COMPLETE_MAX) {
    lua_pop(L, 1);
    words[n++] = lua_tostring(L, -1);
  }
  qsort(words, (size_t)n, sizeof *words, cmp_str);
  luaL_Buffer b;
  for (int i = 0; i < n; i++) {
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, start, (size_t)(part - start));
    luaL_addstring(&b, words[i]);
    luaL_pushresult(&b);
    c->add(c->ctx, lua_tostring(L, -1));
    lua_pop(L, 1);
    c->count++;
  }
  return 0;
}

int luaapi_complete(LuaApi *api, const char *line, void (*add)(void *ctx, const char *word), void *ctx) {
  Complete c = {line, add, ctx, 0};
  lapi_protect(api, complete_body, &c);
  return c.count;
}
