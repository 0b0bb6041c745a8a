/*
** ui.c -- the interactive lab from start to end: build the lab, start the
** trainer and the Lua layer, run the screen (or the line REPL), and on the
** way out save what must be saved.
**
** Runs are saved to $XDG_STATE_HOME/tielab/autosave/<name>.safetensors
** when the user agrees on quitting and always on SIGTERM or SIGHUP; 'tielab
** --resume' reopens them (lab/reopen.h) and shows what did not come back.
** When the UI thread cannot get to such a signal (a script stuck where no
** interrupt reaches), the watchdog (trainer/watchdog.h) takes the lab from
** the trainer between two steps, saves it and ends the lab. The state the
** screen's files share while it runs, saving included, is uistate.c's.
*/
#include "config.h"

#include "lab/autosave.h"
#include "lab/reopen.h"
#include "ui/ui.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sig.h"
#include "ui/repl.h"
#include "ui/uistate.h"

/* ------------------------------------------------------------ Lua */

void ui_lua_out(void *ctx, const char *s, size_t n, int is_err) {
  Ui *ui = ctx;
  if (!ui->screen) {
    ui_line_print(s, n, is_err);
    return;
  }
  scroll_add(ui->scroll, s, n, is_err ? SCROLL_ERR : SCROLL_OUT);
  ui_dirty(ui, 1u << P_SCROLL);
}

/* A new caption may need more or fewer rows of large type in the present
** view (the lab view shows it on the hint line). */
static void lua_log(void *ctx, LuaApiLog kind, const char *msg) {
  Ui *ui = ctx;
  if (kind == LUAAPI_LOG_INFO) ui_message(ui, ROLE_TEXT, "%s", msg);
  if (kind == LUAAPI_LOG_CAPTION && ui->screen && ui->view == VIEW_PRESENT &&
      present_caption_rows(ui, ui->lay.rows, ui->lay.cols) != ui->caption_rows)
    ui->relayout = 1;
  ui_dirty(ui, 1u << P_HINT | 1u << P_BIG | 1u << P_CAPTION);
}

/* Ctrl-C while Lua runs (armed): stop it at once, from the signal handler.
** Whether a script was running is noted for the loop, which says so: the
** script may be gone by the time the loop looks. */
static void interrupt_lua(void *ctx) {
  Ui *ui = ctx;
  if (luaapi_scripts(ui->api) > 0) ui->script_interrupted = 1;
  luaapi_interrupt(ui->api);
}

/* ------------------------------------------------------------ the watchdog */

/* The lab for the watchdog: a lens fit stops at its next report, and the
** trainer hands the lab over after the step in progress (and keeps it:
** nothing steps again). */
static Lab *watchdog_take(void *ctx, double seconds) {
  Ui *ui = ctx;
  trainer_stop_jobs(ui->trainer);
  return trainer_acquire_within(ui->trainer, seconds);
}

/* The terminal back, and stderr, which a file holds while the screen is up. */
static void watchdog_leave(void *ctx) {
  Ui *ui = ctx;
  term_give_back(&ui->term);
  if (ui->stderr_fd >= 0) dup2(ui->stderr_fd, STDERR_FILENO);
}

/* A lens fit stops at its next report, while the lab waits for it. */
static void watchdog_hurry(void *ctx) { trainer_stop_jobs(((Ui *)ctx)->trainer); }

static void start_watchdog(Ui *ui) {
  Err err;
  WatchdogOwner owner = {.take = watchdog_take, .leave = watchdog_leave, .hurry = watchdog_hurry, .ctx = ui, .lone_sigint_spared = 1};
  ui->watchdog = watchdog_start(&owner, &err);
  if (!ui->watchdog) fprintf(stderr, "tielab: %s (a script Ctrl-C cannot stop will keep the lab)\n", err.msg);
  trainer_set_watchdog(ui->trainer, ui->watchdog);
}

/* ------------------------------------------------------------ the lab */

