/*
** term.h -- the terminal under ncursesw: opening it so that failure is
** recoverable (newterm, and a check for cursor addressing, so TERM=dumb falls
** back to the line REPL), the glyph tier, colours by role, and drawing cells
** and UTF-8 text clipped to a width. How colours and the theme are chosen:
** docs/architecture.md, 'Colours'.
*/
#ifndef TIELAB_UI_TERM_H
#define TIELAB_UI_TERM_H

#include <curses.h>

#include "base/err.h"
#include "ui/graph.h"

/* What a piece of text is; the graph's roles first, so chart cells can be
** drawn as they come. */
enum {
  ROLE_TEXT = GRAPH_ROLE_TEXT,
  ROLE_AXIS = GRAPH_ROLE_AXIS,
  ROLE_LABEL = GRAPH_ROLE_LABEL,
  ROLE_EVENT = GRAPH_ROLE_EVENT,
  ROLE_TITLE = GRAPH_ROLE_TITLE,
  ROLE_SHARED = GRAPH_ROLE_SHARED,   /* a chart cell two series touch */
  ROLE_REF = GRAPH_ROLE_REF,         /* a chart's reference line */
  ROLE_ERROR,
  ROLE_WARN,
  ROLE_OK,
  ROLE_SELECT,
  ROLE_KEY,
  ROLE_BAR,
  ROLE_DIM,
  ROLE_BORDER,                       /* a panel's box: a quiet grey, apart from dim text's */
  ROLE_SERIES = GRAPH_ROLE_SERIES   /* + colour index, up to TERM_SERIES_COLORS, + graph flags */
};
#define TERM_SERIES_COLORS 6

typedef enum TermTheme { TERM_THEME_AUTO, TERM_THEME_DARK, TERM_THEME_LIGHT, TERM_THEME_MONO } TermTheme;

/* Glyphs with an ASCII stand-in. */
typedef enum TermGlyph {
  GLYPH_VLINE,
  GLYPH_HLINE,
  GLYPH_RUN,
  GLYPH_PAUSE,
  GLYPH_TIMES,
  GLYPH_SELECTED,
  GLYPH_ELLIPSIS,
  GLYPH_NEWLINE,
  GLYPH_UP,
  GLYPH_DELTA,     /* a difference: "Δ" */
  GLYPH_MINUS,     /* "−" */
  GLYPH_PARALLEL,  /* KL(p ‖ q) */
  GLYPH_COUNT
} TermGlyph;

typedef struct Term {
  SCREEN *screen;
  int utf8;            /* the locale's codeset is UTF-8 and --ascii not given */
  GraphGlyphs glyphs;  /* the chart tier now in use */
  int color;           /* colour pairs in use */
  int colors256;       /* the terminal has 256 colours */
  int dim_grey;        /* ROLE_DIM is a grey of the palette, not the terminal's dim */
  int shaded;          /* chart cells' backgrounds ('bg') have colour pairs */
  TermTheme theme;     /* in use: never AUTO once open */
  char leave[128];     /* what leaves the screen: attributes off, cursor shown, main screen */
} Term;

/* "dark", "light", "mono" (and "auto" for the default); -1 for anything
** else. */
int term_theme_parse(const char *name);
const char *term_theme_name(TermTheme th);

/* The theme when none is asked for: mono under NO_COLOR, light when
** COLORFGBG names a light background, else dark. */
TermTheme term_theme_default(void);

/* Use theme 'th' (AUTO: the default) from now on; the screen must be open.
** NO_COLOR still makes it mono. Returns the theme in use. */
TermTheme term_set_theme(Term *t, TermTheme th);

/* Decide the glyph tier from the locale, TERM and 'ascii' (no screen yet). */
void term_choose_glyphs(Term *t, int ascii);

/* Open the screen on stdin/stdout, in theme 'theme' (AUTO: the default).
** -1 with a reason when the terminal cannot hold a screen (no TERM, unknown
** type, no cursor addressing): the caller then runs the line REPL. */
int term_open(Term *t, int ascii, TermTheme theme, Err *err);

/* Leave curses; 'restore' 0 when the terminal is gone (after a hangup) and
** must not be written to. */
void term_close(Term *t, int restore);

/* Keep the terminal's modes as the shell left them, before readline or
** curses change them, for term_give_back (the process has one terminal). */
void term_keep_shell(void);

/* Give the terminal back at once, from any thread, with system calls only
** (curses may be in use on another thread, or stuck): the screen left and
** the shell's modes restored. For an end that cannot wait for the UI
** thread (the watchdog's); a terminal that is gone ignores it. */
void term_give_back(const Term *t);

/* The terminal's size now (from the tty, not from curses' cache). */
int term_size(int *rows, int *cols);

attr_t term_attr(const Term *t, int role);
const char *term_glyph(const Term *t, TermGlyph g);

/* Draw 'n' chart cells at (y, x), a cell a column, each in its role's
** colour over its 'bg' role's colour (when the terminal has the pairs;
** else no background colour), or without colour in its role's attributes: a wide character's
** cell covers the next one too (the terminal draws it over two columns);
** an accent's cell puts the accent on the character before it, and the
** column it leaves is made up at the next blank cell (or the end). */
void term_cells(const Term *t, WINDOW *w, int y, int x, const GraphCell *c, int n);

/* Print UTF-8 text at (y, x) in at most 'maxw' columns, never cut inside a
** character and its accents (width.h); returns the columns used. Control
** characters are shown as spaces. */
int term_print(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *s);
int term_printf(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Display columns of a UTF-8 string, as width.h counts them. */
int term_width(const char *s);

#endif
