/*
** term.c -- opening and drawing on the terminal with ncursesw.
**
** Start-up follows the usual order for a UTF-8 curses program: the locale is
** already set (main), 'newterm' rather than 'initscr' (which exits on
** failure), then a check that the terminal can address the cursor: TERM=dumb
** opens fine and would draw one garbled line.
** Roles map to attributes and to colour pairs from the theme's palette;
** a theme change re-initialises the pairs, and curses repaints every cell
** that uses them.
*/
#include "ui/term.h"

#include <langinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>
#include <wctype.h>

#include "ui/width.h"

static const char *glyphs[GLYPH_COUNT][2] = {
    [GLYPH_VLINE] = {"\u2502", "|"},   [GLYPH_HLINE] = {"\u2500", "-"},
    [GLYPH_RUN] = {"\u25b6", ">"},     [GLYPH_PAUSE] = {"\u2016", "="},
    [GLYPH_TIMES] = {"\u00d7", "*"},   [GLYPH_SELECTED] = {"\u25cf", "@"},
    [GLYPH_ELLIPSIS] = {"\u2026", "~"}, [GLYPH_NEWLINE] = {"\u23ce", "/"},
    [GLYPH_UP] = {"\u25b2", "^"},       [GLYPH_DELTA] = {"\u0394", "d"},
    [GLYPH_MINUS] = {"\u2212", "-"},    [GLYPH_PARALLEL] = {"\u2016", "||"},
};

/* Attributes of each role, with colour and without (mono). */
static const struct {
  attr_t with, without;
} roles[] = {
    [ROLE_TEXT] = {A_NORMAL, A_NORMAL},  [ROLE_AXIS] = {A_NORMAL, A_NORMAL},     [ROLE_LABEL] = {A_NORMAL, A_NORMAL},
    [ROLE_EVENT] = {A_BOLD, A_BOLD},     [ROLE_TITLE] = {A_BOLD, A_BOLD},        [ROLE_SHARED] = {A_BOLD, A_NORMAL},
    [ROLE_REF] = {A_NORMAL, A_DIM},      [ROLE_ERROR] = {A_BOLD, A_BOLD},        [ROLE_WARN] = {A_NORMAL, A_BOLD},
    [ROLE_OK] = {A_BOLD, A_BOLD},        [ROLE_SELECT] = {A_REVERSE, A_REVERSE}, [ROLE_KEY] = {A_BOLD, A_BOLD},
    [ROLE_BAR] = {A_NORMAL, A_NORMAL},   [ROLE_DIM] = {A_DIM, A_NORMAL},         [ROLE_BORDER] = {A_NORMAL, A_NORMAL},
};
#define N_ROLES ((int)(sizeof roles / sizeof roles[0]))

/* A theme's colours: the foreground of each coloured role, and the series'
** hues with their tints (validation, baselines), for 256-colour terminals
** and for the eight basic colours. On dark, hues light enough to read on
** black and pastel tints; on light, deep hues and paler tints. Blue and red
** come first: the two runs of a tied/untied pair. */
typedef struct Palette {
  short role[N_ROLES];
  /* A grey for ROLE_DIM, or 0: the terminal's dim. xterm dims by halving
  ** the colour, which greys white on black but leaves black on white as
  ** it was: the light theme needs a grey of its own. */
  short dim;
  short series[TERM_SERIES_COLORS], tint[TERM_SERIES_COLORS];
} Palette;

