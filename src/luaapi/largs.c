/*
** largs.c -- table arguments read against the settings table of lab.h,
** one field at a time (as loslib.c's getfield does), so every message
** names the key: "lab.run: unknown key 'in_scal' (did you mean
** 'in_scale'?)", "lab.run: 'dim' must be a number, got string". Fields are
** applied in the table's order, never in the hash order of the Lua table,
** so the result does not depend on how Lua happens to store the keys.
**
** Also lab.args: "key=value" script arguments against a table of defaults.
** A bad argument is the user's mistake, not the script's: one line and the
** exit status of a usage error (2), with no traceback.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luaapi/linternal.h"

/* Edit distance, for "did you mean". */
static int distance(const char *a, const char *b) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 63 || lb > 63) return 99;
  int d[64][64];
  for (int i = 0; i <= la; i++) d[i][0] = i;
  for (int j = 0; j <= lb; j++) d[0][j] = j;
  for (int i = 1; i <= la; i++)
    for (int j = 1; j <= lb; j++) {
      int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
  return d[la][lb];
}

static int unknown_key(lua_State *L, const char *fname, const char *key) {
  int n, best = -1, bestd = 3;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++) {
    int d = distance(key, s[i].name);
    if (d < bestd) bestd = d, best = i;
  }
  if (best >= 0) return luaL_error(L, "%s: unknown key '%s' (did you mean '%s'?)", fname, key, s[best].name);
  return luaL_error(L, "%s: unknown key '%s' (lab.settings() lists them)", fname, key);
}

/* Every key of the table at 'idx' must name a setting (and a live one when
** 'live'). */
static void check_keys(lua_State *L, int idx, const char *fname, int live) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s: keys are setting names, got a %s key", fname, luaL_typename(L, -1));
    const char *key = lua_tostring(L, -1);
    const Setting *s = lab_setting_find(key);
    if (!s) unknown_key(L, fname, key);
    if (live && !s->live) luaL_error(L, "%s: '%s' is fixed when a run is created", fname, key);
  }
}

/* Check the type of the value at 'v' for setting 's' and say how to pass
** it on: as text (1, '*text' set) or as a number (0, '*number' set). */
static int value_of(lua_State *L, int v, const char *fname, const Setting *s, const char **text, double *number) {
  static const char *const want[] = {[SET_INT] = "a number", [SET_NUMBER] = "a number",
                                     [SET_STRING] = "a string",
                                     [SET_TIE] = "'tied', 'untied', a column count or a boolean",
                                     [SET_SEED] = "a number or a string of digits",
                                     [SET_BOOL] = "a boolean"};
  int t = lua_type(L, v);
  if (t == LUA_TNUMBER && s->type != SET_STRING && s->type != SET_BOOL) {
    *number = lua_tonumber(L, v);
    return 0;
  }
  if (t == LUA_TSTRING && (s->type == SET_STRING || s->type == SET_SEED || s->type == SET_TIE)) {
    size_t n;
    *text = lua_tolstring(L, v, &n);
    if (strlen(*text) != n) return luaL_error(L, "%s: '%s' holds a NUL byte", fname, s->name);
    return 1;
  }
  if (t == LUA_TBOOLEAN && s->type == SET_TIE) {
    *text = lua_toboolean(L, v) ? "tied" : "untied";
    return 1;
  }
  if (t == LUA_TBOOLEAN && s->type == SET_BOOL) {
    *text = lua_toboolean(L, v) ? "true" : "false";
    return 1;
  }
  return luaL_error(L, "%s: '%s' must be %s, got %s", fname, s->name, want[s->type], luaL_typename(L, v));
}

void largs_run_options(lua_State *L, int idx, const char *fname, RunOptions *o) {
  LuaApi *api = lapi_get(L);
  if (api->opt.defaults) *o = *api->opt.defaults;
  else run_options_default(o);
  if (lua_isnoneornil(L, idx)) return;
  idx = lua_absindex(L, idx);
  check_keys(L, idx, fname, 0);
  int n;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, s[i].name);
    if (lua_rawget(L, idx) != LUA_TNIL) {
      const char *text = NULL;
      double number = 0;
      Err err;
      int rc = value_of(L, -1, fname, &s[i], &text, &number)
                 ? run_options_set_text(o, s[i].name, text, &err)
                 : run_options_set_number(o, s[i].name, number, &err);
      if (rc < 0) luaL_error(L, "%s: %s", fname, err.msg);
    }
    lua_pop(L, 1);
  }
}

