/*
** lpattern.c -- Lua's pattern functions, string.find, string.match,
** string.gmatch and string.gsub, stopped by an interrupt. Why, and how they
** keep Lua 5.4's results: docs/architecture.md, 'Patterns an interrupt
** stops'.
*/
#include <ctype.h>
#include <string.h>

#include "luaapi/linternal.h"

#define ESC '%'
#define SPECIALS "^$*+?.([%-"
#define MAX_DEPTH 200           /* nested matches before "pattern too complex", as Lua's */
#define MAX_CAPTURES 32         /* Lua's LUA_MAXCAPTURES */

enum { CAP_UNFINISHED = -1, CAP_POSITION = -2 };

typedef struct Matcher {
  const char *s0, *s_end;   /* the subject */
  const char *p_end;        /* the end of the pattern */
  lua_State *L;
  LuaApi *api;
  int depth;                /* nested matches left */
  size_t work;              /* since the last question */
  int level;                /* captures opened so far */
  struct {
    const char *init;
    ptrdiff_t len;          /* or CAP_UNFINISHED, CAP_POSITION */
  } cap[MAX_CAPTURES];
} Matcher;

static void matcher_init(Matcher *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
  m->L = L;
  m->api = lapi_get(L);
  m->s0 = s;
  m->s_end = s + ls;
  m->p_end = p + lp;
  m->work = 0;
}

/* Before each try at a new place in the subject. */
static void matcher_reset(Matcher *m) {
  m->level = 0;
  m->depth = MAX_DEPTH;
}

/* Count 'units' of work; now and then, stop if the script is to. */
static void spend(Matcher *m, size_t units) { lapi_spend(m->L, m->api, &m->work, units); }

/* ------------------------------------------------------------ classes */

static int iszero(int c) { return c == 0; }

/* %a, %c, ... by their letter; the capital letter is the complement. (%z,
** the zero byte, is deprecated and still there.) */
static int (*const class_fn[26])(int) = {
    ['a' - 'a'] = isalpha, ['c' - 'a'] = iscntrl, ['d' - 'a'] = isdigit, ['g' - 'a'] = isgraph,
    ['l' - 'a'] = islower, ['p' - 'a'] = ispunct, ['s' - 'a'] = isspace, ['u' - 'a'] = isupper,
    ['w' - 'a'] = isalnum, ['x' - 'a'] = isxdigit, ['z' - 'a'] = iszero,
};

/* Whether character 'c' is in class %'cl' (any other 'cl' stands for itself). */
static int class_match(int c, int cl) {
  int lower = tolower(cl);
  int (*fn)(int) = lower >= 'a' && lower <= 'z' ? class_fn[lower - 'a'] : NULL;
  if (!fn) return cl == c;
  int in = fn(c) != 0;
  return isupper(cl) ? !in : in;
}

/* The end of the single class that starts at 'p': past "%x", "[set]" or
** one character. */
static const char *class_end(Matcher *m, const char *p) {
  if (*p == ESC) {
    if (p + 1 == m->p_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
    return p + 2;
  }
  if (*p++ != '[') return p;
  if (*p == '^') p++;
  do {   /* the first character is in the set even when it is ']' */
    if (p == m->p_end) luaL_error(m->L, "malformed pattern (missing ']')");
    if (*p++ == ESC && p < m->p_end) p++;
  } while (*p != ']');
  return p + 1;
}

/* Whether 'c' is in the set from '[' at 'p' to ']' at 'close'. */
static int set_match(int c, const char *p, const char *close) {
  int in = 1;
  if (p[1] == '^') {
    in = 0;
    p++;
  }
  while (++p < close) {
    if (*p == ESC) {
      p++;
      if (class_match(c, (unsigned char)*p)) return in;
    } else if (p[1] == '-' && p + 2 < close) {
      p += 2;
      if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p) return in;
    } else if ((unsigned char)*p == c) {
      return in;
    }
  }
  return !in;
}

/* Whether the subject's character at 's' is in the class from 'p' to 'ep'. */
static int single_match(const Matcher *m, const char *s, const char *p, const char *ep) {
  if (s >= m->s_end) return 0;
  int c = (unsigned char)*s;
  if (*p == '.') return 1;
  if (*p == ESC) return class_match(c, (unsigned char)p[1]);
  if (*p == '[') return set_match(c, p, ep - 1);
  return (unsigned char)*p == c;
}

/* ------------------------------------------------------------ the matcher */

static const char *do_match(Matcher *m, const char *s, const char *p);

