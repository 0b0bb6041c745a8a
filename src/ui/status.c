/*
** status.c -- the lines of text around the charts: the status line at the
** top, the hint line at the bottom (a question, a message, the script's
** caption or the key hints) and the help overlay with the key table.
*/
#include <math.h>
#include <string.h>

#include "../core/clock.h"
#include "uistate.h"

/* "12.3k tok/s", or "12.3k/s" when short of room. */
static void rate_text(double v, int wide, char *buf, size_t cap) {
  const char *unit = wide ? " tok/s" : "/s";
  if (!isfinite(v)) snprintf(buf, cap, "-%s", unit);   /* not stepped yet */
  else if (v >= 1e6) snprintf(buf, cap, "%.1fM%s", v / 1e6, unit);
  else if (v >= 1e3) snprintf(buf, cap, "%.1fk%s", v / 1e3, unit);
  else snprintf(buf, cap, "%.0f%s", v, unit);
}

/* One run: "name tie in×1 12.3k tok/s"; 'wide' adds out_scale and loss. */
static int run_text(Ui *ui, WINDOW *w, int x, int maxw, int i, int wide) {
  const Term *t = &ui->term;
  const TrainerRun *r = &ui->snap->runs[i];
  const RunMetrics *m = &r->m;
  int sel = r->id == ui_selected(ui)->id, x0 = x;
  char tie[16], rate[32];
  config_tie_name(m->tie_k, m->dim, tie);
  rate_text(m->tokens_per_s, wide, rate, sizeof rate);
  if (sel) x += term_print(t, w, 0, x, maxw - (x - x0), ROLE_SELECT, term_glyph(t, GLYPH_SELECTED));
  x += term_print(t, w, 0, x, maxw - (x - x0), sel ? ROLE_SELECT : ROLE_SERIES + i % TERM_SERIES_COLORS, r->name);
  x += term_printf(t, w, 0, x, maxw - (x - x0), ROLE_TEXT, " %s in%s%g", tie, term_glyph(t, GLYPH_TIMES), m->in_scale);
  if (wide || m->out_scale != 1)
    x += term_printf(t, w, 0, x, maxw - (x - x0), ROLE_TEXT, " out%s%g", term_glyph(t, GLYPH_TIMES), m->out_scale);
  if (wide && isfinite(m->loss)) x += term_printf(t, w, 0, x, maxw - (x - x0), ROLE_TEXT, " loss %.3f", m->loss);
  if (m->paused) x += term_print(t, w, 0, x, maxw - (x - x0), ROLE_ERROR, " paused");
  else x += term_printf(t, w, 0, x, maxw - (x - x0), ROLE_LABEL, " %s", rate);
  return x - x0;
}

void panel_status(Ui *ui, WINDOW *w, int h, int wd) {
  (void)h;
  werase(w);
  const Term *t = &ui->term;
  const TrainerSnap *s = ui->snap;
  const TrainerRun *sel = ui_selected(ui);
  int x = 0, running = trainer_running(ui->trainer);   /* the flag itself: a key shows at once */
  x += term_printf(t, w, 0, x, wd - x, running ? ROLE_OK : ROLE_WARN, " %s %s",
                   term_glyph(t, running ? GLYPH_RUN : GLYPH_PAUSE), running ? "RUNNING" : "PAUSED");
  if (s->owed > 0) x += term_printf(t, w, 0, x, wd - x, ROLE_OK, " +%ld", s->owed);
  x += term_printf(t, w, 0, x, wd - x, ROLE_TEXT, " step %ld", sel ? sel->m.step : 0L);
  int wide = wd >= 120;
  for (int i = 0; i < s->n_runs && x < wd; i++) {
    x += term_printf(t, w, 0, x, wd - x, ROLE_AXIS, " %s ", term_glyph(t, GLYPH_VLINE));
    x += run_text(ui, w, x, wd - x, i, wide);
  }
  if (ui->api && luaapi_paused(ui->api) && x + 17 < wd) term_print(t, w, 0, wd - 15, 15, ROLE_WARN, " script paused ");
  else if (ui->api && luaapi_scripts(ui->api) > 0 && x + 10 < wd) term_print(t, w, 0, wd - 8, 8, ROLE_OK, " script ");
}

