/*
** headless.c -- tielab with no curses: a script run to its end, or the
** built-in training loop. Its inline Host, signals, the watchdog's part and
** the progress line: docs/architecture.md, 'Headless mode'.
*/
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/headless.h"
#include "app/progress.h"
#include "base/clock.h"
#include "base/sig.h"
#include "luaapi/luaapi.h"
#include "trainer/watchdog.h"

/* A job that ran, kept until its submitter drops it. */
typedef struct InlineJob {
  long ticket;
  void *arg;
  HostJobFree free_arg;
} InlineJob;

typedef struct Inline {
  Lab *lab;
  LuaApi *api;
  long tickets;
  InlineJob *jobs;       /* ran, not dropped yet */
  int n_jobs, cap_jobs;
  Progress *progress;    /* on stderr */
  int script_counts;     /* a lab.progress of the script is shown, not the steps */
  pthread_mutex_t gate;  /* held while the lab is in use (see "the gate") */
  Watchdog *watchdog;    /* told of the steps and jobs, which end by themselves */
} Inline;

/* ------------------------------------------------------------ signals */

/* Ctrl-C, SIGTERM or SIGHUP stops a script (its Lua code is interrupted)
** or the loop (between two steps). */
static void interrupt_lua(void *api) { luaapi_interrupt(api); }

/* ------------------------------------------------------------ the gate
** This thread holds the gate whenever the lab is in use: a step, a job,
** and every hold of the Lua layer on it (the host's acquire, which each
** call into the lab goes through). The watchdog takes it to save the runs
** of a script that does not stop: it gets them between two steps and two
** calls, as a step left them, and keeps the gate until the process ends.
** Recursive: a step may come while the Lua layer holds the lab. */

static void gate_init(pthread_mutex_t *gate) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(gate, &a);
  pthread_mutexattr_destroy(&a);
}

/* The watchdog's way to the lab (WatchdogOwner's 'take'). */
static Lab *gate_take(void *ctx, double seconds) {
  Inline *in = ctx;
  struct timespec until = clock_deadline(seconds);
  return pthread_mutex_timedlock(&in->gate, &until) == 0 ? in->lab : NULL;
}

/* The watchdog's last words go on a line of their own, not after the
** progress line (system calls only: this thread may be stuck anywhere). */
static void gate_leave(void *ctx) {
  if (isatty(STDERR_FILENO)) {
    ssize_t n = write(STDERR_FILENO, "\r\033[K", 4);
    (void)n;
  }
}

/* ------------------------------------------------------------ progress */

/* What the line says while the script has no count of its own: the
** steps so far (its total unknown), from the first step on. */
static void show(Inline *in, const char *label) {
  if (in->script_counts) return;
  if (!progress_active(in->progress)) progress_start(in->progress, 0);
  progress_set(in->progress, 0, label);
}

static void show_step(Inline *in, long step) {
  char line[512];
  int n = snprintf(line, sizeof line, "step %ld", step);
  for (int i = 0; i < lab_n_runs(in->lab) && n < (int)sizeof line; i++) {
    Run *r = lab_run(in->lab, i);
    n += snprintf(line + n, sizeof line - (size_t)n, "  %s loss %.3f", run_name(r), run_metrics(r)->loss);
  }
  show(in, line);
}

/* lab.progress: the script's count replaces the steps. */
static void headless_progress(void *ctx, LuaApiProgress what, long done, long total, const char *label) {
  Inline *in = ctx;
  switch (what) {
    case LUAAPI_PROGRESS_START:
      in->script_counts = 1;
      progress_start(in->progress, total);
      break;
    case LUAAPI_PROGRESS_STEP: progress_set(in->progress, done, label); break;
    case LUAAPI_PROGRESS_DONE:
      in->script_counts = 0;
      progress_finish(in->progress);
      break;
  }
}

/* ------------------------------------------------------------ the inline host */

/* The Lua layer's hold: a call into the lab, which ends by itself. */
static Lab *inline_acquire(Host *h) {
  Inline *in = h->ud;
  pthread_mutex_lock(&in->gate);
  watchdog_busy(in->watchdog, 1);
  return in->lab;
}

static void inline_release(Host *h) {
  Inline *in = h->ud;
  watchdog_busy(in->watchdog, 0);
  pthread_mutex_unlock(&in->gate);
}
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

/* A step's hook, inside the step (the gate held): Lua, which may never
** return. Until the update the runs are as a save wants them, so the gate
** is let go meanwhile: a signal's save goes on without waiting for it. */
static int inline_call(Host *h, HostCallFn fn, void *arg) {
  Inline *in = h->ud;
  watchdog_busy(in->watchdog, 0);
  pthread_mutex_unlock(&in->gate);
  int rc = fn(arg);
  pthread_mutex_lock(&in->gate);
  watchdog_busy(in->watchdog, 1);
  return rc;
}

