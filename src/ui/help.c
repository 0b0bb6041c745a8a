/*
** help.c -- the help overlay: every key of the table with what it does and
** the Lua call it makes, then the keys a script bound (lab.bind). When one
** key to a row does not fit the screen, two share a row, without the Lua
** calls; a description too long for its room is shortened (fit.c).
*/
#include <stdio.h>

#include "ui/fit.h"
#include "ui/uistate.h"

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
  int two;    /* too many keys for the rows: two to a row, without Lua calls */
  int col;    /* in two columns: the next key goes right */
} HelpCursor;

/* One key: its label, what it does, and its Lua call at the right when
** both fit; else the description alone, shortened if it must be. */
static void help_row(HelpCursor *c, const char *key, const char *help, const char *lua) {
  if (c->y >= c->h - 1) return;
  const Term *t = &c->ui->term;
  const char *ell = term_glyph(t, GLYPH_ELLIPSIS);
  char buf[256];
  int inner = c->wd - 4;
  if (c->two) {
    int cell = inner / 2, x = 2 + c->col * cell;
    term_print(t, c->w, c->y, x, 10, ROLE_KEY, key);
    term_print(t, c->w, c->y, x + 10, cell - 11, ROLE_TEXT, fit_text(help, cell - 11, ell, buf, sizeof buf));
    c->col = !c->col;
    if (!c->col) c->y++;
    return;
  }
  int text_w = inner - 10, lua_w = lua ? fit_cols(lua) : 0;
  if (lua && fit_cols(help) + 1 + lua_w > text_w) lua = NULL;
  term_print(t, c->w, c->y, 2, 10, ROLE_KEY, key);
  term_print(t, c->w, c->y, 12, text_w, ROLE_TEXT, fit_text(help, text_w, ell, buf, sizeof buf));
  if (lua) term_print(t, c->w, c->y, 2 + inner - lua_w, lua_w, ROLE_LABEL, lua);
  c->y++;
}

/* In two columns, start a fresh row. */
static void help_break(HelpCursor *c) {
  if (c->col) c->y++;
  c->col = 0;
}

static void count_binding(void *ctx, int key, const char *name, const char *help) {
  (void)key, (void)name, (void)help;
  (*(int *)ctx)++;
}

/* Rows of the help box with every key on its own row: the frame, the
** keys, Esc and C-c, and the script's keys under their title. */
static int help_rows_single(Ui *ui, int *keys, int *bound) {
  int n;
  const UiKey *k = ui_keys(&n);
  *keys = 2;
  *bound = 0;
  for (int i = 0; i < n; i++) *keys += k[i].label != NULL;
  if (ui->api) luaapi_bindings(ui->api, count_binding, bound);
  return 2 + *keys + (*bound ? *bound + 1 : 0);
}

/* Rows the help box needs on this screen: two keys to a row when one
** each does not fit. The box may cover the status and hint lines: while
** it is up, it is all there is to read. */
int panel_help_rows(Ui *ui) {
  int keys, bound, rows = help_rows_single(ui, &keys, &bound);
  if (rows <= ui->lay.rows) return rows;
  return 2 + (keys + 1) / 2 + (bound ? (bound + 1) / 2 + 1 : 0);
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
  int keys, bound;
  HelpCursor c = {ui, w, 1, h, wd, help_rows_single(ui, &keys, &bound) > h, 0};
  const char *const titles[] = {" tielab keys: each one is the Lua call at the right ", " tielab keys "};
  char buf[128];
  term_print(t, w, 0, 2, wd - 4, ROLE_TITLE,
             c.two ? titles[1] : fit_choose(titles, 2, wd - 4, term_glyph(t, GLYPH_ELLIPSIS), buf, sizeof buf));
  int n;
  const UiKey *k = ui_keys(&n);
  for (int i = 0; i < n; i++)
    if (k[i].label) help_row(&c, k[i].label, k[i].help, k[i].lua);
  help_row(&c, "Esc", "back to the keys from the REPL, or close this", NULL);
  help_row(&c, "C-c", "stop a running script, or clear the line", NULL);
  help_break(&c);
  if (ui->api && c.y < h - 2) {
    int before = c.y;
    c.y++;
    luaapi_bindings(ui->api, script_binding, &c);
    if (c.y > before + 1 || c.col) term_print(t, w, before, 2, wd - 4, ROLE_TITLE, "script keys (lab.bind):");
  }
}
