/*
** cli.c -- the command line. Program options live in one table (name,
** argument, help, what it sets); every setting of a run (lab_settings) is
** also an option, '--dim 128' or '--dim=128' (dashes for underscores:
** '--decay-steps 100' or '--decay_steps 100'; booleans '--decay-all',
** '--no-decay-all', '--decay-all=false'), so the command line, Lua and the UI
** can never disagree about names, ranges or defaults.
**
** Each option names the modes that use it (the lab, a script, the built-in
** loop, the comparison, the benchmarks, a replay), a run setting in its row
** of the settings table; given to any other mode it is refused, naming
** both, so no option is ever silently ignored.
*/
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"
#include "app/cli.h"
#include "luaapi/luaapi.h"

#define HELP_WIDTH 80
#define HELP_INDENT 27   /* where the help text of an option starts */

/* The modes of the program, as the options see them: one bit each, the
** settings table's (lab/settings.h), which says which modes take a setting. */
enum {
  USE_LAB = IN_LAB,
  USE_LAB_SCRIPT = IN_LAB_SCRIPT,
  USE_SCRIPT = IN_SCRIPT,
  USE_LOOP = IN_LOOP,
  USE_COMPARE = IN_COMPARE,
  USE_BENCH = IN_BENCH,
  USE_BENCH_LAB = IN_BENCH_LAB,
  USE_REPLAY = IN_REPLAY,
  USE_INSPECT = IN_INSPECT,
  USE_ANY = IN_ANY,
  USE_SCRIPTS = IN_SCRIPTS,
  USE_SCREEN = USE_LAB | USE_LAB_SCRIPT,
  USE_BENCHES = USE_BENCH | USE_BENCH_LAB,
  USE_RUNS = IN_RUNS,
};

static const struct {
  unsigned use;
  const char *name;    /* as the messages say it */
  const char *word;    /* as --list-options says it */
} mode_names[] = {
  {USE_LAB, "the interactive lab", "lab"},
  {USE_LAB_SCRIPT, "the lab with a script", "lab-script"},
  {USE_SCRIPT, "a --headless script", "script"},
  {USE_LOOP, "the built-in --headless loop", "loop"},
  {USE_COMPARE, "--compare paper", "compare"},
  {USE_BENCH, "--bench", "bench"},
  {USE_BENCH_LAB, "--bench --instruments", "bench-instruments"},
  {USE_REPLAY, "--replay", "replay"},
  {USE_INSPECT, "--inspect", "inspect"},
};

#define N_MODES (sizeof mode_names / sizeof mode_names[0])

typedef int (*CliHandler)(CliOptions *o, const char *value, Err *err);

typedef struct CliOption {
  const char *name;
  char short_name;    /* '-h', or 0 */
  const char *arg;    /* NULL for a flag */
  CliHandler set;
  unsigned use;       /* the modes that take it */
  const char *help;
} CliOption;

static int parse_count(const char *name, const char *v, long lo, long hi, long *out, Err *err) {
  char *end;
  long n = strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || n < lo || n > hi)
    return err_set(err, "--%s takes a whole number in [%ld, %ld], got '%s'", name, lo, hi, v);
  *out = n;
  return 0;
}

static int set_headless(CliOptions *o, const char *v, Err *e) { o->headless = 1; return 0; }
static int set_bench(CliOptions *o, const char *v, Err *e) { o->bench = 1; return 0; }
static int set_help(CliOptions *o, const char *v, Err *e) { o->mode = MODE_HELP; return 0; }
static int set_version(CliOptions *o, const char *v, Err *e) { o->mode = MODE_VERSION; return 0; }
static int set_resume(CliOptions *o, const char *v, Err *e) { o->resume = 1; return 0; }
static int set_sandbox(CliOptions *o, const char *v, Err *e) { o->sandbox = 1; return 0; }
static int set_trust(CliOptions *o, const char *v, Err *e) { o->trust = 1; return 0; }
static int set_no_init(CliOptions *o, const char *v, Err *e) { o->no_init = 1; return 0; }
static int set_ascii(CliOptions *o, const char *v, Err *e) { o->ascii = 1; return 0; }
static int set_theme(CliOptions *o, const char *v, Err *e) {
  static const char *const themes[] = {"dark", "light", "mono"};
  for (size_t i = 0; i < sizeof themes / sizeof themes[0]; i++)
    if (strcmp(v, themes[i]) == 0) return o->theme = themes[i], 0;
  return err_set(e, "--theme takes dark, light or mono, got '%s'", v);
}
static int set_instruments(CliOptions *o, const char *v, Err *e) { o->instruments = 1; return 0; }
static int set_forward(CliOptions *o, const char *v, Err *e) { o->forward = 1; return 0; }
static int set_align(CliOptions *o, const char *v, Err *e) { o->align = 1; return 0; }

