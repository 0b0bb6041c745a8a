/*
** settings.c -- the table of run options: one row per option with its type,
** range, default, whether it may change while the run lives, and help text.
** The command line ('--dim 64'), Lua ('lab.run{dim=64}'), checkpoints and
** the UI all set options through this file, by name, so they can never
** disagree about what an option is called or what it accepts.
**
** Each row of 'settings' has a twin in 'slots' (same index) saying where
** the value lives in a RunOptions and how it is stored.
*/
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/num.h"
#include "../core/text.h"
#include "lab.h"

#define SEED_MAX 18446744073709551615.0   /* 2^64 - 1, as a double (for display) */
#define BIG 1e9

static const Setting settings[] = {
  {"name", SET_STRING, 0, 0, "", 0, "name of the run (default run1, run2, ...)"},
  {"vocab", SET_INT, 256, CONFIG_MAX_VOCAB, "1024", 0, "vocabulary size of the byte-level BPE tokenizer"},
  {"dim", SET_INT, 8, CONFIG_MAX_DIM, "128", 0, "model width d"},
  {"layers", SET_INT, 1, CONFIG_MAX_LAYERS, "4", 0, "transformer blocks"},
  {"heads", SET_INT, 1, CONFIG_MAX_HEADS, "4", 0, "attention heads (must divide dim)"},
  {"ctx", SET_INT, 2, CONFIG_MAX_CTX, "64", 0, "context length T"},
  {"batch", SET_INT, 1, CONFIG_MAX_BATCH, "16", 0, "sequences per step B"},
  {"tie", SET_TIE, 0, CONFIG_MAX_DIM, "tied", 1,
   "tied, untied, or K: the first K embedding columns shared"},
  {"tie_merge", SET_STRING, 0, 0, "in", 1,
   "when tying: which matrix survives, in, out or mean"},
  {"seed", SET_SEED, 0, SEED_MAX, "1", 0, "sets init_seed and data_seed unless given on their own"},
  {"init_seed", SET_SEED, 0, SEED_MAX, "1", 0, "seed of the initial weights"},
  {"data_seed", SET_SEED, 0, SEED_MAX, "1", 0, "seed of the batches and their order"},
  {"corpus_seed", SET_SEED, 0, SEED_MAX, "1", 0, "seed of the built-in synthetic language"},
  {"lr", SET_NUMBER, 0, 10, "1e-3", 1, "AdamW learning rate"},
  {"in_scale", SET_NUMBER, 0, 1e6, "1", 1, "factor on the input-side embedding gradient"},
  {"out_scale", SET_NUMBER, 0, 1e6, "1", 1, "factor on the output-side embedding gradient"},
  {"corpus", SET_STRING, 0, 0, "", 0, "text file to train on (empty: the built-in synthetic language)"},
  {"corpus_max", SET_INT, 1, 1 << 20, "1024", 0, "largest corpus file read, in MiB"},
  {"lens_every", SET_INT, 0, BIG, "20", 1, "train the tuned lens every N steps (0: off)"},
  {"eval_every", SET_INT, 0, BIG, "100", 1, "validation loss every N steps (0: off)"},
  {"align_every", SET_INT, 0, BIG, "100", 1, "alignment with the partner every N steps (0: off)"},
  {"partner", SET_STRING, 0, 0, "", 0, "untied run to align with (empty: the first that fits)"},
  {"threads", SET_INT, 1, 256, "2", 0, "threads for attention and elementwise work"},
};

#define N_SETTINGS ((int)(sizeof settings / sizeof settings[0]))

/* How a value is stored in a RunOptions. */
typedef enum Store { ST_TEXT, ST_INT, ST_DOUBLE, ST_U64, ST_TIE, ST_MERGE, ST_SEED_BOTH } Store;

typedef struct Slot {
  const char *name;   /* the same as settings[i].name: checked by 'slot_of' */
  Store store;
  size_t offset;      /* of the field in RunOptions */
  size_t size;        /* of a text field, with its NUL */
} Slot;

#define AT(f) offsetof(RunOptions, f)