/* A tied and an untied run on the same batches, unless the command line
** chose a tie mode: then just that run. The untied run gets its own init:
** sharing it would make the tied matrix equal its E_in at step 0 and bias
** the alignment towards the input side. */
static int add_runs(Ui *ui, Err *err) {
  const RunOptions *base = &ui->opt->run;
  if (base->tie_given) return lab_add_run(ui->lab, base, err) ? 0 : -1;
  static const char *const ties[] = {"tied", "untied"};
  for (int i = 0; i < 2; i++) {
    RunOptions o = *base;
    if (base->name[0]) snprintf(o.name, sizeof o.name, "%.50s-%s", base->name, ties[i]);
    else snprintf(o.name, sizeof o.name, "%s", ties[i]);
    if (i == 1) o.init_seed = base->init_seed + 1;
    if (run_options_set_text(&o, setting_name(SETTING_TIE), ties[i], err) < 0 || !lab_add_run(ui->lab, &o, err)) return -1;
  }
  return 0;
}

/* The runs of the newest autosave folder into the lab, each marked saved
** at its step; 'r' says which came back and what fell short (stderr says
** that too). */
static int resume(Ui *ui, Reopened *r, Err *err) {
  if (reopen_latest(ui->lab, stderr, r, err) < 0) return -1;
  for (int i = 0; i < lab_n_runs(ui->lab); i++) {
    Run *run = lab_run(ui->lab, i);
    ui_mark_saved(ui, run_id(run), run_metrics(run)->step);
  }
  return 0;
}

/* ------------------------------------------------------------ start and end */

static int start_lua(Ui *ui, Err *err) {
  LuaApiOptions lo = {.heap_cap = (size_t)(ui->opt->lua_mem_mb > 0 ? ui->opt->lua_mem_mb : 0) << 20,
                      .sandbox = ui->opt->sandbox,
                      .out = ui_lua_out,
                      .log = lua_log,
                      .ctx = ui,
                      .defaults = &ui->opt->run,
                      .escape_output = 1,
                      .task_options = ui->opt->task_options};
  ui->api = luaapi_new(&ui->host, &lo, err);
  if (!ui->api) return -1;
  sig_set_interrupt(interrupt_lua, ui);
  return uilua_open(ui, err);
}

/* While curses owns the screen, stderr (OpenBLAS, a stray warning) goes to
** a file, shown after the screen is gone. */
static FILE *hold_stderr(int *saved) {
  FILE *f = tmpfile();
  *saved = f ? dup(STDERR_FILENO) : -1;
  if (f && *saved >= 0) dup2(fileno(f), STDERR_FILENO);
  return f;
}

static void release_stderr(FILE *f, int saved) {
  if (!f) return;
  fflush(stderr);
  if (saved >= 0) {
    dup2(saved, STDERR_FILENO);
    close(saved);
  }
  rewind(f);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stderr);
  fclose(f);
}

/* 'note': a message to show first (the runs --resume reopened), or "". */
static int run_screen(Ui *ui, const char *note, int note_role) {
  Err err;
  int saved_fd;
  FILE *held = hold_stderr(&saved_fd);
  if (term_open(&ui->term, ui->opt->ascii, (TermTheme)ui->theme, &err) < 0) {
    release_stderr(held, saved_fd);
    return -1;   /* the caller runs the line REPL */
  }
  ui->stderr_fd = saved_fd;
  ui->screen = 1;
  if (note[0]) ui_message(ui, note_role, "%s", note);
  if (ui->opt->script) {
    ui_record_script(ui, &err);   /* a failure is reported, with its traceback, in the output pane */
  } else {
    trainer_set_running(ui->trainer, 1);
  }
  ui_loop(ui);
  ui->screen = 0;
  term_close(&ui->term, !ui->gone);
  ui->stderr_fd = -1;
  release_stderr(held, saved_fd);
  return 0;
}

/* The init file, stopped by Ctrl-C as a script is. */
static LuaApiStatus run_init(Ui *ui, Err *err) {
  sig_arm_interrupt(1);
  LuaApiStatus st = luaapi_run_init(ui->api, err);
  sig_arm_interrupt(0);
  return st;
}

static void finish(Ui *ui) {
  ui_record_close(ui);         /* the journal's final figures, while the lab is there */
  luaapi_free(ui->api);        /* first: closing Lua may still use the lab through the host */
  /* The watchdog is stopped before anything it could save goes away, with
  ** the lab held: one that came too late waits for it, and is stopped. */
  if (ui->trainer) trainer_stop_jobs(ui->trainer), trainer_acquire(ui->trainer);
  watchdog_stop(ui->watchdog);
  if (ui->trainer) trainer_set_watchdog(ui->trainer, NULL), trainer_release(ui->trainer);
  trainer_free(ui->trainer);   /* then nothing steps any more */
  lab_free(ui->lab);
  trainer_snap_free(ui->snap);
  scroll_free(ui->scroll);
  free(ui->cells);
  for (int i = 0; i < UI_SLOTS; i++) free(ui->xy[i]);
  free(ui->saved);
  free(ui->saved_note);
  free(ui->entry);
  sig_close();
  autosave_release();   /* after the lab's last save */
}

