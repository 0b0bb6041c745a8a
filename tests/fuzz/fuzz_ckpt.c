/*
** fuzz_ckpt.c -- libFuzzer harness for the checkpoint loader.
**
** The input is a file for 'lab_load': a tielab checkpoint or a weights-only
** nanoGPT file. It must be refused with a message or become a run; a run
** must then take a training step and save, and is removed so that every
** input meets the same lab. That lab holds one run made like the seeds
** (tests/fuzz/seeds.lua) and never stepped: loads that share its data
** (corpus and vocabulary) reuse it instead of building it again.
*/
#include "fuzz.h"

#include "lab/lab.h"

static Lab *lab;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_setup();
  Err err;
  if (!(lab = lab_new(&err))) {
    fprintf(stderr, "fuzz_ckpt: %s\n", err.msg);
    abort();
  }
  static const struct { const char *key; double value; } anchor[] = {
    {"vocab", 256}, {"dim", 8}, {"layers", 1}, {"heads", 2}, {"ctx", 8}, {"batch", 2},
  };
  RunOptions o;
  run_options_default(&o);
  for (size_t i = 0; i < sizeof anchor / sizeof anchor[0]; i++)
    if (run_options_set_number(&o, anchor[i].key, anchor[i].value, &err) < 0) abort();
  if (run_options_set_text(&o, "name", "anchor", &err) < 0 || !lab_add_run(lab, &o, &err)) {
    fprintf(stderr, "fuzz_ckpt: %s\n", err.msg);
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  Err err = {{0}};
  fuzz_memfile(data, size, path, sizeof path);
  /* A file may rightly ask for a big run (a large batch is a setting, not
  ** a tensor): the budget keeps such runs under libFuzzer's memory cap, as
  ** the sandbox keeps a script's under --lua-mem. */
  LabLoadOptions lo = {.name = "fuzz", .budget = (size_t)1 << 30};
  Run *r = lab_load_with(lab, path, &lo, &err);
  if (!r) {
    if (!err.msg[0]) {
      fprintf(stderr, "fuzz_ckpt: refused without a message\n");
      abort();
    }
    return 0;
  }
  run_step(r, &err);
  char out[4200];
  run_save(r, fuzz_path("saved.safetensors", out, sizeof out), &err);
  lab_remove_run(lab, r);
  return 0;
}
