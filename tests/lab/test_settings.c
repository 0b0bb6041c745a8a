/*
** test_settings.c -- the table of run options: defaults, parsing from text
** and numbers, errors that name the key, seeds, tie modes, the whole-set
** check (shape and memory), and the table's own invariants: every row
** complete and its default valid, the live rows exactly those a living run
** takes, and the memory asked only for a change that needs it.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/schedule.h"
#include "core/settings_model.h"
#include "lab/lab.h"
#include "live_set.h"
#include "tap.h"

static int has(const Err *e, const char *s) { return strstr(e->msg, s) != NULL; }

static void test_table(void) {
  int n;
  const Setting *s = lab_settings(&n);
  ok(n >= 22, "the table has every option (%d rows)", n);
  int complete = 1;
  for (int i = 0; i < n; i++)
    if (!s[i].name || !s[i].help || !*s[i].help || !s[i].deflt) complete = 0;
  ok(complete, "every row has a name, help text and a default");
  const char *names[] = {"name", "vocab", "dim", "layers", "heads", "ctx", "batch", "tie",
                         "seed", "init_seed", "data_seed", "corpus_seed", "lr", "in_scale",
                         "out_scale", "corpus", "lens_every", "eval_every", "align_every",
                         "partner", "tie_merge", "threads"};
  int found = 1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!lab_setting_find(names[i]) || strcmp(lab_setting_find(names[i])->name, names[i]) != 0) {
      diag("missing %s", names[i]);
      found = 0;
    }
  ok(found, "every option of the design is in the table");
  ok(lab_setting_find("in_scal") == NULL, "a misspelled name is not found");
  ok(lab_setting_find("lr")->live && lab_setting_find("tie")->live && lab_setting_find("in_scale")->live,
     "lr, tie and in_scale may change while a run lives");
  ok(!lab_setting_find("dim")->live && !lab_setting_find("vocab")->live, "dim and vocab may not");
}

static void test_defaults(void) {
  RunOptions o;
  run_options_default(&o);
  ok(o.model.vocab == 1024 && o.model.dim == 128 && o.model.layers == 4 && o.model.heads == 4 &&
         o.model.ctx == 64 && o.model.batch == 16,
     "default shape vocab 1024 dim 128 layers 4 heads 4 ctx 64 batch 16");
  ok(o.model.tie_k == 128 && strcmp(o.tie_text, "tied") == 0 && !o.tie_given, "tied by default");
  ok(fabs(o.lr - 1e-3) < 1e-15 && o.in_scale == 1 && o.out_scale == 1, "lr 1e-3, scales 1");
  ok(o.lens_every == 20 && o.eval_every == 100 && o.align_every == 100 && o.threads == 2,
     "intervals 10/50/100 and 2 threads");
  ok(o.init_seed == 1 && o.data_seed == 1 && o.corpus_seed == 1 && !o.init_seed_given &&
         !o.data_seed_given,
     "seeds 1, not marked as given");
  ok(o.corpus[0] == '\0' && o.name[0] == '\0' && o.tie_merge == TIE_KEEP_IN,
     "synthetic corpus, automatic name, tie_merge in");
  Err e;
  e.msg[0] = '\0';
  ok(run_options_check(&o, &e) == 0, "the defaults pass the check (%s)", e.msg);
}

static void test_errors(void) {
  RunOptions o;
  Err e;
  run_options_default(&o);
  ok(run_options_set_text(&o, "in_scal", "2", &e) < 0 && has(&e, "'in_scal'"),
     "unknown key named: %s", e.msg);
  ok(run_options_set_number(&o, "dim", 3.5, &e) < 0 && has(&e, "'dim'") && has(&e, "3.5"),
     "fractional dim named: %s", e.msg);
  ok(run_options_set_text(&o, "dim", "abc", &e) < 0 && has(&e, "'dim'") && has(&e, "abc"),
     "non-numeric dim named: %s", e.msg);
  ok(run_options_set_text(&o, "dim", "4", &e) < 0 && has(&e, "'dim'"), "dim below range: %s", e.msg);
  ok(run_options_set_text(&o, "lr", "1e-3x", &e) < 0 && has(&e, "'lr'"), "trailing junk: %s", e.msg);
  ok(run_options_set_number(&o, "lr", NAN, &e) < 0 && has(&e, "'lr'"), "NaN lr: %s", e.msg);
  ok(run_options_set_number(&o, "in_scale", -1, &e) < 0 && has(&e, "'in_scale'"), "negative scale: %s",
     e.msg);
  ok(run_options_set_number(&o, "name", 3, &e) < 0 && has(&e, "'name'"), "a number for a text option: %s",
     e.msg);
  ok(run_options_set_text(&o, "tie", "half", &e) < 0 && has(&e, "'tie'"), "bad tie mode: %s", e.msg);
  ok(run_options_set_text(&o, "tie_merge", "both", &e) < 0 && has(&e, "'tie_merge'"), "bad merge: %s",
     e.msg);
  ok(run_options_set_text(&o, "seed", "-3", &e) < 0 && has(&e, "'seed'"), "negative seed: %s", e.msg);
  char longname[100];
  memset(longname, 'x', sizeof longname - 1);
  longname[99] = '\0';
  ok(run_options_set_text(&o, "name", longname, &e) < 0 && has(&e, "'name'"), "name too long: %s", e.msg);
  RunOptions d;
  run_options_default(&d);
  ok(memcmp(&o, &d, sizeof o) == 0, "failed sets leave the options unchanged");
}

static void test_values(void) {
  RunOptions o;
  Err e;
  run_options_default(&o);
  ok(run_options_set_text(&o, "tie", "untied", &e) == 0 && o.model.tie_k == 0 && o.tie_given, "untied -> 0");
  ok(run_options_set_number(&o, "tie", 16, &e) == 0 && o.model.tie_k == 16, "tie 16 as a number");
  run_options_set_text(&o, "tie", "tied", &e);
  run_options_set_text(&o, "dim", "64", &e);
  ok(o.model.tie_k == 64, "tied follows a dim given afterwards (%d)", o.model.tie_k);
  run_options_set_text(&o, "tie", "100", &e);
  ok(run_options_check(&o, &e) < 0 && has(&e, "'tie'"), "K above dim refused by the check: %s", e.msg);
  ok(run_options_set_text(&o, "tie_merge", "mean", &e) == 0 && o.tie_merge == TIE_MEAN, "tie_merge mean");

  run_options_default(&o);
  run_options_set_number(&o, "seed", 5, &e);
  ok(o.init_seed == 5 && o.data_seed == 5, "seed sets both seeds");
  run_options_default(&o);
  run_options_set_text(&o, "init_seed", "3", &e);
  run_options_set_text(&o, "seed", "7", &e);
  ok(o.init_seed == 3 && o.data_seed == 7, "seed leaves an init_seed given before it alone");
  run_options_default(&o);
  run_options_set_text(&o, "seed", "7", &e);
  run_options_set_text(&o, "data_seed", "2", &e);
  ok(o.init_seed == 7 && o.data_seed == 2, "data_seed given after seed wins");
  ok(run_options_set_text(&o, "corpus_seed", "18446744073709551615", &e) == 0 &&
         o.corpus_seed == UINT64_MAX,
     "a 64-bit seed as text");
  ok(run_options_set_number(&o, "lr", 0.0003, &e) == 0 && o.lr == 0.0003, "lr as a number");
}

/* Every option written as text reads back to the same value. */
static void test_round_trip(void) {
  RunOptions a, b;
  Err e;
  run_options_default(&a);
  const char *set[][2] = {{"name", "tied-a"}, {"vocab", "512"}, {"dim", "96"}, {"layers", "3"},
                          {"heads", "3"}, {"ctx", "40"}, {"batch", "7"}, {"tie", "24"},
                          {"init_seed", "11"}, {"data_seed", "12"}, {"corpus_seed", "13"},
                          {"lr", "0.00031"}, {"in_scale", "2.5"}, {"out_scale", "0.1"},
                          {"corpus", "some/file.txt"}, {"lens_every", "7"}, {"eval_every", "9"},
                          {"align_every", "0"}, {"partner", "untied"}, {"tie_merge", "out"},
                          {"threads", "3"}};
  int all = 1;
  for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
    if (run_options_set_text(&a, set[i][0], set[i][1], &e) < 0) {
      diag("%s", e.msg);
      all = 0;
    }
  ok(all, "every option accepts a value as text");
  int n;
  const Setting *s = lab_settings(&n);
  run_options_default(&b);
  int rt = 1;
  for (int i = 0; i < n; i++) {
    char buf[1100];
    if (run_options_get_text(&a, s[i].name, buf, sizeof buf, &e) < 0 ||
        run_options_set_text(&b, s[i].name, buf, &e) < 0) {
      diag("%s: %s", s[i].name, e.msg);
      rt = 0;
    }
  }
  b.tie_given = a.tie_given;
  b.given = a.given;   /* which keys were given is bookkeeping, not a value */
  ok(rt && memcmp(&a, &b, sizeof a) == 0, "get_text then set_text gives the same options");
  char small[4];
  ok(run_options_get_text(&a, "corpus", small, sizeof small, &e) < 0, "a short buffer is an error");
}

