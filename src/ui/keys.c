/*
** keys.c -- the key table and what a key press does.
**
** Every key of the lab is a Lua call (a row of the table), run through the
** Lua layer, so anything a key does a script can do, and a script's own
** binding (lab.bind) comes first. The help overlay and the hint line are
** drawn from the same table. While the REPL has the focus, keys go to
** readline except the few that cannot mean anything there.
*/
#include <string.h>

#include "base/sig.h"
#include "ui/repl.h"
#include "ui/uistate.h"

#define CTRL(c) ((c) & 0x1f)
#define ESC 27

static const UiKey keys[] = {
    {' ', "space", "run or pause training", "ui.toggle()", "space run/pause"},
    {'n', "n", "one step of every run", "ui.step(1)", "n step"},
    {'t', "t", "cycle the selected run's tie: tied, untied, half", "ui.cycle_tie()", "t tie"},
    {'+', "+ - 0", "in_scale a step up/down: 1 2 3 5 10..; 0 to 1", "ui.in_scale('up')", "+/- in_scale"},
    {'-', NULL, NULL, "ui.in_scale('down')", NULL},
    {'0', NULL, NULL, "ui.in_scale(1)", NULL},
    {'[', "[ ]", "training speed: half, twice (then flat out)", "ui.slower()", NULL},
    {']', NULL, NULL, "ui.faster()", NULL},
    {'\t', "tab", "select the next run", "ui.select()", "tab run"},
    {'l', "l", "the lens shown: tuned online, fitted, logit", "ui.lens()", "l lens"},
    {'z', "z", "zoom a chart; present view: the next chart", "ui.zoom()", "z zoom"},
    {'s', "s", "row norm against log token frequency (again: back)", "ui.scatter()", "s scatter"},
    {'p', "p", "present view: the chart large, its figure big", "ui.present()", "p present"},
    {'g', "g", "chart glyphs: braille, block, ascii", "ui.glyphs()", NULL},
    {'?', "? F1", "this help", "ui.help()", "? help"},
    {KEY_F(1), NULL, NULL, "ui.help()", NULL},
    {':', ": Enter", "type Lua in the REPL (Esc: back to keys)", "ui.focus()", ": lua"},
    {'\r', NULL, NULL, "ui.focus()", NULL},
    {KEY_ENTER, NULL, NULL, "ui.focus()", NULL},
    {KEY_PPAGE, "PgUp PgDn", "scroll the REPL output", "ui.scroll(-1)", NULL},
    {KEY_NPAGE, NULL, NULL, "ui.scroll(1)", NULL},
    {CTRL('l'), "C-l", "redraw the whole screen", "ui.redraw()", NULL},
    {'.', ".", "a script's next phase: ends its wait for the speaker", "ui.next_phase()", NULL},
    {',', ",", "pause or resume the running script (and its steps)", "ui.pause_script()", NULL},
    {'r', "r", "show or hide the results panel (a script's output)", "ui.results('toggle')", "r results"},
    {'q', "q", "quit (asks to save runs with unsaved steps)", "ui.quit()", "q quit"},
};

const UiKey *ui_keys(int *n) {
  *n = (int)(sizeof keys / sizeof keys[0]);
  return keys;
}

static const UiKey *find(int key) {
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (keys[i].key == key) return &keys[i];
  return NULL;
}

/* The answer to "save before quitting?". */
static void answer(Ui *ui, int key) {
  ui->ask = ASK_NONE;
  ui_dirty(ui, 1u << P_HINT);
  if (key == 'y' || key == 'Y') ui_request_quit(ui, 1);
  else if (key == 'n' || key == 'N') ui_request_quit(ui, 0);
  else ui_message(ui, ROLE_TEXT, "not quitting");
}

/* The code a script's lab.bind uses for a curses key, or -1. */
static int script_code(int key) {
  if (key >= KEY_F(1) && key <= KEY_F(12)) return LUAAPI_KEY_F(key - KEY_F(0));
  return key < KEY_MIN ? key : -1;
}

/* A key while the REPL has the focus. */
/* A script's binding, stoppable by Ctrl-C (and by SIGTERM, which then
** saves and ends the lab) like any Lua code on this thread. */
static int script_key(Ui *ui, int code) {
  sig_arm_interrupt(1);
  int had = ui_record_binding(ui, code);
  sig_arm_interrupt(0);
  return had;
}

static void repl_key_press(Ui *ui, int key) {
  if (key == ESC) {
    ui->focus = 0;
    curs_set(0);
    ui_dirty(ui, 1u << P_INPUT | 1u << P_HINT);
    return;
  }
  if (key == KEY_F(1)) ui_lua(ui, "ui.help()");
  else if (key == KEY_PPAGE || key == KEY_NPAGE) ui_lua(ui, key == KEY_PPAGE ? "ui.scroll(-1)" : "ui.scroll(1)");
  else if (key == CTRL('l')) ui_lua(ui, "ui.redraw()");
  else if (key > KEY_F(1) && key <= KEY_F(12) && ui->api) script_key(ui, script_code(key));   /* nothing to readline */
  else if (key >= KEY_MIN) repl_key(key);
  else {
    char b = (char)key;
    repl_feed(&b, 1);
  }
  ui_dirty(ui, 1u << P_INPUT);
}

void ui_key(Ui *ui, int key) {
  if (ui->ask == ASK_QUIT) {
    answer(ui, key);
    return;
  }
  if (ui->help) {
    ui_lua(ui, "ui.help(false)");
    if (key == ESC || key == '?' || key == KEY_F(1) || key == 'q') return;
  }
  if (ui->focus) {
    repl_key_press(ui, key);
    return;
  }
  if (key == ESC) return;
  int code = script_code(key);
  if (ui->api && code >= 0 && script_key(ui, code)) return;
  const UiKey *k = find(key);
  if (k) ui_record_call(ui, k->lua);
  else if (key < KEY_MIN && key >= ' ' && key < 127) ui_message(ui, ROLE_TEXT, "'%c' does nothing here: ? shows the keys", key);
}