/* %bxy at 'p' ("xy"): the subject from 's' to the balancing y. */
static const char *balance(Matcher *m, const char *s, const char *p) {
  if (p >= m->p_end - 1) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
  if (*s != *p) return NULL;
  int open = *p, close = p[1], depth = 1;
  const char *from = s;
  while (++s < m->s_end) {
    if (*s == close && --depth == 0) break;
    if (*s == open && *s != close) depth++;
  }
  spend(m, (size_t)(s - from));
  return s < m->s_end ? s + 1 : NULL;
}

/* The class at 'p' repeated as often as it matches, then fewer times
** until the rest of the pattern (after the suffix at 'ep') matches. */
static const char *max_expand(Matcher *m, const char *s, const char *p, const char *ep) {
  ptrdiff_t i = 0;
  while (single_match(m, s + i, p, ep)) i++;
  spend(m, (size_t)i);
  for (; i >= 0; i--) {
    const char *res = do_match(m, s + i, ep + 1);
    if (res) return res;
  }
  return NULL;
}

/* The class at 'p' repeated as seldom as the rest of the pattern allows. */
static const char *min_expand(Matcher *m, const char *s, const char *p, const char *ep) {
  for (;; s++) {
    const char *res = do_match(m, s, ep + 1);
    if (res) return res;
    if (!single_match(m, s, p, ep)) return NULL;
  }
}

static const char *capture_open(Matcher *m, const char *s, const char *p, ptrdiff_t kind) {
  if (m->level >= MAX_CAPTURES) luaL_error(m->L, "too many captures");
  m->cap[m->level].init = s;
  m->cap[m->level].len = kind;
  m->level++;
  const char *res = do_match(m, s, p);
  if (!res) m->level--;
  return res;
}

static const char *capture_close(Matcher *m, const char *s, const char *p) {
  int l = m->level - 1;
  while (l >= 0 && m->cap[l].len != CAP_UNFINISHED) l--;
  if (l < 0) luaL_error(m->L, "invalid pattern capture");
  m->cap[l].len = s - m->cap[l].init;
  const char *res = do_match(m, s, p);
  if (!res) m->cap[l].len = CAP_UNFINISHED;
  return res;
}

/* %1 to %9 at 's': the text capture 'digit' holds, again. */
static const char *capture_again(Matcher *m, const char *s, int digit) {
  int l = digit - '1';
  if (l < 0 || l >= m->level || m->cap[l].len == CAP_UNFINISHED)
    luaL_error(m->L, "invalid capture index %%%d", l + 1);
  size_t len = (size_t)m->cap[l].len;   /* a position capture's is huge: it never matches, as in Lua */
  if (m->cap[l].len >= 0) spend(m, len);
  if ((size_t)(m->s_end - s) >= len && memcmp(m->cap[l].init, s, len) == 0) return s + len;
  return NULL;
}

/* %f[set] at 'p' ("[set]"): the place between a character not in the set
** and one in it. */
static const char *frontier(Matcher *m, const char **s, const char *p) {
  if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
  const char *ep = class_end(m, p);
  int before = *s == m->s0 ? '\0' : (unsigned char)(*s)[-1];
  if (!set_match(before, p, ep - 1) && set_match((unsigned char)**s, p, ep - 1)) return ep;
  *s = NULL;
  return NULL;
}

/* 'next' when '*s' matched so far, else NULL. */
static const char *then(const char *s, const char *next) { return s ? next : NULL; }

/* A class at 'p' with its suffix (*, +, -, ?, or none). */
static const char *repeat(Matcher *m, const char **s, const char *p) {
  const char *ep = class_end(m, p);
  if (!single_match(m, *s, p, ep)) {
    if (*ep == '*' || *ep == '?' || *ep == '-') return ep + 1;   /* none will do */
    *s = NULL;
    return NULL;
  }
  const char *res;
  switch (*ep) {
    case '?':
      if (!(res = do_match(m, *s + 1, ep + 1))) return ep + 1;
      *s = res;
      return NULL;
    case '+': *s = max_expand(m, *s + 1, p, ep); return NULL;
    case '*': *s = max_expand(m, *s, p, ep); return NULL;
    case '-': *s = min_expand(m, *s, p, ep); return NULL;
    default: (*s)++; return ep;
  }
}