static int set_steps(CliOptions *o, const char *v, Err *e) {
  long n = 0;
  if (parse_count("steps", v, 1, 100000000, &n, e) < 0) return -1;
  o->steps = (int)n;
  return 0;
}

static int set_bench_warmup(CliOptions *o, const char *v, Err *e) {
  long n = 0;
  if (parse_count("bench-warmup", v, 0, 1000000, &n, e) < 0) return -1;
  o->bench_warmup = (int)n;
  return 0;
}

static int set_print_every(CliOptions *o, const char *v, Err *e) {
  long n = 0;
  if (parse_count("print-every", v, 1, 100000000, &n, e) < 0) return -1;
  o->print_every = (int)n;
  return 0;
}

static int set_lua_mem(CliOptions *o, const char *v, Err *e) {
  long n = 0;
  if (parse_count("lua-mem", v, 1, 1 << 20, &n, e) < 0) return -1;
  o->lua_mem_mb = n;
  return 0;
}

static int set_record(CliOptions *o, const char *v, Err *e) {
  o->record = v;
  return 0;
}

static int set_journal(CliOptions *o, const char *v, Err *e) {
  o->journal = v;
  return 0;
}

static int set_replay(CliOptions *o, const char *v, Err *e) {
  if (!*v) return err_set(e, "--replay takes a journal's file name, got an empty one");
  o->replay = v;
  return 0;
}

static int set_compare(CliOptions *o, const char *v, Err *e) {
  if (strcmp(v, "paper") != 0)
    return err_set(e, "--compare knows only 'paper', got '%s'", v);
  o->compare = v;
  o->headless = 1;
  return 0;
}

static int set_inspect(CliOptions *o, const char *v, Err *e) {
  if (!*v) return err_set(e, "--inspect takes a model folder or .safetensors file, got an empty name");
  o->inspect = v;
  return 0;
}

static int set_against(CliOptions *o, const char *v, Err *e) {
  if (!*v) return err_set(e, "--against takes a model folder or .safetensors file, got an empty name");
  o->against = v;
  return 0;
}

static int set_json(CliOptions *o, const char *v, Err *e) { o->json = 1; return 0; }

static int set_list_options(CliOptions *o, const char *v, Err *e) { o->mode = MODE_LIST_OPTIONS; return 0; }