static const Palette palettes[2][2] = {
    /* [light background][256 colours] */
    [0][1] = {.role = {[ROLE_EVENT] = 213, [ROLE_REF] = 245, [ROLE_ERROR] = 203, [ROLE_WARN] = 214,
                       [ROLE_OK] = 114, [ROLE_BAR] = 80, [ROLE_BORDER] = 240},
              .series = {75, 209, 114, 177, 221, 80},
              .tint = {153, 217, 151, 183, 229, 159}},
    /* Basic blue is dark on black: cyan leads. */
    [0][0] = {.role = {[ROLE_EVENT] = COLOR_MAGENTA, [ROLE_REF] = COLOR_WHITE, [ROLE_ERROR] = COLOR_RED,
                       [ROLE_WARN] = COLOR_YELLOW, [ROLE_OK] = COLOR_GREEN, [ROLE_BAR] = COLOR_CYAN,
                       [ROLE_BORDER] = COLOR_WHITE},
              .series = {COLOR_CYAN, COLOR_RED, COLOR_GREEN, COLOR_MAGENTA, COLOR_YELLOW, COLOR_BLUE},
              .tint = {COLOR_CYAN, COLOR_RED, COLOR_GREEN, COLOR_MAGENTA, COLOR_YELLOW, COLOR_BLUE}},
    [1][1] = {.role = {[ROLE_EVENT] = 127, [ROLE_REF] = 244, [ROLE_ERROR] = 160, [ROLE_WARN] = 166,
                       [ROLE_OK] = 28, [ROLE_BAR] = 25, [ROLE_BORDER] = 246},
              .dim = 244,
              .series = {25, 160, 28, 91, 130, 30},
              .tint = {68, 167, 71, 134, 172, 37}},
    /* Yellow fades on white: last; basic green too, so RUNNING is blue. */
    [1][0] = {.role = {[ROLE_EVENT] = COLOR_MAGENTA, [ROLE_REF] = COLOR_BLACK, [ROLE_ERROR] = COLOR_RED,
                       [ROLE_WARN] = COLOR_MAGENTA, [ROLE_OK] = COLOR_BLUE, [ROLE_BAR] = COLOR_BLUE,
                       [ROLE_BORDER] = COLOR_BLACK},
              .series = {COLOR_BLUE, COLOR_RED, COLOR_GREEN, COLOR_MAGENTA, COLOR_CYAN, COLOR_YELLOW},
              .tint = {COLOR_BLUE, COLOR_RED, COLOR_GREEN, COLOR_MAGENTA, COLOR_CYAN, COLOR_YELLOW}},
};

/* Roles in the terminal's own foreground (a zero above would be black). */
static const int own_fg[] = {ROLE_TEXT, ROLE_AXIS, ROLE_LABEL, ROLE_TITLE, ROLE_SHARED, ROLE_SELECT, ROLE_KEY, ROLE_DIM};

/* Pair numbers: roles 1..N_ROLES, then the series, then their tints, then
** every series over every series' colour as background (a chart cell two
** runs share: the higher's colour over the lower's), then the same with a
** tint over a series, a series over a tint and a tint over a tint (256
** colours; with eight a tint is its series' colour, dim in the
** foreground): so the first set fits the 64 pairs of an eight-colour
** terminal. */
#define PAIR_SERIES (N_ROLES + 1)
#define PAIR_TINT (PAIR_SERIES + TERM_SERIES_COLORS)
#define PAIR_SHADED (PAIR_TINT + TERM_SERIES_COLORS)
#define N_SHADED (TERM_SERIES_COLORS * TERM_SERIES_COLORS)

static short shaded_pair(int series, int tint, int bg, int bg_tint) {
  return (short)(PAIR_SHADED + ((tint != 0) + 2 * (bg_tint != 0)) * N_SHADED + series * TERM_SERIES_COLORS + bg);
}

static const char *const theme_names[] = {[TERM_THEME_AUTO] = "auto", [TERM_THEME_DARK] = "dark",
                                          [TERM_THEME_LIGHT] = "light", [TERM_THEME_MONO] = "mono"};

int term_theme_parse(const char *name) {
  for (int i = 0; i < (int)(sizeof theme_names / sizeof theme_names[0]); i++)
    if (strcmp(name, theme_names[i]) == 0) return i;
  return -1;
}

const char *term_theme_name(TermTheme th) { return theme_names[th]; }

static int no_color(void) {
  const char *nc = getenv("NO_COLOR");
  return nc && *nc;
}

/* COLORFGBG is "fg;bg" (rxvt, konsole; some put a field between): the
** background's colour number decides; 7 and 9..15 are light. */
static int light_background(void) {
  const char *v = getenv("COLORFGBG");
  const char *bg = v ? strrchr(v, ';') : NULL;
  if (!bg) return 0;
  char *end;
  long n = strtol(bg + 1, &end, 10);
  return end != bg + 1 && *end == '\0' && (n == 7 || (n >= 9 && n <= 15));
}

TermTheme term_theme_default(void) {
  if (no_color()) return TERM_THEME_MONO;
  return light_background() ? TERM_THEME_LIGHT : TERM_THEME_DARK;
}

void term_choose_glyphs(Term *t, int ascii) {
  const char *term = getenv("TERM");
  t->utf8 = !ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  /* The Linux console's fonts have no Braille and no eighth blocks. */
  int console = term && strcmp(term, "linux") == 0;
  t->glyphs = !t->utf8 || console ? GRAPH_ASCII : GRAPH_BRAILLE;
}

static int own_foreground(int role) {
  for (size_t i = 0; i < sizeof own_fg / sizeof own_fg[0]; i++)
    if (own_fg[i] == role) return 1;
  return 0;
}