/* The on_step callbacks run between two steps, without the gate: a
** callback that never returns leaves the runs to the watchdog. */
static long inline_submit(Host *h, int id, long n, Err *err) {
  Inline *in = h->ud;
  for (long k = 0; k < n; k++) {
    long step = 0;
    if (luaapi_stopping(in->api)) return err_set(err, "interrupted");
    pthread_mutex_lock(&in->gate);
    watchdog_busy(in->watchdog, 1);   /* a signal meanwhile waits for the step */
    int rc = step_once(in, id, &step, err);
    watchdog_busy(in->watchdog, 0);
    if (rc == 0) show_step(in, step);
    pthread_mutex_unlock(&in->gate);
    if (rc < 0) return -1;
    if (h->after_step) h->after_step(h->after_step_ctx, step);
  }
  return ++in->tickets;
}

/* ------------------------------------------------------------ jobs */

typedef struct InlineReport {
  HostJobProgress p;
  Inline *in;
} InlineReport;

/* A job's report: its count on the progress line (after the script's own
** count, when it has one); stop once an interrupt is pending. */
static int inline_report(HostJobProgress *p, const char *what, long done, long total) {
  Inline *in = ((InlineReport *)p->ud)->in;
  char line[160];
  snprintf(line, sizeof line, "%.60s %ld/%ld", what, done, total);
  if (in->script_counts) progress_note(in->progress, line);
  else show(in, line);
  return luaapi_stopping(in->api);
}

static long inline_submit_job(Host *h, HostJobFn fn, void *arg, HostJobFree free_arg, Err *err) {
  Inline *in = h->ud;
  if (in->n_jobs == in->cap_jobs) {
    int cap = in->cap_jobs ? 2 * in->cap_jobs : 4;
    InlineJob *j = realloc(in->jobs, sizeof *j * (size_t)cap);
    if (!j) {
      free_arg(arg);
      return err_set(err, "out of memory");
    }
    in->jobs = j;
    in->cap_jobs = cap;
  }
  InlineReport rep = {{inline_report, NULL}, in};
  rep.p.ud = &rep;
  pthread_mutex_lock(&in->gate);
  watchdog_busy(in->watchdog, 1);   /* a job stops at its next report once interrupted */
  int rc = fn(in->lab, arg, &rep.p, err);
  watchdog_busy(in->watchdog, 0);
  pthread_mutex_unlock(&in->gate);
  progress_note(in->progress, NULL);
  if (rc < 0) {
    free_arg(arg);
    return -1;
  }
  in->jobs[in->n_jobs++] = (InlineJob){++in->tickets, arg, free_arg};
  return in->tickets;
}

static void inline_drop_job(Host *h, long ticket) {
  Inline *in = h->ud;
  for (int i = 0; i < in->n_jobs; i++) {
    if (in->jobs[i].ticket != ticket) continue;
    in->jobs[i].free_arg(in->jobs[i].arg);
    in->jobs[i] = in->jobs[--in->n_jobs];
    return;
  }
}

/* ------------------------------------------------------------ script output */

static void headless_out(void *ctx, const char *s, size_t n, int is_err) {
  Inline *in = ctx;
  progress_write(in->progress, is_err ? stderr : stdout, s, n);
}

static void headless_log(void *ctx, LuaApiLog kind, const char *msg) {
  Inline *in = ctx;
  if (kind == LUAAPI_LOG_CAPTION) {
    if (*msg) progress_printf(in->progress, stdout, "== %s ==\n", msg);
  } else {
    progress_printf(in->progress, stderr, "%s\n", msg);
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

/* The init file, then the script, with the interrupt armed; '*init_failed'
** when the init file failed (the script did not run). */
static LuaApiStatus run_armed(const CliOptions *o, LuaApi *api, int *init_failed, Err *err) {
  sig_arm_interrupt(1);
  LuaApiStatus st = o->no_init ? LUAAPI_OK : luaapi_run_init(api, err);
  *init_failed = st != LUAAPI_OK && st != LUAAPI_INTERRUPTED;
  if (st == LUAAPI_OK) st = luaapi_run_file(api, o->script, o->script_argc, o->script_argv, err);
  sig_arm_interrupt(0);   /* from here on the state goes away */
  return st;
}

static int run_script(const CliOptions *o) {
  Err err;
  Lab *lab = lab_new(&err);
  if (!lab) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    return EXIT_RUNTIME;
  }
  lab_set_reducer(lab, o->reducer);
  Inline in = {.lab = lab, .progress = progress_new(stderr, 1)};
  gate_init(&in.gate);
  Host host = {.acquire = inline_acquire, .release = inline_release, .submit = inline_submit,
               .poll = inline_poll, .cancel = inline_cancel, .submit_job = inline_submit_job,
               .drop_job = inline_drop_job, .call = inline_call, .inline_steps = 1, .ud = &in};
  LuaApiOptions lo = {.heap_cap = (size_t)o->lua_mem_mb << 20, .sandbox = o->sandbox, .out = headless_out,
                      .log = headless_log, .progress = headless_progress, .ctx = &in, .defaults = &o->run,
                      .escape_output = isatty(STDOUT_FILENO), .quiet_interrupt = 1,
                      .task_options = (const char *const *)o->task_options};
  LuaApi *api = luaapi_new(&host, &lo, &err);
  if (!api) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    progress_free(in.progress);
    lab_free(lab);
    return EXIT_RUNTIME;
  }
  in.api = api;
  if (sig_open(0, &err) < 0) fprintf(stderr, "tielab: %s (Ctrl-C will not stop the script cleanly)\n", err.msg);
  lab_set_cancel(lab, sig_cancel());   /* a corpus being tokenized for lab.run stops too */
  sig_set_interrupt(interrupt_lua, api);
  WatchdogOwner owner = {.take = gate_take, .leave = gate_leave, .ctx = &in};
  Watchdog *watchdog = watchdog_start(&owner, &err);
  if (!watchdog) fprintf(stderr, "tielab: %s (a script Ctrl-C cannot reach will need SIGKILL)\n", err.msg);
  in.watchdog = watchdog;
  int init_failed;
  LuaApiStatus st = run_armed(o, api, &init_failed, &err);
  int code = init_failed ? EXIT_USAGE : exit_status(api, st);
  if (init_failed) progress_printf(in.progress, stderr, "tielab: %s\n", err.msg);
  luaapi_free(api);   /* its last finalisers may still write (the watchdog times them too) */
  progress_free(in.progress);
  pthread_mutex_lock(&in.gate);
  watchdog_busy(watchdog, 1);   /* the save ends by itself: a second signal waits for it */
  if (st == LUAAPI_INTERRUPTED) watchdog_save(lab, err.msg);
  watchdog_stop(watchdog);   /* with the gate: a watchdog too late saves nothing again */
  pthread_mutex_unlock(&in.gate);
  while (in.n_jobs > 0) inline_drop_job(&host, in.jobs[0].ticket);   /* none, unless Lua lost a handle */
  free(in.jobs);
  lab_free(lab);
  pthread_mutex_destroy(&in.gate);
  fflush(stdout);
  return code;
}