static const CliOption cli_options[] = {
  {"headless", 0, NULL, set_headless, USE_SCRIPT | USE_LOOP | USE_COMPARE,
   "run SCRIPT.lua (or the built-in loop) with no UI"},
  {"bench", 0, NULL, set_bench, USE_BENCHES, "time training steps, print one JSON line"},
  {"instruments", 0, NULL, set_instruments, USE_BENCH_LAB,
   "--bench: whole lab steps with every instrument at its interval"},
  {"forward", 0, NULL, set_forward, USE_BENCH, "--bench: forward passes alone (logits and loss, no backward)"},
  {"align", 0, NULL, set_align, USE_BENCH,
   "--bench: the Table 1 alignment metrics and their baselines on two random [vocab,dim] matrices"},
  {"steps", 0, "N", set_steps, USE_LOOP | USE_COMPARE | USE_BENCHES,
   "steps of the built-in headless loop (default 200), --bench (20; 100 with --instruments; with --align "
   "the calls per metric, 3); --compare: paper.lua's steps=N (default 1000)"},
  {"bench-warmup", 0, "N", set_bench_warmup, USE_BENCHES,
   "--bench: steps run before timing (default 5; with --align, untimed calls of each metric, 0)"},
  {"print-every", 0, "N", set_print_every, USE_LOOP, "built-in headless loop: a line every N steps (default 10)"},
  {"compare", 0, "paper", set_compare, USE_COMPARE,
   "headless: runs paper.lua (the paper's findings across seeds) with the run options given"},
  {"resume", 0, NULL, set_resume, USE_SCREEN, "reopen the runs autosaved when the lab last ended"},
  {"sandbox", 0, NULL, set_sandbox, USE_SCRIPTS | USE_COMPARE,
   "scripts of unknown origin: no os.execute, io.popen, C modules"},
  {"no-init", 0, NULL, set_no_init, USE_SCRIPTS | USE_COMPARE,
   "do not run $XDG_CONFIG_HOME/tielab/init.lua (never run under --sandbox)"},
  {"ascii", 0, NULL, set_ascii, USE_SCREEN, "draw graphs with ASCII only"},
  {"theme", 0, "dark|light|mono", set_theme, USE_SCREEN,
   "colours for a dark or light background, or none (default: from COLORFGBG, else dark)"},
  {"lua-mem", 0, "MIB", set_lua_mem, USE_SCRIPTS | USE_COMPARE | USE_REPLAY,
   "cap on the Lua heap (default 1024; a replay takes the lower of this and the journal's)"},
  {"record", 0, "FILE.cast", set_record, USE_SCREEN,
   "write the screen to an asciicast v2 file (asciinema plays it)"},
  {"journal", 0, "FILE", set_journal, USE_SCREEN, "write every action that changes the lab, for --replay"},
  {"replay", 0, "FILE", set_replay, USE_REPLAY, "play a journal again with no UI; check the final figures"},
  {"trust", 0, NULL, set_trust, USE_REPLAY,
   "--replay as recorded: in its folder, sandboxed only if it was (a journal is code)"},
  {"inspect", 0, "MODEL", set_inspect, USE_INSPECT,
   "describe a released model (a folder or .safetensors file) and its embedding; --corpus: norms against "
   "token frequency"},
  {"against", 0, "MODEL", set_against, USE_INSPECT,
   "--inspect: the paper's Table 1, MODEL's input matrix against this one's E_in and E_out"},
  {"json", 0, NULL, set_json, USE_INSPECT, "--inspect: end with one JSON line"},
  {"help", 'h', NULL, set_help, USE_ANY, "this text"},
  {"version", 'V', NULL, set_version, USE_ANY, "print the version"},
  {"list-options", 0, NULL, set_list_options, 0, NULL},   /* for the shell's completion; not in --help */
};

#define N_CLI_OPTIONS (sizeof cli_options / sizeof cli_options[0])

static const CliOption *find_option(const char *name) {
  for (size_t i = 0; i < N_CLI_OPTIONS; i++)
    if (strcmp(cli_options[i].name, name) == 0) return &cli_options[i];
  return NULL;
}

static const char *setting_type_arg(SettingType t) {
  static const char *names[] = {[SET_INT] = "N", [SET_NUMBER] = "X", [SET_STRING] = "TEXT",
                                [SET_TIE] = "tied|untied|K", [SET_SEED] = "N", [SET_BOOL] = NULL};
  return names[t];
}

static void undashed(char *name) {
  for (char *p = name; *p; p++)
    if (*p == '-') *p = '_';
}

/* The setting whose option is 'given', dashes or underscores alike. */
static const Setting *find_setting(const char *given) {
  char want[64], option[64];
  int n;
  const Setting *s = lab_settings(&n);
  snprintf(want, sizeof want, "%s", given);
  undashed(want);
  for (int i = 0; i < n; i++) {
    setting_cli_name(&s[i], option, sizeof option);
    undashed(option);
    if (strcmp(option, want) == 0) return &s[i];
  }
  return NULL;
}

/* The words of 'text' from column 'col', wrapped to HELP_WIDTH under 'indent'. */
static void wrap_words(FILE *f, int col, int indent, const char *text) {
  int first = 1;
  for (const char *p = text; *p;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (len == 0) break;
    if (!first && col + 1 + (int)len > HELP_WIDTH) col = fprintf(f, "\n%*s", indent, "") - 1;
    else if (!first) col += fprintf(f, " ");
    col += fprintf(f, "%.*s", (int)len, p);
    first = 0;
    p += len;
  }
  fputc('\n', f);
}