static void test_check(void) {
  RunOptions o;
  Err e;
  run_options_default(&o);
  run_options_set_text(&o, "heads", "3", &e);
  ok(run_options_check(&o, &e) < 0 && has(&e, "heads"), "heads must divide dim: %s", e.msg);
  run_options_default(&o);
  o.model.vocab = CONFIG_MAX_VOCAB;
  o.model.dim = CONFIG_MAX_DIM;
  o.model.layers = CONFIG_MAX_LAYERS;
  o.model.heads = 8;
  o.model.ctx = 32;
  o.model.batch = 8;
  o.model.tie_k = o.model.dim;
  ok(run_options_check(&o, &e) == 0, "the values of a model larger than the machine are good");
  ok(lab_check_memory(NULL, &o, 0, &e) < 0 && has(&e, "this process can still allocate") && has(&e, "'batch'"),
     "and the lab refuses such a run with the estimate: %s", e.msg);
}

/* ---- the recipe preset and booleans */

static void text_of(const RunOptions *o, const char *key, char *buf) { run_options_get_text(o, key, buf, 64, NULL); }

static void test_recipe(void) {
  Err e;
  RunOptions a, b, c;
  char lr[64], eps[64], sched[64], all[64];
  run_options_default(&a);
  run_options_set_text(&a, "recipe", "olmo", &e);
  run_options_set_text(&a, "lr", "1e-3", &e);
  run_options_default(&b);
  run_options_set_text(&b, "lr", "1e-3", &e);
  run_options_set_text(&b, "recipe", "olmo", &e);
  text_of(&a, "lr", lr), text_of(&a, "eps", eps), text_of(&a, "schedule", sched), text_of(&a, "decay_all", all);
  ok(!strcmp(lr, "0.001") && !strcmp(eps, "1e-05") && !strcmp(sched, "cosine") && !strcmp(all, "true"),
     "recipe then lr: lr %s, eps %s, schedule %s, decay_all %s", lr, eps, sched, all);
  b.given = a.given;
  ok(memcmp(&a, &b, sizeof a) == 0, "lr then recipe: the same options");
  run_options_set_text(&a, "recipe", "", &e);
  run_options_default(&c);
  text_of(&a, "lr", lr), text_of(&a, "eps", eps), text_of(&a, "schedule", sched);
  ok(!strcmp(lr, "0.001") && !strcmp(eps, "1e-08") && !strcmp(sched, "constant") && a.warmup == 0 && !a.decay_all,
     "recipe \"\" after olmo: its keys back to their defaults, the explicit lr kept (eps %s)", eps);
  ok(run_options_set_text(&c, "decay_all", "yes", &e) < 0 && strstr(e.msg, "'decay_all' must be true or false"),
     "a boolean takes true or false: %s", e.msg);
  ok(run_options_set_number(&c, "nesterov", 1, &e) < 0 && strstr(e.msg, "true or false"),
     "not a number: %s", e.msg);
  ok(run_options_set_text(&c, "nesterov", "true", &e) == 0 && c.nesterov == 1 && (text_of(&c, "nesterov", all), 1) &&
         !strcmp(all, "true"),
     "booleans read and write as true / false");
  ok(run_options_set_number(&c, "beta2", 1, &e) < 0 && strstr(e.msg, "'beta2' must be a number in [0, 1), got 1"),
     "an open bound is refused and shown: %s", e.msg);
  ok(run_options_set_text(&c, "optimizer", "sgdm", &e) < 0 && strstr(e.msg, "'optimizer' must be adamw, adam or sgd"),
     "the choices are named: %s", e.msg);
}

