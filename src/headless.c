/*
** headless.c -- tielab with no curses: a script run to its end, or the
** built-in training loop.
**
** A script gets an inline Host: its steps run on this thread, inside the
** Lua call that asked for them, checking the interrupt flag between steps
** and calling the on_step callbacks after every step. SIGINT, SIGTERM and
** SIGHUP only call luaapi_interrupt (never SIG_DFL: a second Ctrl-C must
** not kill the process mid-write); the script then ends with "interrupted"
** and the exit status 130. While a script trains, stderr shows a live
** progress line when it is a terminal, and a plain line every half minute
** otherwise; stdout carries only what the script prints.
*/
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "autosave.h"
#include "compare.h"
#include "headless.h"
#include "luaapi/luaapi.h"

#define PROGRESS_TTY_SECONDS 0.1
#define PROGRESS_LOG_SECONDS 30.0
#define PROGRESS_WIDTH 79

typedef struct Inline {
  Lab *lab;
  LuaApi *api;
  long tickets;
  int tty;               /* stderr is a terminal */
  int shown;             /* a progress line is on the terminal */
  double last;           /* when progress was last written */
} Inline;

/* ------------------------------------------------------------ signals */

static LuaApi *volatile signal_api;
static volatile sig_atomic_t loop_stop;

static void on_script_signal(int sig) {
  LuaApi *api = signal_api;
  if (api) luaapi_interrupt(api);
}

static void on_loop_signal(int sig) { loop_stop = sig; }

static void catch_signals(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

/* ------------------------------------------------------------ progress */

static void progress_clear(Inline *in) {
  if (!in->shown) return;
  fputs("\r\033[K", stderr);
  in->shown = 0;
}

static void progress(Inline *in, long step) {
  double t = clock_seconds();
  if (t - in->last < (in->tty ? PROGRESS_TTY_SECONDS : PROGRESS_LOG_SECONDS)) return;
  in->last = t;
  char line[256];
  int n = snprintf(line, sizeof line, "step %ld", step);
  for (int i = 0; i < lab_n_runs(in->lab) && n < (int)sizeof line; i++) {
    Run *r = lab_run(in->lab, i);
    n += snprintf(line + n, sizeof line - (size_t)n, "  %s loss %.3f", run_name(r), run_metrics(r)->loss);
  }
  if (in->tty) {
    line[PROGRESS_WIDTH] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    in->shown = 1;
  } else {
    fprintf(stderr, "tielab: %s\n", line);
  }
}

/* ------------------------------------------------------------ the inline host */

static Lab *inline_acquire(Host *h) { return ((Inline *)h->ud)->lab; }
static void inline_release(Host *h) {}
static void inline_cancel(Host *h) {}

static int inline_poll(Host *h, long ticket, Err *err) { return 1; }

static int step_once(Inline *in, int id, long *step, Err *err) {
  if (id < 0) {
    if (lab_step(in->lab, err) < 0) return -1;
    *step = lab_max_step(in->lab);
    return 0;
  }
  Run *r = lab_run_by_id(in->lab, id);
  if (!r) return err_set(err, "the run was removed while it trained");
  if (run_step(r, err) < 0) return -1;
  *step = run_metrics(r)->step;
  return 0;
}

static long inline_submit(Host *h, int id, long n, Err *err) {
  Inline *in = h->ud;
  for (long k = 0; k < n; k++) {
    long step = 0;
    if (luaapi_stopping(in->api)) return err_set(err, "interrupted");
    if (step_once(in, id, &step, err) < 0) return -1;
    progress(in, step);
    if (h->after_step) h->after_step(h->after_step_ctx, step);
  }
  return ++in->tickets;
}

/* ------------------------------------------------------------ script output */

static void headless_out(void *ctx, const char *s, size_t n, int is_err) {
  Inline *in = ctx;
  FILE *f = is_err ? stderr : stdout;
  progress_clear(in);
  fwrite(s, 1, n, f);
  if (in->tty) fflush(f);
}

static void headless_log(void *ctx, LuaApiLog kind, const char *msg) {
  Inline *in = ctx;
  progress_clear(in);
  if (kind == LUAAPI_LOG_CAPTION) {
    if (*msg) printf("== %s ==\n", msg);
  } else {
    fprintf(stderr, "%s\n", msg);
  }
}

static int exit_status(LuaApi *api, LuaApiStatus st) {
  switch (st) {
    case LUAAPI_OK: return EXIT_OK;
    case LUAAPI_INTERRUPTED: return EXIT_INTERRUPTED;
    case LUAAPI_EXIT: {
      int code = luaapi_exit_code(api);
      return code < 0 || code > 255 ? EXIT_RUNTIME : code;
    }
    default: return EXIT_RUNTIME;
  }
}

static int run_script(const CliOptions *o) {
  Err err;
  Lab *lab = lab_new(&err);
  if (!lab) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    return EXIT_RUNTIME;
  }
  Inline in = {lab, NULL, 0, isatty(STDERR_FILENO), 0, clock_seconds()};
  Host host = {.acquire = inline_acquire, .release = inline_release, .submit = inline_submit,
               .poll = inline_poll, .cancel = inline_cancel, .inline_steps = 1, .ud = &in};
  LuaApiOptions lo = {.heap_cap = (size_t)o->lua_mem_mb << 20, .sandbox = o->sandbox, .out = headless_out,
                      .log = headless_log, .ctx = &in, .defaults = &o->run,
                      .escape_output = isatty(STDOUT_FILENO)};
  LuaApi *api = luaapi_new(&host, &lo, &err);
  if (!api) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    lab_free(lab);
    return EXIT_RUNTIME;
  }
  in.api = api;
  signal_api = api;
  catch_signals(on_script_signal);
  LuaApiStatus st = luaapi_run_file(api, o->script, o->script_argc, o->script_argv, &err);
  catch_signals(on_loop_signal);   /* from here on the state goes away */
  signal_api = NULL;
  progress_clear(&in);
  int code = exit_status(api, st);
  luaapi_free(api);
  lab_free(lab);
  fflush(stdout);
  return code;
}