TermTheme term_set_theme(Term *t, TermTheme th) {
  if (th == TERM_THEME_AUTO) th = term_theme_default();
  if (no_color()) th = TERM_THEME_MONO;
  t->theme = th;
  t->color = th != TERM_THEME_MONO && has_colors();
  if (!t->color) return t->theme;
  start_color();   /* again after a theme change: harmless */
  use_default_colors();
  t->colors256 = COLORS >= 256 && COLOR_PAIRS > PAIR_TINT + TERM_SERIES_COLORS;
  const Palette *pal = &palettes[th == TERM_THEME_LIGHT][t->colors256];
  t->dim_grey = pal->dim > 0;
  for (int r = 0; r < N_ROLES; r++) init_pair((short)(r + 1), own_foreground(r) ? -1 : pal->role[r], -1);
  if (t->dim_grey) init_pair((short)(ROLE_DIM + 1), pal->dim, -1);
  for (int i = 0; i < TERM_SERIES_COLORS; i++) {
    init_pair((short)(PAIR_SERIES + i), pal->series[i], -1);
    init_pair((short)(PAIR_TINT + i), pal->tint[i], -1);
  }
  /* 36 pairs (144 with the tints), made once per theme rather than on
  ** demand: a 256-colour terminal has room for them beside the others,
  ** an eight-colour one for the first 36. */
  int sets = t->colors256 ? 4 : 1;
  t->shaded = COLOR_PAIRS >= PAIR_SHADED + N_SHADED * sets;
  for (int set = 0; t->shaded && set < sets; set++)
    for (int i = 0; i < TERM_SERIES_COLORS; i++)
      for (int k = 0; k < TERM_SERIES_COLORS; k++)
        init_pair(shaded_pair(i, set & 1, k, set & 2), set & 1 ? pal->tint[i] : pal->series[i],
                  set & 2 ? pal->tint[k] : pal->series[k]);
  return t->theme;
}

static struct termios shell;   /* the modes the shell left the terminal in */
static int have_shell;

void term_keep_shell(void) { have_shell = tcgetattr(STDIN_FILENO, &shell) == 0; }

/* term_open's collection of the sequences that leave the screen, through
** tputs (which acts on padding): the Term being filled. */
static Term *leaving;

static int add_leave(int c) {
  size_t n = strlen(leaving->leave);
  if (n + 1 < sizeof leaving->leave) leaving->leave[n] = (char)c;
  return c;
}

static void collect_leave(Term *t) {
  static const char *const caps[] = {"sgr0", "cnorm", "rmkx", "rmcup"};
  t->leave[0] = '\0';
  leaving = t;
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    char *s = tigetstr(caps[i]);
    if (s && s != (char *)-1) tputs(s, 1, add_leave);
  }
  leaving = NULL;
}

void term_give_back(const Term *t) {
  size_t n = strlen(t->leave);
  if (n > 0 && write(STDOUT_FILENO, t->leave, n) < 0) return;   /* gone: nothing more to give back */
  /* TCSANOW: output the terminal does not take (XOFF, a dead link) is no
  ** reason to keep the shell's modes from it. */
  if (have_shell) tcsetattr(STDIN_FILENO, TCSANOW, &shell);
  ssize_t nl = write(STDOUT_FILENO, "\r\n", 2);
  (void)nl;
}

int term_open(Term *t, int ascii, TermTheme theme, Err *err) {
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
  collect_leave(t);
  cbreak();   /* ISIG stays on: Ctrl-C is a signal even while Lua is busy */
  noecho();
  nonl();
  intrflush(stdscr, FALSE);
  keypad(stdscr, TRUE);
  set_escdelay(25);
  curs_set(0);
  term_set_theme(t, theme);
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
  t->leave[0] = '\0';   /* the screen is left already */
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
    int i = (role & (GRAPH_COLORS - 1)) % TERM_SERIES_COLORS, tint = role & GRAPH_ROLE_TINT;
    attr_t bold = role & GRAPH_ROLE_BOLD ? A_BOLD : A_NORMAL;
    /* Without colour the lines' patterns tell them apart (graph_line.c): bold
    ** is the selected run's alone, a tint is dim. */
    if (!t->color) return bold | (tint ? A_DIM : A_NORMAL);
    /* Eight colours have no second shade: the tint is dim. */
    if (tint) return COLOR_PAIR(PAIR_TINT + i) | bold | (t->colors256 ? A_NORMAL : A_DIM);
    return COLOR_PAIR(PAIR_SERIES + i) | bold;
  }
  if (role < 0 || role >= N_ROLES) return A_NORMAL;
  if (!t->color) return roles[role].without;
  if (role == ROLE_DIM && t->dim_grey) return COLOR_PAIR(role + 1);
  return roles[role].with | (own_foreground(role) ? 0 : COLOR_PAIR(role + 1));
}

