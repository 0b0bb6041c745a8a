/*
** cast.c -- the asciicast v2 writer of --record (cast.h).
**
** curses owns the terminal (its tty modes need the real file descriptor),
** so the cast is made from curses' own idea of the screen: curscr, read
** after each doupdate cell by cell (characters, attributes, colour pair)
** and compared with the previous frame. Each changed run of cells becomes
** a cursor move, an SGR sequence when the rendition changes, and UTF-8
** text; colours are the pairs' own numbers (0-7, 8-15 bright, 256-colour
** beyond), so the cast looks as the terminal did.
*/
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>
#include <curses.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/safeopen.h"
#include "base/utf8.h"
#include "ui/cast.h"

typedef struct Cell {
  wchar_t ch[CCHARW_MAX];
  attr_t attr;
  short pair;
} Cell;

struct Recorder {
  FILE *f;
  char path[4096];
  int rows, cols;          /* of the last frame; 0 before the first */
  Cell *prev, *cur;        /* rows x cols: as last written, and as now */
  double t0, bytes;
  int cursor;              /* cursor shown in the last frame (-1: unknown) */
  /* the frame being written */
  Buf out;
  int y, x;                /* where the cursor is after 'out' (-1: unknown) */
  attr_t attr;             /* rendition in force after 'out' */
  short pair;
  int pen_known;
  int failed;
  int error;               /* errno of the write that failed (0: not a write) */
  int reported;            /* the failure was shown on the screen */
};

/* ------------------------------------------------------------ the frame's bytes */

static void emit(Recorder *rec, const char *s, size_t n) {
  buf_add(&rec->out, s, n);
  rec->failed |= rec->out.cut;   /* out of memory */
}

static void emitf(Recorder *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emitf(Recorder *rec, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&rec->out, fmt, ap);
  va_end(ap);
  rec->failed |= rec->out.cut;
}

/* A colour as SGR parameters after a reset: the 8 basic, 8 bright, or 256
** (the default needs none). */
static void emit_color(Recorder *rec, int color, int base) {
  if (color < 0) return;
  if (color < 8) emitf(rec, ";%d", base + color);
  else if (color < 16) emitf(rec, ";%d", base + 60 + color - 8);
  else emitf(rec, ";%d;5;%d", base + 8, color);
}

static const struct {
  attr_t attr;
  int sgr;
} renditions[] = {
    {A_BOLD, 1}, {A_DIM, 2}, {A_ITALIC, 3}, {A_UNDERLINE, 4}, {A_BLINK, 5}, {A_REVERSE, 7}, {A_STANDOUT, 7}, {A_INVIS, 8},
};

static void emit_pen(Recorder *rec, attr_t attr, short pair) {
  attr &= A_ATTRIBUTES & ~(A_COLOR | A_ALTCHARSET);
  if (rec->pen_known && rec->attr == attr && rec->pair == pair) return;
  emit(rec, "\033[0", 3);
  for (size_t i = 0; i < sizeof renditions / sizeof renditions[0]; i++)
    if (attr & renditions[i].attr) emitf(rec, ";%d", renditions[i].sgr);
  short fg = -1, bg = -1;
  if (pair > 0 && pair_content(pair, &fg, &bg) == ERR) fg = bg = -1;
  emit_color(rec, fg, 30);
  emit_color(rec, bg, 40);
  emit(rec, "m", 1);
  rec->attr = attr;
  rec->pair = pair;
  rec->pen_known = 1;
}

/* The line-drawing set by its VT100 letter, for cells drawn with ACS. */
static wchar_t acs_char(wchar_t c) {
  static const char from[] = "jklmnqtuvwxa~`fgyz0";
  static const wchar_t to[] = L"┘┐┌└┼─├┤┴┬│▒·◆°±≤≥█";
  const char *p = c < 128 ? strchr(from, (int)c) : NULL;
  return p && c ? to[p - from] : c;
}

static void emit_cell(Recorder *rec, const Cell *c) {
  char mb[4 * CCHARW_MAX + 1];
  size_t n = 0;
  for (int i = 0; i < CCHARW_MAX && (i == 0 || c->ch[i]); i++) {
    wchar_t w = c->ch[i] ? c->ch[i] : L' ';
    if (i == 0 && (c->attr & A_ALTCHARSET)) w = acs_char(w);
    n += utf8_encode((uint32_t)w, mb + n);   /* asciicast is UTF-8, whatever the locale */
  }
  emit(rec, mb, n);
}

