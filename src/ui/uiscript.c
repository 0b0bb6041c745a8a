/*
** uiscript.c -- scripts on the screen: the results panel, which keeps what
** a script printed on screen after it ends, and the speaker's keys ('.'
** the next phase, ',' pause or resume), with the Lua functions behind them
** in the 'ui' table: ui.results, ui.next_phase, ui.pause_script.
**
** The Lua layer keeps a script file's output (luaapi_results); when a
** script ends having printed, the panel opens on it, in the place of the
** lens, alignment and sample panels, and PgUp/PgDn scroll it while it is
** shown. The Ui travels as an upvalue, never a C global.
*/
#include <lauxlib.h>
#include <string.h>

#include "base/utf8.h"
#include "ui/uistate.h"
#include "ui/width.h"

#define TAB_WIDTH 8
#define LINE_MAX_BYTES 2048   /* of one line as drawn: longer ones are cut */

static Ui *getui(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

static void show_results(Ui *ui, int on) {
  if (on != ui->results) ui->relayout = 1;
  ui->results = on;
  ui_dirty(ui, 1u << P_RESULTS | 1u << P_HINT);
}

/* ------------------------------------------------------------ the text */

/* The line at '*p' (up to '\n' or 'end') with tabs expanded, into 'out';
** '*p' moves past it. A line longer than 'out' is cut on a character
** boundary (the panel then shows an ellipsis anyway). */
static void next_line(const char **p, const char *end, char *out, size_t cap) {
  size_t n = 0, measured = 0;   /* out[0, measured) takes 'col' columns */
  int col = 0;
  const char *s = *p;
  for (; s < end && *s != '\n'; s++) {
    if (*s == '\t' && n < cap - 1) {
      /* To the next tab stop, in the columns the text so far takes (a
      ** wide character two); only what came since the last tab is measured. */
      col += width_cols(out + measured, n - measured);
      do {
        if (n < cap - 1) out[n++] = ' ';
      } while (++col % TAB_WIDTH);
      measured = n;
    } else if (*s != '\t' && n < cap - 1) {
      out[n++] = *s;
    }
  }
  if (n == cap - 1) n -= utf8_incomplete_tail(out, n);
  out[n] = '\0';
  *p = s < end ? s + 1 : end;
}

static int count_lines(const char *s, size_t n) {
  int lines = 0;
  for (size_t i = 0; i < n; i++) lines += s[i] == '\n';
  return lines + (n > 0 && s[n - 1] != '\n');
}

/* Rows for text under the title row. */
static int text_rows(const Ui *ui) { return ui->lay.r[P_RESULTS].h - 1; }

static void clamp_top(Ui *ui, int lines) {
  int rows = text_rows(ui), max = lines - (rows > 0 ? rows : 1);
  if (ui->results_top > max) ui->results_top = max;
  if (ui->results_top < 0) ui->results_top = 0;
}

/* A line in at most 'wd' columns: one that does not fit ends in an ellipsis. */
static void draw_line(const Term *t, WINDOW *w, int y, int wd, const char *line) {
  if (term_width(line) <= wd) {
    term_print(t, w, y, 0, wd, ROLE_TEXT, line);
    return;
  }
  int used = term_print(t, w, y, 0, wd - 1, ROLE_TEXT, line);
  term_print(t, w, y, used, 1, ROLE_LABEL, term_glyph(t, GLYPH_ELLIPSIS));
}

/* The title: as much of "results, lines a-b of n  PgUp/PgDn scroll  r hides"
** as fits, the less needed parts dropped first. */
static void draw_title(Ui *ui, WINDOW *w, int wd, int first, int last, int lines) {
  const Term *t = &ui->term;
  char where[64];
  snprintf(where, sizeof where, ", lines %d-%d of %d", first, last, lines);
  const char *keys = lines > last || first > 1 ? "  PgUp/PgDn scroll  r hides" : "  r hides";
  int need = term_width("results") + term_width(where) + term_width(keys);
  int x = term_print(t, w, 0, 0, wd, ROLE_TITLE, "results");
  if (lines > 0 && need - term_width(keys) <= wd) x += term_print(t, w, 0, x, wd - x, ROLE_LABEL, where);
  if (x + term_width(keys) <= wd) term_print(t, w, 0, x, wd - x, ROLE_KEY, keys);
}

void panel_results(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  if (h < 1 || !ui->api || !ui->results) return;
  size_t n;
  long seq;
  const char *text = luaapi_results(ui->api, &n, &seq);
  int lines = count_lines(text, n);
  clamp_top(ui, lines);
  int first = ui->results_top, shown = lines - first < h - 1 ? lines - first : h - 1;
  draw_title(ui, w, wd, first + 1, first + shown, lines);
  if (lines == 0) {
    term_print(&ui->term, w, 1, 0, wd, ROLE_LABEL, "no script has printed anything yet");
    return;
  }
  const char *p = text, *end = text + n;
  char line[LINE_MAX_BYTES];
  for (int i = 0; i < first; i++) next_line(&p, end, line, sizeof line);
  for (int y = 1; y <= shown; y++) {
    next_line(&p, end, line, sizeof line);
    draw_line(&ui->term, w, y, wd, line);
  }
}

/* ------------------------------------------------------------ the loop's part */

void uiscript_after_pump(Ui *ui) {
  if (!ui->api) return;
  /* A new phase's caption is news: it replaces a key's message at once. */
  if (luaapi_phase(ui->api) != ui->phase_seen) {
    ui->phase_seen = luaapi_phase(ui->api);
    ui->msg_until = 0;
    ui_dirty(ui, 1u << P_HINT);
  }
  /* The hint line asks for '.' while a script waits for it. */
  if (luaapi_waiting_key(ui->api) != ui->key_wait_seen) {
    ui->key_wait_seen = !ui->key_wait_seen;
    ui_dirty(ui, 1u << P_HINT);
  }
  size_t n;
  long seq;
  luaapi_results(ui->api, &n, &seq);
  if (seq == ui->results_seen) return;
  ui->results_seen = seq;
  ui->results_top = 0;
  show_results(ui, 1);
  ui_message(ui, ROLE_TEXT, "the script ended: its output stays in the results panel (r hides it)");
}

/* The lower panels' area, unless the layout placed the results panel
** itself; nothing when they are not shown (a zoomed chart, the present view). */
void uiscript_layout(Ui *ui) {
  Layout *l = &ui->lay;
  if (!ui->results || ui->view != VIEW_LAB || l->too_small || l->r[P_RESULTS].h > 0) return;
  static const int lower[] = {P_LENS, P_LENSHIST, P_ALIGN, P_SAMPLE, P_EXTRA};
  int y0 = l->rows, x0 = l->cols, y1 = 0, x1 = 0;
  for (size_t i = 0; i < sizeof lower / sizeof *lower; i++) {
    Rect r = l->r[lower[i]];
    if (r.h <= 0 || r.w <= 0) continue;
    if (r.y < y0) y0 = r.y;
    if (r.x < x0) x0 = r.x;
    if (r.y + r.h > y1) y1 = r.y + r.h;
    if (r.x + r.w > x1) x1 = r.x + r.w;
  }
  if (y1 <= y0 || x1 <= x0) return;
  for (size_t i = 0; i < sizeof lower / sizeof *lower; i++) l->r[lower[i]] = (Rect){0, 0, 0, 0};
  l->r[P_RESULTS] = (Rect){y0, x0, y1 - y0, x1 - x0};
}

/* ------------------------------------------------------------ Lua */

/* ui.results([on]): true or false shows or hides the panel, "toggle" flips
** it; returns the text and whether the panel is shown. */
static int lui_results(lua_State *L) {
  Ui *ui = getui(L);
  if (lua_type(L, 1) == LUA_TSTRING) {
    luaL_argcheck(L, strcmp(lua_tostring(L, 1), "toggle") == 0, 1, "true, false or 'toggle'");
    show_results(ui, !ui->results);
  } else if (!lua_isnoneornil(L, 1)) {
    show_results(ui, lua_toboolean(L, 1));
  }
  if (lua_gettop(L) > 0 && ui->results && ui->lay.r[P_RESULTS].h == 0 && ui->view == VIEW_LAB && !ui->relayout)
    ui_message(ui, ROLE_TEXT, "results: no room while a chart is zoomed (z back to none)");
  else if (lua_gettop(L) > 0)
    ui_message(ui, ROLE_TEXT, "results panel %s", ui->results ? "shown (PgUp/PgDn scroll, r hides)" : "hidden");
  size_t n;
  long seq;
  const char *text = luaapi_results(ui->api, &n, &seq);
  lua_pushlstring(L, text, n);
  lua_pushboolean(L, ui->results);
  return 2;
}

static int lui_next_phase(lua_State *L) {
  Ui *ui = getui(L);
  int woke = luaapi_advance(ui->api);
  if (woke) ui_message(ui, ROLE_TEXT, "next phase");
  else if (luaapi_scripts(ui->api) > 0) ui_message(ui, ROLE_TEXT, "'.': the script is busy, not waiting for the speaker");
  else ui_message(ui, ROLE_TEXT, "'.' moves a running script to its next phase: none runs");
  lua_pushinteger(L, woke);
  return 1;
}

/* ui.pause_script([on]): pause (true) or resume (false) the scripts, or
** the other way round; returns whether they are paused. */
static int lui_pause_script(lua_State *L) {
  Ui *ui = getui(L);
  int on = lua_isnoneornil(L, 1) ? !luaapi_paused(ui->api) : lua_toboolean(L, 1);
  if (on && luaapi_scripts(ui->api) == 0) {
    ui_message(ui, ROLE_TEXT, "',' pauses a running script: none runs");
    lua_pushboolean(L, 0);
    return 1;
  }
  luaapi_pause(ui->api, on);
  ui_message(ui, on ? ROLE_WARN : ROLE_TEXT, "%s", on ? "script paused, its steps held: ',' resumes" : "script resumed");
  ui_dirty(ui, 1u << P_STATUS | 1u << P_HINT);
  lua_pushboolean(L, on);
  return 1;
}

/* ui.scroll(pages): the results while they are shown, else the REPL's
** output (the function it wraps, upvalue 2). */
static int lui_scroll(lua_State *L) {
  Ui *ui = getui(L);
  int rows = text_rows(ui);
  if (!ui->results || rows <= 0) {
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    return 0;
  }
  size_t n;
  long seq;
  const char *text = luaapi_results(ui->api, &n, &seq);
  ui->results_top += (int)luaL_optinteger(L, 1, 0) * (rows > 1 ? rows - 1 : 1);
  clamp_top(ui, count_lines(text, n));
  ui_dirty(ui, 1u << P_RESULTS);
  return 0;
}

void uiscript_open(Ui *ui, lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"results", lui_results}, {"next_phase", lui_next_phase}, {"pause_script", lui_pause_script}, {NULL, NULL}};
  lua_pushlightuserdata(L, ui);
  luaL_setfuncs(L, funcs, 1);
  lua_pushlightuserdata(L, ui);
  lua_getfield(L, -2, "scroll");
  lua_pushcclosure(L, lui_scroll, 2);
  lua_setfield(L, -2, "scroll");
}