/* ------------------------------------------------------------ the built-in loop */

static void print_row(const RunMetrics *m) {
  char val[32];
  if (isnan(m->val_loss)) snprintf(val, sizeof val, "%10s", "-");
  else snprintf(val, sizeof val, "%10.4f", m->val_loss);
  printf("%8ld %10.4f %s %10.3f %10.0f\n", m->step, m->loss, val, m->grad_ratio, m->tokens_per_s);
  fflush(stdout);
}

/* An interrupted run is kept: saved where 'tielab --resume' finds it. */
static void save_interrupted(Lab *lab) {
  char dir[4096];
  Err err;
  if (autosave_dir(dir, sizeof dir, &err) < 0) {
    fprintf(stderr, "tielab: cannot save the run: %s\n", err.msg);
    return;
  }
  for (int i = 0; i < lab_n_runs(lab); i++)
    if (autosave_run(dir, lab_run(lab, i), &err) < 0) fprintf(stderr, "tielab: cannot save the run: %s\n", err.msg);
  fprintf(stderr, "tielab: saved in %s (tielab --resume reopens it)\n", dir);
}

static int builtin_loop(const CliOptions *o) {
  Err err;
  Lab *lab = lab_new(&err);
  Run *r = lab ? lab_add_run(lab, &o->run, &err) : NULL;
  if (!r) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    lab_free(lab);
    return EXIT_RUNTIME;
  }
  long steps = o->steps > 0 ? o->steps : 200, every = o->print_every > 0 ? o->print_every : 10;
  catch_signals(on_loop_signal);
  printf("# %s: %ld steps\n", run_name(r), steps);
  printf("%8s %10s %10s %10s %10s\n", "step", "loss", "val_loss", "grad_ratio", "tok/s");
  int code = EXIT_OK;
  for (long k = 1; k <= steps && !loop_stop; k++) {
    if (run_step(r, &err) < 0) {
      fprintf(stderr, "tielab: %s\n", err.msg);
      code = EXIT_RUNTIME;
      break;
    }
    const RunMetrics *m = run_metrics(r);
    if (m->step % every == 0 || k == steps) print_row(m);
  }
  if (loop_stop && code == EXIT_OK) {
    fprintf(stderr, "tielab: interrupted at step %ld\n", run_metrics(r)->step);
    code = EXIT_INTERRUPTED;
    save_interrupted(lab);
  }
  lab_free(lab);
  return code;
}

int headless_main(const CliOptions *o) {
  if (o->compare) return compare_paper(o, stdout);
  return o->script ? run_script(o) : builtin_loop(o);
}
