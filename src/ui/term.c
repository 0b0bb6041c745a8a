/*
** term.c -- opening and drawing on the terminal with ncursesw.
**
** Start-up follows the usual order for a UTF-8 curses program: the locale is
** already set (main), 'newterm' rather than 'initscr' (which exits on
** failure), then a check that the terminal can address the cursor: TERM=dumb
** opens fine and would draw one garbled line.
*/
#include "term.h"

#include <langinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>
#include <wchar.h>

static const char *glyphs[GLYPH_COUNT][2] = {
    [GLYPH_VLINE] = {"\u2502", "|"},   [GLYPH_HLINE] = {"\u2500", "-"},
    [GLYPH_RUN] = {"\u25b6", ">"},     [GLYPH_PAUSE] = {"\u2016", "="},
    [GLYPH_TIMES] = {"\u00d7", "*"},   [GLYPH_SELECTED] = {"\u25cf", "@"},
    [GLYPH_ELLIPSIS] = {"\u2026", "~"}, [GLYPH_NEWLINE] = {"\u23ce", "/"},
    [GLYPH_UP] = {"\u25b2", "^"},
};

/* Roles and their colour (-1: none) and attributes with and without colour. */
static const struct {
  short fg;
  attr_t with, without;
} roles[] = {
    [ROLE_TEXT] = {-1, A_NORMAL, A_NORMAL},     [ROLE_AXIS] = {-1, A_NORMAL, A_NORMAL},
    [ROLE_LABEL] = {-1, A_NORMAL, A_NORMAL},    [ROLE_EVENT] = {COLOR_MAGENTA, A_BOLD, A_BOLD},
    [ROLE_TITLE] = {-1, A_BOLD, A_BOLD},        [ROLE_ERROR] = {COLOR_RED, A_BOLD, A_BOLD},
    [ROLE_WARN] = {COLOR_MAGENTA, A_NORMAL, A_BOLD}, [ROLE_OK] = {COLOR_GREEN, A_BOLD, A_BOLD},
    [ROLE_SELECT] = {-1, A_REVERSE, A_REVERSE}, [ROLE_KEY] = {-1, A_BOLD, A_BOLD},
    [ROLE_BAR] = {COLOR_CYAN, A_NORMAL, A_NORMAL}, [ROLE_DIM] = {-1, A_DIM, A_NORMAL},
};
#define N_ROLES ((int)(sizeof roles / sizeof roles[0]))

/* Series colours: blue and red first (the two runs of a tied/untied pair),
** yellow last because it fades on a light background. */
static const short series_fg[TERM_SERIES_COLORS] = {COLOR_BLUE, COLOR_RED, COLOR_GREEN,
                                                    COLOR_MAGENTA, COLOR_CYAN, COLOR_YELLOW};

void term_choose_glyphs(Term *t, int ascii) {
  const char *term = getenv("TERM");
  t->utf8 = !ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  /* The Linux console's fonts have no Braille and no eighth blocks. */
  int console = term && strcmp(term, "linux") == 0;
  t->glyphs = !t->utf8 || console ? GRAPH_ASCII : GRAPH_BRAILLE;
}

static void init_colors(Term *t) {
  const char *nc = getenv("NO_COLOR");
  t->color = has_colors() && !(nc && *nc);
  if (!t->color) return;
  start_color();
  use_default_colors();
  for (int r = 0; r < N_ROLES; r++)
    if (roles[r].fg >= 0) init_pair((short)(r + 1), roles[r].fg, -1);
  for (int i = 0; i < TERM_SERIES_COLORS; i++)
    init_pair((short)(ROLE_SERIES + i + 1), series_fg[i], -1);
}