/* 'text' after 'head', in the column at HELP_INDENT (below 'head' when it is too long). */
static void print_wrapped(FILE *f, const char *head, const char *text) {
  int col = fprintf(f, "  %s", head);
  if (col >= HELP_INDENT - 1) {
    fputc('\n', f);
    col = 0;
  }
  col += fprintf(f, "%*s", HELP_INDENT - col, "");
  wrap_words(f, col, HELP_INDENT, text);
}

/* The environment and the files, as --help and tielab(1) name them. */
static const char *const environment[][2] = {
  {"NO_COLOR", "set and not empty: no colours"},
  {"COLORFGBG", "the terminal's colours, for the default --theme"},
  {"TERM", "the terminal; dumb (or no terminal): the line REPL instead of the screen"},
  {"COLUMNS, LINES", "the screen's size where the terminal does not say"},
  {"SHELL", "named in the header of a --record cast"},
  {"HOME", "where the XDG folders are when their variables are unset"},
  {"XDG_STATE_HOME", "autosaved runs and the REPL history (default ~/.local/state)"},
  {"XDG_CACHE_HOME", "trained tokenizers, reused by later runs (default ~/.cache)"},
  {"XDG_CONFIG_HOME", "tielab/init.lua, run at start (default ~/.config)"},
  {"XDG_DATA_HOME", "tielab/: scripts found by name (default ~/.local/share)"},
  {"OPENBLAS_NUM_THREADS", "threads of the matrix products (OpenBLAS's own)"},
  {"TMPDIR", "where a checkpoint's released-model tokenizer is unpacked to be read (default /tmp)"},
};

static const char *const files[][2] = {
  {"$XDG_STATE_HOME/tielab/autosave/", "the runs kept when the lab or an interrupted loop ends (--resume)"},
  {"$XDG_STATE_HOME/tielab/history", "the REPL's history"},
  {"$XDG_CACHE_HOME/tielab/bpe-*.bin", "tokenizers, by corpus and vocabulary size"},
  {"$XDG_CONFIG_HOME/tielab/init.lua", "Lua run when the lab or a script starts, unless --no-init or --sandbox"},
};

/* The help of run setting 's', with its default unless the help says it
** already or there is none. */
static void print_setting(FILE *f, const Setting *s) {
  char head[64], name[48], help[512], arg[48] = "";
  const char *const *choices = lab_setting_choices(s->name);
  for (int c = 0; choices && choices[c]; c++)
    if (choices[c][0]) snprintf(arg + strlen(arg), sizeof arg - strlen(arg), "%s%s", arg[0] ? "|" : "", choices[c]);
  setting_cli_name(s, name, sizeof name);
  if (s->type == SET_BOOL) snprintf(head, sizeof head, "--[no-]%s", name);
  else snprintf(head, sizeof head, "--%s %s", name, arg[0] ? arg : setting_type_arg(s->type));
  if (s->deflt[0] && !strstr(s->help, "default")) snprintf(help, sizeof help, "%s (default %s)", s->help, s->deflt);
  else snprintf(help, sizeof help, "%s", s->help);
  print_wrapped(f, head, help);
}

