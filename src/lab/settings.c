/*
** settings.c -- the table of run options (settings.h): one record per
** option with its type, range, default, help, modes, group, whether it may
** change while the run lives or changes what the run holds in memory, and
** where its value lives in a RunOptions. The command line ('--dim 64'), Lua
** ('lab.run{dim=64}'), checkpoints and the UI all set options through this
** file, by name, so they can never disagree about what an option is called
** or what it accepts.
**
** Every setting given explicitly is marked in RunOptions.given, and a
** recipe ('recipe=olmo', recipe.c) fills only the settings not marked, so
** an explicit key wins whether it comes before or after the recipe.
*/
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/num.h"
#include "core/schedule.h"
#include "base/text.h"
#include "core/settings_model.h"
#include "lab/lab.h"
#include "lab/recipe.h"

#define SEED_MAX 18446744073709551615.0   /* 2^64 - 1, as a double (for display) */
#define BIG 1e9

#define AT(f) offsetof(RunOptions, f)
#define SIZE(f) sizeof ((RunOptions *)0)->f   /* of a text field, with its NUL */

static const char *const merge_names[] = {[TIE_KEEP_IN] = "in", [TIE_KEEP_OUT] = "out", [TIE_MEAN] = "mean", NULL};

/* By SettingId: the order of --help, of a journal's options and of the
** bits of RunOptions.given. */
static const Setting settings[N_SETTINGS] = {
  /* --compare and the benchmarks name their runs */
  [SETTING_NAME] = {.name = "name", .type = SET_STRING, .deflt = "",
                    .help = "name of the run (default run1, run2, ...)", .group = GROUP_RUN,
                    .modes = IN_SCRIPTS | IN_LOOP, .headline = 1, .local = 1, .store = STORE_TEXT,
                    .offset = AT(name), .size = SIZE(name)},
  /* the model's shape: what a run holds grows with each */
  [SETTING_VOCAB] = {.name = MODEL_KEY_VOCAB, .type = SET_INT, .min = 256, .max = CONFIG_MAX_VOCAB, .deflt = "1024",
                     .help = "vocabulary size of the byte-level BPE tokenizer", .group = GROUP_SHAPE,
                     .modes = IN_RUNS, .memory = 1, .headline = 1, .store = STORE_INT, .offset = AT(model.vocab)},
  [SETTING_DIM] = {.name = MODEL_KEY_DIM, .type = SET_INT, .min = 8, .max = CONFIG_MAX_DIM, .deflt = "128",
                   .help = "model width d", .group = GROUP_SHAPE, .modes = IN_RUNS, .memory = 1, .headline = 1,
                   .store = STORE_INT, .offset = AT(model.dim)},
  [SETTING_LAYERS] = {.name = MODEL_KEY_LAYERS, .type = SET_INT, .min = 1, .max = CONFIG_MAX_LAYERS, .deflt = "4",
                      .help = "transformer blocks", .group = GROUP_SHAPE, .modes = IN_RUNS, .memory = 1,
                      .headline = 1, .store = STORE_INT, .offset = AT(model.layers)},
  [SETTING_HEADS] = {.name = MODEL_KEY_HEADS, .type = SET_INT, .min = 1, .max = CONFIG_MAX_HEADS, .deflt = "4",
                     .help = "attention heads (must divide dim)", .group = GROUP_SHAPE, .modes = IN_RUNS,
                     .memory = 1, .headline = 1, .store = STORE_INT, .offset = AT(model.heads)},
  [SETTING_CTX] = {.name = MODEL_KEY_CTX, .type = SET_INT, .min = 2, .max = CONFIG_MAX_CTX, .deflt = "64",
                   .help = "context length T", .group = GROUP_SHAPE, .modes = IN_RUNS, .memory = 1, .headline = 1,
                   .store = STORE_INT, .offset = AT(model.ctx)},
  [SETTING_BATCH] = {.name = MODEL_KEY_BATCH, .type = SET_INT, .min = 1, .max = CONFIG_MAX_BATCH, .deflt = "16",
                     .help = "sequences per step B", .group = GROUP_SHAPE, .modes = IN_RUNS, .memory = 1,
                     .headline = 1, .store = STORE_INT, .offset = AT(model.batch)},
  /* --compare (paper.lua) sets each run's tie; both embeddings are held whole either way */
  [SETTING_TIE] = {.name = MODEL_KEY_TIE, .type = SET_TIE, .max = CONFIG_MAX_DIM, .deflt = "tied", .live = 1,
                   .help = "tied, untied, or K: the first K embedding columns shared", .group = GROUP_TIE,
                   .modes = IN_RUNS & ~IN_COMPARE, .headline = 1, .store = STORE_TIE, .offset = AT(tie_text),
                   .size = SIZE(tie_text)},
  /* only a tie changed while a run lives merges */
  [SETTING_TIE_MERGE] = {.name = "tie_merge", .type = SET_STRING, .deflt = "in", .live = 1,
                         .help = "when tying: which matrix survives, in, out or mean", .group = GROUP_TIE,
                         .modes = IN_SCRIPTS, .store = STORE_CHOICE, .offset = AT(tie_merge), .choices = merge_names},
  /* a journal keeps the two seeds 'seed' sets, not 'seed'; --compare
  ** (paper.lua) sets each run's seeds from its own seeds= */
  [SETTING_SEED] = {.name = "seed", .type = SET_SEED, .max = SEED_MAX, .deflt = "1",
                    .help = "sets init_seed and data_seed unless given on their own", .group = GROUP_SEEDS,
                    .modes = IN_RUNS & ~IN_COMPARE, .headline = 1, .alias = 1, .store = STORE_SEED_BOTH},
  [SETTING_INIT_SEED] = {.name = "init_seed", .type = SET_SEED, .max = SEED_MAX, .deflt = "1",
                         .help = "seed of the initial weights", .group = GROUP_SEEDS, .modes = IN_RUNS & ~IN_COMPARE,
                         .headline = 1, .store = STORE_U64, .offset = AT(init_seed)},
  [SETTING_DATA_SEED] = {.name = "data_seed", .type = SET_SEED, .max = SEED_MAX, .deflt = "1",
                         .help = "seed of the batches and their order", .group = GROUP_SEEDS,
                         .modes = IN_RUNS & ~IN_COMPARE,
                         .headline = 1, .store = STORE_U64, .offset = AT(data_seed)},
  /* --bench draws random tokens, or reads --corpus */
  [SETTING_CORPUS_SEED] = {.name = "corpus_seed", .type = SET_SEED, .max = SEED_MAX, .deflt = "1",
                           .help = "seed of the built-in synthetic language", .group = GROUP_SEEDS,
                           .modes = IN_RUNS & ~IN_BENCH, .store = STORE_U64, .offset = AT(corpus_seed)},
  [SETTING_LR] = {.name = "lr", .type = SET_NUMBER, .max = 10, .deflt = "1e-3", .live = 1,
                  .help = "peak learning rate (see warmup and schedule)", .group = GROUP_OPTIMIZER,
                  .modes = IN_RUNS, .headline = 1, .store = STORE_DOUBLE, .offset = AT(lr)},
  /* --compare sets each run's in_scale */
  [SETTING_IN_SCALE] = {.name = "in_scale", .type = SET_NUMBER, .max = 1e6, .deflt = "1", .live = 1,
                        .help = "factor on the input-side embedding gradient", .group = GROUP_SCALES,
                        .modes = IN_RUNS & ~IN_COMPARE, .headline = 1, .store = STORE_DOUBLE, .offset = AT(in_scale)},
  [SETTING_OUT_SCALE] = {.name = "out_scale", .type = SET_NUMBER, .max = 1e6, .deflt = "1", .live = 1,
                         .help = "factor on the output-side embedding gradient", .group = GROUP_SCALES,
                         .modes = IN_RUNS, .headline = 1, .store = STORE_DOUBLE, .offset = AT(out_scale)},
  /* the lab holds a copy of the corpus's text and tokens */
  [SETTING_CORPUS] = {.name = "corpus", .type = SET_STRING, .deflt = "",
                      .help = "text file to train on (empty: the built-in synthetic language)", .group = GROUP_DATA,
                      .modes = IN_RUNS | IN_INSPECT, .memory = 1, .headline = 1, .store = STORE_TEXT,
                      .offset = AT(corpus), .size = SIZE(corpus)},
  [SETTING_CORPUS_MAX] = {.name = "corpus_max", .type = SET_INT, .min = 1, .max = 1 << 20, .deflt = "1024",
                          .help = "largest corpus file read, in MiB", .group = GROUP_DATA, .modes = IN_RUNS | IN_INSPECT,
                          .store = STORE_INT, .offset = AT(corpus_max_mb)},
  /* --bench times the bare step; the loop shows no lens */
  [SETTING_LENS_EVERY] = {.name = "lens_every", .type = SET_INT, .max = BIG, .deflt = "20", .live = 1,
                          .help = "train the tuned lens every N steps (0: off)", .group = GROUP_INSTRUMENTS,
                          .modes = IN_RUNS & ~(IN_BENCH | IN_LOOP), .store = STORE_INT, .offset = AT(lens_every)},
  [SETTING_EVAL_EVERY] = {.name = "eval_every", .type = SET_INT, .max = BIG, .deflt = "100", .live = 1,
                          .help = "validation loss every N steps (0: off)", .group = GROUP_INSTRUMENTS,
                          .modes = IN_RUNS & ~IN_BENCH, .store = STORE_INT, .offset = AT(eval_every)},
  /* the loop's single run has no partner; turned on, the alignment's
  ** workspace is made */
  [SETTING_ALIGN_EVERY] = {.name = "align_every", .type = SET_INT, .max = BIG, .deflt = "100", .live = 1,
                           .help = "alignment with the partner every N steps (0: off)", .group = GROUP_INSTRUMENTS,
                           .modes = IN_SCRIPTS | IN_COMPARE | IN_BENCH_LAB, .memory = 1,
                           .store = STORE_INT, .offset = AT(align_every)},
  /* the other modes choose the partner themselves */
  [SETTING_PARTNER] = {.name = "partner", .type = SET_STRING, .deflt = "",
                       .help = "untied run to align with (empty: the first that fits)", .group = GROUP_INSTRUMENTS,
                       .modes = IN_SCRIPTS, .store = STORE_TEXT, .offset = AT(partner), .size = SIZE(partner)},
  /* how fast, not what: the ranks of a job may differ */
  [SETTING_THREADS] = {.name = "threads", .type = SET_INT, .min = 1, .max = 256, .deflt = "2",
                       .help = "threads for attention and elementwise work", .group = GROUP_RUN, .modes = IN_RUNS | IN_INSPECT,
                       .local = 1, .store = STORE_INT, .offset = AT(threads)},
  /* the optimizer and its schedule */
  [SETTING_WARMUP] = {.name = "warmup", .type = SET_INT, .max = BIG, .deflt = "0", .live = 1,
                      .help = "steps of linear warmup of the learning rate from warmup_start*lr",
                      .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_INT, .offset = AT(warmup)},
  [SETTING_WARMUP_START] = {.name = "warmup_start", .type = SET_NUMBER, .max = 1, .deflt = "0", .live = 1,
                            .help = "the warmup's first rate, as a fraction of lr", .group = GROUP_OPTIMIZER,
                            .modes = IN_RUNS, .store = STORE_DOUBLE, .offset = AT(warmup_start)},
  [SETTING_SCHEDULE] = {.name = "schedule", .type = SET_STRING, .deflt = "constant", .live = 1,
                        .help = "after the warmup: constant, cosine or linear decay to lr_min",
                        .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_CHOICE, .offset = AT(schedule),
                        .choices = schedule_names},
  [SETTING_DECAY_STEPS] = {.name = "decay_steps", .type = SET_INT, .max = BIG, .deflt = "0", .live = 1,
                           .help = "step at which cosine or linear decay reaches lr_min (warmup included)",
                           .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_INT, .offset = AT(decay_steps)},
  [SETTING_LR_MIN] = {.name = "lr_min", .type = SET_NUMBER, .max = 10, .deflt = "0", .live = 1,
                      .help = "the learning rate's floor, absolute (see lr_min_ratio)", .group = GROUP_OPTIMIZER,
                      .modes = IN_RUNS, .store = STORE_DOUBLE, .offset = AT(lr_min)},
  [SETTING_LR_MIN_RATIO] = {.name = "lr_min_ratio", .type = SET_NUMBER, .max = 1, .deflt = "0", .live = 1,
                            .help = "the floor as a fraction of lr; above 0 it replaces lr_min",
                            .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_DOUBLE,
                            .offset = AT(lr_min_ratio)},
  [SETTING_EPS] = {.name = "eps", .type = SET_NUMBER, .max = 1, .deflt = "1e-8", .live = 1, .help = "Adam epsilon",
                   .open = OPEN_MIN, .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_DOUBLE,
                   .offset = AT(eps)},
  [SETTING_BETA1] = {.name = "beta1", .type = SET_NUMBER, .max = 1, .deflt = "0.9", .live = 1, .help = "Adam beta1",
                     .open = OPEN_MAX, .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_DOUBLE,
                     .offset = AT(beta1)},
  [SETTING_BETA2] = {.name = "beta2", .type = SET_NUMBER, .max = 1, .deflt = "0.95", .live = 1, .help = "Adam beta2",
                     .open = OPEN_MAX, .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_DOUBLE,
                     .offset = AT(beta2)},
  [SETTING_WEIGHT_DECAY] = {.name = "weight_decay", .type = SET_NUMBER, .max = 10, .deflt = "0.1", .live = 1,
                            .help = "weight decay: decoupled (adamw) or added to the gradient",
                            .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_DOUBLE,
                            .offset = AT(weight_decay)},
  [SETTING_DECAY_ALL] = {.name = "decay_all", .type = SET_BOOL, .max = 1, .deflt = "false", .live = 1,
                         .help = "decay LayerNorm weights and biases too (as OLMo does)", .group = GROUP_OPTIMIZER,
                         .modes = IN_RUNS, .store = STORE_BOOL, .offset = AT(decay_all)},
  /* not live: SGD's momentum buffer is Adam's first-moment arena */
  [SETTING_OPTIMIZER] = {.name = "optimizer", .type = SET_STRING, .deflt = "adamw",
                         .help = "adamw, adam (L2 weight decay) or sgd", .group = GROUP_OPTIMIZER, .modes = IN_RUNS,
                         .store = STORE_CHOICE, .offset = AT(optimizer), .choices = optim_names},
  [SETTING_MOMENTUM] = {.name = "momentum", .type = SET_NUMBER, .max = 1, .deflt = "0", .live = 1,
                        .help = "sgd momentum", .open = OPEN_MAX, .group = GROUP_OPTIMIZER, .modes = IN_RUNS,
                        .store = STORE_DOUBLE, .offset = AT(momentum)},
  [SETTING_NESTEROV] = {.name = "nesterov", .type = SET_BOOL, .max = 1, .deflt = "false", .live = 1,
                        .help = "sgd Nesterov momentum (needs momentum > 0)", .group = GROUP_OPTIMIZER,
                        .modes = IN_RUNS, .store = STORE_BOOL, .offset = AT(nesterov)},
  [SETTING_CLIP] = {.name = "clip", .type = SET_NUMBER, .max = 1e6, .deflt = "1", .live = 1,
                    .help = "global gradient-norm clip (0: none)", .group = GROUP_OPTIMIZER, .modes = IN_RUNS,
                    .store = STORE_DOUBLE, .offset = AT(clip)},
  [SETTING_GRAD_SCALE] = {.name = "grad_scale", .type = SET_NUMBER, .max = 1e6, .deflt = "1", .live = 1,
                          .help = "factor on every gradient, before the clip", .open = OPEN_MIN,
                          .group = GROUP_OPTIMIZER, .modes = IN_RUNS, .store = STORE_DOUBLE, .offset = AT(grad_scale)},
  [SETTING_EMB_LR_SCALE] = {.name = "emb_lr_scale", .type = SET_NUMBER, .max = 1e6, .deflt = "1", .live = 1,
                            .help = "factor on the token embeddings' learning rate", .group = GROUP_OPTIMIZER,
                            .modes = IN_RUNS, .store = STORE_DOUBLE, .offset = AT(emb_lr_scale)},
  [SETTING_EMB_WARMUP] = {.name = "emb_warmup", .type = SET_INT, .max = BIG, .deflt = "0", .live = 1,
                          .help = "steps of the token embeddings' own linear warmup", .group = GROUP_OPTIMIZER,
                          .modes = IN_RUNS, .store = STORE_INT, .offset = AT(emb_warmup)},
  [SETTING_RECIPE] = {.name = "recipe", .type = SET_STRING, .deflt = "",
                      .help = "a preset of the settings above: olmo (explicit keys win)", .group = GROUP_RECIPE,
                      .modes = IN_RUNS, .store = STORE_CHOICE, .offset = AT(recipe), .choices = recipe_names},
};

