/*
** graph.h -- series of numbers drawn as a chart into a grid of cells.
**
** Knows only data and a rectangle: no curses, no lab, no trainer. The
** caller hands over series of (x, y) points, a glyph tier, a y range and an
** x extent; 'graph_render' fills a w x h grid of cells, each a Unicode code
** point and a colour role, which the terminal module copies to the screen.
** Being pure, the renderer is tested by comparing its output with known text.
** What a chart shows, row by row and glyph by glyph: docs/architecture.md.
*/
#ifndef TIELAB_UI_GRAPH_H
#define TIELAB_UI_GRAPH_H

#include <stddef.h>
#include <stdint.h>

typedef enum GraphGlyphs { GRAPH_BRAILLE, GRAPH_BLOCK, GRAPH_ASCII } GraphGlyphs;

/* What a cell is, so the terminal can colour it. A series' cells have role
** GRAPH_ROLE_SERIES + its colour index, plus GRAPH_ROLE_TINT for a lighter
** or dimmer shade (validation, baselines) and GRAPH_ROLE_BOLD for the series
** drawn bold (the selected run: its legend entry; its line only without
** colour); 'graph_series_role' builds one. */
enum {
  GRAPH_ROLE_TEXT = 0,
  GRAPH_ROLE_AXIS,
  GRAPH_ROLE_LABEL,
  GRAPH_ROLE_EVENT,
  GRAPH_ROLE_TITLE,
  GRAPH_ROLE_SHARED,     /* a cell two series touch */
  GRAPH_ROLE_REF,        /* the reference line */
  GRAPH_ROLE_SERIES = 16,
  GRAPH_ROLE_TINT = 8,   /* flag over GRAPH_ROLE_SERIES + colour (0..7) */
  GRAPH_ROLE_BOLD = 32   /* flag too */
};
#define GRAPH_COLORS 8   /* colour indices a role can carry */

typedef struct GraphCell {
  uint32_t ch;      /* a code point; ' ' when empty */
  uint8_t role;
  uint8_t bg;       /* 0: the terminal's background; else a series role
                       (GRAPH_ROLE_SERIES + colour, + GRAPH_ROLE_TINT for a
                       dashed line) whose colour, as its line has it, is the
                       cell's background: the lower of the two runs a shared
                       cell shows */
} GraphCell;

typedef struct GraphSeries {
  const char *name;     /* in the legend; NULL: left out of it */
  const double *x, *y;  /* n points, x not decreasing; NaN y values are skipped */
  const double *lo, *hi; /* NULL, or per point the smallest and largest value of the
                           steps it stands for (a history bucket's min and max): the
                           faint span beneath a solid line reaches them; NULL: the
                           point itself */
  int n;
  int color;            /* colour index: role GRAPH_ROLE_SERIES + color */
  int dashed;           /* the secondary line of its colour (validation, a baseline):
                           long dashes, a tinted role, a lower-case mark in ASCII */
  int bold;             /* the selected run: its name bold in the legend, its line
                           bold too where there is no colour; draw it last so it
                           lies on top */
  int group;            /* which run (or thing) it belongs to, from 1: two lines of
                           one group (a run's training and validation loss) are not
                           an overlap; 0: its own */
  int style;            /* 1 for a colour used a second time: other ASCII marks and
                           dash pattern, so two runs of one colour still differ */
  int line;             /* its place among the chart's lines, from 0 (the runs'
                           order): its pattern without colour */
} GraphSeries;

uint8_t graph_series_role(const GraphSeries *s);

/* The legend's sample of a series' line without colour: a box-drawing line
** of its pattern's weight and dashes ("━", "╍", "┅", "┉", "─", "╌"; "┈"
** for a dashed series). */
uint32_t graph_mono_sample(const GraphSeries *s);

/* Events are marked on the time axis by kind, and the legend names the
** kinds shown. */
typedef enum GraphEventKind {
  GRAPH_EVENT_OTHER, GRAPH_EVENT_TIE, GRAPH_EVENT_SCALE, GRAPH_EVENT_PHASE, GRAPH_EVENT_KINDS
} GraphEventKind;

typedef struct GraphEvent {
  double x;
  GraphEventKind kind;
  const char *label;   /* a few words at the top of its rule ("untie", "in x5");
                          NULL: none */
} GraphEvent;


