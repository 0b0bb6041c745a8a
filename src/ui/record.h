/*
** record.h -- recording the lab from the screen's side: the cast of
** --record (cast.h writes it), and the hooks that write the journal of
** --journal.
**
** The journal hooks run a key's or a REPL line's Lua call with the lab
** held, so it falls between two steps at a known step, and journal it
** (journal.h says what an entry holds). Without --journal they only run
** the call. With it, the host's 'wait_answer' journals every answer of
** lab.wait_key.
*/
#ifndef TIELAB_UI_RECORD_H
#define TIELAB_UI_RECORD_H

#include "base/err.h"
#include "luaapi/luaapi.h"
#include "ui/cast.h"

struct Ui;
/* The Ui's hooks: --record and --journal opened (0, or -1 with 'err'),
** and closed at the end with the journal's final record. */
int ui_record_open(struct Ui *ui, Err *err);
void ui_record_close(struct Ui *ui);
/* No screen (line mode): the recording is refused, with a message, and
** its empty file removed. Returns -1 when there was one, else 0. */
int ui_record_lines(struct Ui *ui);
/* record_frame, and the first failure to write shown on the screen. */
void ui_record_frame(struct Ui *ui, int cursor);
/* A key's Lua call, a script's key binding (returns 1 when there was one),
** a REPL entry and the start of a script, each run with the lab held and
** journaled. */
void ui_record_call(struct Ui *ui, const char *chunk);
int ui_record_binding(struct Ui *ui, int code);
LuaApiStatus ui_record_line(struct Ui *ui, const char *entry);
LuaApiStatus ui_record_script(struct Ui *ui, Err *err);

#endif
