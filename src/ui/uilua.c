/*
** uilua.c -- the global 'ui' table: the Lua functions behind every key.
**
** A key press runs one of these through the Lua layer, and a script may
** call them too ('ui.toggle()', 'ui.select("untied")'). They never wait
** for a step to be taken; the in_scale ladder alone holds the lab for an
** instant, between two steps, as it must read the value it steps from.
** Those that change training (toggle, step, select, the tie cycle, a
** setting scaled, the ladder) are the Lua layer's (luaapi_open_ui), the
** same a replay gets: this file gives them the screen's state and its
** message line. Every call a key makes says what it did on the message
** line. The Ui travels as an upvalue, never a C global.
*/
#include <lauxlib.h>
#include <math.h>
#include <string.h>

#include "ui/uistate.h"

static Ui *getui(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

/* ------------------------------------------------------------ the throttle */

#define SPEED_MIN 0.1   /* steps a second: slower than this looks stopped */

static void speed_message(Ui *ui, double v) {
  if (v > 0) ui_message(ui, ROLE_TEXT, "speed: %.3g steps/s ([ slower, ] faster)", v);
  else ui_message(ui, ROLE_TEXT, "speed: flat out ([ slower)");
}

static int lui_speed(lua_State *L) {
  Ui *ui = getui(L);
  if (!lua_isnoneornil(L, 1)) {
    double v = luaL_checknumber(L, 1);
    luaL_argcheck(L, v == 0 || (v >= TRAINER_SPEED_MIN && v <= 1e6), 1,
                  "must be 0 (flat out) or steps a second, from 0.01 to 1e6");
    trainer_set_speed(ui->trainer, v);
    speed_message(ui, v);
    ui_dirty(ui, 1u << P_STATUS);
  }
  lua_pushnumber(L, trainer_speed(ui->trainer));
  return 1;
}

/* Half the speed (from flat out, half the speed measured now); or twice
** the speed, and flat out once that is faster than the lab goes. */
static int speed_by(lua_State *L, int faster) {
  Ui *ui = getui(L);
  double v = trainer_speed(ui->trainer), measured = ui->snap->steps_per_s;
  int known = isfinite(measured) && measured > 0;
  if (faster) {
    if (v > 0) trainer_set_speed(ui->trainer, v = known && 2 * v >= measured ? 0 : 2 * v);
    speed_message(ui, v);
  } else {
    if (v <= 0) v = known ? measured : 2 * SPEED_MIN;
    if (v / 2 < SPEED_MIN) {
      ui_message(ui, ROLE_WARN, "speed: %.3g steps/s is the slowest ([ goes no lower)", v);
    } else {
      trainer_set_speed(ui->trainer, v / 2);
      speed_message(ui, v / 2);
    }
    v = trainer_speed(ui->trainer);
  }
  ui_dirty(ui, 1u << P_STATUS);
  lua_pushnumber(L, v);
  return 1;
}

static int lui_slower(lua_State *L) { return speed_by(L, 0); }
static int lui_faster(lua_State *L) { return speed_by(L, 1); }

/* ------------------------------------------------------------ the view */

/* Some run has a fitted lens to show. */
static int any_fit(const Ui *ui) {
  for (int i = 0; i < ui->snap->n_runs; i++)
    if (ui->snap->runs[i].m.fitted_lens.step >= 0) return 1;
  return 0;
}

/* The lens after 'mode' in the order 'l' goes: the fitted one only once
** there is a fit. */
static LensMode next_lens(const Ui *ui, int mode) {
  int next = (mode + 1) % LENS_MODES;
  return next == LENS_FITTED && !any_fit(ui) ? LENS_LOGIT : (LensMode)next;
}

/* ui.lens([mode]): "tuned" (trained online), "fitted" (r:fit_lens) or
** "logit"; none: the next. */
static int lui_lens(lua_State *L) {
  Ui *ui = getui(L);
  const char *names[LENS_MODES + 1] = {NULL};
  for (int i = 0; i < LENS_MODES; i++) names[i] = lens_modes[i].lua;
  ui->lens_mode = lua_isnoneornil(L, 1) ? (int)next_lens(ui, ui->lens_mode) : luaL_checkoption(L, 1, NULL, names);
  ui_dirty(ui, 1u << P_LENS | 1u << P_LENSHIST | 1u << P_BIG);
  ui_message(ui, ROLE_TEXT, "lens: %s lens (l: the %s lens)", names[ui->lens_mode], names[next_lens(ui, ui->lens_mode)]);
  lua_pushstring(L, names[ui->lens_mode]);
  return 1;
}

/* ui.zoom([name]): a chart over the whole chart area by its name (the
** panel table's NAME_ZOOM), "none", or the next in the table's order after
** none; in the present view with no name, the talk's next chart. */
static int lui_zoom(lua_State *L) {
  Ui *ui = getui(L);
  if (ui->view == VIEW_PRESENT && lua_isnoneornil(L, 1)) {
    ui->present_chart = layout_next(NAME_PRESENT, ui->present_chart, 0);
    ui->present_series[0] = '\0';
    ui->relayout = 1;
    ui_message(ui, ROLE_TEXT, "present view: %s (z: the next chart, p: back to the lab)", present_chart_name(ui));
    lua_pushstring(L, present_chart_name(ui));
    return 1;
  }
  int zoom;
  if (lua_isnoneornil(L, 1)) {
    zoom = layout_next(NAME_ZOOM, ui->zoom, 1);
  } else {
    const char *want = luaL_checkstring(L, 1);
    int none = strcmp(want, "none") == 0;
    zoom = none ? -1 : layout_named(NAME_ZOOM, want);
    if (zoom < 0 && !none) {
      char list[256];
      layout_names(NAME_ZOOM, list, sizeof list);
      return luaL_argerror(L, 1, lua_pushfstring(L, "one of none, %s", list));
    }
  }
  const char *name = zoom < 0 ? "none" : layout_name(zoom, NAME_ZOOM);
  ui->zoom = zoom;
  ui->scatter = 0;   /* a zoomed chart is what was asked to be seen */
  ui->relayout = 1;
  if (ui->zoom < 0) ui_message(ui, ROLE_TEXT, "zoom: none, every chart shown (z: zoom the first)");
  else ui_message(ui, ROLE_TEXT, "zoom: %s (z: the next chart, then none)", name);
  lua_pushstring(L, name);
  return 1;
}

/* The row norm scatter in place of the charts (the present view: of its
** chart), or the charts back. */
static int lui_scatter(lua_State *L) {
  Ui *ui = getui(L);
  int shown = ui->view == VIEW_PRESENT ? ui->present_chart == P_SCATTER : ui->scatter;
  int on = lua_isnoneornil(L, 1) ? !shown : lua_toboolean(L, 1);
  if (ui->view == VIEW_PRESENT) {
    ui->present_chart = on ? P_SCATTER : shown ? P_LOSS : ui->present_chart;
    ui->present_series[0] = '\0';
  } else {
    ui->scatter = on;
  }
  ui->relayout = 1;
  const TrainerRun *r = ui_selected(ui);
  if (on) ui_message(ui, ROLE_TEXT, "scatter: row norms of %s against token frequency (s: back)", r ? r->name : "-");
  else ui_message(ui, ROLE_TEXT, "scatter: off, the charts are back");
  lua_pushboolean(L, on);
  return 1;
}

/* Is 'name' a series a script plotted (lab.plot), or a group of them
** ("name: arm")? */
static int is_plot(Ui *ui, const char *name) {
  History *plots = ui->api ? luaapi_plots(ui->api) : NULL;
  for (int i = 0; plots && i < history_n_series(plots); i++)
    if (present_series_member(history_series_name(plots, i), name)) return 1;
  return 0;
}

/* ui.present([chart | on]): a chart by name (or a script's series) in the
** present view, the view on or off, or toggled; returns the chart shown,
** or false in the lab view. */
static int lui_present(lua_State *L) {
  Ui *ui = getui(L);
  int on;
  if (lua_type(L, 1) == LUA_TSTRING) {
    const char *want = luaapi_name_arg(L, 1, "ui.present");
    int panel = layout_named(NAME_PRESENT, want);
    if (panel < 0 && !is_plot(ui, want)) {
      char list[256];
      layout_names(NAME_PRESENT, list, sizeof list);
      return luaL_argerror(L, 1, lua_pushfstring(L, "no chart '%s': one of %s, or a lab.plot series", want, list));
    }
    ui->present_chart = panel >= 0 ? panel : P_EXTRA;
    snprintf(ui->present_series, sizeof ui->present_series, "%s", panel >= 0 ? "" : want);
    on = 1;
  } else {
    on = lua_isnoneornil(L, 1) ? ui->view != VIEW_PRESENT : lua_toboolean(L, 1);
  }
  ui->view = on ? VIEW_PRESENT : VIEW_LAB;
  ui->relayout = 1;
  ui_dirty(ui, DIRTY_ALL);
  if (on) {
    ui_message(ui, ROLE_TEXT, "present view: %s (z: the next chart, p: back to the lab)", present_chart_name(ui));
    lua_pushstring(L, present_chart_name(ui));
  } else {
    ui_message(ui, ROLE_TEXT, "lab view (p: the present view of %s)", present_chart_name(ui));
    lua_pushboolean(L, 0);
  }
  return 1;
}

static int lui_glyphs(lua_State *L) {
  Ui *ui = getui(L);
  static const char *const tiers[] = {"braille", "block", "ascii", NULL};
  int g = lua_isnoneornil(L, 1) ? ((int)ui->term.glyphs + 1) % 3 : luaL_checkoption(L, 1, NULL, tiers);
  /* Without UTF-8 only ASCII can be drawn. */
  ui->term.glyphs = ui->term.utf8 ? (GraphGlyphs)g : GRAPH_ASCII;
  ui_dirty(ui, DIRTY_ALL);
  if (ui->term.glyphs != (GraphGlyphs)g) ui_message(ui, ROLE_WARN, "chart glyphs: ascii (no UTF-8 here)");
  else ui_message(ui, ROLE_TEXT, "chart glyphs: %s (g: the next tier)", tiers[g]);
  lua_pushstring(L, tiers[ui->term.glyphs]);
  return 1;
}

/* ui.theme([name]): the colours in use, or a change to dark, light or mono
** (NO_COLOR still wins). */
static int lui_theme(lua_State *L) {
  Ui *ui = getui(L);
  static const char *const themes[] = {"auto", "dark", "light", "mono", NULL};
  if (!lua_isnoneornil(L, 1)) {
    ui->theme = luaL_checkoption(L, 1, NULL, themes);
    if (ui->screen) {
      term_set_theme(&ui->term, (TermTheme)ui->theme);
      ui->repaint = 1;
      ui_dirty(ui, DIRTY_ALL);
      ui_message(ui, ROLE_TEXT, "theme %s", term_theme_name(ui->term.theme));
    }
  }
  lua_pushstring(L, term_theme_name(ui->screen ? ui->term.theme : (TermTheme)ui->theme));
  return 1;
}

static int lui_help(lua_State *L) {
  Ui *ui = getui(L);
  int on = lua_isnoneornil(L, 1) ? !ui->help : lua_toboolean(L, 1);
  if (on != ui->help) {
    ui->help = on;
    ui->repaint = 1;
    ui_message(ui, ROLE_TEXT, on ? "help: Esc or ? closes it, any other key closes it and acts" : "help closed");
  }
  lua_pushboolean(L, on);
  return 1;
}

static int lui_focus(lua_State *L) {
  Ui *ui = getui(L);
  ui->focus = lua_isnoneornil(L, 1) ? 1 : lua_toboolean(L, 1);
  if (ui->screen) curs_set(ui->focus ? 1 : 0);
  ui_dirty(ui, 1u << P_INPUT | 1u << P_HINT);
  return 0;
}

static int lui_scroll(lua_State *L) {
  Ui *ui = getui(L);
  int pages = (int)luaL_optinteger(L, 1, 0);
  scroll_page(ui->scroll, pages, ui->lay.r[P_SCROLL].h);
  ui_dirty(ui, 1u << P_SCROLL);
  if (scroll_at_end(ui->scroll))
    ui_message(ui, ROLE_TEXT, pages < 0 ? "output: nothing older to show" : "output: the newest lines");
  else if (scroll_at_start(ui->scroll)) ui_message(ui, ROLE_TEXT, "output: the oldest lines (PgDn on)");
  else ui_message(ui, ROLE_TEXT, "output: %s (PgUp back, PgDn on)", pages < 0 ? "a page back" : "a page on");
  return 0;
}

static int lui_redraw(lua_State *L) {
  Ui *ui = getui(L);
  ui->repaint = 1;
  ui_message(ui, ROLE_TEXT, "screen redrawn");
  return 0;
}

static int lui_quit(lua_State *L) {
  Ui *ui = getui(L);
  ui_request_quit(ui, lua_isnoneornil(L, 1) ? -1 : lua_toboolean(L, 1));
  return 0;
}

static int lui_message(lua_State *L) {
  ui_message(getui(L), ROLE_TEXT, "%s", luaL_checkstring(L, 1));
  return 0;
}

/* One line per run: what the status line shows (for the line REPL too). */
static int lui_status(lua_State *L) {
  Ui *ui = getui(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  const TrainerSnap *s = ui->snap;
  lua_pushfstring(L, "%s, %d runs", s->running ? "running" : "paused", s->n_runs);
  luaL_addvalue(&b);
  double speed = trainer_speed(ui->trainer);
  if (speed > 0) {
    char line[64];
    snprintf(line, sizeof line, ", speed %.3g steps/s", speed);
    luaL_addstring(&b, line);
  }
  for (int i = 0; i < s->n_runs; i++) {
    const RunMetrics *m = &s->runs[i].m;
    char tie[16], line[256];
    snprintf(line, sizeof line, "\n%s: tie %s, in_scale %g, out_scale %g, step %ld, loss %.4f, %.0f tok/s%s",
             s->runs[i].name, config_tie_name(m->tie_k, m->dim, tie), m->in_scale, m->out_scale, m->step, m->loss,
             m->tokens_per_s, m->paused ? ", paused" : "");
    luaL_addstring(&b, line);
  }
  luaL_pushresult(&b);
  return 1;
}

/* ui.smooth([w]): the charts' smoothing, an exponential moving average of
** weight w over the faint raw line (0: raw lines only, at most 0.99);
** returns the weight in use. */
static int lui_smooth(lua_State *L) {
  Ui *ui = getui(L);
  if (!lua_isnoneornil(L, 1)) {
    double w = luaL_checknumber(L, 1);
    luaL_argcheck(L, w >= 0 && w <= 0.99, 1, "a weight from 0 (raw) to 0.99");
    ui->smooth = w;
    ui->repaint = 1;
    if (w > 0) ui_message(ui, ROLE_TEXT, "charts: smoothed, weight %.2f over the raw line", w);
    else ui_message(ui, ROLE_TEXT, "charts: raw lines");
  }
  lua_pushnumber(L, ui->smooth);
  return 1;
}

static const luaL_Reg funcs[] = {
    {"lens", lui_lens},       {"zoom", lui_zoom},       {"present", lui_present}, {"glyphs", lui_glyphs},
    {"help", lui_help},       {"focus", lui_focus},     {"scroll", lui_scroll},   {"redraw", lui_redraw},
    {"quit", lui_quit},       {"message", lui_message}, {"status", lui_status},   {"scatter", lui_scatter},
    {"speed", lui_speed},     {"slower", lui_slower},   {"faster", lui_faster},   {"theme", lui_theme},
    {"smooth", lui_smooth},
    {NULL, NULL},
};

/* ------------------------------------------------------------ what training's functions need of the screen */

static const char *owner_selected(void *ctx) {
  const TrainerRun *r = ui_selected(ctx);
  return r ? r->name : NULL;
}

static void owner_select(void *ctx, int id, const char *name) {
  Ui *ui = ctx;
  ui->sel_id = id;
  ui_dirty(ui, DIRTY_ALL);
}

static int owner_running(void *ctx, int on) {
  Ui *ui = ctx;
  if (on >= 0) {
    trainer_set_running(ui->trainer, on);
    ui_dirty(ui, 1u << P_STATUS);
  }
  return trainer_running(ui->trainer);
}

static void owner_say(void *ctx, int warn, const char *line) {
  Ui *ui = ctx;
  ui_message(ui, warn ? ROLE_WARN : ROLE_TEXT, "%s", line);
  ui_dirty(ui, 1u << P_STATUS);
}

static const char *owner_times(void *ctx) { return term_glyph(&((Ui *)ctx)->term, GLYPH_TIMES); }

int uilua_open(Ui *ui, Err *err) {
  lua_State *L = luaapi_state(ui->api);
  if (!L) return err_set(err, "no Lua state");
  lua_newtable(L);
  lua_pushlightuserdata(L, ui);
  luaL_setfuncs(L, funcs, 1);
  LuaApiUiOwner owner = {.selected = owner_selected, .select = owner_select, .running = owner_running,
                         .say = owner_say, .times = owner_times, .ctx = ui};
  luaapi_open_ui(ui->api, &owner);
  uiscript_open(ui, L);
  lua_setglobal(L, "ui");
  return 0;
}
