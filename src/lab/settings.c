/*
** settings.c -- the table of run options: one row per option with its type,
** range, default, whether it may change while the run lives, and help text.
** The command line ('--dim 64'), Lua ('lab.run{dim=64}'), checkpoints and
** the UI all set options through this file, by name, so they can never
** disagree about what an option is called or what it accepts.
**
** Each row of 'settings' has a twin in 'slots' (same index) saying where
** the value lives in a RunOptions and how it is stored.
**
** A recipe ('recipe=olmo') is a preset of other settings. Every setting
** given explicitly is marked in RunOptions.given, and a recipe fills only
** the settings not marked, so an explicit key wins whether it comes before
** or after the recipe.
*/
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/num.h"
#include "core/schedule.h"
#include "base/text.h"
#include "lab/lab.h"

#define SEED_MAX 18446744073709551615.0   /* 2^64 - 1, as a double (for display) */
#define BIG 1e9

static const Setting settings[] = {
  {"name", SET_STRING, 0, 0, "", 0, "name of the run (default run1, run2, ...)", 0},
  {"vocab", SET_INT, 256, CONFIG_MAX_VOCAB, "1024", 0, "vocabulary size of the byte-level BPE tokenizer", 0},
  {"dim", SET_INT, 8, CONFIG_MAX_DIM, "128", 0, "model width d", 0},
  {"layers", SET_INT, 1, CONFIG_MAX_LAYERS, "4", 0, "transformer blocks", 0},
  {"heads", SET_INT, 1, CONFIG_MAX_HEADS, "4", 0, "attention heads (must divide dim)", 0},
  {"ctx", SET_INT, 2, CONFIG_MAX_CTX, "64", 0, "context length T", 0},
  {"batch", SET_INT, 1, CONFIG_MAX_BATCH, "16", 0, "sequences per step B", 0},
  {"tie", SET_TIE, 0, CONFIG_MAX_DIM, "tied", 1,
   "tied, untied, or K: the first K embedding columns shared", 0},
  {"tie_merge", SET_STRING, 0, 0, "in", 1,
   "when tying: which matrix survives, in, out or mean", 0},
  {"seed", SET_SEED, 0, SEED_MAX, "1", 0, "sets init_seed and data_seed unless given on their own", 0},
  {"init_seed", SET_SEED, 0, SEED_MAX, "1", 0, "seed of the initial weights", 0},
  {"data_seed", SET_SEED, 0, SEED_MAX, "1", 0, "seed of the batches and their order", 0},
  {"corpus_seed", SET_SEED, 0, SEED_MAX, "1", 0, "seed of the built-in synthetic language", 0},
  {"lr", SET_NUMBER, 0, 10, "1e-3", 1, "peak learning rate (see warmup and schedule)", 0},
  {"in_scale", SET_NUMBER, 0, 1e6, "1", 1, "factor on the input-side embedding gradient", 0},
  {"out_scale", SET_NUMBER, 0, 1e6, "1", 1, "factor on the output-side embedding gradient", 0},
  {"corpus", SET_STRING, 0, 0, "", 0, "text file to train on (empty: the built-in synthetic language)", 0},
  {"corpus_max", SET_INT, 1, 1 << 20, "1024", 0, "largest corpus file read, in MiB", 0},
  {"lens_every", SET_INT, 0, BIG, "20", 1, "train the tuned lens every N steps (0: off)", 0},
  {"eval_every", SET_INT, 0, BIG, "100", 1, "validation loss every N steps (0: off)", 0},
  {"align_every", SET_INT, 0, BIG, "100", 1, "alignment with the partner every N steps (0: off)", 0},
  {"partner", SET_STRING, 0, 0, "", 0, "untied run to align with (empty: the first that fits)", 0},
  {"threads", SET_INT, 1, 256, "2", 0, "threads for attention and elementwise work", 0},
  /* the optimizer and its schedule */
  {"warmup", SET_INT, 0, BIG, "0", 1, "steps of linear warmup of the learning rate from warmup_start*lr", 0},
  {"warmup_start", SET_NUMBER, 0, 1, "0", 1, "the warmup's first rate, as a fraction of lr", 0},
  {"schedule", SET_STRING, 0, 0, "constant", 1, "after the warmup: constant, cosine or linear decay to lr_min", 0},
  {"decay_steps", SET_INT, 0, BIG, "0", 1, "step at which cosine or linear decay reaches lr_min (warmup included)", 0},
  {"lr_min", SET_NUMBER, 0, 10, "0", 1, "the learning rate's floor, absolute (see lr_min_ratio)", 0},
  {"lr_min_ratio", SET_NUMBER, 0, 1, "0", 1, "the floor as a fraction of lr; above 0 it replaces lr_min", 0},
  {"eps", SET_NUMBER, 0, 1, "1e-8", 1, "Adam epsilon", OPEN_MIN},
  {"beta1", SET_NUMBER, 0, 1, "0.9", 1, "Adam beta1", OPEN_MAX},
  {"beta2", SET_NUMBER, 0, 1, "0.95", 1, "Adam beta2", OPEN_MAX},
  {"weight_decay", SET_NUMBER, 0, 10, "0.1", 1, "weight decay: decoupled (adamw) or added to the gradient", 0},
  {"decay_all", SET_BOOL, 0, 1, "false", 1, "decay LayerNorm weights and biases too (as OLMo does)", 0},
  /* not live: SGD's momentum buffer is Adam's first-moment arena */
  {"optimizer", SET_STRING, 0, 0, "adamw", 0, "adamw, adam (L2 weight decay) or sgd", 0},
  {"momentum", SET_NUMBER, 0, 1, "0", 1, "sgd momentum", OPEN_MAX},
  {"nesterov", SET_BOOL, 0, 1, "false", 1, "sgd Nesterov momentum (needs momentum > 0)", 0},
  {"clip", SET_NUMBER, 0, 1e6, "1", 1, "global gradient-norm clip (0: none)", 0},
  {"grad_scale", SET_NUMBER, 0, 1e6, "1", 1, "factor on every gradient, before the clip", OPEN_MIN},
  {"emb_lr_scale", SET_NUMBER, 0, 1e6, "1", 1, "factor on the token embeddings' learning rate", 0},
  {"emb_warmup", SET_INT, 0, BIG, "0", 1, "steps of the token embeddings' own linear warmup", 0},
  {"recipe", SET_STRING, 0, 0, "", 0, "a preset of the settings above: olmo (explicit keys win)", 0},
};