_Static_assert(N_SETTINGS <= 64, "RunOptions.given has a bit per setting");

const Setting *lab_settings(int *n) {
  if (n) *n = N_SETTINGS;
  return settings;
}

static int setting_index(const char *name) {
  for (int i = 0; i < N_SETTINGS; i++)
    if (strcmp(settings[i].name, name) == 0) return i;
  return -1;
}

const Setting *lab_setting_find(const char *name) {
  int i = name ? setting_index(name) : -1;
  return i < 0 ? NULL : &settings[i];
}

const Setting *lab_setting(SettingId id) { return id >= 0 && id < N_SETTINGS ? &settings[id] : NULL; }

const char *setting_name(SettingId id) { return id >= 0 && id < N_SETTINGS ? settings[id].name : NULL; }

const char *setting_type_name(SettingType t) {
  /* two types are named for the settings they serve */
  static const char *const names[] = {[SET_INT] = "integer", [SET_NUMBER] = "number", [SET_STRING] = "string",
                                      [SET_TIE] = MODEL_KEY_TIE, [SET_SEED] = "seed", [SET_BOOL] = "boolean"};
  return t >= 0 && t <= SET_BOOL ? names[t] : NULL;
}

void setting_cli_name(const Setting *s, char *out, size_t cap) {
  snprintf(out, cap, "%s", s->cli ? s->cli : s->name);
  for (char *p = out; *p; p++)
    if (*p == '_') *p = '-';
}

