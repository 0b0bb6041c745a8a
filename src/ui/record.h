/*
** record.h -- recording the lab from the screen's side: the asciicast v2
** file of --record, and the hooks that write the journal of --journal.
**
** The cast records what curses believes is on the terminal: after every
** doupdate 'record_frame' reads curscr and writes one [time, "o", data]
** event holding the cursor moves, SGR sequences and text that turn the
** previous frame into this one (a full paint first and after a resize,
** which also gets a [time, "r", "WxH"] event). Played back by asciinema,
** or simply written to a terminal, the data redraws the screen as it was.
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

typedef struct Recorder Recorder;

/* Create 'path' for the cast; its header is written with the first frame,
** when the screen's size is known. */
Recorder *record_open(const char *path, Err *err);
/* One frame: what curses shows now ('cursor': whether the cursor shows). */
void record_frame(Recorder *rec, int cursor);
/* Bytes of event data written so far, and seconds since the first frame. */
double record_bytes(const Recorder *rec);
double record_seconds(const Recorder *rec);
/* Flush and close; returns -1 with 'err' when the file could not be written. */
int record_close(Recorder *rec, Err *err);

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
