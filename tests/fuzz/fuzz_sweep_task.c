/*
** fuzz_sweep_task.c -- libFuzzer harness for the task files a sweep merges.
**
** The input is DIR/task-0.json of a sweep of one task, and the code under
** test is what reads it in earnest: lua/sweep.lua's 'merge', run in a Lua
** state with the tielab module (lab.read, lab.json, tielab.sweep's
** Sweep:load and the report). Whatever the bytes, merge must end as a
** script ends, with exit status 0 (the record was good, and it is in the
** report) or 1 (it was not: the report ends with the gap, naming task 0 and
** why, on one line); never with a Lua error, a traceback or a crash.
*/
#include "fuzz.h"

#include <sys/stat.h>

#include "core/jsonmem.h"
#include "luaapi/luaapi.h"

#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

static Lab *lab;
static LuaApi *api;
static char script[4200], task_file[4200], out_arg[4200];
static char said[1 << 16];   /* what the script printed, both streams */
static size_t n_said;

static void hear(void *ctx, const char *s, size_t n, int is_err) {
  (void)ctx, (void)is_err;
  if (n > sizeof said - 1 - n_said) n = sizeof said - 1 - n_said;
  memcpy(said + n_said, s, n);
  said[n_said += n] = '\0';
}

/* A host that never trains: merge makes no run. */
static Lab *host_acquire(Host *h) { return lab; }
static void host_release(Host *h) {}
static void host_cancel(Host *h) {}
static int host_poll(Host *h, long ticket, Err *err) { return 1; }
static long host_submit(Host *h, int id, long n, Err *err) { return err_set(err, "merge trains nothing"); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  jsonmem_install();   /* as tielab's main: lab.json's memory counted */
  fuzz_setup();
  static Host host = {.acquire = host_acquire, .release = host_release, .submit = host_submit,
                      .poll = host_poll, .cancel = host_cancel, .inline_steps = 1};
  LuaApiOptions lo = {.heap_cap = (size_t)1 << 30, .out = hear};
  Err err = {{0}};
  if (!(lab = lab_new(&err)) || !(api = luaapi_new(&host, &lo, &err))) {
    fprintf(stderr, "fuzz_sweep_task: %s\n", err.msg);
    abort();
  }
  char dir[4200];
  snprintf(script, sizeof script, "%s/lua/sweep.lua", FUZZ_SRCDIR);
  fuzz_path("sweep", dir, sizeof dir);
  if (mkdir(dir, 0700) != 0) {
    perror("fuzz_sweep_task: the sweep's folder");
    abort();
  }
  snprintf(out_arg, sizeof out_arg, "out=%s", dir);
  snprintf(task_file, sizeof task_file, "%s/task-0.json", dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *args[] = {"vocab=256", "dim=8", "layers=1", "heads=2", "ctx=8", "batch=2", "steps=1",
                  "seeds=1", "scales=1", out_arg, "merge"};
  int n_args = (int)(sizeof args / sizeof args[0]);
  Err err = {{0}};
  n_said = 0;
  said[0] = '\0';
  /* The first merge writes the folder's sweep.json; each finds the input
  ** as its task's file. */
  FILE *f = fopen(task_file, "wb");
  fuzz_check(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write the task file");
  LuaApiStatus st = luaapi_run_file(api, script, n_args, args, &err);
  int code = luaapi_exit_code(api);
  /* A Lua traceback, as Lua writes one: a word of the input echoed in a
  ** reason (jansson's "near '...'") is not one. */
  if (st != LUAAPI_EXIT || (code != 0 && code != 1) || strstr(said, "stack traceback:\n\t")) {
    fprintf(stderr, "status %d, exit %d: %s\n%s\n", (int)st, code, err.msg, said);
    fuzz_check(0, "merge did not end as a script ends, with status 0 or 1");
  }
  if (code == 0) {
    fuzz_check(strstr(said, "\n1 of 1 tasks\n") != NULL, "a record merged is not in the report");
    return 0;
  }
  const char *gap = strstr(said, "not merged: 1 of 1 tasks");
  const char *why = gap ? strstr(gap, "\n  task 0 (seed 1, in_scale 1, ") : NULL;
  fuzz_check(why != NULL, "a record refused is not named after the report");
  const char *end = strchr(why + 1, '\n');
  fuzz_check(end && end - why < 700, "the reason is not one short line");
  for (const char *p = why + 1; p < end; p++) fuzz_check((unsigned char)*p >= 0x20 && *p != 0x7f, "a control character in the reason");
  return 0;
}