static void *field(RunOptions *o, const Setting *s) { return (char *)o + s->offset; }
static const void *cfield(const RunOptions *o, const Setting *s) { return (const char *)o + s->offset; }

/* "tied" -> dim, "untied" -> 0, "K" -> K (checked against dim later, in
** run_options_check, because dim may be given after tie). */
static int tie_columns(const char *text, int dim) {
  if (strcmp(text, "tied") == 0) return dim;
  if (strcmp(text, "untied") == 0) return 0;
  return atoi(text);
}

static void resolve_tie(RunOptions *o) { o->model.tie_k = tie_columns(o->tie_text, o->model.dim); }

static int unknown(const char *key, Err *err) { return err_set(err, "unknown setting '%s'", key); }

/* ------------------------------------------------------------ numbers */

static int range_error(const Setting *s, const char *got, Err *err) {
  const char *what = s->type == SET_INT ? "an integer" : s->type == SET_SEED ? "a whole number" : "a number";
  if (s->type == SET_SEED) return err_set(err, "'%s' must be %s >= 0, got %s", s->name, what, got);
  return err_set(err, "'%s' must be %s in %c%.15g, %.15g%c, got %s", s->name, what, s->open & OPEN_MIN ? '(' : '[',
                 s->min, s->max, s->open & OPEN_MAX ? ')' : ']', got);
}

