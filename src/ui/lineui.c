/*
** lineui.c -- the line REPL, for a terminal that cannot hold a screen
** (TERM=dumb, an editor's shell buffer) or no terminal at all. How it
** stands in for the screen, and how it ends: docs/architecture.md, 'The
** line REPL'.
*/
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "base/clock.h"
#include "base/sig.h"
#include "ui/uistate.h"

static Ui *line_ui;
static int in_handler;   /* Lua runs from the line handler: no line is shown */
static char hist_path[4096];
static int input_ended;  /* piped input ended: quit once its entries have */

void ui_line_print(const char *s, size_t n, int is_err) {
  FILE *f = is_err ? stderr : stdout;
  if (in_handler || !line_ui || !(RL_ISSTATE(RL_STATE_CALLBACK))) {
    fwrite(s, 1, n, f);
    fflush(f);
    return;
  }
  /* Take the half-typed line away, print, put it back. */
  char *saved = rl_copy_text(0, rl_end);
  int point = rl_point;
  rl_save_prompt();
  rl_replace_line("", 0);
  rl_redisplay();
  fwrite(s, 1, n, f);
  fflush(f);
  rl_restore_prompt();
  rl_replace_line(saved ? saved : "", 0);
  rl_point = point;
  rl_forced_update_display();
  free(saved);
}

/* The end of input where no one is left to answer: the runs with unsaved
** steps are kept (the lab says where as it ends). */
static void quit_saving(Ui *ui) {
  trainer_take(ui->trainer, &ui->snap);   /* the steps the last lines took */
  if (ui_unsaved(ui) > 0) {
    Err err = {{0}};
    if (ui_save_all(ui, &err) < 0) fprintf(stderr, "tielab: autosave failed: %s\n", err.msg);
  }
  ui->quit = 1;
}

static void on_line(char *line);

#define QUIT_PROMPT "save the runs before quitting? (y: save, n: discard, else go on) "

/* The answer to QUIT_PROMPT, as the screen's 'q' takes it; a second
** Ctrl-D saves. */
static void on_quit_answer(char *line) {
  Ui *ui = line_ui;
  rl_callback_handler_remove();
  if (!line) {
    fputc('\n', stdout);
    quit_saving(ui);
  } else if (line[0] == 'y' || line[0] == 'Y') {
    ui_request_quit(ui, 1);
  } else if (line[0] == 'n' || line[0] == 'N') {
    ui_request_quit(ui, 0);
  } else {
    ui_message(ui, ROLE_TEXT, "not quitting");
  }
  free(line);
  if (!ui->quit) rl_callback_handler_install("> ", on_line);
}

static void on_line(char *line) {
  Ui *ui = line_ui;
  if (!line) {   /* Ctrl-D, or the end of piped input */
    fputc('\n', stdout);
    trainer_take(ui->trainer, &ui->snap);
    if (isatty(STDIN_FILENO) && ui_unsaved(ui) > 0) {
      rl_callback_handler_remove();
      rl_callback_handler_install(QUIT_PROMPT, on_quit_answer);
    } else {
      input_ended = 1;
    }
    return;
  }
  if (ui_entry_add(ui, line)) {
    in_handler = 1;
    sig_arm_interrupt(1);
    LuaApiStatus st = ui_record_line(ui, ui->entry);
    sig_arm_interrupt(0);
    in_handler = 0;
    if (st == LUAAPI_INCOMPLETE) {
      rl_set_prompt(">> ");
    } else {
      char *flat = ui->entry;
      for (char *p = flat; *p; p++)
        if (*p == '\n') *p = ' ';
      add_history(flat);
      if (hist_path[0] && append_history(1, hist_path) != 0) write_history(hist_path);
      free(ui->entry);
      ui->entry = NULL;
      rl_set_prompt("> ");
    }
  }
  free(line);
}

static void line_signals(Ui *ui) {
  unsigned s = sig_take();
  if (s & SIG_BIT(SIGINT)) {
    if (luaapi_scripts(ui->api) > 0) {
      luaapi_interrupt(ui->api);
      ui->host.cancel(&ui->host);
      luaapi_pump(ui->api);
      ui_line_print("script stopped; training goes on\n", 34, 0);
    } else {
      rl_free_line_state();
      rl_callback_sigcleanup();
      free(ui->entry);
      ui->entry = NULL;
      fputs("^C\n", stdout);
      rl_callback_handler_remove();
      rl_callback_handler_install("> ", on_line);
    }
  }
  if (s & (SIG_BIT(SIGTERM) | SIG_BIT(SIGHUP))) {
    Err err = {{0}};
    ui->status = ui_save_all(ui, &err) < 0 ? EXIT_RUNTIME : EXIT_INTERRUPTED;
    if (ui->status == EXIT_INTERRUPTED) watchdog_saved(ui->watchdog, ui->status);   /* should Lua then hang as it closes */
    ui->quit = 1;
  }
}

int ui_line_main(Ui *ui) {
  Err err;
  line_ui = ui;
  rl_readline_name = "tielab";
  rl_catch_signals = 0;
  rl_catch_sigwinch = 0;
  if (ui_state_path(hist_path, sizeof hist_path, "history", &err) == 0) read_history(hist_path);
  else hist_path[0] = '\0';
  printf("tielab line mode: a Lua REPL; ui.status() shows the runs, ui.toggle() runs or pauses, Ctrl-D quits.\n");
  fflush(stdout);
  if (ui->opt->script) {
    ui_record_script(ui, &err);   /* a failure is reported, with its traceback, on stderr */
  } else {
    trainer_set_running(ui->trainer, 1);
  }
  rl_callback_handler_install("> ", on_line);
  int waiting = 0;
  double last_take = 0;
  while (!ui->quit) {
    struct pollfd fds[3] = {{.fd = input_ended ? -1 : STDIN_FILENO, .events = POLLIN},
                            {.fd = trainer_wake_fd(ui->trainer), .events = POLLIN},
                            {.fd = sig_fd(), .events = POLLIN}};
    int busy = waiting || luaapi_scripts(ui->api) > 0;
    int n = poll(fds, 3, busy ? 1000 / FRAME_HZ : 1000);
    if (n < 0 && errno != EINTR) break;
    if (fds[2].revents) line_signals(ui);
    if (ui->quit) break;
    if (fds[1].revents) {
      trainer_drain(ui->trainer);
      waiting = 1;
    }
    /* Snapshots at most FRAME_HZ a second, as on the screen: each take
    ** costs the trainer a copy of the histories. */
    double now = clock_seconds();
    if (waiting && now - last_take >= 1.0 / FRAME_HZ) {
      waiting = 0;
      last_take = now;
      trainer_take(ui->trainer, &ui->snap);
    }
    ui_after_step(ui);
    if (luaapi_scripts(ui->api) > 0) {
      sig_arm_interrupt(1);
      luaapi_pump(ui->api);
      sig_arm_interrupt(0);
    }
    if (fds[0].revents & POLLIN) rl_callback_read_char();
    else if (fds[0].revents & (POLLHUP | POLLERR)) input_ended = 1;
    if (input_ended && !ui->quit && luaapi_scripts(ui->api) == 0) quit_saving(ui);
  }
  rl_callback_handler_remove();
  line_ui = NULL;
  return 0;
}
