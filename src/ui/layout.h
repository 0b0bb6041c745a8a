/*
** layout.h -- where each panel goes for the terminal's size.
**
** Designed for 80x24 first: everything fits there. More rows go to the
** charts and the REPL, more columns add a third chart and give the lens,
** alignment and sample panels their own columns. Below the minimum, the
** layout says so ('too_small') and the screen shows a message while training
** goes on. Pure: sizes in, rectangles out, so any size down to 1x1 is safe.
*/
#ifndef TIELAB_UI_LAYOUT_H
#define TIELAB_UI_LAYOUT_H

typedef enum PanelId {
  P_STATUS,   /* one line: runs, tie modes, scales, step, tokens/s, running */
  P_BIG,      /* present view: big digits */
  P_LOSS,     /* train and validation loss */
  P_RATIO,    /* gradient ratio out/in, log scale */
  P_EXTRA,    /* wide screens: gradient norms, or the scripts' own series */
  P_LENS,     /* per-layer lens accuracy bars and history heatmap */
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

enum { LAYOUT_MIN_COLS = 80, LAYOUT_MIN_ROWS = 24, LAYOUT_PRESENT_MIN_COLS = 40, LAYOUT_PRESENT_MIN_ROWS = 12 };

typedef struct Layout {
  int rows, cols;
  int too_small;     /* below the minimum for the view */
  Rect r[P_COUNT];
} Layout;

/* Compute every rectangle; 'zoom' is a chart panel that takes the whole
** chart area (P_SCATTER: also the present view's chart), or -1. */
void layout_compute(Layout *l, int rows, int cols, View view, int zoom);

/* A centred box for an overlay of 'h' x 'w', shrunk to fit. */
Rect layout_center(int rows, int cols, int h, int w);

#endif
