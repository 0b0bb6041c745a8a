/*
** cli.c -- the command line. Program options live in one table (name,
** argument, help, what it sets); every setting of a run (lab_settings) is
** also an option, '--dim 128' or '--dim=128' (dashes for underscores:
** '--decay-steps 100' or '--decay_steps 100'; booleans '--decay-all',
** '--no-decay-all', '--decay-all=false'), so the command line, Lua and the UI
** can never disagree about names, ranges or defaults.
*/
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef int (*CliHandler)(CliOptions *o, const char *value, Err *err);

typedef struct CliOption {
  const char *name;
  const char *arg;    /* NULL for a flag */
  CliHandler set;
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

static int set_headless(CliOptions *o, const char *v, Err *e) { o->mode = MODE_HEADLESS; return 0; }
static int set_bench(CliOptions *o, const char *v, Err *e) { o->mode = MODE_BENCH; return 0; }
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
  o->replay = v;
  o->mode = MODE_REPLAY;
  return 0;
}

static int set_compare(CliOptions *o, const char *v, Err *e) {
  if (strcmp(v, "paper") != 0)
    return err_set(e, "--compare knows only 'paper', got '%s'", v);
  o->compare = v;
  o->mode = MODE_HEADLESS;
  return 0;
}

static const CliOption cli_options[] = {
  {"headless", NULL, set_headless, "run SCRIPT.lua (or the built-in loop) with no UI"},
  {"bench", NULL, set_bench, "time training steps, print one JSON line"},
  {"instruments", NULL, set_instruments, "--bench: whole lab steps with every instrument at its interval"},
  {"steps", "N", set_steps, "steps for --bench or the built-in headless loop"},
  {"bench-warmup", "N", set_bench_warmup, "--bench: steps run before timing (default 5)"},
  {"print-every", "N", set_print_every, "built-in headless loop: a line every N steps"},
  {"compare", "paper", set_compare, "headless: tied, untied and tied in_scale 5 side by side"},
  {"resume", NULL, set_resume, "reopen the runs autosaved when the lab last ended"},
  {"sandbox", NULL, set_sandbox, "scripts of unknown origin: no os.execute, io.popen, C modules"},
  {"no-init", NULL, set_no_init, "do not run $XDG_CONFIG_HOME/tielab/init.lua (never run under --sandbox)"},
  {"ascii", NULL, set_ascii, "draw graphs with ASCII only"},
  {"theme", "dark|light|mono", set_theme, "colours for a dark or light background, or none (default: COLORFGBG, else dark)"},
  {"lua-mem", "MIB", set_lua_mem, "cap on the Lua heap (default 1024)"},
  {"record", "FILE.cast", set_record, "write the screen to an asciicast v2 file (asciinema plays it)"},
  {"journal", "FILE", set_journal, "write every action that changes the lab, for --replay"},
  {"replay", "FILE", set_replay, "play a journal again with no UI; check the final figures"},
  {"trust", NULL, set_trust, "--replay as recorded: in its folder, sandboxed only if it was (a journal is code)"},
  {"help", NULL, set_help, "this text"},
  {"version", NULL, set_version, "print the version"},
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

/* A setting's name as an option: dashes for underscores. */
static void dashed(const char *name, char *out, size_t cap) {
  snprintf(out, cap, "%s", name);
  for (char *p = out; *p; p++)
    if (*p == '_') *p = '-';
}

static void undashed(char *name) {
  for (char *p = name; *p; p++)
    if (*p == '-') *p = '_';
}

void cli_usage(FILE *f) {
  int n;
  const Setting *s = lab_settings(&n);
  fprintf(f,
          "usage: tielab [OPTIONS] [SCRIPT.lua [ARGS...]]      the interactive lab\n"
          "       tielab --headless [OPTIONS] [SCRIPT.lua [ARGS...]]\n"
          "       tielab --bench [MODEL OPTIONS] [--steps N]\n"
          "       tielab --replay JOURNAL\n\n"
          "Program options:\n");
  for (size_t i = 0; i < N_CLI_OPTIONS; i++) {
    const CliOption *c = &cli_options[i];
    char head[64];
    snprintf(head, sizeof head, "--%s%s%s", c->name, c->arg ? " " : "", c->arg ? c->arg : "");
    fprintf(f, "  %-24s %s\n", head, c->help);
  }
  fprintf(f, "\nRun options (also keys of lab.run{...} in Lua):\n");
  for (int i = 0; i < n; i++) {
    char head[64], name[48];
    dashed(s[i].name, name, sizeof name);
    if (s[i].type == SET_BOOL) snprintf(head, sizeof head, "--[no-]%s", name);
    else snprintf(head, sizeof head, "--%s %s", name, setting_type_arg(s[i].type));
    fprintf(f, "  %-24s %s (default %s)\n", head, s[i].help, s[i].deflt[0] ? s[i].deflt : "none");
  }
  fprintf(f,
          "\nNO_COLOR turns colours off. Exit status: 0 ok, 1 runtime error, 2 usage error,\n"
          "130 interrupted. Documentation: README.md and docs/.\n");
  fprintf(f, "\nFiles: $XDG_CONFIG_HOME/tielab/init.lua (default ~/.config/tielab/init.lua), run\n"
             "before the script or the REPL unless --no-init or --sandbox; $XDG_STATE_HOME/tielab/\n"
             "(default ~/.local/state/tielab/): the REPL history and autosave/, the saved runs.\n");
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
  const Setting *s = strncmp(name, "no_", 3) == 0 ? lab_setting_find(name + 3) : NULL;
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
  const Setting *s = lab_setting_find(name), *no = s ? NULL : negated(name);
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

/* Whether setting 'name' was given explicitly. */
static int setting_given(const RunOptions *o, const char *name) {
  long i = lab_setting_find(name) - lab_settings(NULL);
  return (o->given >> i) & 1;
}

/* --warmup is the learning rate's warmup; bench's untimed steps were once
** also --warmup, so alone with --bench it is taken for those and refused. */
static int check_bench_warmup(const CliOptions *o, Err *err) {
  const RunOptions *r = &o->run;
  if (o->mode != MODE_BENCH || !setting_given(r, "warmup") || setting_given(r, "schedule") ||
      setting_given(r, "recipe"))
    return 0;
  return err_set(err, "--bench: --warmup is the learning rate's warmup and needs --schedule or --recipe; "
                      "the untimed steps before timing are --bench-warmup N");
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
  int i = 1;
  while (i < argc) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] != '-' || a[1] != '-') break;   /* the script and its arguments */
    int consumed = 1;
    if (parse_one(argc, argv, i, o, &consumed, err) < 0) return -1;
    i += consumed;
  }
  if (i < argc) {
    if (argv[i][0] == '-') return err_set(err, "unknown option '%s' (options start with --)", argv[i]);
    o->script = argv[i];
    o->script_argc = argc - i - 1;
    o->script_argv = argv + i + 1;
  }
  if (o->mode == MODE_BENCH && o->script)
    return err_set(err, "--bench takes no script ('%s')", o->script);
  if (check_bench_warmup(o, err) < 0) return -1;
  if (o->resume && o->mode != MODE_UI)
    return err_set(err, "--resume reopens the interactive lab; with --headless use lab.load in a script");
  if ((o->record || o->journal) && o->mode != MODE_UI)
    return err_set(err, "--record and --journal record the interactive lab");
  if (o->trust && o->mode != MODE_REPLAY)
    return err_set(err, "--trust goes with --replay");
  if (o->mode == MODE_REPLAY && o->script)
    return err_set(err, "--replay takes no script: the journal names it ('%s')", o->script);
  if (o->compare && o->script)
    return err_set(err, "--compare paper takes no script ('%s')", o->script);
  if (o->mode == MODE_HELP || o->mode == MODE_VERSION) return 0;
  return run_options_check(&o->run, err);
}