/* The live settings of the table at 'idx', type-checked, in the order they
** must be applied: the table's order, except that 'tie' comes last so that
** a 'tie_merge' given with it is in force when it happens. */
int largs_live_pairs(lua_State *L, int idx, const char *fname, LargsPair *out, int cap) {
  idx = lua_absindex(L, idx);
  check_keys(L, idx, fname, 1);
  int n, count = 0;
  const Setting *s = lab_settings(&n);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n && count < cap; i++) {
      if ((&s[i] == lab_setting(SETTING_TIE)) != pass) continue;
      lua_pushstring(L, s[i].name);
      if (lua_rawget(L, idx) != LUA_TNIL) {
        LargsPair *p = &out[count++];
        p->s = &s[i];
        p->text = NULL;
        p->number = 0;
        p->is_text = value_of(L, -1, fname, &s[i], &p->text, &p->number);
      }
      lua_pop(L, 1);   /* strings stay alive in the argument table */
    }
  return count;
}

/* Every option as a Lua value: numbers for numbers, booleans for booleans,
** text for the rest. */
void largs_push_options(lua_State *L, const RunOptions *o) {
  int n;
  const Setting *s = lab_settings(&n);
  lua_createtable(L, 0, n);
  for (int i = 0; i < n; i++) {
    char buf[1100];
    if (run_options_get_text(o, s[i].name, buf, sizeof buf, NULL) < 0) continue;
    int numeric = s[i].type == SET_INT || s[i].type == SET_NUMBER || (s[i].type == SET_SEED && strlen(buf) < 16);
    if (s[i].type == SET_BOOL) lua_pushboolean(L, strcmp(buf, "true") == 0);
    else if (!numeric || lua_stringtonumber(L, buf) == 0) lua_pushstring(L, buf);
    lua_setfield(L, -2, s[i].name);
  }
}

/* ------------------------------------------------------------ lab.args */

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char **)a, *(const char **)b); }

/* A bad argument is an error object of its own: a table holding the
** message, which tostring() shows (so pcall and tap.raises see it as
** any error), and which the script's runner reports as one line. */
#define USAGE_META "tielab.usage_error"

static int usage_tostring(lua_State *L) {
  lua_rawgeti(L, 1, 1);
  return 1;
}

static int usage_error(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_createtable(L, 1, 0);
  lua_insert(L, -2);
  lua_rawseti(L, -2, 1);
  if (luaL_newmetatable(L, USAGE_META)) {
    lua_pushcfunction(L, usage_tostring);
    lua_setfield(L, -2, "__tostring");
    lapi_seal_metatable(L, -1);
  }
  lua_setmetatable(L, -2);
  return lua_error(L);
}

const char *largs_usage_message(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return NULL;
  luaL_getmetatable(L, USAGE_META);
  int usage = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  if (!usage) return NULL;
  /* Only a string: lua_tostring would turn a number the script put there
  ** into a string that nothing but the popped slot holds. A string stays
  ** alive in the error object, which the caller holds while it uses it. */
  lua_rawgeti(L, idx, 1);
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  lua_pop(L, 1);
  return msg;
}

static int unknown_arg(lua_State *L, int defaults, const char *key) {
  const char *names[64];
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, defaults) && n < 64) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) names[n++] = lua_tostring(L, -1);
  }
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < n; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, names[i]);
  }
  luaL_pushresult(&b);
  return usage_error(L, "unknown argument '%s' (known: %s)", key, lua_tostring(L, -1));
}

static int is_truth(const char *v) {
  static const char *const words[] = {"true", "false", "1", "0", "yes", "no", "on", "off"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strcmp(v, words[i]) == 0) return 1;
  return 0;
}