void cli_usage(FILE *f) {
  int n;
  const Setting *s = lab_settings(&n);
  fprintf(f,
          "usage: tielab [OPTIONS] [SCRIPT.lua [ARGS...]]      the interactive lab\n"
          "       tielab --headless [OPTIONS] [SCRIPT.lua [ARGS...]]\n"
          "       tielab --headless --compare paper [OPTIONS]\n"
          "       tielab --bench [--instruments | --forward | --align] [OPTIONS]\n"
          "       tielab --replay JOURNAL [--trust]\n\n");
  wrap_words(f, 0, 0,
                  "Each mode takes the options it uses and refuses the others. A script's arguments "
                  "follow its name, as key=value, --key=value or --key value; '--' ends tielab's own "
                  "options.");
  fprintf(f, "\nProgram options:\n");
  for (size_t i = 0; i < N_CLI_OPTIONS; i++) {
    const CliOption *c = &cli_options[i];
    char head[64];
    if (!c->help) continue;
    char short_name[8] = "";
    if (c->short_name) snprintf(short_name, sizeof short_name, "-%c, ", c->short_name);
    snprintf(head, sizeof head, "%s--%s%s%s", short_name, c->name, c->arg ? " " : "", c->arg ? c->arg : "");
    print_wrapped(f, head, c->help);
  }
  fprintf(f, "\nRun options (also keys of lab.run{...} in Lua; '--in-scale' or '--in_scale'):\n");
  for (int i = 0; i < n; i++) print_setting(f, &s[i]);
  fprintf(f, "\nEnvironment:\n");
  for (size_t i = 0; i < sizeof environment / sizeof environment[0]; i++)
    print_wrapped(f, environment[i][0], environment[i][1]);
  fprintf(f, "\nFiles:\n");
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    fprintf(f, "  %s\n", files[i][0]);
    print_wrapped(f, "", files[i][1]);
  }
  fputc('\n', f);
  wrap_words(f, 0, 0,
                  "Exit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted. "
                  "Documentation: README.md and docs/.");
}

static void list_modes(FILE *f, unsigned use) {
  const char *sep = "";
  for (size_t m = 0; m < N_MODES; m++)
    if (use & mode_names[m].use) fprintf(f, "%s%s", sep, mode_names[m].word), sep = ",";
  if (!*sep) fputc('-', f);
}

static void list_choices(FILE *f, const char *const *choices) {
  const char *sep = "";
  for (int c = 0; choices && choices[c]; c++)
    if (choices[c][0]) fprintf(f, "%s%s", sep, choices[c]), sep = ",";
  if (!*sep) fputc('-', f);
}

#ifndef TIELAB_DATADIR
#define TIELAB_DATADIR "/usr/local/share/tielab"
#endif

void cli_list_options(FILE *f) {
  static const char *const themes[] = {"dark", "light", "mono", NULL}, *const paper[] = {"paper", NULL};
  static const char *const ties[] = {"tied", "untied", NULL};
  for (size_t i = 0; i < N_CLI_OPTIONS; i++) {
    const CliOption *c = &cli_options[i];
    if (!c->help) continue;
    fprintf(f, "--%s %s ", c->name, c->arg ? c->arg : "-");
    list_choices(f, c->set == set_theme ? themes : c->set == set_compare ? paper : NULL);
    fputc(' ', f);
    list_modes(f, c->use);
    fputc('\n', f);
  }
  int n;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++) {
    char name[48];
    setting_cli_name(&s[i], name, sizeof name);
    const char *const *choices = lab_setting_choices(s[i].name);
    if (s[i].type == SET_TIE) choices = ties;
    for (int no = 0; no <= (s[i].type == SET_BOOL); no++) {
      fprintf(f, "--%s%s %s ", no ? "no-" : "", name, s[i].type == SET_BOOL ? "-" : setting_type_arg(s[i].type));
      list_choices(f, s[i].type == SET_BOOL ? NULL : choices);
      fputc(' ', f);
      list_modes(f, s[i].modes);
      fputc('\n', f);
    }
  }
  fprintf(f, "@datadir %s\n", luaapi_data_dir());   /* where the installed scripts are */
}

/* Split '--name=value' or '--name value'; '*consumed' is 1 or 2 argv slots. */
static int take_value(int argc, char **argv, int i, const char *eq, const char *name,
                      const char **value, int *consumed, Err *err) {
  if (eq) {
    *value = eq + 1;
    *consumed = 1;
    return 0;
  }
  if (i + 1 >= argc) return err_set(err, "--%s needs a value", name);
  *value = argv[i + 1];
  *consumed = 2;
  return 0;
}

/* '--no-NAME' of a boolean setting NAME, or NULL. */
static const Setting *negated(const char *name) {
  const Setting *s = strncmp(name, "no_", 3) == 0 ? find_setting(name + 3) : NULL;
  return s && s->type == SET_BOOL ? s : NULL;
}

/* Whether a boolean option is followed by true or false, which would
** otherwise be taken for the script's name ('--decay-all false'). */
static int truth_follows(int argc, char **argv, int i) {
  return i + 1 < argc && (strcmp(argv[i + 1], "true") == 0 || strcmp(argv[i + 1], "false") == 0);
}