/* olmo's floor is relative and its warmup starts at a tenth; an explicit
** lr_min, before or after the recipe, is the floor instead. */
static void test_recipe_floor(void) {
  Err e;
  RunOptions a, b, c;
  run_options_default(&a);
  run_options_set_text(&a, "recipe", "olmo", &e);
  run_options_set_text(&a, "lr", "1e-3", &e);
  Schedule s = run_options_schedule(&a);
  ok(fabs(s.lr_min - 1e-4) < 1e-18 && s.warmup_start == 0.1, "olmo, lr 1e-3: floor %g, warmup from %g of lr",
     s.lr_min, s.warmup_start);
  run_options_default(&b);
  run_options_set_text(&b, "lr_min", "2e-5", &e);
  run_options_set_text(&b, "recipe", "olmo", &e);
  run_options_default(&c);
  run_options_set_text(&c, "recipe", "olmo", &e);
  run_options_set_text(&c, "lr_min", "2e-5", &e);
  ok(run_options_schedule(&b).lr_min == 2e-5 && run_options_schedule(&c).lr_min == 2e-5 &&
         b.lr_min_ratio == 0 && c.lr_min_ratio == 0,
     "an explicit lr_min under olmo is the floor, before or after the recipe");
  run_options_set_text(&a, "recipe", "", &e);
  ok(a.warmup_start == 0 && a.lr_min_ratio == 0, "recipe \"\" puts warmup_start and lr_min_ratio back to 0");
  run_options_default(&a);
  s = run_options_schedule(&a);
  ok(s.warmup_start == 0 && s.lr_min == 0 && s.lr == 1e-3, "the defaults: warmup from 0, floor 0");
  run_options_set_text(&a, "schedule", "linear", &e);
  run_options_set_text(&a, "decay_steps", "10", &e);
  run_options_set_text(&a, "lr_min", "0.5", &e);
  ok(run_options_check(&a, &e) < 0 && has(&e, "'lr_min'") && has(&e, "'lr'"), "a rising decay refused: %s", e.msg);
  run_options_set_text(&a, "lr_min_ratio", "0.5", &e);
  ok(run_options_check(&a, &e) == 0 && run_options_schedule(&a).lr_min == 5e-4,
     "lr_min_ratio above 0 replaces lr_min (floor %g)", run_options_schedule(&a).lr_min);
}

