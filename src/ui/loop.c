/*
** loop.c -- the UI thread's loop: poll, dispatch, draw once.
**
**   poll(stdin, the trainer's wake pipe, the signal pipe)
**   signals   -> resize, stop a script or clear the line, save and leave
**   wake pipe -> a snapshot waits (taken at the next frame); a step handed
**                over gets its on_step callbacks at once; scripts resumed
**   stdin     -> every key curses has, each through ui_key
**   draw      -> at once after a key; otherwise at most FRAME_HZ a second,
**                and only the panels marked dirty; wnoutrefresh each, one
**                doupdate, so the terminal receives only changed cells
*/
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sig.h"
#include "ui/repl.h"
#include "ui/uistate.h"

#define ESC 27

/* ------------------------------------------------------------ the REPL line */

static void on_line(void *ctx, char *line) {
  Ui *ui = ctx;
  if (!line) {   /* Ctrl-D on an empty line: back to the keys */
    ui->focus = 0;
    curs_set(0);
    ui_dirty(ui, 1u << P_INPUT | 1u << P_HINT);
    return;
  }
  int more = ui->entry && ui->entry[0];
  if (!ui_entry_add(ui, line)) {
    free(line);
    return;
  }
  scroll_addf(ui->scroll, SCROLL_ECHO, "%s%s", more ? ">> " : "> ", line);
  free(line);

  sig_arm_interrupt(1);
  LuaApiStatus st = ui_record_line(ui, ui->entry);
  sig_arm_interrupt(0);
  if (st == LUAAPI_INCOMPLETE) {
    repl_prompt(">> ");
  } else {
    repl_history_add(ui->entry);
    free(ui->entry);
    ui->entry = NULL;
    repl_prompt("> ");
  }
  ui_dirty(ui, 1u << P_SCROLL | 1u << P_INPUT | 1u << P_STATUS);
}

static int complete(void *ctx, const char *line, void (*add)(void *, const char *), void *actx) {
  Ui *ui = ctx;
  return luaapi_complete(ui->api, line, add, actx);
}

static void matches(void *ctx, char **words, int n) {
  Ui *ui = ctx;
  char buf[1024];
  size_t k = 0;
  for (int i = 0; i < n && k + 2 < sizeof buf; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "%s  ", words[i]);
  scroll_addf(ui->scroll, SCROLL_NOTE, "%s", buf);
  ui_dirty(ui, 1u << P_SCROLL);
}

/* ------------------------------------------------------------ layout and drawing */

static void free_windows(Ui *ui) {
  for (int p = 0; p < P_COUNT; p++) {
    if (ui->content[p]) delwin(ui->content[p]);   /* before its parent */
    if (ui->win[p]) delwin(ui->win[p]);
    ui->content[p] = ui->win[p] = NULL;
  }
}

/* One panel: a boxed one draws into its content window, with the rows
** above its bottom border, and the box is finished round it. */
static void draw_panel(Ui *ui, int p) {
  WINDOW *w = ui->win[p];
  Rect r = ui->lay.r[p];
  if (!ui->content[p]) {
    ui_panel(p)->draw(ui, w, r.h, r.w);
    wnoutrefresh(w);
    return;
  }
  box_begin(&ui->term, w, r.h, r.w);
  ui_panel(p)->draw(ui, ui->content[p], r.h - 1, r.w - 3);
  box_finish(&ui->term, w, r.h, r.w);
  touchwin(w);
  wnoutrefresh(w);
}