#define N_SETTINGS ((int)(sizeof settings / sizeof settings[0]))

_Static_assert(N_SETTINGS <= 64, "RunOptions.given has a bit per setting");

/* How a value is stored in a RunOptions. */
typedef enum Store { ST_TEXT, ST_INT, ST_DOUBLE, ST_U64, ST_TIE, ST_CHOICE, ST_SEED_BOTH, ST_BOOL } Store;

typedef struct Slot {
  const char *name;   /* the same as settings[i].name: checked by 'slot_of' */
  Store store;
  size_t offset;      /* of the field in RunOptions */
  size_t size;        /* of a text field, with its NUL */
  const char *const *choices;   /* ST_CHOICE: the names, by value, NULL-ended */
} Slot;

#define AT(f) offsetof(RunOptions, f)

static const char *const merge_names[] = {[TIE_KEEP_IN] = "in", [TIE_KEEP_OUT] = "out", [TIE_MEAN] = "mean", NULL};
static const char *const recipe_names[] = {"", "olmo", NULL};   /* each with its pairs in 'recipes' */

static const Slot slots[] = {
  {"name", ST_TEXT, AT(name), sizeof ((RunOptions *)0)->name, NULL},
  {"vocab", ST_INT, AT(model.vocab), 0, NULL},
  {"dim", ST_INT, AT(model.dim), 0, NULL},
  {"layers", ST_INT, AT(model.layers), 0, NULL},
  {"heads", ST_INT, AT(model.heads), 0, NULL},
  {"ctx", ST_INT, AT(model.ctx), 0, NULL},
  {"batch", ST_INT, AT(model.batch), 0, NULL},
  {"tie", ST_TIE, AT(tie_text), sizeof ((RunOptions *)0)->tie_text, NULL},
  {"tie_merge", ST_CHOICE, AT(tie_merge), 0, merge_names},
  {"seed", ST_SEED_BOTH, 0, 0, NULL},
  {"init_seed", ST_U64, AT(init_seed), 0, NULL},
  {"data_seed", ST_U64, AT(data_seed), 0, NULL},
  {"corpus_seed", ST_U64, AT(corpus_seed), 0, NULL},
  {"lr", ST_DOUBLE, AT(lr), 0, NULL},
  {"in_scale", ST_DOUBLE, AT(in_scale), 0, NULL},
  {"out_scale", ST_DOUBLE, AT(out_scale), 0, NULL},
  {"corpus", ST_TEXT, AT(corpus), sizeof ((RunOptions *)0)->corpus, NULL},
  {"corpus_max", ST_INT, AT(corpus_max_mb), 0, NULL},
  {"lens_every", ST_INT, AT(lens_every), 0, NULL},
  {"eval_every", ST_INT, AT(eval_every), 0, NULL},
  {"align_every", ST_INT, AT(align_every), 0, NULL},
  {"partner", ST_TEXT, AT(partner), sizeof ((RunOptions *)0)->partner, NULL},
  {"threads", ST_INT, AT(threads), 0, NULL},
  {"warmup", ST_INT, AT(warmup), 0, NULL},
  {"warmup_start", ST_DOUBLE, AT(warmup_start), 0, NULL},
  {"schedule", ST_CHOICE, AT(schedule), 0, schedule_names},
  {"decay_steps", ST_INT, AT(decay_steps), 0, NULL},
  {"lr_min", ST_DOUBLE, AT(lr_min), 0, NULL},
  {"lr_min_ratio", ST_DOUBLE, AT(lr_min_ratio), 0, NULL},
  {"eps", ST_DOUBLE, AT(eps), 0, NULL},
  {"beta1", ST_DOUBLE, AT(beta1), 0, NULL},
  {"beta2", ST_DOUBLE, AT(beta2), 0, NULL},
  {"weight_decay", ST_DOUBLE, AT(weight_decay), 0, NULL},
  {"decay_all", ST_BOOL, AT(decay_all), 0, NULL},
  {"optimizer", ST_CHOICE, AT(optimizer), 0, optim_names},
  {"momentum", ST_DOUBLE, AT(momentum), 0, NULL},
  {"nesterov", ST_BOOL, AT(nesterov), 0, NULL},
  {"clip", ST_DOUBLE, AT(clip), 0, NULL},
  {"grad_scale", ST_DOUBLE, AT(grad_scale), 0, NULL},
  {"emb_lr_scale", ST_DOUBLE, AT(emb_lr_scale), 0, NULL},
  {"emb_warmup", ST_INT, AT(emb_warmup), 0, NULL},
  {"recipe", ST_CHOICE, AT(recipe), 0, recipe_names},
};