static int in_range(const Setting *s, double v) {
  return isfinite(v) && (s->open & OPEN_MIN ? v > s->min : v >= s->min) &&
         (s->open & OPEN_MAX ? v < s->max : v <= s->max);
}

static int store_number(RunOptions *o, int i, double v, const char *shown, Err *err) {
  const Setting *s = &settings[i];
  if (!in_range(s, v)) return range_error(s, shown, err);
  switch (s->store) {
    case STORE_INT:
      if (v != floor(v)) return range_error(s, shown, err);
      *(int *)field(o, s) = (int)v;
      if (i == SETTING_DIM) resolve_tie(o);
      return 0;
    case STORE_DOUBLE: *(double *)field(o, s) = v; return 0;
    default: return err_set(err, "'%s' is not a number setting", s->name);
  }
}

static void store_seed(RunOptions *o, int i, uint64_t v) {
  const Setting *s = &settings[i];
  if (s->store == STORE_SEED_BOTH) {
    if (!o->init_seed_given) o->init_seed = v;
    if (!o->data_seed_given) o->data_seed = v;
    return;
  }
  *(uint64_t *)field(o, s) = v;
  if (i == SETTING_INIT_SEED) o->init_seed_given = 1;
  if (i == SETTING_DATA_SEED) o->data_seed_given = 1;
}