void ui_layout(Ui *ui) {
  int rows, cols;
  getmaxyx(stdscr, rows, cols);
  ui->caption_rows = present_caption_rows(ui, rows, cols);
  LayoutAsk ask = {.view = ui->view, .zoom = ui->scatter ? P_SCATTER : ui->zoom, .chart = ui->present_chart,
                   .caption_rows = ui->caption_rows, .results = ui->results,
                   .scroll_lines = scroll_rows(ui->scroll, cols, LAYOUT_SCROLL_CAP),
                   .lens_rows = ui->lens_rows = lens_table_rows(ui)};
  ui->repl_rows = layout_scroll_rows(rows, ask.scroll_lines);
  layout_compute(&ui->lay, rows, cols, &ask);
  uiscript_layout(ui);
  free_windows(ui);
  for (int p = 0; p < P_COUNT; p++) {
    Rect r = ui->lay.r[p];
    if (r.h <= 0 || r.w <= 0) continue;
    ui->win[p] = newwin(r.h, r.w, r.y, r.x);
    if (layout_has(p, PANEL_BOXED)) ui->content[p] = box_content(ui->win[p], r.h, r.w);
  }
  if (ui->lay.too_small) ui->win[P_STATUS] = newwin(rows, cols, 0, 0);
  repl_set_width(cols);
  ui->relayout = 0;
  /* A new size starts from a cleared screen; panels that only moved are
  ** drawn again whole, and the terminal gets the cells that changed. */
  if (ui->resized) ui->repaint = 1;
  else ui_dirty(ui, DIRTY_ALL);
  ui->resized = 0;
}

/* The REPL's output took a line that changes its rows: lay out again (the
** present view has no room for it). */
static int repl_rows_changed(Ui *ui) {
  int lines = scroll_rows(ui->scroll, ui->lay.cols, LAYOUT_SCROLL_CAP);
  return ui->view == VIEW_LAB && layout_scroll_rows(ui->lay.rows, lines) != ui->repl_rows;
}

static void draw_too_small(Ui *ui) {
  WINDOW *w = ui->win[P_STATUS];
  if (!w) return;
  werase(w);
  const TrainerRun *r = ui_selected(ui);
  int need_r = ui->view == VIEW_PRESENT ? LAYOUT_PRESENT_MIN_ROWS : LAYOUT_MIN_ROWS;
  int need_c = ui->view == VIEW_PRESENT ? LAYOUT_PRESENT_MIN_COLS : LAYOUT_MIN_COLS;
  int c = ui->lay.cols;
  term_printf(&ui->term, w, 0, 0, c, ROLE_WARN, "tielab needs %dx%d, this is %dx%d.", need_c, need_r, c, ui->lay.rows);
  term_printf(&ui->term, w, 1, 0, c, ROLE_TEXT, "Training goes on (%s, step %ld).", ui->snap->running ? "running" : "paused",
              r ? r->m.step : 0L);
  term_print(&ui->term, w, 2, 0, c, ROLE_TEXT, "q quits, p: present view.");
  if (ui->ask == ASK_QUIT) term_printf(&ui->term, w, 3, 0, c, ROLE_WARN, "Save %d run(s) first? y yes  n no  Esc stay", ui_unsaved(ui));
  wnoutrefresh(w);
}

void ui_draw(Ui *ui) {
  if (ui->repaint) {
    clearok(curscr, TRUE);
    ui->dirty = DIRTY_ALL;
    ui->repaint = 0;
  }
  if (ui->lay.too_small) {
    draw_too_small(ui);
  } else {
    for (int p = 0; p < P_COUNT; p++) {
      if (!ui->win[p] || !(ui->dirty & (1u << p))) continue;
      draw_panel(ui, p);
    }
    if (ui->help) {
      Rect r = layout_center(ui->lay.rows, ui->lay.cols, panel_help_rows(ui), 78);
      if (ui->overlay) delwin(ui->overlay);
      ui->overlay = r.h > 2 && r.w > 10 ? newwin(r.h, r.w, r.y, r.x) : NULL;
      if (ui->overlay) {
        panel_help(ui, ui->overlay, r.h, r.w);
        wnoutrefresh(ui->overlay);
      }
    } else if (ui->overlay) {
      delwin(ui->overlay);
      ui->overlay = NULL;
    }
    /* The window refreshed last places the cursor: the REPL's, when it has the keys. */
    if (ui->focus && ui->win[P_INPUT] && !ui->help) {
      touchwin(ui->win[P_INPUT]);
      wnoutrefresh(ui->win[P_INPUT]);
    }
  }
  doupdate();
  ui->dirty = 0;
  ui_record_frame(ui, ui->focus && !ui->help);   /* after: a failure it shows is the next frame's */
  ui->last_frame = clock_seconds();
}

/* ------------------------------------------------------------ input */