/* Every row complete, by its id, with a default that parses and is in range. */
static void test_invariants(void) {
  int n, complete = 1, by_id = 1, defaults = 1, unique = 1;
  const Setting *s = lab_settings(&n);
  ok(n == N_SETTINGS, "one row per SettingId (%d)", n);
  for (int i = 0; i < n; i++) {
    if (!s[i].help || !*s[i].help || !s[i].deflt || s[i].group >= N_GROUPS || !s[i].modes) {
      diag("%s: help, default, group or modes missing", s[i].name);
      complete = 0;
    }
    if (lab_setting((SettingId)i) != &s[i] || strcmp(setting_name((SettingId)i), s[i].name) != 0 ||
        lab_setting_find(s[i].name) != &s[i])
      by_id = 0;
    for (int j = 0; j < i; j++)
      if (strcmp(s[i].name, s[j].name) == 0) unique = 0;
    RunOptions o;
    Err e = {0};
    run_options_default(&o);
    double v = s[i].type == SET_INT || s[i].type == SET_NUMBER ? strtod(s[i].deflt, NULL) : s[i].min;
    if (run_options_set_text(&o, s[i].name, s[i].deflt, &e) < 0 || v < s[i].min || v > s[i].max) {
      diag("%s: default '%s' refused or out of range (%s)", s[i].name, s[i].deflt, e.msg);
      defaults = 0;
    }
  }
  ok(complete, "every row has help, a default, a group and the modes that take it");
  ok(by_id && unique, "each row is found by its id and by its name, and names are unique");
  ok(defaults, "every default parses and is in its range");
  ok(lab_setting(N_SETTINGS) == NULL && setting_name(N_SETTINGS) == NULL, "no row past the last id");
  int shape = 1;
  for (int i = 0; i < N_MODEL_FIELDS; i++)
    if (!lab_setting_find(model_fields[i].name) || lab_setting_find(model_fields[i].name)->live != (i == MODEL_TIE))
      shape = 0;
  ok(shape, "the model's shape fields are settings, all fixed but the tie");
  char cli[64];
  setting_cli_name(lab_setting(SETTING_IN_SCALE), cli, sizeof cli);
  ok(strcmp(cli, "in-scale") == 0, "the option of in_scale is in-scale (%s)", cli);
}