/* ------------------------------------------------------------ the built-in loop */

/* A validation loss from an earlier step (eval_every apart) says which. */
static void print_row(Progress *p, const RunMetrics *m) {
  char val[48];
  progress_printf(p, stdout, "%8ld %10.4f %10s %10.3f %10.0f\n", m->step, m->loss,
                  run_val_text(m, m->val_loss, 4, val, sizeof val), m->grad_ratio, m->tokens_per_s);
  fflush(stdout);
}

static int builtin_loop(const CliOptions *o) {
  Err err;
  Lab *lab = lab_new(&err);
  if (lab) lab_set_reducer(lab, o->reducer);
  Run *r = lab ? lab_add_run(lab, &o->run, &err) : NULL;
  if (!r) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    lab_free(lab);
    return EXIT_RUNTIME;
  }
  long steps = o->steps > 0 ? o->steps : 200, every = o->print_every > 0 ? o->print_every : 10;
  if (sig_open(0, &err) < 0) fprintf(stderr, "tielab: %s (Ctrl-C will not save the run)\n", err.msg);
  printf("# %s: %ld steps", run_name(r), steps);
  cli_print_given(stdout, &o->run);
  putchar('\n');
  printf("%8s %10s %10s %10s %10s\n", "step", "loss", "val_loss", "grad_ratio", "tok/s");
  fflush(stdout);
  Progress *p = progress_new(stderr, 0);
  progress_start(p, steps);
  int code = EXIT_OK;
  for (long k = 1; k <= steps && !sig_ended(); k++) {
    if (run_step(r, &err) < 0) {
      progress_printf(p, stderr, "tielab: %s\n", err.msg);
      code = EXIT_RUNTIME;
      break;
    }
    const RunMetrics *m = run_metrics(r);
    char label[160];
    snprintf(label, sizeof label, "%s loss %.3f", run_name(r), m->loss);
    progress_set(p, k, label);
    if (m->step % every == 0 || k == steps) print_row(p, m);
  }
  progress_free(p);
  if (sig_ended() && code == EXIT_OK) {
    char why[64];
    snprintf(why, sizeof why, "interrupted at step %ld", run_metrics(r)->step);
    code = EXIT_INTERRUPTED;
    watchdog_save(lab, why);
  }
  lab_free(lab);
  return code;
}

/* --compare paper: paper.lua, found as a script named without a folder
** is, run as any script with the run options given (lab.args makes them
** its defaults) and --steps as its steps=N. Its findings and their
** definitions are the script's (tielab.findings), the only ones. */
static int compare_paper(const CliOptions *o) {
  static char found[PATH_MAX];
  Err err;
  if (luaapi_find_script("paper.lua", found, &err) < 0) {
    fprintf(stderr, "tielab: --compare paper: %s\n", err.msg);
    return EXIT_USAGE;
  }
  char steps[32], *argv[2] = {steps, NULL};
  snprintf(steps, sizeof steps, "steps=%d", o->steps);
  CliOptions paper = *o;
  paper.script = found;
  paper.script_argc = o->steps > 0 ? 1 : 0;
  paper.script_argv = argv;
  return run_script(&paper);
}

int headless_main(const CliOptions *o) {
  if (o->compare) return compare_paper(o);
  return o->script ? run_script(o) : builtin_loop(o);
}
