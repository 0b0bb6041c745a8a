/*
** uistate.h -- what the UI's own files share: the screen's state, the
** panels' draw functions, the key table and the helpers around them.
** Only src/ui includes it; the rest of tielab sees ui.h.
**
** Code that changes state marks panels dirty ('ui_dirty'); the loop draws
** dirty panels once per frame (at most FRAME_HZ frames a second, or at
** once after a key) with wnoutrefresh and a single doupdate.
*/
#ifndef TIELAB_UI_UISTATE_H
#define TIELAB_UI_UISTATE_H

#include <signal.h>

#include "lab/journal.h"
#include "luaapi/luaapi.h"
#include "trainer/trainer.h"
#include "trainer/watchdog.h"
#include "ui/box.h"
#include "ui/graph.h"
#include "ui/layout.h"
#include "ui/record.h"
#include "ui/scroll.h"
#include "ui/term.h"
#include "ui/ui.h"

#define FRAME_HZ 10
#define UI_SLOTS 16   /* series one chart may draw */

typedef enum Ask { ASK_NONE, ASK_QUIT } Ask;

typedef struct SavedStep {
  int id;
  long step;   /* the run's step when last saved or loaded */
} SavedStep;

/* The lab's throughput by the wall clock (status.c): each run's step at
** the last measurement, by id. */
#define UI_METER_RUNS 64
typedef struct UiMeter {
  double t0, rate;
  int rated;                 /* 'rate' holds a measurement */
  int n;
  struct {
    int id;
    long step;
  } run[UI_METER_RUNS];
} UiMeter;

typedef struct Ui {
  const UiOptions *opt;
  int screen;                /* curses is up (0: the line REPL) */
  Term term;
  Layout lay;
  WINDOW *win[P_COUNT];
  WINDOW *content[P_COUNT]; /* a boxed panel's content window (box.h) */
  WINDOW *overlay;           /* the help box, when shown */
  WINDOW *keywin;            /* 1x1, never drawn: wgetch on it refreshes nothing */

  Lab *lab;
  Trainer *trainer;
  Host host;
  LuaApi *api;
  TrainerSnap *snap;         /* the newest snapshot taken */
  Scroll *scroll;
  Recorder *rec;             /* --record: the cast being written */
  Journal *journal;          /* --journal: the actions being written */

  int sel_id;                /* the selected run */
  int lens_mode;             /* the lens shown: 0 tuned online, 1 tuned fitted, 2 logit */
  int zoom;                  /* a PanelId shown large, or -1 */
  int scatter;               /* the row norm scatter replaces the charts */
  View view;
  int present_chart;          /* the chart the present view shows (a PanelId) */
  int caption_rows;           /* rows the caption needs now (0: none) */
  int help;
  int focus;                 /* keys go to the REPL */
  Ask ask;
  char *entry;               /* lines so far of an unfinished REPL entry */

  unsigned dirty;            /* bits of PanelId */
  int relayout, repaint;
  double last_frame;
  double last_take;          /* when a snapshot was last taken */
  int snap_waiting;          /* the trainer woke us; take at the next frame */
  long scroll_seen, repl_seen;
  int repl_rows;             /* the REPL output's rows when laid out */
  int resized;               /* the terminal's size changed: lay out on a cleared screen */
  int lens_rows;             /* the lens table's rows when laid out */

  char msg[512];
  int msg_role;
  double msg_until;

  char present_series[64];    /* a script's own series shown alone, "" none */
  GraphXAxis xaxis;           /* the time axis every chart shares */
  UiMeter meter;              /* the status line's tokens per second */
  int theme;                  /* the TermTheme asked for (--theme, ui.theme); term.theme is in use */
  double smooth;              /* the charts' smoothing, 0 (raw) to 0.99 (ui.smooth) */

  GraphScale scale[P_COUNT];
  GraphCell *cells;          /* chart scratch */
  size_t cap_cells;
  double *xy[UI_SLOTS];      /* series scratch: x then y, per slot */
  size_t cap_xy[UI_SLOTS];

  SavedStep *saved;
  int n_saved;
  char *saved_note;          /* which runs the last save wrote where: printed at the end */

  int results;               /* the results panel is shown */
  int results_top;           /* its first line shown */
  long results_seen;         /* the scripts' results last shown (see luaapi_results) */
  int phase_seen;            /* the script phases (lab.phase) seen so far */
  int key_wait_seen;         /* a script waited for the speaker's key at the last pump */

  Watchdog *watchdog;        /* ends the lab when a signal cannot reach the UI thread */
  int stderr_fd;             /* the real stderr while a file holds it (-1: it is not held) */
  volatile sig_atomic_t script_interrupted;   /* Ctrl-C stopped a script mid-pump */
  int quit;                  /* leave the loop */
  int status;                /* exit status */
  int gone;                  /* the terminal hung up: do not write to it */
} Ui;

