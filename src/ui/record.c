/*
** record.c -- the UI's hooks for --record and --journal: the cast opened,
** fed each frame and closed (cast.c writes it), and a key's or a line's
** Lua call run with the lab held and journaled (see record.h).
*/
#include <stdlib.h>

#include "base/sig.h"
#include "lab/journal.h"
#include "ui/record.h"
#include "ui/uistate.h"

/* ------------------------------------------------------------ the Ui's hooks */

static const char *selected_name(Ui *ui) {
  const TrainerRun *r = ui_selected(ui);
  return r ? r->name : "";
}

static void journal_failed(Ui *ui, const Err *err) { ui_message(ui, ROLE_ERROR, "journal: %s", err->msg); }

/* The host's 'wait_answer': every answer of lab.wait_key journaled, at
** the steps where the wait ended (the lab is held, or waited for, a moment). */
static int record_wait_answer(void *ctx, int pressed) {
  Ui *ui = ctx;
  if (!ui->journal) return pressed;
  Err err;
  Lab *lab = trainer_acquire(ui->trainer);
  if (journal_wait(ui->journal, lab, pressed, selected_name(ui), &err) < 0) journal_failed(ui, &err);
  trainer_release(ui->trainer);
  return pressed;
}

int ui_record_open(Ui *ui, Err *err) {
  const UiOptions *o = ui->opt;
  if (o->record && !(ui->rec = record_open(o->record, err))) return -1;
  if (!o->journal) return 0;
  Lab *lab = trainer_acquire(ui->trainer);
  ui->journal = journal_open(o->journal, o->argc, o->argv, lab, err);
  trainer_release(ui->trainer);
  if (!ui->journal) return -1;
  trainer_set_lending(ui->trainer, 0);
  ui->host.wait_answer = record_wait_answer;
  ui->host.wait_answer_ctx = ui;
  return 0;
}

void ui_record_frame(Ui *ui, int cursor) {
  record_frame(ui->rec, cursor);
  const char *why = record_failure(ui->rec);
  if (why)
    ui_message(ui, ROLE_ERROR, "record: %s: the recording stopped (%s); the lab goes on", ui->opt->record, why);
}

int ui_record_lines(Ui *ui) {
  if (!ui->rec) return 0;
  const char *term = getenv("TERM");
  fprintf(stderr, "tielab: --record records the screen, and this terminal (TERM=%s) has none: "
                  "the line REPL cannot be recorded\n", term ? term : "");
  Err err;
  record_close(ui->rec, &err);
  ui->rec = NULL;
  remove(ui->opt->record);   /* empty: no cast is better than an invalid one */
  return -1;
}

void ui_record_close(Ui *ui) {
  Err err = {{0}};
  if (ui->journal) {
    Lab *lab = trainer_acquire(ui->trainer);
    if (journal_close(ui->journal, lab, &err) < 0) fprintf(stderr, "tielab: journal: %s\n", err.msg);
    trainer_release(ui->trainer);
    ui->journal = NULL;
  }
  if (ui->rec) {
    double s = record_seconds(ui->rec), bytes = record_bytes(ui->rec);
    if (record_close(ui->rec, &err) < 0) fprintf(stderr, "tielab: record: %s\n", err.msg);
    else fprintf(stderr, "tielab: recorded %.0f s to %s (%.0f bytes of output a second)\n", s, ui->opt->record,
                 s > 0 ? bytes / s : 0);
    ui->rec = NULL;
  }
}

/* A journaled call holds the lab from the steps it notes to its effect, so
** it falls between two steps; 'sel' is the selected run before it ran. */
typedef struct HeldCall {
  Lab *lab;
  char sel[64];
} HeldCall;

/* What the entry says: a key's or a line's Lua, or a script's key binding. */
typedef struct CallEntry {
  const char *kind;   /* "key" or "line"; NULL: the binding 'code' */
  const char *lua;
  int code;
} CallEntry;

static void held_begin(Ui *ui, HeldCall *c) {
  c->lab = trainer_acquire(ui->trainer);
  snprintf(c->sel, sizeof c->sel, "%s", selected_name(ui));
  journal_mark(ui->journal, c->lab);
  luaapi_hold_lab(ui->api, 1);
}

/* The entry when the call ran ('ran'), else the mark forgotten; then the
** lab goes back to the trainer. */
static void held_end(Ui *ui, HeldCall *c, const CallEntry *e, int ran) {
  luaapi_hold_lab(ui->api, 0);
  Err err;
  if (!ran) journal_mark(ui->journal, NULL);
  else if ((e->kind ? journal_call(ui->journal, c->lab, e->kind, e->lua, c->sel, &err)
                    : journal_binding(ui->journal, c->lab, e->code, c->sel, &err)) < 0)
    journal_failed(ui, &err);
  trainer_release(ui->trainer);
}

void ui_record_call(Ui *ui, const char *chunk) {
  if (!ui->journal) {
    ui_lua(ui, chunk);
    return;
  }
  HeldCall c;
  held_begin(ui, &c);
  ui_lua(ui, chunk);
  held_end(ui, &c, &(CallEntry){"key", chunk, 0}, 1);
}

int ui_record_binding(Ui *ui, int code) {
  if (!ui->journal) return luaapi_key(ui->api, code);
  HeldCall c;
  held_begin(ui, &c);
  int had = luaapi_key(ui->api, code);
  held_end(ui, &c, &(CallEntry){NULL, NULL, code}, had);
  return had;
}

LuaApiStatus ui_record_line(Ui *ui, const char *entry) {
  if (!ui->journal) return luaapi_eval_line(ui->api, entry);
  HeldCall c;
  held_begin(ui, &c);
  LuaApiStatus st = luaapi_eval_line(ui->api, entry);
  /* An unfinished entry goes on in the next line: nothing ran yet. */
  held_end(ui, &c, &(CallEntry){"line", entry, 0}, st != LUAAPI_INCOMPLETE);
  return st;
}

/* The script's first slice runs here, before the loop: Ctrl-C stops it
** as it does in a pump. */
static LuaApiStatus start_script(Ui *ui, Err *err) {
  const UiOptions *o = ui->opt;
  sig_arm_interrupt(1);
  LuaApiStatus st = luaapi_start_script(ui->api, o->script, o->script_argc, o->script_argv, err);
  sig_arm_interrupt(0);
  return st;
}

LuaApiStatus ui_record_script(Ui *ui, Err *err) {
  const UiOptions *o = ui->opt;
  if (!ui->journal) return start_script(ui, err);
  Err jerr;
  Lab *lab = trainer_acquire(ui->trainer);
  if (journal_script(ui->journal, lab, o->script, o->script_argc, o->script_argv, &jerr) < 0) journal_failed(ui, &jerr);
  luaapi_hold_lab(ui->api, 1);
  LuaApiStatus st = start_script(ui, err);
  luaapi_hold_lab(ui->api, 0);
  trainer_release(ui->trainer);
  return st;
}