/* Every key curses has now; an ESC followed at once by a byte is Alt+key. */
static int read_keys(Ui *ui) {
  int got = 0, c;
  while (!ui->quit && (c = wgetch(ui->keywin)) != ERR) {
    got = 1;
    if (c == KEY_RESIZE) {
      ui->relayout = ui->resized = 1;
      continue;
    }
    if (ui->lay.too_small && !ui->ask && c != 'q' && c != 'p') continue;   /* nothing else shows */
    if (c == ESC) {
      int d = wgetch(ui->keywin);
      if (d != ERR && d < KEY_MIN && ui->focus) {
        char seq[2] = {ESC, (char)d};
        repl_feed(seq, 2);
        ui_dirty(ui, 1u << P_INPUT);
        continue;
      }
      ui_key(ui, ESC);
      if (d != ERR) ui_key(ui, d);
      continue;
    }
    ui_key(ui, c);
  }
  return got;
}

/* ------------------------------------------------------------ signals */

static void on_interrupt(Ui *ui) {
  int stopped = ui->script_interrupted;   /* by the signal handler, in a pump */
  ui->script_interrupted = 0;
  if (luaapi_scripts(ui->api) > 0 || stopped) {
    luaapi_interrupt(ui->api);
    ui->host.cancel(&ui->host);
    sig_arm_interrupt(1);
    luaapi_pump(ui->api);
    sig_arm_interrupt(0);
    ui_message(ui, ROLE_WARN, "script stopped; training goes on");
    return;
  }
  repl_cancel();
  free(ui->entry);
  ui->entry = NULL;
  repl_prompt("> ");
  ui_message(ui, ROLE_TEXT, "Ctrl-C stops scripts and clears the line; q quits");
  ui_dirty(ui, 1u << P_INPUT);
}

/* The terminal is still there (after SIGHUP it usually is not: EIO). */
static int terminal_alive(void) {
  struct termios tio;
  return tcgetattr(STDOUT_FILENO, &tio) == 0;
}

static void on_end_signal(Ui *ui, int hangup) {
  if (hangup && !terminal_alive()) ui->gone = 1;
  Err err = {{0}};
  if (ui_save_all(ui, &err) < 0) {
    ui->status = EXIT_RUNTIME;
    if (!ui->gone) ui_message(ui, ROLE_ERROR, "autosave failed: %s", err.msg);
  } else {
    ui->status = EXIT_INTERRUPTED;
    watchdog_saved(ui->watchdog, ui->status);   /* should Lua then hang as it closes */
  }
  ui->quit = 1;
}

static void handle_signals(Ui *ui) {
  unsigned s = sig_take();
  if (s & SIG_BIT(SIGWINCH)) {
    int rows, cols;
    if (term_size(&rows, &cols) == 0) resizeterm(rows, cols);
    ui->relayout = ui->resized = 1;
  }
  if (s & SIG_BIT(SIGINT)) on_interrupt(ui);
  if (s & (SIG_BIT(SIGTERM) | SIG_BIT(SIGHUP))) on_end_signal(ui, (s & SIG_BIT(SIGHUP)) != 0);
}

/* ------------------------------------------------------------ the loop */

/* The hooks of the step in progress, if they wait for the Lua thread, and
** the on_step callbacks of the step the trainer handed over, if one
** waits: while there are callbacks it hands over every step, with the
** lab-wide step (which goes on from a resumed checkpoint), and waits for
** them. Ctrl-C stops one that never returns; SIGTERM too, and the lab then
** saves and ends. */
void ui_after_step(Ui *ui) {
  long step;
  if (!ui->host.serve || (!trainer_call_waiting(ui->trainer) && !trainer_handover(ui->trainer, &step))) return;
  sig_arm_interrupt(1);
  ui->host.serve(&ui->host);
  sig_arm_interrupt(0);
  ui->snap_waiting = 1;   /* that step was published */
}

static void take_snapshot(Ui *ui) {
  long seq = ui->snap->msg_seq;
  if (!trainer_take(ui->trainer, &ui->snap)) return;
  ui_dirty(ui, layout_mask(PANEL_DATA));
  if (ui->snap->msg_seq != seq && ui->snap->msg[0]) ui_message(ui, ROLE_ERROR, "%s", ui->snap->msg);
}