/* ------------------------------------------------------------ text */

static int store_tie(RunOptions *o, const Setting *s, const char *text, Err *err) {
  char buf[sizeof o->tie_text] = {0};
  if (strcmp(text, "tied") == 0 || strcmp(text, "untied") == 0) {
    snprintf(buf, sizeof buf, "%s", text);
  } else {
    long k;
    if (num_parse_long(text, 0, (long)s->max, &k) < 0)
      return err_set(err, "'tie' must be tied, untied or a column count K in [0, %d], got '%s'",
                     (int)s->max, text);
    snprintf(buf, sizeof buf, "%d", (int)k);
  }
  memcpy(o->tie_text, buf, sizeof buf);
  o->tie_given = 1;
  resolve_tie(o);
  return 0;
}

/* "in, out or mean"; an empty name shows as "". */
static void choice_list(const char *const *names, char *buf, size_t cap) {
  size_t n = 0;
  while (names[n]) n++;
  buf[0] = '\0';
  for (size_t i = 0; i < n; i++) text_list_add(buf, cap, i, n, " or ", names[i][0] ? names[i] : "\"\"");
}

const char *const *lab_setting_choices(const char *name) {
  const Setting *s = lab_setting_find(name);
  return s && s->store == STORE_CHOICE ? s->choices : NULL;
}