typedef struct Graph {
  const char *title;           /* a log chart adds " (log)" */
  GraphGlyphs glyphs;
  int log_y;                   /* y on a log10 scale; values <= 0 are skipped */
  double x_min, x_max;
  double y_min, y_max;         /* data units, also when log_y; widened to round ticks */
  const GraphSeries *series;
  int n_series;
  const GraphEvent *events;
  int n_events;
  const char *event_names[GRAPH_EVENT_KINDS];   /* each kind's name in the legend, as
                               the caller calls it (a tie change: the setting's name); NULL: its mark alone */
  const char *x_label;         /* on the time axis' row ("step"); NULL: none */
  int has_ref;                 /* a dotted line at y = ref_y ... */
  double ref_y;
  const char *ref_label;       /* ... named in the legend */
  int runs_left_out;           /* runs the caller had no room for: "+N runs" */
  int break_gaps;              /* a linear scale may break: a band of the range no series
                               ** reaches (scores to E_in and to E_out, far apart), at
                               ** least an eighth of it and four rows, takes two rows,
                               ** '≈' on the axis between its ends' labels, and the
                               ** rows go to the lines */
  int no_shade;                /* no background colours: shared cells in GRAPH_ROLE_SHARED
                               ** (ASCII: the two runs' marks a row apart) */
  int mono;                    /* no colour: lines told apart by pattern */
  double smooth;               /* 0 (or out of [0, 1)): raw lines; else the weight w of
                               ** an exponential moving average drawn over each solid
                               ** series' faint raw line: s_i = s_(i-1) w + (1 - w) y_i
                               ** from s_(-1) = 0, shown as s_i / (1 - w^(i+1)) over the
                               ** series' finite points in x order. A point is what the
                               ** caller hands over: a history bucket, whose steps grow as
                               ** the history compacts, so the average spans more steps
                               ** on a long run, as on a chart logged every few steps */
} Graph;

/* 1 when the legend of 'g' (its title and named series; events' entries
** aside) fits one row of a chart 'w' wide with every name whole: a
** caller with lines to spare can leave some out rather than have the
** legend wrap. */
int graph_legend_fits_row(const Graph *g, int w);

/* Columns of the y labels in a chart 'w' wide (0: none). */
int graph_label_cols(int w);

/* 1 when the reference line's name fits the y labels' column of a chart
** 'w' wide: it is drawn there, on the line's row, and not in the legend. */
int graph_ref_in_axis(const Graph *g, int w);

/* Fill 'cells' (w*h, row-major) with the chart. Any size is accepted, down
** to nothing at all. */
void graph_render(const Graph *g, GraphCell *cells, int w, int h);

/* The same frame, with every point of every series drawn alone: a Braille
** dot (2x4 per cell), or one mark per cell in the block and ASCII tiers
** ('*' for colour 0, 'o' for colour 1, ...). Series need not be sorted; a
** cell with points of two series is shared, as a line's. */
void graph_scatter(const Graph *g, GraphCell *cells, int w, int h);

/* Smallest and largest finite x of the series; 0 when there is none. */
int graph_x_range(const GraphSeries *s, int n, double *lo, double *hi);

/* The time axis every chart of a lab shares: 0..GRAPH_X_FIRST until the
** data pass it, then it jumps so that the newest step lies at ~90% of the
** width, and stays put until the data reach its end (or fall back before
** 90%, when runs go). A jump moves every point, so jumps are geometric and
** rare: between two the terminal only receives the newest cells. */
#define GRAPH_X_FIRST 50
typedef struct GraphXAxis {
  double max;   /* 0: not set */
} GraphXAxis;
double graph_xaxis_update(GraphXAxis *a, double newest);

/* A y range that grows at once to the data's range and shrinks only when
** the data use less than four fifths of it, so that the chart is not
** repainted for every wiggle. */
typedef struct GraphScale {
  double lo, hi;
  int set;
} GraphScale;
void graph_scale_update(GraphScale *s, double lo, double hi, int log_y);

/* Smallest and largest finite y of the series (positive only when 'log_y'),
** their 'lo' and 'hi' included; 0 when there is none. */
int graph_y_range(const GraphSeries *s, int n, int log_y, double *lo, double *hi);

/* The same over the points with x_lo <= x <= x_hi only: the y range of what
** a chart of that x range shows. */
int graph_y_range_x(const GraphSeries *s, int n, int log_y, double x_lo, double x_hi, double *lo, double *hi);

/* A horizontal bar of 'frac' (0..1) of 'w' cells, in eighths of a cell
** (ASCII: '#' and a final '='), padded with spaces. */
void graph_hbar(GraphCell *row, int w, double frac, GraphGlyphs g, uint8_t role);

/* The same bar in series 's''s look. With colour (and in ASCII with it)
** graph_hbar's in the series' colour; without colour a fill of its own,
** as its line has a pattern of its own: by its 'line', '█', '▒', '░', '▓'
** (the last cell in eighths: "▒▒▍"); in ASCII its mark ("*****", "ooooo",
** the last one from half a cell). */
void graph_hbar_series(GraphCell *row, int w, double frac, GraphGlyphs g, const GraphSeries *s, int mono);

/* A series' mark beside its name in a legend or a title: its line's
** sample (with colour a solid or dashed line, without its pattern's), in
** ASCII its mark. */
uint32_t graph_line_mark(const GraphSeries *s, GraphGlyphs g, int mono);

/* A shade for v in 0..1: " ░▒▓█" or " .:-=+*#%@". */
uint32_t graph_shade(double v, GraphGlyphs g);

/* A number in at most 'width' characters ("0.125", "3.2e-05"). */
void graph_format(double v, int width, char *buf, size_t cap);

/* Write text (UTF-8) into cells from column 0, at most 'w' cells; returns
** the cells used. */
int graph_text(GraphCell *row, int w, const char *utf8, uint8_t role);

/* The grid as UTF-8 lines, each ended by '\n', trailing spaces kept. */
size_t graph_to_utf8(const GraphCell *cells, int w, int h, char *out, size_t cap);

#endif