/* The recording failed (and stops), for the reason errno gives: a full
** stdio buffer writes out within fprintf, so a full disk can show there
** first. */
static void write_failed(Recorder *rec) {
  if (rec->failed) return;
  rec->failed = 1;
  rec->error = errno ? errno : EIO;
}

/* The file took the bytes so far, or the recording failed (and stops). */
static void check_written(Recorder *rec) {
  if (rec->failed) return;
  errno = 0;
  if (fflush(rec->f) == EOF || ferror(rec->f)) write_failed(rec);
}

/* ------------------------------------------------------------ reading curscr */

static void read_cell(cchar_t *cc, Cell *c) {
  wchar_t wch[CCHARW_MAX + 1];
  attr_t attr = 0;
  short pair = 0;
  memset(c, 0, sizeof *c);
  memset(wch, 0, sizeof wch);
  if (getcchar(cc, wch, &attr, &pair, NULL) == ERR) wch[0] = L' ';
  for (int i = 0; i < CCHARW_MAX && wch[i]; i++) c->ch[i] = wch[i];
  c->attr = attr & ~A_COLOR;
  c->pair = pair;
}

/* The screen as curses believes it is; curscr's cursor is put back where
** it was, since it stands for the terminal's own. */
static int read_screen(Recorder *rec, Cell *cells, int rows, int cols) {
  cchar_t *line = malloc(sizeof *line * (size_t)(cols + 1));
  if (!line) return -1;
  int cy, cx;
  getyx(curscr, cy, cx);
  for (int y = 0; y < rows; y++) {
    memset(line, 0, sizeof *line * (size_t)(cols + 1));
    mvwin_wchnstr(curscr, y, 0, line, cols);
    for (int x = 0; x < cols; x++) read_cell(&line[x], &cells[(size_t)y * cols + x]);
  }
  wmove(curscr, cy, cx);
  free(line);
  return 0;
}

/* ------------------------------------------------------------ frames */

static void write_header(Recorder *rec, int rows, int cols) {
  const char *shell = getenv("SHELL"), *term = getenv("TERM");
  json_t *h = json_pack("{s:i, s:i, s:i, s:I, s:{s:s, s:s}}", "version", 2, "width", cols, "height", rows, "timestamp",
                        (json_int_t)time(NULL), "env", "SHELL", shell ? shell : "/bin/sh", "TERM",
                        term ? term : "xterm");
  errno = 0;
  if (!h) rec->failed = 1;   /* out of memory: no errno */
  else if (json_dumpf(h, rec->f, 0) < 0 || fputc('\n', rec->f) == EOF) write_failed(rec);
  json_decref(h);
}

static void write_event(Recorder *rec, double t, const char *code, const char *data, size_t n) {
  json_t *s = json_stringn(data, n);
  char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
  errno = 0;
  if (!text) rec->failed = 1;   /* out of memory: no errno */
  else if (fprintf(rec->f, "[%.6f, \"%s\", %s]\n", t, code, text) < 0) write_failed(rec);
  rec->bytes += (double)n;
  free(text);
  json_decref(s);
}

/* A new size: the header (first frame) or an "r" event, then a full paint. */
static int resize(Recorder *rec, int rows, int cols, double t) {
  Cell *prev = calloc((size_t)rows * cols, sizeof *prev), *cur = calloc((size_t)rows * cols, sizeof *cur);
  if (!prev || !cur) {
    free(prev);
    free(cur);
    return -1;
  }
  free(rec->prev);
  free(rec->cur);
  rec->prev = prev;
  rec->cur = cur;
  if (rec->rows == 0) {
    write_header(rec, rows, cols);
  } else {
    char size[32];
    int n = snprintf(size, sizeof size, "%dx%d", cols, rows);
    write_event(rec, t, "r", size, (size_t)n);
  }
  rec->rows = rows;
  rec->cols = cols;
  return 0;
}

/* Cells closer than this after the cursor are written again rather than
** jumped over: a cursor move costs about as many bytes. */
#define RECORD_REWRITE_GAP 4

