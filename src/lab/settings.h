/*
** settings.h -- the table of a run's settings: one record per setting with
** every column its clients read (type, range, default, help, the modes that
** take it, its group, whether it may change live or changes the memory a
** run holds, and where it lives in a RunOptions). The command line, Lua
** ('lab.run', 'r:set'), checkpoints, the journal, the bench and the exports
** all read this table, and name a setting in code by its SettingId.
*/
#ifndef TIELAB_LAB_SETTINGS_H
#define TIELAB_LAB_SETTINGS_H

#include <stddef.h>

typedef enum SettingType { SET_INT, SET_NUMBER, SET_STRING, SET_TIE, SET_SEED, SET_BOOL } SettingType;

/* Bounds of a range that are themselves refused: beta1 in [0, 1). */
enum { OPEN_MIN = 1, OPEN_MAX = 2 };

/* Every setting, in the table's order: RunOptions.given has bit 'id'. */
typedef enum SettingId {
  SETTING_NAME, SETTING_VOCAB, SETTING_DIM, SETTING_LAYERS, SETTING_HEADS, SETTING_CTX, SETTING_BATCH,
  SETTING_TIE, SETTING_TIE_MERGE, SETTING_SEED, SETTING_INIT_SEED, SETTING_DATA_SEED, SETTING_CORPUS_SEED,
  SETTING_LR, SETTING_IN_SCALE, SETTING_OUT_SCALE, SETTING_CORPUS, SETTING_CORPUS_MAX, SETTING_LENS_EVERY,
  SETTING_EVAL_EVERY, SETTING_ALIGN_EVERY, SETTING_PARTNER, SETTING_THREADS,
  SETTING_WARMUP, SETTING_WARMUP_START, SETTING_SCHEDULE, SETTING_DECAY_STEPS, SETTING_LR_MIN,
  SETTING_LR_MIN_RATIO, SETTING_EPS, SETTING_BETA1, SETTING_BETA2, SETTING_WEIGHT_DECAY, SETTING_DECAY_ALL,
  SETTING_OPTIMIZER, SETTING_MOMENTUM, SETTING_NESTEROV, SETTING_CLIP, SETTING_GRAD_SCALE,
  SETTING_EMB_LR_SCALE, SETTING_EMB_WARMUP, SETTING_RECIPE,
  N_SETTINGS
} SettingId;

/* What a setting is about; the bench reports the optimizer's and the
** scales' groups as the step's recipe. */
typedef enum SettingGroup {
  GROUP_RUN,           /* the run's name and threads */
  GROUP_SHAPE,         /* the model's shape */
  GROUP_TIE,           /* embedding tying */
  GROUP_SEEDS,
  GROUP_DATA,          /* the corpus */
  GROUP_OPTIMIZER,     /* the learning rate, its schedule, the optimizer */
  GROUP_SCALES,        /* factors on the embeddings' gradients */
  GROUP_INSTRUMENTS,   /* the lens, the evaluation, the alignment */
  GROUP_RECIPE,        /* presets of the others */
  N_GROUPS
} SettingGroup;

/* The program's modes that take a setting from the command line. */
enum {
  IN_LAB = 1 << 0,          /* the interactive lab */
  IN_LAB_SCRIPT = 1 << 1,   /* the interactive lab running a script */
  IN_SCRIPT = 1 << 2,       /* --headless SCRIPT.lua */
  IN_LOOP = 1 << 3,         /* --headless: the built-in loop */
  IN_COMPARE = 1 << 4,      /* --compare paper */
  IN_BENCH = 1 << 5,        /* --bench */
  IN_BENCH_LAB = 1 << 6,    /* --bench --instruments */
  IN_REPLAY = 1 << 7,       /* --replay */
  IN_INSPECT = 1 << 8,      /* --inspect: released models, no run */
  IN_ANY = (1 << 9) - 1,
  IN_SCRIPTS = IN_LAB | IN_LAB_SCRIPT | IN_SCRIPT,   /* Lua runs and builds runs */
  IN_RUNS = IN_ANY & ~(IN_REPLAY | IN_INSPECT),   /* wherever runs are made from the command line */
};

/* How a value is stored in a RunOptions. */
typedef enum SettingStore {
  STORE_TEXT, STORE_INT, STORE_DOUBLE, STORE_U64, STORE_TIE, STORE_CHOICE, STORE_SEED_BOTH, STORE_BOOL
} SettingStore;

typedef struct Setting {
  const char *name;      /* the Lua key; dashed, the command line's option */
  const char *cli;       /* the option when it is not the dashed name, or NULL */
  SettingType type;
  double min, max;       /* numbers and ints */
  const char *deflt;     /* as text; booleans "true" / "false" */
  int live;              /* may change with run_set after creation */
  const char *help;
  unsigned open;         /* OPEN_MIN | OPEN_MAX, or 0: both bounds allowed */
  SettingGroup group;
  unsigned modes;        /* IN_...: the modes whose command line takes it */
  int memory;            /* changes the memory a run holds: a change is checked against it */
  int headline;          /* an export's settings line shows it first, at any value */
  int local;             /* may differ between the ranks of one job (how fast, or what a run is called) */
  int alias;             /* sets other settings and has no value of its own to keep */
  SettingStore store;
  size_t offset;         /* of the field in RunOptions */
  size_t size;           /* of a text field, with its NUL */
  const char *const *choices;   /* STORE_CHOICE: the names, by value, NULL-ended */
} Setting;

const Setting *lab_settings(int *n);
const Setting *lab_setting_find(const char *name);
const Setting *lab_setting(SettingId id);
/* The name of a setting, for code that must name one: setting_name(SETTING_LR). */
const char *setting_name(SettingId id);
/* The names a setting takes, NULL-ended ("" among them where the empty
** value is one), or NULL when it is not a choice. */
const char *const *lab_setting_choices(const char *name);
/* A type as Lua's lab.settings() says it: "integer", "tie", "boolean", ... */
const char *setting_type_name(SettingType t);
/* The setting's command-line option without its dashes ("in-scale"). */
void setting_cli_name(const Setting *s, char *out, size_t cap);

#endif