/* A run setting: '--NAME VALUE', '--NAME=VALUE'; a boolean '--NAME' alone is
** true, '--no-NAME' false. 'name' is the option as given, '=' cut off. */
static int parse_setting(int argc, char **argv, int i, const char *given, const char *eq, CliOptions *o,
                         int *consumed, Err *err) {
  char name[64];
  snprintf(name, sizeof name, "%s", given);
  undashed(name);
  const Setting *s = find_setting(name), *no = s ? NULL : negated(name);
  const char *value = NULL;
  if (!s && !no) return err_set(err, "unknown option '--%s' (see tielab --help)", given);
  if (no) {
    if (eq) return err_set(err, "--%s takes no value", given);
    if (truth_follows(argc, argv, i))
      return err_set(err, "--%s takes no value; use --%s=%s", given, given + 3, argv[i + 1]);
    *consumed = 1;
    s = no;
    value = "false";
  } else if (s->type == SET_BOOL && !eq) {
    if (truth_follows(argc, argv, i))
      return err_set(err, "--%s takes no value; use --%s=%s or --%s%s", given, given, argv[i + 1],
                     strcmp(argv[i + 1], "false") == 0 ? "no-" : "", given);
    *consumed = 1;
    value = "true";
  } else if (take_value(argc, argv, i, eq, given, &value, consumed, err) < 0) {
    return -1;
  }
  if (run_options_set_text(&o->run, s->name, value, err) < 0) return err_prefix(err, "--%s", given);
  return 0;
}

/* Whether setting 'id' was given explicitly. */
static int setting_given(const RunOptions *o, SettingId id) { return (o->given >> id) & 1; }

/* --warmup is the learning rate's warmup; bench's untimed steps were once
** also --warmup, so alone with --bench it is taken for those and refused. */
static const char *mode_name(unsigned use);

static int check_bench_warmup(const CliOptions *o, unsigned mode, Err *err) {
  const RunOptions *r = &o->run;
  if (o->mode != MODE_BENCH || !setting_given(r, SETTING_WARMUP) || setting_given(r, SETTING_SCHEDULE) ||
      setting_given(r, SETTING_RECIPE))
    return 0;
  return err_set(err, "%s: --warmup is the learning rate's warmup and needs --schedule or --recipe; "
                      "the untimed steps before timing are --bench-warmup N", mode_name(mode));
}

/* --forward and --align each choose what --bench times, one at a time;
** --align makes no untimed calls unless --bench-warmup asks (each of its
** calls is a whole comparison, a minute at a released model's size). */
static int option_given(const CliOptions *o, const char *name) {
  const CliOption *c = find_option(name);
  return c && (o->options_given >> (c - cli_options)) & 1;
}

static int check_bench_kind(CliOptions *o, Err *err) {
  if (o->forward && o->align) return err_set(err, "--bench times --forward or --align, not both");
  o->align_warmup = option_given(o, "bench-warmup") ? o->bench_warmup : 0;
  return 0;
}

static int parse_one(int argc, char **argv, int i, CliOptions *o, int *consumed, Err *err) {
  char name[64];
  const char *arg = argv[i] + 2;
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  if (len == 0 || len >= sizeof name) return err_set(err, "unknown option '%s'", argv[i]);
  memcpy(name, arg, len);
  name[len] = '\0';

  const CliOption *c = find_option(name);
  const char *value = NULL;
  if (c) {
    o->options_given |= 1ul << (c - cli_options);
    if (!c->arg) {
      if (eq) return err_set(err, "--%s takes no value", name);
      *consumed = 1;
      return c->set(o, NULL, err);
    }
    if (take_value(argc, argv, i, eq, name, &value, consumed, err) < 0) return -1;
    return c->set(o, value, err);
  }
  return parse_setting(argc, argv, i, name, eq, o, consumed, err);
}

void cli_print_given(FILE *f, const RunOptions *o) {
  int n;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++) {
    char value[1100];
    if ((o->given >> i & 1) && run_options_get_text(o, s[i].name, value, sizeof value, NULL) == 0)
      fprintf(f, " %s=%s", s[i].name, value);
  }
}