/* The item of the pattern at 'p' against the subject at '*s'. Returns
** where the pattern goes on, from the new '*s', or NULL when '*s' is the
** answer for the rest (NULL there: no match). Going on is the caller's
** loop, not a call, so that a long pattern does not nest. */
static const char *item(Matcher *m, const char **s, const char *p) {
  switch (*p) {
    case '(':
      *s = p[1] == ')' ? capture_open(m, *s, p + 2, CAP_POSITION) : capture_open(m, *s, p + 1, CAP_UNFINISHED);
      return NULL;
    case ')': *s = capture_close(m, *s, p + 1); return NULL;
    case '$':
      if (p + 1 != m->p_end) break;   /* a '$' inside is a character */
      if (*s != m->s_end) *s = NULL;
      return NULL;
    case ESC:
      if (p[1] == 'b') return then(*s = balance(m, *s, p + 2), p + 4);
      if (p[1] == 'f') return frontier(m, s, p + 2);
      if (isdigit((unsigned char)p[1])) return then(*s = capture_again(m, *s, (unsigned char)p[1]), p + 2);
      break;
  }
  return repeat(m, s, p);
}

/* Where the pattern from 'p' matches the subject from 's' to, or NULL. */
static const char *do_match(Matcher *m, const char *s, const char *p) {
  if (m->depth-- == 0) luaL_error(m->L, "pattern too complex");
  spend(m, 1);
  while (p != m->p_end && (p = item(m, &s, p)) != NULL) {
  }
  m->depth++;
  return s;
}

/* ------------------------------------------------------------ captures */

/* Capture 'i' (the whole match from 's' to 'e' when there is none): its
** text in '*cap' and its length, or CAP_POSITION with the position pushed. */
static ptrdiff_t capture_get(Matcher *m, int i, const char *s, const char *e, const char **cap) {
  if (i >= m->level) {
    if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
    *cap = s;
    return e - s;
  }
  *cap = m->cap[i].init;
  ptrdiff_t len = m->cap[i].len;
  if (len == CAP_UNFINISHED) luaL_error(m->L, "unfinished capture");
  if (len == CAP_POSITION) lua_pushinteger(m->L, (m->cap[i].init - m->s0) + 1);
  return len;
}

static void capture_push(Matcher *m, int i, const char *s, const char *e) {
  const char *cap;
  ptrdiff_t len = capture_get(m, i, s, e, &cap);
  if (len != CAP_POSITION) lua_pushlstring(m->L, cap, (size_t)len);
}

/* Every capture, or the whole match when the pattern has none (and 's'
** is given); returns how many. */
static int captures_push(Matcher *m, const char *s, const char *e) {
  int n = m->level == 0 && s ? 1 : m->level;
  luaL_checkstack(m->L, n, "too many captures");
  for (int i = 0; i < n; i++) capture_push(m, i, s, e);
  return n;
}

/* ------------------------------------------------------------ find and match */

/* Where a position argument starts, 1-based: negative counts from the end. */
static size_t start_at(lua_Integer pos, size_t len) {
  if (pos > 0) return (size_t)pos;
  if (pos == 0 || pos < -(lua_Integer)len) return 1;
  return len + (size_t)pos + 1;
}

static int has_specials(const char *p, size_t lp) {
  for (size_t i = 0; i < lp; i++)
    if (memchr(SPECIALS, p[i], sizeof SPECIALS - 1)) return 1;
  return 0;
}

/* The first 'p' in 's', bytes for bytes, or NULL. */
static const char *plain_find(Matcher *m, const char *s, size_t ls, const char *p, size_t lp) {
  if (lp == 0) return s;
  if (lp > ls) return NULL;
  const char *end = s + ls - lp + 1;   /* past the last place it could start */
  for (const char *at; s < end && (at = memchr(s, *p, (size_t)(end - s))) != NULL; s = at + 1) {
    spend(m, (size_t)(at - s) + lp);
    if (memcmp(at + 1, p + 1, lp - 1) == 0) return at;
  }
  return NULL;
}

static int find_aux(lua_State *L, int find) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
  Matcher m;
  if (init > ls) {   /* starts after the end: nothing to find */
    luaL_pushfail(L);
    return 1;
  }
  if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
    matcher_init(&m, L, s, ls, p, lp);
    const char *at = plain_find(&m, s + init, ls - init, p, lp);
    if (!at) {
      luaL_pushfail(L);
      return 1;
    }
    lua_pushinteger(L, (at - s) + 1);
    lua_pushinteger(L, (at - s) + (lua_Integer)lp);
    return 2;
  }
  int anchor = *p == '^';
  if (anchor) p++, lp--;
  matcher_init(&m, L, s, ls, p, lp);
  const char *s1 = s + init;
  do {
    matcher_reset(&m);
    const char *e = do_match(&m, s1, p);
    if (!e) continue;
    if (!find) return captures_push(&m, s1, e);
    lua_pushinteger(L, (s1 - s) + 1);
    lua_pushinteger(L, e - s);
    return captures_push(&m, NULL, NULL) + 2;
  } while (s1++ < m.s_end && !anchor);
  luaL_pushfail(L);
  return 1;
}