int term_open(Term *t, int ascii, Err *err) {
  const char *name = getenv("TERM");
  term_choose_glyphs(t, ascii);
  if (!name || !*name) return err_set(err, "TERM is not set");
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return err_set(err, "not a terminal");
  t->screen = newterm(NULL, stdout, stdin);
  if (!t->screen) return err_set(err, "terminal type '%s' is unknown", name);
  char *cup = tigetstr("cup");
  if (cup == NULL || cup == (char *)-1) {
    endwin();
    delscreen(t->screen);
    t->screen = NULL;
    return err_set(err, "terminal '%s' cannot move the cursor", name);
  }
  cbreak();   /* ISIG stays on: Ctrl-C is a signal even while Lua is busy */
  noecho();
  nonl();
  intrflush(stdscr, FALSE);
  keypad(stdscr, TRUE);
  set_escdelay(25);
  curs_set(0);
  init_colors(t);
  return 0;
}

void term_close(Term *t, int restore) {
  if (!t->screen) return;
  if (restore) {
    curs_set(1);
    endwin();
  }
  delscreen(t->screen);
  t->screen = NULL;
}

int term_size(int *rows, int *cols) {
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0) return -1;
  *rows = ws.ws_row;
  *cols = ws.ws_col;
  return 0;
}

attr_t term_attr(const Term *t, int role) {
  if (role >= ROLE_SERIES) {
    int i = (role - ROLE_SERIES) % TERM_SERIES_COLORS;
    /* Without colour, every other series is bold so two runs differ. */
    return t->color ? COLOR_PAIR(ROLE_SERIES + i + 1) : (i % 2 ? A_BOLD : A_NORMAL);
  }
  if (role < 0 || role >= N_ROLES) return A_NORMAL;
  if (!t->color) return roles[role].without;
  return roles[role].with | (roles[role].fg >= 0 ? COLOR_PAIR(role + 1) : 0);
}

const char *term_glyph(const Term *t, TermGlyph g) { return glyphs[g][t->utf8 ? 0 : 1]; }

void term_cells(const Term *t, WINDOW *w, int y, int x, const GraphCell *c, int n) {
  wmove(w, y, x);
  for (int i = 0; i < n; i++) {
    attr_t a = term_attr(t, c[i].role);
    if (c[i].ch < 0x80) {
      waddch(w, (chtype)c[i].ch | a);
    } else {
      wchar_t wc[2] = {(wchar_t)c[i].ch, 0};
      cchar_t cc;
      setcchar(&cc, wc, a, (short)PAIR_NUMBER(a), NULL);
      wadd_wch(w, &cc);
    }
  }
}

/* Decode one character of 's' (of 'len' bytes): an invalid byte reads as
** '?' and counts one byte. Returns the bytes used, 0 at the end. */
static size_t next_char(const char *s, size_t len, mbstate_t *st, wchar_t *wc) {
  size_t k = mbrtowc(wc, s, len, st);
  if (k == (size_t)-1 || k == (size_t)-2) {
    memset(st, 0, sizeof *st);
    *wc = '?';
    return 1;
  }
  return k;
}

int term_width(const char *s) {
  mbstate_t st;
  memset(&st, 0, sizeof st);
  int cols = 0;
  size_t len = strlen(s), k;
  wchar_t wc;
  while (len > 0 && (k = next_char(s, len, &st, &wc)) > 0) {
    int cw = wcwidth(wc);
    cols += cw < 0 ? 1 : cw;
    s += k;
    len -= k;
  }
  return cols;
}

int term_print(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *s) {
  mbstate_t st;
  memset(&st, 0, sizeof st);
  wchar_t buf[512];
  int n = 0, cols = 0;
  size_t len = strlen(s), k;
  wchar_t wc;
  while (len > 0 && n < 511 && (k = next_char(s, len, &st, &wc)) > 0) {
    if (wc < 0x20 || wc == 0x7f) wc = ' ';
    int cw = wcwidth(wc);
    if (cw < 0) cw = 1, wc = '?';
    if (cols + cw > maxw) break;
    buf[n++] = wc;
    cols += cw;
    s += k;
    len -= k;
  }
  buf[n] = 0;
  attr_t a = term_attr(t, role);
  wattrset(w, a);
  mvwaddnwstr(w, y, x, buf, n);
  wattrset(w, A_NORMAL);
  (void)t;
  return cols;
}

int term_printf(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return term_print(t, w, y, x, maxw, role, buf);
}