int ui_main(const UiOptions *o) {
  Ui ui;
  memset(&ui, 0, sizeof ui);
  ui.opt = o;
  ui.zoom = -1;
  ui.smooth = 0.6;   /* TensorBoard's default: the trend over the faint raw line */
  ui.present_chart = P_LOSS;
  ui.status = EXIT_OK;
  ui.stderr_fd = -1;
  term_keep_shell();   /* before readline or curses change the terminal's modes */
  Err err = {{0}};
  /* Character handling from the environment, for curses and the glyph tier;
  ** only LC_CTYPE, so numbers keep their '.' in Lua and in every printf. */
  setlocale(LC_CTYPE, "");
  term_choose_glyphs(&ui.term, o->ascii);
  ui.theme = o->theme ? term_theme_parse(o->theme) : TERM_THEME_AUTO;

  ui.lab = lab_new(&err);
  /* A script builds its own runs; otherwise the pair (or the autosaved lab). */
  Reopened reopened = {0};
  int ok = ui.lab && (o->resume ? resume(&ui, &reopened, &err) : o->script ? 0 : add_runs(&ui, &err)) == 0;
  const char *resumed = reopened.note ? reopened.note : "";
  /* From here on this lab will save into its own folder when it ends: a
  ** --resume started meanwhile waits for it. */
  if (ok && autosave_claim(&err) < 0) fprintf(stderr, "tielab: %s (--resume will not wait for this lab)\n", err.msg);
  ok = ok && sig_open(SIG_WITH_WINCH | SIG_IGNORE_PIPE, &err) == 0;
  if (ok) lab_set_cancel(ui.lab, sig_cancel());   /* Ctrl-C stops a lab.run tokenizing a corpus */
  ok = ok && (ui.trainer = trainer_new(ui.lab, &err)) != NULL;
  if (ok) {
    trainer_host(ui.trainer, &ui.host);
    ui.snap = trainer_snap_new();
    ui.scroll = scroll_new(2000);
    ok = ui.snap && ui.scroll;
    if (!ok) err_set(&err, "out of memory");
  }
  ok = ok && start_lua(&ui, &err) == 0;
  if (ok) start_watchdog(&ui);
  ok = ok && ui_record_open(&ui, &err) == 0;
  if (!ok) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    reopen_free(&reopened);
    finish(&ui);
    return EXIT_RUNTIME;
  }
  /* The init file, before the script; not under a journal, which must
  ** replay alone. A broken one stops the lab before it starts. */
  if (!o->no_init && !o->journal && run_init(&ui, &err) != LUAAPI_OK) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    reopen_free(&reopened);
    finish(&ui);
    return EXIT_USAGE;
  }
  trainer_take(ui.trainer, &ui.snap);
  if (ui.snap->n_runs > 0) ui.sel_id = ui.snap->runs[0].id;
  scroll_addf(ui.scroll, SCROLL_NOTE, "tielab %s: Lua REPL (':' to type, Esc back). 'lab' is the lab, 'ui' the screen; ? lists the keys.",
              PACKAGE_VERSION);

  if (resumed[0]) scroll_addf(ui.scroll, SCROLL_NOTE, "%s", resumed);
  if (run_screen(&ui, resumed, reopened.short_ ? ROLE_WARN : ROLE_OK) < 0) {
    if (resumed[0]) printf("%s\n", resumed);
    if (ui_record_lines(&ui) < 0) ui.status = EXIT_RUNTIME;
    else ui_line_main(&ui);
  }
  /* The screen is gone: say what the last save kept, and where. */
  if (ui.saved_note && !ui.gone) printf("%s\n", ui.saved_note);
  /* A lab that opened with part of its save ends as a runtime error would,
  ** so that what drives it (a script feeding the line mode) sees the loss. */
  int status = ui.status == EXIT_OK && reopened.short_ ? EXIT_RUNTIME : ui.status;
  reopen_free(&reopened);
  finish(&ui);
  return status;
}