/* Get the cursor to (y, x): rewrite a short run of unchanged cells on its
** row, else move. */
static void go_to(Recorder *rec, const Cell *now, int y, int x) {
  if (rec->y == y && rec->x < x && x - rec->x <= RECORD_REWRITE_GAP) {
    for (int k = rec->x; k < x; k++) {
      const Cell *c = &now[(size_t)y * rec->cols + k];
      if (c->ch[0] && wcwidth(c->ch[0]) != 1) break;   /* wide: move instead */
      emit_pen(rec, c->attr, c->pair);
      emit_cell(rec, c);
      rec->x = k + 1;
    }
  }
  if (rec->y != y || rec->x != x) emitf(rec, "\033[%d;%dH", y + 1, x + 1);
}

/* The bytes that turn 'prev' into 'now' ('full': paint everything). */
static void diff(Recorder *rec, const Cell *now, int full) {
  int rows = rec->rows, cols = rec->cols;
  if (full) {
    emit(rec, "\033[0m\033[H\033[2J", 11);
    rec->pen_known = 0;
    rec->y = rec->x = -1;
  }
  for (int y = 0; y < rows; y++) {
    for (int x = 0; x < cols; x++) {
      const Cell *c = &now[(size_t)y * cols + x];
      int width = c->ch[0] ? wcwidth(c->ch[0]) : 1;
      if (width < 1) width = 1;
      int same = !full && memcmp(c, &rec->prev[(size_t)y * cols + x], sizeof *c) == 0;
      if (width == 2 && x + 1 < cols && !full)
        same = same && memcmp(c + 1, &rec->prev[(size_t)y * cols + x + 1], sizeof *c) == 0;
      if (!same) {
        go_to(rec, now, y, x);
        emit_pen(rec, c->attr, c->pair);
        emit_cell(rec, c);
        rec->y = y;
        rec->x = x + width;
      }
      x += width - 1;
    }
  }
}

static void place_cursor(Recorder *rec, int cursor) {
  int cy, cx;
  getyx(curscr, cy, cx);
  if (cursor != rec->cursor) emit(rec, cursor ? "\033[?25h" : "\033[?25l", 6);
  rec->cursor = cursor;
  if (cursor && (cy != rec->y || cx != rec->x)) {
    emitf(rec, "\033[%d;%dH", cy + 1, cx + 1);
    rec->y = cy;
    rec->x = cx;
  }
}

void record_frame(Recorder *rec, int cursor) {
  if (!rec || rec->failed) return;
  int rows, cols;
  getmaxyx(curscr, rows, cols);
  if (rows <= 0 || cols <= 0) return;
  double now = clock_seconds();
  if (rec->rows == 0) rec->t0 = now;
  double t = now - rec->t0;
  int full = rows != rec->rows || cols != rec->cols;
  if (full && resize(rec, rows, cols, t) < 0) return;
  if (read_screen(rec, rec->cur, rows, cols) < 0) return;
  buf_clear(&rec->out);
  diff(rec, rec->cur, full);
  place_cursor(rec, cursor);
  if (rec->out.n > 0) write_event(rec, t, "o", rec->out.s, rec->out.n);
  check_written(rec);
  Cell *was = rec->prev;   /* this frame is the next one's "before" */
  rec->prev = rec->cur;
  rec->cur = was;
}

Recorder *record_open(const char *path, Err *err) {
  Recorder *rec = calloc(1, sizeof *rec);
  if (!rec) return err_set(err, "out of memory"), NULL;
  snprintf(rec->path, sizeof rec->path, "%s", path);
  rec->cursor = -1;
  rec->f = safeopen_fwrite(path, err);   /* a FIFO nobody reads is refused, not waited for */
  if (!rec->f) {
    free(rec);
    return NULL;
  }
  return rec;
}

double record_bytes(const Recorder *rec) { return rec ? rec->bytes : 0; }
double record_seconds(const Recorder *rec) { return rec && rec->rows ? clock_seconds() - rec->t0 : 0; }

int record_close(Recorder *rec, Err *err) {
  if (!rec) return 0;
  check_written(rec);
  int rc = !rec->failed ? 0
           : rec->error ? err_set(err, "%s: could not write the whole recording: %s", rec->path, strerror(rec->error))
                        : err_set(err, "%s: could not write the whole recording", rec->path);
  if (fclose(rec->f) != 0 && rc == 0) rc = err_set(err, "%s: %s", rec->path, strerror(errno));
  free(rec->prev);
  free(rec->cur);
  buf_free(&rec->out);
  free(rec);
  return rc;
}

const char *record_failure(Recorder *rec) {
  if (!rec || !rec->failed || rec->reported) return NULL;
  rec->reported = 1;
  return rec->error ? strerror(rec->error) : "out of memory";
}