/* Convert 'value' to the type of the default on top and leave it there. */
static void convert(lua_State *L, const char *key, const char *value) {
  int t = lua_type(L, -1), integer = lua_isinteger(L, -1);
  lua_pop(L, 1);
  if (t == LUA_TNUMBER) {
    if (!lua_stringtonumber(L, value)) usage_error(L, "argument '%s' must be a number, got '%s'", key, value);
    int exact;   /* steps=1e3 is the integer 1000, as its default is an integer */
    lua_Integer k = lua_tointegerx(L, -1, &exact);
    if (integer && exact && !lua_isinteger(L, -1)) {
      lua_pop(L, 1);
      lua_pushinteger(L, k);
    }
  } else if (t == LUA_TBOOLEAN) {
    if (!is_truth(value)) usage_error(L, "argument '%s' must be true or false, got '%s'", key, value);
    lua_pushboolean(L, !strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes") ||
                         !strcmp(value, "on"));
  } else {
    lua_pushstring(L, value);
  }
}

/* Argument 'i' of the table at 1 (it stays alive there), or NULL. */
static const char *arg_at(lua_State *L, lua_Integer i) {
  lua_rawgeti(L, 1, i);
  const char *a = lua_tostring(L, -1);
  lua_pop(L, 1);
  return a;
}

/* lab.args(arg, defaults): "key=value" (or "--key=value", "--key value",
** or "key" / "--key" alone for a boolean) arguments over a copy of
** 'defaults', each converted to the type of its default; "--" ends them
** (what follows is the script's to read from 'arg'). */
/* A run setting given on tielab's command line (--dim 16 before the
** script's name) replaces the script's default of the same name, so that
** no option given to tielab is ignored by a script that sets its own
** model; the script's own arguments still come last and win. A default
** that is text (a list of sizes, "" for a setting the script passes on
** when given) takes the setting as text, as "dim=16" after the script's
** name would give it. Table 3 is the result being built, table 2 the
** script's defaults. */
static void defaults_from_command_line(lua_State *L) {
  const RunOptions *given = lapi_get(L)->opt.defaults;
  if (!given || !given->given) return;
  int n;
  const Setting *s = lab_settings(&n);
  largs_push_options(L, given);
  for (int i = 0; i < n && i < 64; i++) {
    if (!(given->given & ((uint64_t)1 << i))) continue;
    if (lua_getfield(L, 2, s[i].name) == LUA_TNIL) {   /* not one of the script's */
      lua_pop(L, 1);
      continue;
    }
    int type = lua_type(L, -1);
    lua_pop(L, 1);
    char text[1100];
    if (type == LUA_TSTRING && run_options_get_text(given, s[i].name, text, sizeof text, NULL) >= 0)
      lua_pushstring(L, text);
    else
      lua_getfield(L, -1, s[i].name);
    if (lua_type(L, -1) == type) lua_setfield(L, 3, s[i].name);
    else lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

int largs_args(lua_State *L) {
  if (!lua_isnil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, 3);
  }
  defaults_from_command_line(L);
  lua_Integer n = lua_isnil(L, 1) ? 0 : luaL_len(L, 1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    const char *a = lua_tostring(L, -1), *value = NULL;
    if (!a) return luaL_error(L, "argument %d is not a string", (int)i);
    if (strcmp(a, "--") == 0) {
      lua_pop(L, 1);
      break;
    }
    int dashed = a[0] == '-' && a[1] == '-';
    if (dashed) a += 2;
    const char *eq = strchr(a, '=');
    lua_pushlstring(L, a, eq ? (size_t)(eq - a) : strlen(a));
    const char *key = lua_tostring(L, -1);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, 2) == LUA_TNIL) return unknown_arg(L, 2, key);
    int boolean = lua_type(L, -1) == LUA_TBOOLEAN;
    const char *next = dashed && !eq && i < n ? arg_at(L, i + 1) : NULL;
    if (eq) value = eq + 1;
    else if (next && (!boolean || is_truth(next))) value = next, i++;   /* '--key value' */
    else if (boolean) value = "true";
    if (!value) return usage_error(L, "argument '%s' needs a value (%s=... or --%s ...)", key, key, key);
    convert(L, key, value);
    lua_rawset(L, 3);
    lua_pop(L, 1);
  }
  return 1;
}