static int lpattern_find(lua_State *L) { return find_aux(L, 1); }
static int lpattern_match(lua_State *L) { return find_aux(L, 0); }

/* ------------------------------------------------------------ gmatch */

typedef struct GMatch {
  const char *src, *p, *last;   /* where to go on; the pattern; the end of the last match */
  Matcher m;
} GMatch;

static int gmatch_next(lua_State *L) {
  GMatch *g = lua_touserdata(L, lua_upvalueindex(3));
  g->m.L = L;   /* the iterator may be called from another coroutine */
  for (const char *src = g->src; src <= g->m.s_end; src++) {
    matcher_reset(&g->m);
    const char *e = do_match(&g->m, src, g->p);
    if (e && e != g->last) {   /* an empty match right after the last one does not count */
      g->src = g->last = e;
      return captures_push(&g->m, src, e);
    }
  }
  return 0;
}

static int lpattern_gmatch(lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
  lua_settop(L, 2);   /* the strings stay alive as upvalues */
  GMatch *g = lua_newuserdatauv(L, sizeof *g, 0);
  if (init > ls) init = ls + 1;
  matcher_init(&g->m, L, s, ls, p, lp);
  g->src = s + init;
  g->p = p;
  g->last = NULL;
  lua_pushcclosure(L, gmatch_next, 3);
  return 1;
}

/* ------------------------------------------------------------ gsub */

/* The replacement string (argument 3) for the match from 's' to 'e', its
** %0 to %9 and %% read. */
static void add_string(Matcher *m, luaL_Buffer *b, const char *s, const char *e) {
  lua_State *L = m->L;
  size_t l;
  const char *r = lua_tolstring(L, 3, &l), *esc;
  while ((esc = memchr(r, ESC, l)) != NULL) {
    luaL_addlstring(b, r, (size_t)(esc - r));
    esc++;
    if (*esc == ESC) {
      luaL_addchar(b, ESC);
    } else if (*esc == '0') {
      luaL_addlstring(b, s, (size_t)(e - s));
    } else if (isdigit((unsigned char)*esc)) {
      const char *cap;
      ptrdiff_t len = capture_get(m, *esc - '1', s, e, &cap);
      if (len == CAP_POSITION) luaL_addvalue(b);
      else luaL_addlstring(b, cap, (size_t)len);
    } else {
      luaL_error(L, "invalid use of '%c' in replacement string", ESC);
    }
    l -= (size_t)(esc + 1 - r);
    r = esc + 1;
  }
  luaL_addlstring(b, r, l);
}

/* The replacement of the match from 's' to 'e' by argument 3 of type
** 'tr'; returns whether the text changed (a nil or false from a function
** or a table keeps the match). */
static int add_value(Matcher *m, luaL_Buffer *b, const char *s, const char *e, int tr) {
  lua_State *L = m->L;
  if (tr == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    int n = captures_push(m, s, e);
    lua_call(L, n, 1);
  } else if (tr == LUA_TTABLE) {
    capture_push(m, 0, s, e);
    lua_gettable(L, 3);
  } else {
    add_string(m, b, s, e);
    return 1;
  }
  if (!lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    luaL_addlstring(b, s, (size_t)(e - s));
    return 0;
  }
  if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  luaL_addvalue(b);
  return 1;
}

static int lpattern_gsub(lua_State *L) {
  size_t ls, lp;
  const char *src = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  int tr = lua_type(L, 3);
  lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1), n = 0;
  luaL_argexpected(L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
                   "string/function/table");
  const char *last = NULL;
  int anchor = *p == '^', changed = 0;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (anchor) p++, lp--;
  Matcher m;
  matcher_init(&m, L, src, ls, p, lp);
  while (n < max) {
    matcher_reset(&m);
    const char *e = do_match(&m, src, p);
    if (e && e != last) {   /* a match, not an empty one right after the last */
      n++;
      changed |= add_value(&m, &b, src, e, tr);
      src = last = e;
    } else if (src < m.s_end) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchor) break;
  }
  if (!changed) {
    lua_pushvalue(L, 1);
  } else {
    luaL_addlstring(&b, src, (size_t)(m.s_end - src));
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, n);
  return 2;
}

/* ------------------------------------------------------------ installing */

void lpattern_open(lua_State *L) {
  static const luaL_Reg fns[] = {{"find", lpattern_find},
                                 {"match", lpattern_match},
                                 {"gmatch", lpattern_gmatch},
                                 {"gsub", lpattern_gsub},
                                 {NULL, NULL}};
  lua_getglobal(L, "string");
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}
