/*
** main.c -- choose the mode from the command line and own the exit status:
** the interactive lab (ui_main), a script or the built-in loop with no UI
** (headless_main), the throughput benchmark (bench_run), or a journal
** played again (replay_main). Under mpirun it joins the job first
** (dist.h): the modes that train through the lab without a screen then
** share every batch among the ranks.
*/
#include "config.h"

#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "app/bench.h"
#include "app/bench_align.h"
#include "app/bench_lab.h"
#include "app/cli.h"
#include "app/headless.h"
#include "app/inspect.h"
#include "app/replay.h"
#include "core/jsonmem.h"
#include "dist/dist.h"
#include "luaapi/luaapi.h"
#include "ui/ui.h"

static int main_bench(const CliOptions *o) {
  Err err;
  int steps = o->steps > 0 ? o->steps : 20;
  if (o->instruments) {
    if (bench_lab_run(o, stdout, &err) == 0) return EXIT_OK;
    fprintf(stderr, "tielab: %s\n", err.msg);
    return EXIT_RUNTIME;
  }
  int rc = o->align     ? bench_align_run(&o->run, o->steps > 0 ? o->steps : 3, o->align_warmup, stdout, &err)
           : o->forward ? bench_forward_run(&o->run, steps, o->bench_warmup, stdout, &err)
                        : bench_run(&o->run, steps, o->bench_warmup, stdout, &err);
  if (rc < 0) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

/* The script named on the command line, found along the search path
** (luaapi_find_script); a journal names its script itself. */
static int find_script(CliOptions *o, Err *err) {
  static char found[PATH_MAX];
  if (!o->script || (o->mode != MODE_HEADLESS && o->mode != MODE_UI)) return 0;
  if (luaapi_find_script(o->script, found, err) < 0) return -1;
  o->script = found;
  return 0;
}

/* The interactive lab's share of the command line. */
static int main_ui(const CliOptions *o) {
  UiOptions u = {.run = o->run,
                 .script = o->script,
                 .script_argc = o->script_argc,
                 .script_argv = o->script_argv,
                 .resume = o->resume,
                 .sandbox = o->sandbox,
                 .no_init = o->no_init,
                 .ascii = o->ascii,
                 .theme = o->theme,
                 .lua_mem_mb = o->lua_mem_mb,
                 .record = o->record,
                 .journal = o->journal,
                 .argc = o->argc,
                 .argv = o->argv,
                 .task_options = (const char *const *)o->task_options};
  return ui_main(&u);
}

static int run_mode(CliOptions *o) {
  switch (o->mode) {
    case MODE_HELP: cli_usage(stdout); return EXIT_OK;
    case MODE_VERSION: printf("tielab %s\n", PACKAGE_VERSION); return EXIT_OK;
    case MODE_LIST_OPTIONS: cli_list_options(stdout); return EXIT_OK;
    case MODE_BENCH: return main_bench(o);
    case MODE_HEADLESS: return headless_main(o);
    case MODE_UI: return main_ui(o);
    case MODE_REPLAY: return replay_main(o);
    case MODE_INSPECT: return inspect_main(o);
  }
  return EXIT_RUNTIME;
}

/* A job of several ranks trains through the lab, one batch shared by all:
** the modes that draw on a terminal, replay a journal or time the bare
** model cannot be shared. */
static int check_shared_mode(const CliOptions *o, const Reducer *red, Err *err) {
  if (!red) return 0;
  const char *what = o->mode == MODE_UI ? "the interactive lab (one screen)"
                     : o->mode == MODE_REPLAY ? "--replay"
                     : o->mode == MODE_BENCH && !o->instruments ? "--bench without --instruments"
                     : NULL;
  if (!what) return 0;
  return err_set(err, "%s does not run under mpirun (%d ranks): give --headless with a script or the built-in loop, "
                 "or --bench --instruments", what, red->world);
}

int main(int argc, char **argv) {
  CliOptions o;
  Err err;
  /* Before any jansson object exists: lab.json's trees and texts are then
  ** counted against --lua-mem (it cannot fail this early). */
  jsonmem_install();
  /* How many columns a character takes (the screen, the progress line) is
  ** the user's locale's; numbers are read and written in the C locale
  ** always (LC_NUMERIC is left alone). */
  setlocale(LC_CTYPE, "");
  if (cli_parse(argc, argv, &o, &err) < 0 || find_script(&o, &err) < 0) {
    fprintf(stderr, "tielab: %s\n", err.msg);
    return EXIT_USAGE;
  }
  int trains = o.mode == MODE_BENCH || o.mode == MODE_HEADLESS || o.mode == MODE_UI || o.mode == MODE_REPLAY;
  Dist *dist = NULL;
  if (trains && dist_open(&dist, &err) < 0) {
    if (err.msg[0] && dist_env_rank() == 0) fprintf(stderr, "tielab: %s\n", err.msg);   /* every rank fails alike */
    return EXIT_USAGE;
  }
  o.reducer = dist_reducer(dist);
  if (check_shared_mode(&o, o.reducer, &err) < 0) {
    if (o.reducer->rank == 0) fprintf(stderr, "tielab: %s\n", err.msg);
    return dist_close(dist, EXIT_USAGE);   /* every rank refuses alike */
  }
  dist_quiet(dist);
  o.task_options = cli_task_options(&o);
  int status = run_mode(&o);
  cli_words_free(o.task_options);
  return dist_close(dist, status);
}