/* "--NAME=VALUE" in a new string, or NULL. */
static char *option_word(const char *name, const char *value) {
  size_t n = strlen(name) + strlen(value) + 4;
  char *w = malloc(n);
  if (w) snprintf(w, n, "--%s=%s", name, value);
  return w;
}

/* A run setting's value as a task must be given it: a corpus named
** relative to this process's folder, made absolute (a task may run from
** any folder). */
static void carried_value(const Setting *s, const char *value, char *out, size_t cap) {
  char cwd[4096];
  if (s != lab_setting(SETTING_CORPUS) || !value[0] || value[0] == '/' || !getcwd(cwd, sizeof cwd))
    snprintf(out, cap, "%s", value);
  else
    snprintf(out, cap, "%s/%s", cwd, value);
}

char **cli_task_options(const CliOptions *o) {
  int n;
  const Setting *s = lab_settings(&n);
  char **words = calloc((size_t)n + 3, sizeof *words), value[1100], word[4096 + sizeof value];
  int k = 0, ok = words != NULL;
  if (ok && o->no_init) ok = (words[k++] = strdup("--no-init")) != NULL;
  if (ok && (o->options_given >> (find_option("lua-mem") - cli_options) & 1)) {
    snprintf(value, sizeof value, "%ld", o->lua_mem_mb);
    ok = (words[k++] = option_word("lua-mem", value)) != NULL;
  }
  for (int i = 0; i < n && ok; i++) {
    char name[48];
    if (!(o->run.given >> i & 1) || run_options_get_text(&o->run, s[i].name, value, sizeof value, NULL) < 0) continue;
    carried_value(&s[i], value, word, sizeof word);
    setting_cli_name(&s[i], name, sizeof name);
    ok = (words[k++] = option_word(name, word)) != NULL;
  }
  if (!ok) cli_words_free(words);
  return ok ? words : NULL;
}

void cli_words_free(char **words) {
  for (int i = 0; words && words[i]; i++) free(words[i]);
  free(words);
}

/* '-h' or '-V': the one-letter names of a few flags. */
static int parse_short(const char *arg, CliOptions *o, Err *err) {
  for (size_t i = 0; i < N_CLI_OPTIONS; i++)
    if (cli_options[i].short_name && arg[1] == cli_options[i].short_name && arg[2] == '\0') {
      o->options_given |= 1ul << i;
      return cli_options[i].set(o, NULL, err);
    }
  return err_set(err, "unknown option '%s' (see tielab --help)", arg);
}

/* The mode the options chose, as one of the USE_ bits. */
static unsigned choose_mode(CliOptions *o) {
  if (o->replay) return o->mode = MODE_REPLAY, USE_REPLAY;
  if (o->inspect) return o->mode = MODE_INSPECT, USE_INSPECT;
  if (o->bench) return o->mode = MODE_BENCH, o->instruments ? USE_BENCH_LAB : USE_BENCH;
  if (o->headless) return o->mode = MODE_HEADLESS, o->compare ? USE_COMPARE : o->script ? USE_SCRIPT : USE_LOOP;
  return o->mode = MODE_UI, o->script ? USE_LAB_SCRIPT : USE_LAB;
}

static const char *mode_name(unsigned use) {
  for (size_t m = 0; m < N_MODES; m++)
    if (mode_names[m].use == use) return mode_names[m].name;
  return "this mode";
}

/* The names of the modes in 'use', "a, b and c", into 'buf'. */
static void mode_list(unsigned use, char *buf, size_t cap) {
  size_t n = 0, k = 0;
  for (size_t m = 0; m < N_MODES; m++) n += (use & mode_names[m].use) != 0;
  buf[0] = '\0';
  for (size_t m = 0; m < N_MODES; m++)
    if (use & mode_names[m].use) text_list_add(buf, cap, k++, n, " and ", mode_names[m].name);
}