static int store_choice(RunOptions *o, const Setting *s, const char *text, Err *err) {
  for (int c = 0; s->choices[c]; c++)
    if (strcmp(text, s->choices[c]) == 0) {
      *(int *)field(o, s) = c;
      return 0;
    }
  char list[128];
  choice_list(s->choices, list, sizeof list);
  return err_set(err, "'%s' must be %s, got '%.64s'", s->name, list, text);
}

static int store_bool(RunOptions *o, const Setting *s, const char *text, Err *err) {
  int yes = strcmp(text, "true") == 0, no = strcmp(text, "false") == 0;
  if (!yes && !no) return err_set(err, "'%s' must be true or false, got '%.64s'", s->name, text);
  *(int *)field(o, s) = yes;
  return 0;
}

static int store_text(RunOptions *o, const Setting *s, const char *text, Err *err) {
  size_t n = strlen(text);
  if (n >= s->size) return err_set(err, "'%s' is too long (%zu bytes, at most %zu)", s->name, n, s->size - 1);
  /* Names and paths are shown on screens and written into files' lines:
  ** a tab, newline or carriage return would break a column or a line. */
  if (text_needs_escape(text, n) || strcspn(text, "\t\n\r") != n)
    return err_set(err, "'%s' holds a control character or a byte that is not UTF-8", s->name);
  memset(field(o, s), 0, s->size);   /* no bytes of an older value behind the NUL */
  memcpy(field(o, s), text, n);
  return 0;
}

