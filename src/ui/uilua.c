/*
** uilua.c -- the global 'ui' table: the Lua functions behind every key.
**
** A key press runs one of these through the Lua layer, and a script may
** call them too ('ui.toggle()', 'ui.scale("in_scale", 2, "tied")'). They
** never wait for the trainer: changes to a run are queued as commands that
** the trainer runs between two steps, and the screen shows them with the
** next snapshot. The Ui travels as an upvalue, never a C global.
*/
#include <lauxlib.h>
#include <math.h>
#include <string.h>

#include "uistate.h"

static Ui *getui(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

/* The run named by argument 'arg' (a name), or the selected run. */
static const TrainerRun *run_arg(lua_State *L, Ui *ui, int arg) {
  if (lua_isnoneornil(L, arg)) {
    const TrainerRun *r = ui_selected(ui);
    if (!r) luaL_error(L, "there is no run");
    return r;
  }
  const char *name = luaL_checkstring(L, arg);
  for (int i = 0; i < ui->snap->n_runs; i++)
    if (strcmp(ui->snap->runs[i].name, name) == 0) return &ui->snap->runs[i];
  luaL_error(L, "no run named '%s'", name);
  return NULL;
}

static void post(lua_State *L, Ui *ui, TrainerFn fn, const void *arg, size_t n) {
  Err err;
  if (trainer_post(ui->trainer, fn, arg, n, &err) < 0) luaL_error(L, "%s", err.msg);
}

/* ------------------------------------------------------------ commands the trainer runs */

typedef struct ScaleArg {
  int id;
  char key[32];
  double factor;
} ScaleArg;

static int cmd_scale(Lab *lab, const void *arg, Err *err) {
  const ScaleArg *a = arg;
  Run *r = lab_run_by_id(lab, a->id);
  if (!r) return err_set(err, "run %d was removed", a->id);
  const RunOptions *o = run_options(r);
  double v = strcmp(a->key, "in_scale") == 0 ? o->in_scale : strcmp(a->key, "out_scale") == 0 ? o->out_scale : o->lr;
  return run_set_number(r, a->key, v * a->factor, err);
}

static int cmd_cycle_tie(Lab *lab, const void *arg, Err *err) {
  int id = *(const int *)arg;
  Run *r = lab_run_by_id(lab, id);
  if (!r) return err_set(err, "run %d was removed", id);
  const RunMetrics *m = run_metrics(r);
  char next[16];
  if (m->tie_k >= m->dim) snprintf(next, sizeof next, "untied");
  else if (m->tie_k == 0) snprintf(next, sizeof next, "%d", m->dim / 2);
  else snprintf(next, sizeof next, "tied");
  return run_set_text(r, "tie", next, err);
}

/* ------------------------------------------------------------ training */

static int lui_toggle(lua_State *L) {
  Ui *ui = getui(L);
  int on = !trainer_running(ui->trainer);
  trainer_set_running(ui->trainer, on);
  ui_message(ui, ROLE_TEXT, "training %s", on ? "runs" : "paused");
  ui_dirty(ui, 1u << P_STATUS);
  lua_pushboolean(L, on);
  return 1;
}

static int lui_running(lua_State *L) {
  Ui *ui = getui(L);
  if (!lua_isnoneornil(L, 1)) {
    trainer_set_running(ui->trainer, lua_toboolean(L, 1));
    ui_dirty(ui, 1u << P_STATUS);
  }
  lua_pushboolean(L, trainer_running(ui->trainer));
  return 1;
}

static int lui_step(lua_State *L) {
  Ui *ui = getui(L);
  lua_Integer n = luaL_optinteger(L, 1, 1);
  luaL_argcheck(L, n >= 1, 1, "must be at least 1");
  Err err;
  if (trainer_submit(ui->trainer, -1, (long)n, &err) < 0) return luaL_error(L, "%s", err.msg);
  return 0;
}

static int lui_cycle_tie(lua_State *L) {
  Ui *ui = getui(L);
  const TrainerRun *r = run_arg(L, ui, 1);
  int d = r->m.dim, k = r->m.tie_k;
  post(L, ui, cmd_cycle_tie, &r->id, sizeof r->id);
  if (k >= d) ui_message(ui, ROLE_TEXT, "%s: tie untied", r->name);
  else if (k == 0) ui_message(ui, ROLE_TEXT, "%s: tie %d of %d columns", r->name, d / 2, d);
  else ui_message(ui, ROLE_TEXT, "%s: tie tied", r->name);
  return 0;
}

static int lui_scale(lua_State *L) {
  Ui *ui = getui(L);
  static const char *const keys[] = {"in_scale", "out_scale", "lr", NULL};
  int which = luaL_checkoption(L, 1, NULL, keys);
  double f = luaL_checknumber(L, 2);
  luaL_argcheck(L, f > 0 && isfinite(f), 2, "must be a positive number");
  const TrainerRun *r = run_arg(L, ui, 3);
  ScaleArg a = {.id = r->id, .factor = f};
  snprintf(a.key, sizeof a.key, "%s", keys[which]);
  post(L, ui, cmd_scale, &a, sizeof a);
  ui_message(ui, ROLE_TEXT, "%s: %s %s %g", r->name, keys[which], term_glyph(&ui->term, GLYPH_TIMES), f);
  return 0;
}

/* ------------------------------------------------------------ the view */

static int lui_select(lua_State *L) {
  Ui *ui = getui(L);
  const TrainerSnap *s = ui->snap;
  if (!lua_isnoneornil(L, 1)) {
    ui->sel_id = run_arg(L, ui, 1)->id;
  } else if (s->n_runs > 0) {
    int i = 0;
    while (i < s->n_runs && s->runs[i].id != ui->sel_id) i++;
    ui->sel_id = s->runs[(i + 1) % s->n_runs].id;
  }
  ui_dirty(ui, DIRTY_ALL);
  const TrainerRun *r = ui_selected(ui);
  if (r) lua_pushstring(L, r->name);
  else lua_pushnil(L);
  return 1;
}

static int lui_selected(lua_State *L) {
  const TrainerRun *r = ui_selected(getui(L));
  if (r) lua_pushstring(L, r->name);
  else lua_pushnil(L);
  return 1;
}

static int lui_lens(lua_State *L) {
  Ui *ui = getui(L);
  static const char *const modes[] = {"tuned", "logit", NULL};
  ui->lens_logit = lua_isnoneornil(L, 1) ? !ui->lens_logit : luaL_checkoption(L, 1, NULL, modes);
  ui_dirty(ui, 1u << P_LENS);
  lua_pushstring(L, modes[ui->lens_logit]);
  return 1;
}

static const struct {
  const char *name;
  int panel;
} zooms[] = {{"none", -1}, {"loss", P_LOSS}, {"ratio", P_RATIO}, {"lens", P_LENS}, {"align", P_ALIGN}, {"extra", P_EXTRA}};
#define N_ZOOMS ((int)(sizeof zooms / sizeof zooms[0]))

static int lui_zoom(lua_State *L) {
  Ui *ui = getui(L);
  int i = 0;
  while (i < N_ZOOMS && zooms[i].panel != ui->zoom) i++;
  if (lua_isnoneornil(L, 1)) {
    i = (i + 1) % N_ZOOMS;
  } else {
    const char *want = luaL_checkstring(L, 1);
    for (i = 0; i < N_ZOOMS && strcmp(zooms[i].name, want) != 0; i++) {
    }
    if (i == N_ZOOMS) return luaL_argerror(L, 1, "one of none, loss, ratio, lens, align, extra");
  }
  ui->zoom = zooms[i].panel;
  ui->scatter = 0;   /* a zoomed chart is what was asked to be seen */
  ui->relayout = 1;
  lua_pushstring(L, zooms[i].name);
  return 1;
}

/* The row norm scatter in place of the charts (the present view: of its
** chart), or the charts back. */
static int lui_scatter(lua_State *L) {
  Ui *ui = getui(L);
  ui->scatter = lua_isnoneornil(L, 1) ? !ui->scatter : lua_toboolean(L, 1);
  ui->relayout = 1;
  lua_pushboolean(L, ui->scatter);
  return 1;
}

static int lui_present(lua_State *L) {
  Ui *ui = getui(L);
  int on = lua_isnoneornil(L, 1) ? ui->view != VIEW_PRESENT : lua_toboolean(L, 1);
  ui->view = on ? VIEW_PRESENT : VIEW_LAB;
  ui->relayout = 1;
  lua_pushboolean(L, on);
  return 1;
}

static int lui_glyphs(lua_State *L) {
  Ui *ui = getui(L);
  static const char *const tiers[] = {"braille", "block", "ascii", NULL};
  int g = lua_isnoneornil(L, 1) ? ((int)ui->term.glyphs + 1) % 3 : luaL_checkoption(L, 1, NULL, tiers);
  /* Without UTF-8 only ASCII can be drawn. */
  ui->term.glyphs = ui->term.utf8 ? (GraphGlyphs)g : GRAPH_ASCII;
  ui_dirty(ui, DIRTY_ALL);
  lua_pushstring(L, tiers[ui->term.glyphs]);
  return 1;
}

static int lui_help(lua_State *L) {
  Ui *ui = getui(L);
  int on = lua_isnoneornil(L, 1) ? !ui->help : lua_toboolean(L, 1);
  if (on != ui->help) {
    ui->help = on;
    ui->repaint = 1;
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
  scroll_page(ui->scroll, (int)luaL_optinteger(L, 1, 0), ui->lay.r[P_SCROLL].h);
  ui_dirty(ui, 1u << P_SCROLL);
  return 0;
}

static int lui_redraw(lua_State *L) {
  getui(L)->repaint = 1;
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

static const luaL_Reg funcs[] = {
    {"toggle", lui_toggle},   {"running", lui_running}, {"step", lui_step},       {"cycle_tie", lui_cycle_tie},
    {"scale", lui_scale},     {"select", lui_select},   {"selected", lui_selected}, {"lens", lui_lens},
    {"zoom", lui_zoom},       {"present", lui_present}, {"glyphs", lui_glyphs},   {"help", lui_help},
    {"focus", lui_focus},     {"scroll", lui_scroll},   {"redraw", lui_redraw},   {"quit", lui_quit},
    {"message", lui_message}, {"status", lui_status},   {"scatter", lui_scatter}, {NULL, NULL},
};

int uilua_open(Ui *ui, Err *err) {
  lua_State *L = luaapi_state(ui->api);
  if (!L) return err_set(err, "no Lua state");
  lua_newtable(L);
  lua_pushlightuserdata(L, ui);
  luaL_setfuncs(L, funcs, 1);
  uiscript_open(ui, L);
  lua_setglobal(L, "ui");
  return 0;
}