/* The live rows are exactly those r:set takes between steps. */
static void test_live_rows(void) {
  Err e = {0};
  Lab *lab = lab_new(&e);
  RunOptions o;
  run_options_default(&o);
  const char *tiny[][2] = {{"vocab", "256"}, {"dim", "16"}, {"layers", "1"}, {"heads", "2"}, {"ctx", "8"},
                           {"batch", "2"}, {"threads", "1"}};
  for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) run_options_set_text(&o, tiny[i][0], tiny[i][1], &e);
  Run *r = lab ? lab_add_run(lab, &o, &e) : NULL;
  if (!r) {
    ok(0, "a run to set: %s", e.msg);
    lab_free(lab);
    return;
  }
  int n, agree = 1;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++) {
    char now[1100];
    run_options_get_text(run_options(r), s[i].name, now, sizeof now, NULL);
    int took = live_text(r, s[i].name, now, &e) == 0;
    if (took != s[i].live) {
      diag("%s: live %d, steer_set %s (%s)", s[i].name, s[i].live, took ? "took it" : "refused it", e.msg);
      agree = 0;
    }
  }
  ok(agree, "a living run takes exactly the live settings");
  lab_free(lab);
}

/* The settings check values and never the machine's memory (the lab
** checks a run when it is made, and a live change for what it adds:
** test_memory.c); which settings change the memory is the table's. */
static void test_change_check(void) {
  RunOptions o;
  Err e = {0};
  run_options_default(&o);
  const char *huge[][2] = {{"vocab", "262144"}, {"dim", "8192"}, {"layers", "256"}, {"ctx", "32"}, {"batch", "8"}};
  for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) run_options_set_text(&o, huge[i][0], huge[i][1], &e);
  ok(run_options_check(&o, &e) == 0, "a run too large for any machine has good values");
  run_options_set_text(&o, "tie", "untied", &e);
  o.model.tie_k = 9000;
  ok(run_options_check(&o, &e) < 0 && has(&e, "'tie'"), "the values are still checked: %s", e.msg);
  int n, memory = 1;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++)
    if (s[i].group == GROUP_SHAPE && !s[i].memory && i != SETTING_TIE) memory = 0;
  ok(memory && !lab_setting(SETTING_IN_SCALE)->memory && !lab_setting(SETTING_LR)->memory,
     "the shape's sizes change the memory; the scales and rates do not");
}

int main(void) {
  test_recipe_floor();
  test_table();
  test_defaults();
  test_errors();
  test_values();
  test_round_trip();
  test_check();
  test_recipe();
  test_invariants();
  test_live_rows();
  test_change_check();
  return tap_done();
}