/* ------------------------------------------------------------ recipes
** A recipe sets each of its keys that was not given explicitly; the keys
** any recipe sets go back to their defaults under another recipe (or
** none), so changing the recipe never leaves another's values behind. */

/* A recipe's keys and values, ended by a NULL key. */
typedef const char *const RecipePair[2];

/* The paper's training recipe, OLMo's: its cosine_with_warmup warms up
** from 0.1*lr (warmup_min_lr unset) and decays to alpha_f*lr = 0.1*lr. */
static RecipePair olmo_pairs[] = {
  {"lr", "3e-4"}, {"eps", "1e-5"}, {"beta1", "0.9"}, {"beta2", "0.95"}, {"weight_decay", "0.1"},
  {"decay_all", "true"}, {"warmup", "1000"}, {"warmup_start", "0.1"}, {"schedule", "cosine"},
  {"decay_steps", "10000"}, {"lr_min_ratio", "0.1"}, {"clip", "1"}, {NULL, NULL},
};

/* A recipe's key that an explicit other key replaces: 'lr_min' given under
** a recipe with a relative floor is the floor, as an explicit key wins. */
static const char *const yields_to[][2] = {{"lr_min_ratio", "lr_min"}};

#define N_YIELDS ((int)(sizeof yields_to / sizeof yields_to[0]))

/* By the recipe's number in recipe_names. */
static const RecipePair *const recipes[] = {NULL, olmo_pairs};

#define N_RECIPES ((int)(sizeof recipes / sizeof recipes[0]))
_Static_assert(N_RECIPES + 1 == sizeof recipe_names / sizeof recipe_names[0], "a pair list per recipe name");

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

/* The storage of setting 'i'; the two tables must stay in step. */
static const Slot *slot_of(int i) {
  _Static_assert(sizeof slots / sizeof slots[0] == sizeof settings / sizeof settings[0],
                 "one slot per setting");
  return strcmp(slots[i].name, settings[i].name) == 0 ? &slots[i] : NULL;
}

static void *field(RunOptions *o, const Slot *s) { return (char *)o + s->offset; }
static const void *cfield(const RunOptions *o, const Slot *s) { return (const char *)o + s->offset; }

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
  const Slot *sl = slot_of(i);
  if (!in_range(s, v)) return range_error(s, shown, err);
  switch (sl->store) {
    case ST_INT:
      if (v != floor(v)) return range_error(s, shown, err);
      *(int *)field(o, sl) = (int)v;
      if (strcmp(s->name, "dim") == 0) resolve_tie(o);
      return 0;
    case ST_DOUBLE: *(double *)field(o, sl) = v; return 0;
    default: return err_set(err, "'%s' is not a number setting", s->name);
  }
}

