/*
** cast.h -- the asciicast v2 file of --record.
**
** The cast records what curses believes is on the terminal: after every
** doupdate 'record_frame' reads curscr and writes one [time, "o", data]
** event holding the cursor moves, SGR sequences and text that turn the
** previous frame into this one (a full paint first and after a resize,
** which also gets a [time, "r", "WxH"] event). Played back by asciinema,
** or simply written to a terminal, the data redraws the screen as it was.
*/
#ifndef TIELAB_UI_CAST_H
#define TIELAB_UI_CAST_H

#include "base/err.h"

typedef struct Recorder Recorder;

/* Create 'path' for the cast; its header is written with the first frame,
** when the screen's size is known. */
Recorder *record_open(const char *path, Err *err);
/* One frame: what curses shows now ('cursor': whether the cursor shows). */
void record_frame(Recorder *rec, int cursor);
/* Bytes of event data written so far, and seconds since the first frame. */
double record_bytes(const Recorder *rec);
double record_seconds(const Recorder *rec);
/* Why the recording stopped ("out of memory", or the failed write's error),
** the first time it is asked after that; else NULL. */
const char *record_failure(Recorder *rec);
/* Flush and close; returns -1 with 'err' when the file could not be written. */
int record_close(Recorder *rec, Err *err);

#endif