static const Slot slots[] = {
  {"name", ST_TEXT, AT(name), sizeof ((RunOptions *)0)->name},
  {"vocab", ST_INT, AT(model.vocab), 0},
  {"dim", ST_INT, AT(model.dim), 0},
  {"layers", ST_INT, AT(model.layers), 0},
  {"heads", ST_INT, AT(model.heads), 0},
  {"ctx", ST_INT, AT(model.ctx), 0},
  {"batch", ST_INT, AT(model.batch), 0},
  {"tie", ST_TIE, AT(tie_text), sizeof ((RunOptions *)0)->tie_text},
  {"tie_merge", ST_MERGE, AT(tie_merge), 0},
  {"seed", ST_SEED_BOTH, 0, 0},
  {"init_seed", ST_U64, AT(init_seed), 0},
  {"data_seed", ST_U64, AT(data_seed), 0},
  {"corpus_seed", ST_U64, AT(corpus_seed), 0},
  {"lr", ST_DOUBLE, AT(lr), 0},
  {"in_scale", ST_DOUBLE, AT(in_scale), 0},
  {"out_scale", ST_DOUBLE, AT(out_scale), 0},
  {"corpus", ST_TEXT, AT(corpus), sizeof ((RunOptions *)0)->corpus},
  {"corpus_max", ST_INT, AT(corpus_max_mb), 0},
  {"lens_every", ST_INT, AT(lens_every), 0},
  {"eval_every", ST_INT, AT(eval_every), 0},
  {"align_every", ST_INT, AT(align_every), 0},
  {"partner", ST_TEXT, AT(partner), sizeof ((RunOptions *)0)->partner},
  {"threads", ST_INT, AT(threads), 0},
};

static const char *const merge_names[] = {[TIE_KEEP_IN] = "in", [TIE_KEEP_OUT] = "out", [TIE_MEAN] = "mean"};

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
  return err_set(err, "'%s' must be %s in [%.15g, %.15g], got %s", s->name, what, s->min, s->max, got);
}

static int store_number(RunOptions *o, int i, double v, const char *shown, Err *err) {
  const Setting *s = &settings[i];
  const Slot *sl = slot_of(i);
  if (!isfinite(v) || v < s->min || v > s->max) return range_error(s, shown, err);
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

static int store_merge(RunOptions *o, const char *text, Err *err) {
  for (int m = 0; m < (int)(sizeof merge_names / sizeof merge_names[0]); m++)
    if (strcmp(text, merge_names[m]) == 0) {
      o->tie_merge = (TieMerge)m;
      return 0;
    }
  return err_set(err, "'tie_merge' must be in, out or mean, got '%s'", text);
}

static int store_text(RunOptions *o, const Setting *s, const Slot *sl, const char *text, Err *err) {
  size_t n = strlen(text);
  if (n >= sl->size) return err_set(err, "'%s' is too long (%zu bytes, at most %zu)", s->name, n, sl->size - 1);
  /* Names and paths are shown on screens and written into files' lines. */
  if (text_needs_escape(text, n))
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

int run_options_set_text(RunOptions *o, const char *key, const char *value, Err *err) {
  int i = setting_index(key);
  if (i < 0) return unknown(key, err);
  const Setting *s = &settings[i];
  const Slot *sl = slot_of(i);
  char shown[80];
  snprintf(shown, sizeof shown, "'%.64s'", value);
  switch (sl->store) {
    case ST_TEXT: return store_text(o, s, sl, value, err);
    case ST_TIE: return store_tie(o, s, value, err);
    case ST_MERGE: return store_merge(o, value, err);
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
  return unknown(key, err);
}

int run_options_set_number(RunOptions *o, const char *key, double value, Err *err) {
  int i = setting_index(key);
  if (i < 0) return unknown(key, err);
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
    case ST_MERGE: return err_set(err, "'%s' takes text, not a number", s->name);
  }
  return unknown(key, err);
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
    case ST_MERGE: n = snprintf(buf, cap, "%s", merge_names[o->tie_merge]); break;
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