void panel_hint(Ui *ui, WINDOW *w, int h, int wd) {
  (void)h;
  werase(w);
  const Term *t = &ui->term;
  if (ui->ask == ASK_QUIT) {
    term_printf(t, w, 0, 0, wd, ROLE_WARN, "Save %d run(s) with unsaved steps before quitting?  y yes  n no  Esc stay",
                ui_unsaved(ui));
    return;
  }
  if (ui->msg_until > clock_seconds()) {
    term_print(t, w, 0, 0, wd, ui->msg_role, ui->msg);
    return;
  }
  const char *caption = ui->api ? luaapi_caption(ui->api) : "";
  if (caption && *caption) {
    term_print(t, w, 0, 0, wd, ROLE_TITLE, caption);
    return;
  }
  if (ui->focus) {
    term_print(t, w, 0, 0, wd, ROLE_LABEL,
               "Esc keys  Enter run  Tab complete  Up/Down history  PgUp/PgDn output  C-c clear");
    return;
  }
  int n, x = 0;
  const UiKey *k = ui_keys(&n);
  for (int i = 0; i < n && x < wd; i++) {
    if (!k[i].hint) continue;
    const char *sp = strchr(k[i].hint, ' ');
    int kl = sp ? (int)(sp - k[i].hint) : (int)strlen(k[i].hint);
    char key[16];
    snprintf(key, sizeof key, "%.*s", kl, k[i].hint);
    x += term_print(t, w, 0, x, wd - x, ROLE_KEY, key);
    x += term_printf(t, w, 0, x, wd - x, ROLE_LABEL, "%s  ", sp ? sp : "");
  }
}

/* A frame of box-drawing characters (ASCII without UTF-8). */
static void frame(const Term *t, WINDOW *w, int h, int wd) {
  const char *hz = t->utf8 ? "\u2500" : "-", *vt = t->utf8 ? "\u2502" : "|";
  const char *c[4] = {t->utf8 ? "\u250c" : "+", t->utf8 ? "\u2510" : "+", t->utf8 ? "\u2514" : "+",
                      t->utf8 ? "\u2518" : "+"};
  for (int x = 1; x < wd - 1; x++) {
    term_print(t, w, 0, x, 1, ROLE_AXIS, hz);
    term_print(t, w, h - 1, x, 1, ROLE_AXIS, hz);
  }
  for (int y = 1; y < h - 1; y++) {
    term_print(t, w, y, 0, 1, ROLE_AXIS, vt);
    term_print(t, w, y, wd - 1, 1, ROLE_AXIS, vt);
  }
  term_print(t, w, 0, 0, 1, ROLE_AXIS, c[0]);
  term_print(t, w, 0, wd - 1, 1, ROLE_AXIS, c[1]);
  term_print(t, w, h - 1, 0, 1, ROLE_AXIS, c[2]);
  term_print(t, w, h - 1, wd - 1, 1, ROLE_AXIS, c[3]);
}

typedef struct HelpCursor {
  Ui *ui;
  WINDOW *w;
  int y, h, wd;
} HelpCursor;

static void help_row(HelpCursor *c, const char *key, const char *help, const char *lua) {
  if (c->y >= c->h - 1) return;
  const Term *t = &c->ui->term;
  int inner = c->wd - 4, lua_w = lua ? term_width(lua) : 0;
  term_print(t, c->w, c->y, 2, 10, ROLE_KEY, key);
  term_print(t, c->w, c->y, 12, inner - 10 - (lua_w ? lua_w + 1 : 0), ROLE_TEXT, help);
  if (lua && inner - lua_w > 30) term_print(t, c->w, c->y, 2 + inner - lua_w, lua_w, ROLE_LABEL, lua);
  c->y++;
}

static void count_binding(void *ctx, int key, const char *name, const char *help) {
  (void)key, (void)name, (void)help;
  (*(int *)ctx)++;
}

/* Rows the help box needs: the frame, the keys, and the script's keys. */
int panel_help_rows(Ui *ui) {
  int n, rows = 2 + 2, bound = 0;
  const UiKey *k = ui_keys(&n);
  for (int i = 0; i < n; i++) rows += k[i].label != NULL;
  if (ui->api) luaapi_bindings(ui->api, count_binding, &bound);
  return rows + (bound ? bound + 1 : 0);
}

static void script_binding(void *ctx, int key, const char *name, const char *help) {
  HelpCursor *c = ctx;
  char label[16];
  if (key >= LUAAPI_KEY_F(1)) snprintf(label, sizeof label, "F%d", key - LUAAPI_KEY_F(0));
  else if (key < 32) snprintf(label, sizeof label, "C-%c", key + 'a' - 1);
  else snprintf(label, sizeof label, "%c", key);
  help_row(c, label, help && *help ? help : name, name);
}

void panel_help(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  frame(t, w, h, wd);
  term_print(t, w, 0, 2, wd - 4, ROLE_TITLE, " tielab keys: each one is the Lua call at the right ");
  HelpCursor c = {ui, w, 1, h, wd};
  int n;
  const UiKey *k = ui_keys(&n);
  for (int i = 0; i < n; i++)
    if (k[i].label) help_row(&c, k[i].label, k[i].help, k[i].lua);
  help_row(&c, "Esc", "back to the keys from the REPL, or close this", NULL);
  help_row(&c, "C-c", "stop a running script, or clear the line", NULL);
  if (ui->api && c.y < h - 2) {
    int before = c.y;
    c.y++;
    luaapi_bindings(ui->api, script_binding, &c);
    if (c.y > before + 1) term_print(t, w, before, 2, wd - 4, ROLE_TITLE, "script keys (lab.bind):");
  }
}