static void pump(Ui *ui) {
  int before = luaapi_scripts(ui->api);
  if (before > 0) {
    sig_arm_interrupt(1);
    luaapi_pump(ui->api);
    sig_arm_interrupt(0);
  }
  if (luaapi_scripts(ui->api) != before) ui_dirty(ui, 1u << P_STATUS | 1u << P_HINT);   /* " script" */
  uiscript_after_pump(ui);
}

/* Milliseconds poll may sleep. */
static int poll_timeout(Ui *ui, double now) {
  double frame = 1.0 / FRAME_HZ, next = ui->last_frame + frame - now;
  double wait = 1.0;   /* a slow tick for message expiry and the caption */
  if (ui->snap_waiting && ui->last_take + frame - now < next) next = ui->last_take + frame - now;
  if (ui->snap_waiting || ui->dirty || luaapi_scripts(ui->api) > 0) wait = next;
  if (ui->msg_until > now && ui->msg_until - now < wait) wait = ui->msg_until - now;
  return wait > 0 ? (int)ceil(wait * 1000) : 0;
}

int ui_loop(Ui *ui) {
  Err err;
  ReplHooks hooks = {.line = on_line, .complete = complete, .matches = matches, .ctx = ui};
  char hist[4096];
  int have_hist = ui_state_path(hist, sizeof hist, "history", &err) == 0;
  if (repl_open(&hooks, have_hist ? hist : NULL, &err) < 0) {
    ui->status = EXIT_RUNTIME;
    return -1;
  }
  ui->keywin = newwin(1, 1, 0, 0);
  keypad(ui->keywin, TRUE);
  nodelay(ui->keywin, TRUE);
  ui->resized = 1;   /* the first layout starts from a cleared screen */
  ui_layout(ui);
  ui_draw(ui);

  while (!ui->quit) {
    struct pollfd fds[3] = {{.fd = STDIN_FILENO, .events = POLLIN},
                            {.fd = trainer_wake_fd(ui->trainer), .events = POLLIN},
                            {.fd = sig_fd(), .events = POLLIN}};
    int n = poll(fds, 3, poll_timeout(ui, clock_seconds()));
    if (n < 0 && errno != EINTR) break;
    if (fds[2].revents) handle_signals(ui);
    if (ui->quit) break;
    int woke = fds[1].revents != 0;
    if (woke) {
      trainer_drain(ui->trainer);
      ui->snap_waiting = 1;
    }
    int keys = fds[0].revents ? read_keys(ui) : 0;
    if (fds[0].revents & (POLLHUP | POLLERR)) on_end_signal(ui, 1);
    if (ui->quit) break;

    double now = clock_seconds();
    int frame_due = now - ui->last_frame >= 1.0 / FRAME_HZ;
    /* Snapshots are taken at most FRAME_HZ times a second, timed on their
    ** own: frames drawn for keys must not keep postponing the newest steps
    ** while someone types. */
    if (ui->snap_waiting && now - ui->last_take >= 1.0 / FRAME_HZ) {
      take_snapshot(ui);
      ui->snap_waiting = 0;
      ui->last_take = now;
    }
    ui_after_step(ui);   /* before the scripts: a ticket is done once its callbacks ran */
    if (woke || frame_due) pump(ui);
    if (ui->msg_until && now >= ui->msg_until) {
      ui->msg_until = 0;
      ui_dirty(ui, 1u << P_HINT);
    }
    if (scroll_version(ui->scroll) != ui->scroll_seen) {
      ui->scroll_seen = scroll_version(ui->scroll);
      ui_dirty(ui, 1u << P_SCROLL);
      /* The REPL's output grows by its lines, up to a few rows. */
      if (repl_rows_changed(ui)) ui->relayout = 1;
    }
    if (lens_table_rows(ui) != ui->lens_rows) ui->relayout = 1;
    if (repl_version() != ui->repl_seen) {
      ui->repl_seen = repl_version();
      ui_dirty(ui, 1u << P_INPUT);
    }
    int laid_out = ui->relayout;
    if (laid_out) ui_layout(ui);
    if (ui->quit) break;
    if ((ui->dirty || ui->repaint) && (keys || frame_due || ui->repaint || laid_out)) ui_draw(ui);
  }
  repl_close();
  free_windows(ui);
  if (ui->overlay) delwin(ui->overlay), ui->overlay = NULL;
  if (ui->keywin) delwin(ui->keywin), ui->keywin = NULL;
  return 0;
}