static void store_seed(RunOptions *o, int i, uint64_t v) {
  const Slot *sl = slot_of(i);
  if (sl->store == ST_SEED_BOTH) {
    if (!o->init_seed_given) o->init_seed = v;
    if (!o->data_seed_given) o->data_seed = v;
    return;
  }
  *(uint64_t *)field(o, sl) = v;
  if (sl->offset == AT(init_seed)) o->init_seed_given = 1;
  if (sl->offset == AT(data_seed)) o->data_seed_given = 1;
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
  size_t n = 0, len = 0;
  while (names[n]) n++;
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < cap; i++) {
    const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, names[i][0] ? names[i] : "\"\"");
  }
}

const char *const *lab_setting_choices(const char *name) {
  const Setting *s = lab_setting_find(name);
  const Slot *sl = s ? slot_of((int)(s - settings)) : NULL;
  return sl && sl->store == ST_CHOICE ? sl->choices : NULL;
}

static int store_choice(RunOptions *o, const Setting *s, const Slot *sl, const char *text, Err *err) {
  for (int c = 0; sl->choices[c]; c++)
    if (strcmp(text, sl->choices[c]) == 0) {
      *(int *)field(o, sl) = c;
      return 0;
    }
  char list[128];
  choice_list(sl->choices, list, sizeof list);
  return err_set(err, "'%s' must be %s, got '%.64s'", s->name, list, text);
}

static int store_bool(RunOptions *o, const Setting *s, const Slot *sl, const char *text, Err *err) {
  int yes = strcmp(text, "true") == 0, no = strcmp(text, "false") == 0;
  if (!yes && !no) return err_set(err, "'%s' must be true or false, got '%.64s'", s->name, text);
  *(int *)field(o, sl) = yes;
  return 0;
}

static int store_text(RunOptions *o, const Setting *s, const Slot *sl, const char *text, Err *err) {
  size_t n = strlen(text);
  if (n >= sl->size) return err_set(err, "'%s' is too long (%zu bytes, at most %zu)", s->name, n, sl->size - 1);
  /* Names and paths are shown on screens and written into files' lines:
  ** a tab, newline or carriage return would break a column or a line. */
  if (text_needs_escape(text, n) || strcspn(text, "\t\n\r") != n)
    return err_set(err, "'%s' holds a control character or a byte that is not UTF-8", s->name);
  memset(field(o, sl), 0, sl->size);   /* no bytes of an older value behind the NUL */
  memcpy(field(o, sl), text, n);
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
  const Slot *sl = slot_of(i);
  char shown[80];
  snprintf(shown, sizeof shown, "'%.64s'", value);
  switch (sl->store) {
    case ST_TEXT: return store_text(o, s, sl, value, err);
    case ST_TIE: return store_tie(o, s, value, err);
    case ST_CHOICE: return store_choice(o, s, sl, value, err);
    case ST_BOOL: return store_bool(o, s, sl, value, err);
    case ST_U64:
    case ST_SEED_BOTH: {
      uint64_t v = 0;
      if (parse_seed(s, value, &v, err) < 0) return -1;
      store_seed(o, i, v);
      return 0;
    }
    case ST_INT:
    case ST_DOUBLE: {
      double v;
      if (num_parse(value, &v) < 0) return range_error(s, shown, err);
      return store_number(o, i, v, value, err);
    }
  }
  return unknown(s->name, err);
}

static int set_number(RunOptions *o, int i, double value, Err *err) {
  const Setting *s = &settings[i];
  const Slot *sl = slot_of(i);
  char shown[64];
  snprintf(shown, sizeof shown, "%.17g", value);
  switch (sl->store) {
    case ST_INT:
    case ST_DOUBLE: return store_number(o, i, value, shown, err);
    case ST_U64:
    case ST_SEED_BOTH:
      /* Doubles hold every integer up to 2^53 exactly; beyond that a seed
      ** must be given as text. */
      if (!isfinite(value) || value < 0 || value != floor(value) || value > 9007199254740992.0)
        return err_set(err, "'%s' must be a whole number in [0, 2^53] (larger seeds as text), got %s",
                       s->name, shown);
      store_seed(o, i, (uint64_t)value);
      return 0;
    case ST_TIE:
      if (!isfinite(value) || value != floor(value) || value < 0 || value > s->max)
        return err_set(err, "'tie' must be tied, untied or a column count K in [0, %d], got %s",
                       (int)s->max, shown);
      snprintf(shown, sizeof shown, "%d", (int)value);
      return store_tie(o, s, shown, err);
    case ST_TEXT:
    case ST_CHOICE: return err_set(err, "'%s' takes text, not a number", s->name);
    case ST_BOOL: return err_set(err, "'%s' takes true or false, not a number", s->name);
  }
  return unknown(s->name, err);
}