static int parse_seed(const Setting *s, const char *text, uint64_t *out, Err *err) {
  /* Decimal digits only: strtoull alone would skip spaces, take a sign and
  ** read "010" as octal. */
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (*text == '\0' || text[strspn(text, "0123456789")] != '\0' || *end != '\0' || errno) {
    char shown[80];
    snprintf(shown, sizeof shown, "'%.64s'", text);
    return range_error(s, shown, err);
  }
  *out = (uint64_t)v;
  return 0;
}

/* Setting 'i' from text, without marking it given. */
static int set_text(RunOptions *o, int i, const char *value, Err *err) {
  const Setting *s = &settings[i];
  char shown[80];
  snprintf(shown, sizeof shown, "'%.64s'", value);
  switch (s->store) {
    case STORE_TEXT: return store_text(o, s, value, err);
    case STORE_TIE: return store_tie(o, s, value, err);
    case STORE_CHOICE: return store_choice(o, s, value, err);
    case STORE_BOOL: return store_bool(o, s, value, err);
    case STORE_U64:
    case STORE_SEED_BOTH: {
      uint64_t v = 0;
      if (parse_seed(s, value, &v, err) < 0) return -1;
      store_seed(o, i, v);
      return 0;
    }
    case STORE_INT:
    case STORE_DOUBLE: {
      double v;
      if (num_parse(value, &v) < 0) return range_error(s, shown, err);
      return store_number(o, i, v, value, err);
    }
  }
  return unknown(s->name, err);
}

static int set_number(RunOptions *o, int i, double value, Err *err) {
  const Setting *s = &settings[i];
  char shown[64];
  snprintf(shown, sizeof shown, "%.17g", value);
  switch (s->store) {
    case STORE_INT:
    case STORE_DOUBLE: return store_number(o, i, value, shown, err);
    case STORE_U64:
    case STORE_SEED_BOTH:
      /* Doubles hold every integer up to 2^53 exactly; beyond that a seed
      ** must be given as text. */
      if (!isfinite(value) || value < 0 || value != floor(value) || value > 9007199254740992.0)
        return err_set(err, "'%s' must be a whole number in [0, 2^53] (larger seeds as text), got %s",
                       s->name, shown);
      store_seed(o, i, (uint64_t)value);
      return 0;
    case STORE_TIE:
      if (!isfinite(value) || value != floor(value) || value < 0 || value > s->max)
        return err_set(err, "'tie' must be tied, untied or a column count K in [0, %d], got %s",
                       (int)s->max, shown);
      snprintf(shown, sizeof shown, "%d", (int)value);
      return store_tie(o, s, shown, err);
    case STORE_TEXT:
    case STORE_CHOICE: return err_set(err, "'%s' takes text, not a number", s->name);
    case STORE_BOOL: return err_set(err, "'%s' takes true or false, not a number", s->name);
  }
  return unknown(s->name, err);
}

/* After setting 'i' by hand: mark it given, and fill a recipe's keys. */
static int given(RunOptions *o, int i) {
  o->given |= UINT64_C(1) << i;
  if (recipe_steers(i)) recipe_apply(o, set_text);
  return 0;
}

int run_options_set_text(RunOptions *o, const char *key, const char *value, Err *err) {
  int i = setting_index(key);
  if (i < 0) return unknown(key, err);
  return set_text(o, i, value, err) < 0 ? -1 : given(o, i);
}

int run_options_set_number(RunOptions *o, const char *key, double value, Err *err) {
  int i = setting_index(key);
  if (i < 0) return unknown(key, err);
  return set_number(o, i, value, err) < 0 ? -1 : given(o, i);
}

