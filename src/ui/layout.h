/*
** layout.h -- where each panel goes for the terminal's size: pure, sizes
** in, rectangles out. How the rows and columns are shared out:
** docs/architecture.md, 'The layout'.
**
** The panel table says what each panel is called and what it is; it has a
** row for every PanelId, and every other list of panels reads it.
*/
#ifndef TIELAB_UI_LAYOUT_H
#define TIELAB_UI_LAYOUT_H

#include <stddef.h>

typedef enum PanelId {
  P_STATUS,   /* one line: runs, tie modes, scales, step, tokens/s, running */
  P_BIG,      /* present view: big digits */
  P_LOSS,     /* train and validation loss */
  P_RATIO,    /* gradient ratio out/in, log scale */
  P_EXTRA,    /* wide screens: gradient norms, or the scripts' own series */
  P_LENS,     /* per-layer lens: the tied run beside its untied partner */
  P_LENSHIST, /* the lens by layer over time, a small chart per layer */
  P_ALIGN,    /* alignment of the tied matrix to the partner's E_in/E_out */
  P_SAMPLE,   /* a text sample of the selected run */
  P_SCATTER,  /* row norm against log token frequency, in place of the charts */
  P_CAPTION,  /* present view: the script's caption in large type */
  P_ALIGNCHART, /* alignment to E_in / E_out over time, with the baseline */
  P_RESULTS,  /* a script's final output, kept on screen */
  P_SCROLL,   /* the REPL's output */
  P_INPUT,    /* the REPL's input line */
  P_HINT,     /* key hints, messages and questions */
  P_COUNT
} PanelId;

typedef struct Rect {
  int y, x, h, w;   /* h == 0: not shown */
} Rect;

typedef enum View { VIEW_LAB, VIEW_PRESENT } View;

/* Rows of the REPL's output a layout may ask for, at most. */
#define LAYOUT_SCROLL_CAP 64

enum { LAYOUT_MIN_COLS = 80, LAYOUT_MIN_ROWS = 24, LAYOUT_PRESENT_MIN_COLS = 40, LAYOUT_PRESENT_MIN_ROWS = 12 };

/* What the screen is asked to show. */
typedef struct LayoutAsk {
  View view;
  int zoom;           /* lab view: a chart panel over the whole chart area (P_SCATTER:
                      ** the scatter in place of the charts), or -1 */
  int chart;          /* present view: the chart shown large (P_LOSS when not a chart) */
  int caption_rows;   /* present view: rows the caption needs (0: no caption) */
  int results;        /* lab view: the results panel takes the lower panels' place */
  int scroll_lines;   /* lab view: lines the REPL's output holds (its rows grow to a few) */
  int lens_rows;      /* lab view: rows the lens table wants inside its box (0: a default) */
} LayoutAsk;

typedef struct Layout {
  int rows, cols;
  int too_small;     /* below the minimum for the view */
  Rect r[P_COUNT];
} Layout;

/* Rows the lab view gives the REPL's output of 'lines' lines on a screen
** of 'rows': one a line, up to a few. */
int layout_scroll_rows(int rows, int lines);

/* Compute every rectangle for 'ask' (NULL: the lab view, nothing zoomed). */
void layout_compute(Layout *l, int rows, int cols, const LayoutAsk *ask);

/* What a panel is (PanelInfo.flags). */
enum {
  PANEL_CHART = 1u << 0,   /* a chart the zoom and the present view can show over the chart area */
  PANEL_BOXED = 1u << 1,   /* drawn in a box, its title in the top border */
  PANEL_DATA = 1u << 2,    /* shows the trainer's snapshot: drawn again when a new one is taken */
};

/* The names a panel goes by: each a column of the table. */
typedef enum PanelName {
  NAME_PANEL,     /* its own, as the tests know it */
  NAME_ZOOM,      /* for ui.zoom */
  NAME_PRESENT,   /* for ui.present, the figures of the present view's chart */
} PanelName;

/* One row of the panel table: what is known of a panel without curses.
** Its other columns, the draw function and the present view's figures,
** are in panels.c, keyed by the same ids. */
typedef struct PanelInfo {
  PanelId id;
  const char *name;      /* NAME_PANEL */
  const char *zoom;      /* NAME_ZOOM, or NULL: ui.zoom does not show it alone */
  const char *present;   /* NAME_PRESENT, or NULL: ui.present does not name it */
  unsigned flags;        /* PANEL_* */
  int min_rows, min_cols; /* the least it is drawn in, box included; the layout
                            gives it no less wherever it shows it */
} PanelInfo;

/* The row of panel 'id', or NULL when 'id' is no panel (-1: none). */
const PanelInfo *layout_panel(int id);

/* 1 when panel 'id' has every bit of 'flag'. */
int layout_has(int id, unsigned flag);

/* The dirty bits (1u << id) of every panel with 'flag'. */
unsigned layout_mask(unsigned flag);

/* Panel 'id''s name of kind 'which', or NULL when it has none. */
const char *layout_name(int id, PanelName which);

/* The panel called 'name' as 'which' names panels, or -1. */
int layout_named(PanelName which, const char *name);

/* The panels 'which' names, in the order ui.zoom and ui.present go through
** them, into 'ids' (P_COUNT of room); returns how many. */
int layout_list(PanelName which, int *ids);

/* The panel after 'panel' in that order, the first again after the last;
** with 'none', -1 (nothing) comes before the first. From a panel not in
** the order it goes on as from the first. */
int layout_next(PanelName which, int panel, int none);

/* "loss, ratio, ...": the names of kind 'which' in that order. */
void layout_names(PanelName which, char *buf, size_t cap);

/* A centred box for an overlay of 'h' x 'w', shrunk to fit. */
Rect layout_center(int rows, int cols, int h, int w);

#endif