static int is_given(const RunOptions *o, int i) { return i >= 0 && (o->given & (UINT64_C(1) << i)); }

/* Whether a key given explicitly replaces recipe key 'i' (then at its default). */
static int yielded(const RunOptions *o, int i) {
  for (int y = 0; y < N_YIELDS; y++)
    if (strcmp(settings[i].name, yields_to[y][0]) == 0 && is_given(o, setting_index(yields_to[y][1]))) return 1;
  return 0;
}

/* Whether giving setting 'i' changes what a recipe fills. */
static int steers_recipe(int i) {
  if (strcmp(settings[i].name, "recipe") == 0) return 1;
  for (int y = 0; y < N_YIELDS; y++)
    if (strcmp(settings[i].name, yields_to[y][1]) == 0) return 1;
  return 0;
}

/* Each key a recipe may set and not given explicitly takes the value of
** the recipe in force, or its default. */
static void apply_recipe(RunOptions *o) {
  const RecipePair *in_force = recipes[o->recipe];
  for (int r = 0; r < N_RECIPES; r++)
    for (int p = 0; recipes[r] && recipes[r][p][0]; p++) {
      const char *key = recipes[r][p][0], *value = NULL;
      int i = setting_index(key);
      if (is_given(o, i)) continue;
      for (int q = 0; in_force && in_force[q][0] && !yielded(o, i); q++)
        if (strcmp(in_force[q][0], key) == 0) value = in_force[q][1];
      set_text(o, i, value ? value : settings[i].deflt, NULL);
    }
}

/* After setting 'i' by hand: mark it given, and fill a recipe's keys. */
static int given(RunOptions *o, int i) {
  o->given |= UINT64_C(1) << i;
  if (steers_recipe(i)) apply_recipe(o);
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
  const Slot *sl = slot_of(i);
  int n = 0;
  switch (sl->store) {
    case ST_TEXT: n = snprintf(buf, cap, "%s", (const char *)cfield(o, sl)); break;
    case ST_INT: n = snprintf(buf, cap, "%d", *(const int *)cfield(o, sl)); break;
    case ST_DOUBLE: {
      char num[NUM_TEXT_MAX];
      n = snprintf(buf, cap, "%s", num_format(num, sizeof num, *(const double *)cfield(o, sl)));
      break;
    }
    case ST_U64: n = snprintf(buf, cap, "%llu", (unsigned long long)*(const uint64_t *)cfield(o, sl)); break;
    case ST_SEED_BOTH: n = snprintf(buf, cap, "%llu", (unsigned long long)o->init_seed); break;
    case ST_CHOICE: n = snprintf(buf, cap, "%s", sl->choices[*(const int *)cfield(o, sl)]); break;
    case ST_BOOL: n = snprintf(buf, cap, "%s", *(const int *)cfield(o, sl) ? "true" : "false"); break;
    case ST_TIE: {
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

static double machine_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

int run_options_check(const RunOptions *o, Err *err) {
  const ModelConfig *c = &o->model;
  if (c->tie_k < 0 || c->tie_k > c->dim)
    return err_set(err, "'tie' K (%d) must be at most dim (%d)", c->tie_k, c->dim);
  Schedule sched = run_options_schedule(o);
  if (schedule_check(&sched, err) < 0) return -1;
  if (o->nesterov && !(o->momentum > 0))
    return err_set(err, "'nesterov' needs 'momentum' above 0 (got %g)", o->momentum);
  if (config_validate(c, err) < 0) return -1;
  double need = (double)run_memory_bytes(o), have = machine_memory();
  if (have > 0 && need > have)
    return err_set(err,
                   "a run of vocab %d, dim %d, layers %d, ctx %d, batch %d needs about %.1f GiB, "
                   "more than this machine's %.1f GiB (lower 'batch', 'ctx', 'dim' or 'vocab')",
                   c->vocab, c->dim, c->layers, c->ctx, c->batch, need / 1073741824.0,
                   have / 1073741824.0);
  return 0;
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