int run_options_get_text(const RunOptions *o, const char *key, char *buf, size_t cap, Err *err) {
  int i = setting_index(key);
  if (i < 0) return unknown(key, err);
  const Setting *s = &settings[i];
  int n = 0;
  switch (s->store) {
    case STORE_TEXT: n = snprintf(buf, cap, "%s", (const char *)cfield(o, s)); break;
    case STORE_INT: n = snprintf(buf, cap, "%d", *(const int *)cfield(o, s)); break;
    case STORE_DOUBLE: {
      char num[NUM_TEXT_MAX];
      n = snprintf(buf, cap, "%s", num_format(num, sizeof num, *(const double *)cfield(o, s)));
      break;
    }
    case STORE_U64: n = snprintf(buf, cap, "%llu", (unsigned long long)*(const uint64_t *)cfield(o, s)); break;
    case STORE_SEED_BOTH: n = snprintf(buf, cap, "%llu", (unsigned long long)o->init_seed); break;
    case STORE_CHOICE: n = snprintf(buf, cap, "%s", s->choices[*(const int *)cfield(o, s)]); break;
    case STORE_BOOL: n = snprintf(buf, cap, "%s", *(const int *)cfield(o, s) ? "true" : "false"); break;
    case STORE_TIE: {
      char tie[16];
      n = snprintf(buf, cap, "%s", config_tie_name(o->model.tie_k, o->model.dim, tie));
      break;
    }
  }
  if (n < 0 || (size_t)n >= cap) return err_set(err, "'%s': value too long for its buffer", key);
  return 0;
}

void run_options_default(RunOptions *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < N_SETTINGS; i++) run_options_set_text(o, settings[i].name, settings[i].deflt, NULL);
  o->given = 0;
  o->tie_given = 0;
  o->init_seed_given = o->data_seed_given = 0;
}

/* ------------------------------------------------------------ the whole set */

/* Everything but the memory (the lab's to check, lab_check_memory): cheap
** enough for every change. */
int run_options_check(const RunOptions *o, Err *err) {
  const ModelConfig *c = &o->model;
  if (c->tie_k < 0 || c->tie_k > c->dim)
    return err_set(err, "'tie' K (%d) must be at most dim (%d)", c->tie_k, c->dim);
  Schedule sched = run_options_schedule(o);
  if (schedule_check(&sched, err) < 0) return -1;
  if (o->nesterov && !(o->momentum > 0))
    return err_set(err, "'nesterov' needs 'momentum' above 0 (got %g)", o->momentum);
  return config_validate(c, err);
}

/* ------------------------------------------------------------ the optimizer */

Schedule run_options_schedule(const RunOptions *o) {
  double lr_floor = o->lr_min_ratio > 0 ? o->lr * o->lr_min_ratio : o->lr_min;
  return (Schedule){.kind = o->schedule, .lr = o->lr, .lr_min = lr_floor, .warmup = o->warmup,
                    .warmup_start = o->warmup_start, .decay_steps = o->decay_steps};
}

OptimConfig run_options_optim(const RunOptions *o) {
  OptimConfig oc = optim_default();
  oc.lr = (float)o->lr;
  oc.beta1 = (float)o->beta1;
  oc.beta2 = (float)o->beta2;
  oc.eps = (float)o->eps;
  oc.weight_decay = (float)o->weight_decay;
  oc.clip = (float)o->clip;
  oc.kind = o->optimizer;
  oc.momentum = (float)o->momentum;
  oc.nesterov = o->nesterov;
  oc.decay_all = o->decay_all;
  oc.grad_scale = (float)o->grad_scale;
  oc.emb_lr_scale = (float)o->emb_lr_scale;
  return oc;
}

void run_options_rates(const RunOptions *o, long step, double *lr, double *emb_factor) {
  Schedule sched = run_options_schedule(o);
  *lr = schedule_lr(&sched, step);
  *emb_factor = o->emb_lr_scale * schedule_warmup_factor(o->emb_warmup, step);
}

OptimConfig run_options_optim_at(const RunOptions *o, long step) {
  OptimConfig oc = run_options_optim(o);
  double lr, emb_factor;
  run_options_rates(o, step, &lr, &emb_factor);
  oc.lr = (float)lr;
  oc.emb_lr_scale = (float)emb_factor;
  return oc;
}