/* "--tie-merge is not used by --compare paper (only by ...)"; a long list
** is said by the modes it leaves out. */
static int refuse(const char *option, unsigned mode, unsigned takes, Err *err) {
  char list[256];
  unsigned others = USE_ANY & ~takes & ~mode;
  int most = __builtin_popcount(takes) > (int)N_MODES / 2;
  mode_list(most ? others : takes, list, sizeof list);
  const char *hint = mode & (USE_SCRIPT | USE_LAB_SCRIPT) && !(takes & (USE_SCRIPT | USE_LAB_SCRIPT))
                       ? "; a script's own arguments follow its name"
                       : "";
  if (most && !others) return err_set(err, "--%s is not used by %s%s", option, mode_name(mode), hint);
  return err_set(err, "--%s is not used by %s (%s %s)%s", option, mode_name(mode), most ? "nor by" : "only by",
                 list, hint);
}

/* Every option given must be one that 'mode' uses. */
static int check_uses(const CliOptions *o, unsigned mode, Err *err) {
  for (size_t i = 0; i < N_CLI_OPTIONS; i++)
    if ((o->options_given >> i & 1) && !(cli_options[i].use & mode))
      return refuse(cli_options[i].name, mode, cli_options[i].use, err);
  int n;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++) {
    char name[48];
    if (!(o->run.given >> i & 1)) continue;
    setting_cli_name(&s[i], name, sizeof name);
    if (!(s[i].modes & mode)) return refuse(name, mode, s[i].modes, err);
  }
  return 0;
}

/* --corpus-max caps the corpus read: where the runs are made from the
** command line alone, it goes with a --corpus (a script may name one). */
static int check_corpus_max(const CliOptions *o, unsigned mode, Err *err) {
  if (!setting_given(&o->run, SETTING_CORPUS_MAX) || o->run.corpus[0] || (mode & (USE_SCRIPTS | USE_REPLAY))) return 0;
  return err_set(err, "--corpus-max is not used by %s without --corpus (no corpus file is read)",
                 mode_name(mode));
}

int cli_parse(int argc, char **argv, CliOptions *o, Err *err) {
  memset(o, 0, sizeof *o);
  o->mode = MODE_UI;
  o->steps = 0;
  o->bench_warmup = 5;
  o->print_every = 10;
  o->lua_mem_mb = 1024;
  run_options_default(&o->run);
  o->argc = argc;
  o->argv = argv;
  int i = 1, ended = 0;
  while (i < argc) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      ended = 1;
      break;
    }
    if (a[0] == '-' && a[1] && a[1] != '-') {
      if (parse_short(a, o, err) < 0) return -1;
      i++;
      continue;
    }
    if (a[0] != '-' || a[1] != '-') break;   /* the script and its arguments */
    int consumed = 1;
    if (parse_one(argc, argv, i, o, &consumed, err) < 0) return -1;
    i += consumed;
  }
  if (i < argc) {
    if (argv[i][0] == '-' && !ended) return err_set(err, "unknown option '%s' (options start with --)", argv[i]);
    o->script = argv[i];
    o->script_argc = argc - i - 1;
    o->script_argv = argv + i + 1;
  }
  if (o->mode == MODE_HELP || o->mode == MODE_VERSION || o->mode == MODE_LIST_OPTIONS) return 0;
  unsigned mode = choose_mode(o);
  if (o->mode == MODE_BENCH && o->script)
    return err_set(err, "--bench takes no script ('%s')", o->script);
  if (check_bench_kind(o, err) < 0) return -1;
  if (check_bench_warmup(o, mode, err) < 0) return -1;
  if (o->mode == MODE_REPLAY && o->script)
    return err_set(err, "--replay takes no script: the journal names it ('%s')", o->script);
  if (o->mode == MODE_INSPECT && o->script)
    return err_set(err, "--inspect takes no script ('%s')", o->script);
  if (o->compare && o->script)
    return err_set(err, "--compare paper takes no script ('%s')", o->script);
  if (check_uses(o, mode, err) < 0) return -1;
  if (check_corpus_max(o, mode, err) < 0) return -1;
  if (run_options_check(&o->run, err) < 0) return -1;
  /* A run the command line makes itself must fit: a usage error, said
  ** before a lab or a screen exists. A script's runs are checked as it
  ** makes them; --bench --align makes none (it checks its matrices). */
  unsigned makes_run = USE_LAB | USE_LOOP | USE_COMPARE | USE_BENCH | USE_BENCH_LAB;
  if (!(mode & makes_run) || (o->mode == MODE_BENCH && o->align)) return 0;
  return lab_check_memory(NULL, &o->run, 0, err);
}