#define DIRTY_ALL (~0u)

/* uistate.c: the state every file of the screen changes or asks about */
void ui_dirty(Ui *ui, unsigned bits);
void ui_message(Ui *ui, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const TrainerRun *ui_selected(const Ui *ui);
/* 'line' added to the unfinished REPL entry, after a newline when it continues
** one: the entry, or NULL when memory ran out (the entry as it was). */
const char *ui_entry_add(Ui *ui, const char *line);
int ui_state_path(char *buf, size_t cap, const char *leaf, Err *err);
void ui_mark_saved(Ui *ui, int id, long step);   /* run 'id' is saved (or was loaded) at 'step' */
int ui_unsaved(const Ui *ui);
int ui_save_all(Ui *ui, Err *err);
void ui_request_quit(Ui *ui, int save);   /* save: 1 yes, 0 no, -1 ask when unsaved */
void ui_lua(Ui *ui, const char *chunk);   /* run a key's Lua call */

/* ui.c: the lab from start to end */
void ui_lua_out(void *ctx, const char *s, size_t n, int is_err);

/* uilua.c: the 'ui' table of Lua functions behind every key */
int uilua_open(Ui *ui, Err *err);

/* uiscript.c: scripts on the screen: the results panel, the speaker's keys */
void uiscript_open(Ui *ui, lua_State *L);   /* their functions in the 'ui' table on top of L */
void uiscript_after_pump(Ui *ui);           /* a script that ended having printed shows its results */
void uiscript_layout(Ui *ui);               /* room for the results panel, if the layout left none */
void panel_results(Ui *ui, WINDOW *w, int h, int wd);

/* keys.c */
void ui_key(Ui *ui, int key);

/* loop.c */
int ui_loop(Ui *ui);
void ui_after_step(Ui *ui);   /* the on_step callbacks of a step the trainer handed over */
void ui_layout(Ui *ui);
void ui_draw(Ui *ui);

/* panels: each draws itself into its window, 'h' x 'w' */
void panel_status(Ui *ui, WINDOW *w, int h, int wd);
void panel_hint(Ui *ui, WINDOW *w, int h, int wd);
void panel_loss(Ui *ui, WINDOW *w, int h, int wd);
void panel_ratio(Ui *ui, WINDOW *w, int h, int wd);
void panel_extra(Ui *ui, WINDOW *w, int h, int wd);
void panel_scatter(Ui *ui, WINDOW *w, int h, int wd);
void panel_align_chart(Ui *ui, WINDOW *w, int h, int wd);
/* lenspair.c: the lens the panels show (ui->lens_mode) and its names (in
** Lua, short, long); the selected run and the one it is compared with,
** tied first, each with that lens measured. */
typedef enum LensMode { LENS_ONLINE, LENS_FITTED, LENS_LOGIT, LENS_MODES } LensMode;
typedef struct LensModeName {
  const char *lua, *brief, *full;
} LensModeName;
extern const LensModeName lens_modes[LENS_MODES];
typedef struct LensPair {
  const TrainerRun *run[2];       /* run[1] NULL when there is no partner */
  int color[2];                   /* their series colours, as the charts give them */
  int place[2];                   /* their places in the lab: what the charts give
                                     them besides (a line pattern, a second mark) */
  const LensStats *ls[2];
  int n;                          /* runs compared */
  int rows;                       /* positions compared: the layers both have, then "out" */
  const TrainerRun *unmeasured[2]; /* runs of the pair left out, their lens not measured (NULL: none) */
} LensPair;
int run_pair(const Ui *ui, const TrainerRun *runs[2]);   /* the two runs, tied first; returns how many */
const TrainerRun *align_run(const Ui *ui);   /* the tied run of the selected pair, else the selected run */
int lens_pair(const Ui *ui, LensPair *p);   /* returns p->n */
const LensStats *lens_of(const Ui *ui, const TrainerRun *r);
int lens_pos(const LensPair *p, int k, int row);   /* run k's position for a row: "out" is its own last */
void panel_lens(Ui *ui, WINDOW *w, int h, int wd);
void panel_lens_history(Ui *ui, WINDOW *w, int h, int wd);
int lens_table_rows(Ui *ui);   /* rows the lens table wants: column heads and a row per position */
void panel_align(Ui *ui, WINDOW *w, int h, int wd);
void panel_sample(Ui *ui, WINDOW *w, int h, int wd);
void panel_big(Ui *ui, WINDOW *w, int h, int wd);
void panel_caption(Ui *ui, WINDOW *w, int h, int wd);
void panel_help(Ui *ui, WINDOW *w, int h, int wd);
int panel_help_rows(Ui *ui);

/* present.c: the chart the present view shows, the caption's rows, and
** the figures over each chart: big digits of the selected run 'r' into 'f'
** (FIGURES_MAX of room); each returns how many */
typedef struct Figure {
  const char *label[2];   /* two short lines beside the number */
  double value;
  int decimals;           /* -1: four significant digits; -2: two, as a factor ("12x", "1.3x") */
} Figure;
#define FIGURES_MAX 2
typedef int (*FiguresFn)(Ui *ui, const TrainerRun *r, Figure *f);
const char *present_chart_name(const Ui *ui); /* the chart shown, or the script's series */
int present_caption_rows(const Ui *ui, int rows, int cols);
int figures_loss(Ui *ui, const TrainerRun *r, Figure *f);
int figures_ratio(Ui *ui, const TrainerRun *r, Figure *f);
int figures_lens(Ui *ui, const TrainerRun *r, Figure *f);
int figures_align(Ui *ui, const TrainerRun *r, Figure *f);
int figures_scatter(Ui *ui, const TrainerRun *r, Figure *f);
int figures_series(Ui *ui, const TrainerRun *r, Figure *f);
/* Is the script's series 'name' among those the present view shows for
** 'shown': that series, or the group "shown: ..." (e.g. "out/in: tied"
** and "out/in: untied" for "out/in"), so that two arms share one chart?
** The part after the group's name, or NULL when 'name' is not shown. */
const char *present_series_member(const char *name, const char *shown);

/* panels.c: the panel table's columns that draw (its names and flags are
** layout.h's), keyed by PanelId */
typedef struct UiPanel {
  void (*draw)(Ui *ui, WINDOW *w, int h, int wd);   /* into its window, or a boxed panel's content */
  FiguresFn figures;   /* the present view's big digits over it; NULL: none */
} UiPanel;
const UiPanel *ui_panel(int id);   /* NULL when 'id' is no panel */

/* charts.c helpers the panels share */
GraphCell *ui_cells(Ui *ui, int w, int h);
void ui_blit(Ui *ui, WINDOW *win, const GraphCell *c, int w, int h);
/* x and y arrays of a history series (bucket means at bucket centres);
** the pointers stay valid until the next call with the same 'slot'. */
int ui_series(Ui *ui, int slot, const History *h, const char *name, const double **x, const double **y);
/* The same into 's' (x, y, n), with each point's smallest and largest
** value ('lo', 'hi'): the span a chart keeps when it draws a column. */
int ui_series_span(Ui *ui, int slot, const History *h, const char *name, GraphSeries *s);
double ui_last_step(const Ui *ui);
/* The right end of the shared time axis for the newest snapshot. */
double ui_x_max(Ui *ui);

/* lineui.c */
int ui_line_main(Ui *ui);
void ui_line_print(const char *s, size_t n, int is_err);

#endif