/* A chart cell's attributes: its role's, over the colour of its 'bg' when
** the terminal has the pairs (else the cell keeps the terminal's
** background). */
static attr_t cell_attr(const Term *t, const GraphCell *c) {
  attr_t a = term_attr(t, c->role);
  if (!c->bg || !t->color || !t->shaded || c->role < ROLE_SERIES || c->bg < ROLE_SERIES) return a;
  int i = (c->role & (GRAPH_COLORS - 1)) % TERM_SERIES_COLORS, k = (c->bg & (GRAPH_COLORS - 1)) % TERM_SERIES_COLORS;
  int tint = (c->role & GRAPH_ROLE_TINT) && t->colors256, bg_tint = (c->bg & GRAPH_ROLE_TINT) && t->colors256;
  return (a & ~A_COLOR) | COLOR_PAIR(shaded_pair(i, tint, k, bg_tint));
}

const char *term_glyph(const Term *t, TermGlyph g) { return glyphs[g][t->utf8 ? 0 : 1]; }

/* A plain cell of a chart in the text's pair (the terminal's own colours,
** as plain): curses leaves a coloured cell for a plain one by resetting
** every attribute ("\e[39m\e(B\e[m", twelve bytes), for a pair by
** changing the colour alone ("\e[39m"). A chart's line is a run of
** coloured cells and blanks, so that is most of what a moving line costs. */
static attr_t plain_as_pair(const Term *t, attr_t a) {
  return a == A_NORMAL && t->color ? COLOR_PAIR(ROLE_TEXT + 1) : a;
}

void term_cells(const Term *t, WINDOW *w, int y, int x, const GraphCell *c, int n) {
  wmove(w, y, x);
  int owed = 0;   /* columns the accents' cells left undrawn */
  for (int i = 0; i < n; i++) {
    attr_t a = plain_as_pair(t, cell_attr(t, &c[i]));
    if (c[i].ch < 0x80) {
      waddch(w, (chtype)c[i].ch | a);
      /* The next blank makes up for the accents before it. */
      for (; c[i].ch == ' ' && owed > 0; owed--) waddch(w, ' ' | a);
      continue;
    }
    wchar_t wc[2] = {(wchar_t)c[i].ch, 0};
    /* A wide character covers the cell after it too, which its writer
    ** left for it (legend.c); in the last cell it would wrap. */
    int cols = width_wchar(wc[0]);
    if (cols > 1) {
      if (i + 1 < n) i++;
      else wc[0] = ' ';
    }
    /* An accent goes on the character before it and takes no column. */
    if (cols == 0) owed++;
    cchar_t cc;
    setcchar(&cc, wc, a, (short)PAIR_NUMBER(a), NULL);
    wadd_wch(w, &cc);
  }
  for (; owed > 0; owed--) waddch(w, ' ');
}

int term_width(const char *s) { return width_cols(s, strlen(s)); }

/* The characters of 's' in at most 'maxw' columns, whole clusters only,
** into 'buf' (room for 'cap' - 1 and a 0), as curses is to draw them: a
** control character as a space, one of no known width as '?'. Returns
** how many; '*cols' is their columns. */
static int shown_chars(const char *s, int maxw, wchar_t *buf, int cap, int *cols) {
  size_t len = strlen(s), at = 0;
  int n = 0;
  *cols = 0;
  while (at < len) {
    int cw;
    size_t end = at + width_cluster(s + at, len - at, &cw);
    /* A character is at least a byte: then the whole cluster fits 'buf'. */
    if (*cols + cw > maxw || n + (int)(end - at) >= cap) break;
    while (at < end) {
      int c;
      at += width_char(s + at, end - at, &buf[n], &c);
      if (buf[n] < 0x20 || buf[n] == 0x7f) buf[n] = ' ';
      else if (!iswprint((wint_t)buf[n])) buf[n] = '?';
      n++;
    }
    *cols += cw;
  }
  buf[n] = 0;
  return n;
}

int term_print(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *s) {
  wchar_t buf[512];
  int cols, n = shown_chars(s, maxw, buf, (int)(sizeof buf / sizeof buf[0]), &cols);
  attr_t a = term_attr(t, role);
  wattrset(w, a);
  mvwaddnwstr(w, y, x, buf, n);
  wattrset(w, A_NORMAL);
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
