/*
** journal.c -- the journal of the lab's actions, written as JSON lines (jansson)
** and read back whole for 'tielab --replay'. See journal.h for the format.
**
** Each line is flushed as it is written, so a lab that dies keeps the
** journal of everything up to then (only the final record is missing).
*/
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/safeopen.h"
#include "config.h"
#include "core/model.h"
#include "lab/journal.h"
#include "lab/run.h"

#define JOURNAL_VERSION 1

struct Journal {
  FILE *f;
  char path[4096];
  json_t *mark;          /* the steps the next entry is written with, or NULL */
  json_t *waits;         /* lab.wait_key's answers given during the marked call */
};

/* ------------------------------------------------------------ figures */

static double m_loss(Run *r) { return run_metrics(r)->loss; }
static double m_val_loss(Run *r) { return run_metrics(r)->val_loss; }
static double m_grad_ratio(Run *r) { return run_metrics(r)->grad_ratio; }
static double m_grad_in(Run *r) { return run_metrics(r)->grad.in_l2; }
static double m_grad_out(Run *r) { return run_metrics(r)->grad.out_l2; }

/* Every parameter summed in double, in arena order: any change to any
** weight changes it (almost surely), at the cost of one pass. */
static double m_weights(Run *r) {
  Model *m = run_model(r);
  const float *p = model_params(m);
  size_t n = model_n_floats(m);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += p[i];
  return sum;
}

static const struct {
  const char *name;
  double (*get)(Run *r);
} metrics[JOURNAL_N_METRICS] = {
    {"loss", m_loss},         {"val_loss", m_val_loss}, {"grad_ratio", m_grad_ratio},
    {"grad_in", m_grad_in},   {"grad_out", m_grad_out}, {"weights", m_weights},
};

const char *journal_metric_name(int i) { return metrics[i].name; }

void journal_metrics(Run *r, char out[JOURNAL_N_METRICS][JOURNAL_METRIC_CHARS]) {
  for (int i = 0; i < JOURNAL_N_METRICS; i++) snprintf(out[i], JOURNAL_METRIC_CHARS, "%a", metrics[i].get(r));
}

/* ------------------------------------------------------------ text */

/* Text as JSON, losslessly: a JSON string when it is UTF-8, else (a REPL
** line or a folder name with other bytes) {"hex": "..."} of its bytes. */
static json_t *text_json(const char *s) {
  json_t *v = json_string(s);
  if (v) return v;
  size_t n = strlen(s);
  char *hex = malloc(2 * n + 1);
  if (!hex) return NULL;
  for (size_t i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s[i]);
  v = json_pack("{s:s}", "hex", hex);
  free(hex);
  return v;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* The text text_json wrote, in a new string; NULL when 'v' is no text. */
static char *text_value(json_t *v) {
  if (json_is_string(v)) return strdup(json_string_value(v));
  const char *hex = json_string_value(json_object_get(v, "hex"));
  size_t n = hex ? strlen(hex) : 1;
  char *s = n % 2 == 0 ? malloc(n / 2 + 1) : NULL;
  for (size_t i = 0; s && i < n / 2; i++) {
    int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0 || (hi | lo) == 0) {   /* no NUL: the text is a C string */
      free(s);
      return NULL;
    }
    s[i] = (char)(hi << 4 | lo);
  }
  if (s) s[n / 2] = '\0';
  return s;
}

/* Set 'key' of 'o' to text; 0, or -1 when it cannot be (out of memory). */
static int set_text(json_t *o, const char *key, const char *s) {
  return o ? json_object_set_new(o, key, text_json(s ? s : "")) : -1;
}

/* ------------------------------------------------------------ writing */

static json_t *string_array(int argc, char **argv) {
  json_t *a = json_array();
  for (int i = 0; a && i < argc; i++)
    if (json_array_append_new(a, text_json(argv[i] ? argv[i] : "")) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

/* One whole line, written at once (a failed write never leaves half an
** entry behind a good one); the object is consumed. */
static int put(Journal *j, json_t *o, Err *err) {
  if (!o) return err_set(err, "%s: out of memory", j->path);
  char *text = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (!text) return err_set(err, "%s: out of memory", j->path);
  size_t n = strlen(text);
  text[n] = '\n';   /* over the NUL: the line and its end in one write */
  int rc = 0;
  if (fwrite(text, 1, n + 1, j->f) != n + 1 || fflush(j->f) == EOF)
    rc = err_set(err, "%s: %s", j->path, strerror(errno));
  free(text);
  return rc;
}

static json_t *run_options_json(const RunOptions *o) {
  json_t *opts = json_object();
  int n;
  const Setting *s = lab_settings(&n);
  for (int i = 0; i < n; i++) {
    char buf[1100];
    if (s[i].alias) continue;   /* the settings it sets say it */
    if (run_options_get_text(o, s[i].name, buf, sizeof buf, NULL) == 0)
      json_object_set_new(opts, s[i].name, json_string(buf));
  }
  return opts;
}

Journal *journal_open(const char *path, int argc, char **argv, Lab *lab, Err *err) {
  Journal *j = calloc(1, sizeof *j);
  if (!j) return err_set(err, "out of memory"), NULL;
  snprintf(j->path, sizeof j->path, "%s", path);
  j->waits = json_array();
  j->f = j->waits ? safeopen_fwrite(path, err) : NULL;   /* never waits for a FIFO's reader */
  if (!j->f) {
    if (!j->waits) err_set(err, "out of memory");
    json_decref(j->waits);
    free(j);
    return NULL;
  }
  json_t *runs = json_array();
  for (int i = 0; i < lab_n_runs(lab); i++) {
    Run *r = lab_run(lab, i);
    json_array_append_new(runs, json_pack("{s:s, s:I, s:o}", setting_name(SETTING_NAME), run_name(r), "step",
                                          (json_int_t)run_metrics(r)->step, "options",
                                          run_options_json(run_options(r))));
  }
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
  json_t *h = json_pack("{s:i, s:s, s:o*}", "journal", JOURNAL_VERSION, "tielab", PACKAGE_VERSION, "argv",
                        string_array(argc, argv));
  if (!h) json_decref(runs);
  if (set_text(h, "cwd", cwd) < 0 || json_object_set_new(h, "runs", runs) < 0 || !json_object_get(h, "argv")) {
    json_decref(h);
    h = NULL;
  }
  if (put(j, h, err) < 0) {
    fclose(j->f);
    json_decref(j->waits);
    free(j);
    return NULL;
  }
  return j;
}

/* The lab step and every run's step: {"step": S, "runs": [[name, step], ...]}. */
static json_t *steps_now(Lab *lab) {
  json_t *runs = json_array();
  for (int i = 0; i < lab_n_runs(lab); i++) {
    Run *r = lab_run(lab, i);
    json_array_append_new(runs, json_pack("[s, I]", run_name(r), (json_int_t)run_metrics(r)->step));
  }
  return json_pack("{s:I, s:o}", "step", (json_int_t)lab_max_step(lab), "runs", runs);
}

void journal_mark(Journal *j, Lab *lab) {
  json_decref(j->mark);
  j->mark = lab ? steps_now(lab) : NULL;
  if (!lab) json_array_clear(j->waits);   /* a call that did not run gave no answers */
}

/* An entry's common part: its kind, the steps 'steps' (consumed), the selection. */
static json_t *entry_at(json_t *steps, const char *kind, const char *sel) {
  json_t *e = steps ? json_pack("{s:s, s:O, s:O}", "kind", kind, "step", json_object_get(steps, "step"), "runs",
                                json_object_get(steps, "runs"))
                    : NULL;
  json_decref(steps);
  if (set_text(e, "sel", sel) < 0) {
    json_decref(e);
    return NULL;
  }
  return e;
}

/* An entry with the marked steps, or the steps now. */
static json_t *entry(Journal *j, Lab *lab, const char *kind, const char *sel) {
  json_t *steps = j->mark ? j->mark : steps_now(lab);
  j->mark = NULL;
  return entry_at(steps, kind, sel);
}

/* An entry, then the answers lab.wait_key gave while its call ran: the
** replay meets them in that order (the call first, its waits inside it). */
static int put_entry(Journal *j, json_t *e, Err *err) {
  int rc = put(j, e, err);
  size_t i;
  json_t *w;
  json_array_foreach(j->waits, i, w) if (rc == 0) rc = put(j, json_incref(w), err);
  json_array_clear(j->waits);
  return rc;
}

int journal_call(Journal *j, Lab *lab, const char *kind, const char *lua, const char *sel, Err *err) {
  json_t *e = entry(j, lab, kind, sel);
  if (e && set_text(e, "lua", lua) < 0) {
    json_decref(e);
    e = NULL;
  }
  return put_entry(j, e, err);
}

int journal_binding(Journal *j, Lab *lab, int code, const char *sel, Err *err) {
  json_t *e = entry(j, lab, "binding", sel);
  if (e) json_object_set_new(e, "code", json_integer(code));
  return put_entry(j, e, err);
}

int journal_script(Journal *j, Lab *lab, const char *path, int argc, char **argv, Err *err) {
  uint64_t hash = 0;
  long size = 0;
  if (journal_file_hash(path, &hash, &size, err) < 0) return -1;
  char hex[32];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hash);
  json_t *e = entry(j, lab, "script", "");
  if (e && (set_text(e, "path", path) < 0 || json_object_set_new(e, "args", string_array(argc, argv)) < 0 ||
            json_object_set_new(e, "size", json_integer(size)) < 0 ||
            json_object_set_new(e, "fnv1a64", json_string(hex)) < 0)) {
    json_decref(e);
    e = NULL;
  }
  return put_entry(j, e, err);
}

int journal_wait(Journal *j, Lab *lab, int pressed, const char *sel, Err *err) {
  /* the steps now, not the mark: that belongs to the call in progress */
  json_t *e = entry_at(steps_now(lab), "wait", sel);
  if (e && json_object_set_new(e, "answer", json_boolean(pressed)) < 0) {
    json_decref(e);
    e = NULL;
  }
  if (!j->mark) return put(j, e, err);
  if (!e || json_array_append_new(j->waits, e) < 0) return err_set(err, "%s: out of memory", j->path);
  return 0;
}

int journal_close(Journal *j, Lab *lab, Err *err) {
  if (!j) return 0;
  json_t *runs = json_array();
  for (int i = 0; lab && i < lab_n_runs(lab); i++) {
    Run *r = lab_run(lab, i);
    char m[JOURNAL_N_METRICS][JOURNAL_METRIC_CHARS];
    journal_metrics(r, m);
    json_t *o = json_pack("{s:s, s:I}", setting_name(SETTING_NAME), run_name(r), "step",
                          (json_int_t)run_metrics(r)->step);
    for (int k = 0; k < JOURNAL_N_METRICS; k++) json_object_set_new(o, metrics[k].name, json_string(m[k]));
    json_array_append_new(runs, o);
  }
  int rc = put(j, json_pack("{s:b, s:I, s:o}", "end", 1, "step", (json_int_t)(lab ? lab_max_step(lab) : 0), "runs", runs),
               err);
  if (fclose(j->f) != 0 && rc == 0) rc = err_set(err, "%s: %s", j->path, strerror(errno));
  json_decref(j->mark);
  json_decref(j->waits);
  free(j);
  return rc;
}

int journal_file_hash(const char *path, uint64_t *hash, long *size, Err *err) {
  FILE *f = safeopen_fread(path, 0, NULL, err);
  if (!f) return -1;
  uint64_t h = HASH_FNV_BASIS;
  long n = 0;
  int c;
  while ((c = getc(f)) != EOF) {
    h = hash_fnv_step(h, (unsigned char)c);
    n++;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) return err_set(err, "%s: read error", path);
  *hash = h;
  *size = n;
  return 0;
}

/* ------------------------------------------------------------ reading
** A journal may come from anyone: every field is checked for its type and
** range, and a value that does not fit is refused, never cut short or read
** as 0 (a NUL byte, a run list that is an object, a step that is text). */

enum { JOURNAL_LINE_MAX = 16 << 20 };   /* no entry of the lab is near it: a longer line is no journal */

static void free_strings(int argc, char **argv) {
  for (int i = 0; argv && i < argc; i++) free(argv[i]);
  free(argv);
}

/* A list of texts (text_json's forms); -1 when 'a' is no such list. */
static int read_strings(json_t *a, int *argc, char ***argv) {
  if (!json_is_array(a)) return -1;
  size_t n = json_array_size(a);
  *argv = calloc(n + 1, sizeof **argv);
  if (!*argv) return -1;
  for (size_t i = 0; i < n; i++) {
    if (!((*argv)[i] = text_value(json_array_get(a, i)))) {
      free_strings((int)i, *argv);
      *argv = NULL;
      return -1;
    }
  }
  *argc = (int)n;
  return 0;
}

/* The whole number of at least 0 at 'key' of 'o' into '*out'. */
static int read_count(json_t *o, const char *key, long *out, Err *err) {
  json_t *v = json_object_get(o, key);
  if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > LONG_MAX)
    return err_set(err, "'%s' is not a whole number of at least 0", key);
  *out = (long)json_integer_value(v);
  return 0;
}

/* Text of 'v' (text_json's forms) that fits in 'cap' bytes, into 'out'. */
static int read_text_in(json_t *v, char *out, size_t cap, const char *what, Err *err) {
  char *s = text_value(v);
  if (!s) return err_set(err, "%s is not text", what);
  size_t n = strlen(s);
  if (n < cap) memcpy(out, s, n + 1);
  free(s);
  return n < cap ? 0 : err_set(err, "%s is longer than %zu bytes", what, cap - 1);
}

static int read_start_run(json_t *o, JournalRun *r, Err *err) {
  if (!json_is_object(o)) return err_set(err, "a run that is not an object");
  if (read_text_in(json_object_get(o, setting_name(SETTING_NAME)), r->name, sizeof r->name, "a run's name", err) < 0)
    return -1;
  if (read_count(o, "step", &r->step, err) < 0) return err_prefix(err, "run '%s'", r->name);
  json_t *opts = json_object_get(o, "options");
  if (!json_is_object(opts)) return err_set(err, "run '%s' has no options", r->name);
  run_options_default(&r->opt);
  const char *key;
  json_t *v;
  json_object_foreach(opts, key, v) {
    const char *text = json_string_value(v);
    if (!text) return err_set(err, "run '%s': option '%s' is not text", r->name, key);
    if (run_options_set_text(&r->opt, key, text, err) < 0) return err_prefix(err, "run '%s'", r->name);
  }
  return 0;
}

static int read_header(json_t *h, JournalFile *f, Err *err) {
  json_t *version = json_object_get(h, "journal");
  if (!json_is_integer(version) || json_integer_value(version) != JOURNAL_VERSION)
    return err_set(err, "not a tielab journal of version %d", JOURNAL_VERSION);
  const char *tielab = json_string_value(json_object_get(h, "tielab"));
  snprintf(f->version, sizeof f->version, "%.63s", tielab ? tielab : "");
  if (read_strings(json_object_get(h, "argv"), &f->argc, &f->argv) < 0)
    return err_set(err, "the header's argv is not a list of texts");
  json_t *cwd = json_object_get(h, "cwd");
  if (cwd && read_text_in(cwd, f->cwd, sizeof f->cwd, "the header's cwd", err) < 0) return -1;
  json_t *runs = json_object_get(h, "runs");
  if (!json_is_array(runs)) return err_set(err, "the header's runs are not a list");
  size_t n = json_array_size(runs);
  f->start = calloc(n ? n : 1, sizeof *f->start);
  if (!f->start) return err_set(err, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (read_start_run(json_array_get(runs, i), &f->start[i], err) < 0) return -1;
    f->n_start++;
  }
  return 0;
}

static const char *const kind_names[] = {[JOURNAL_KEY] = "key", [JOURNAL_LINE] = "line",
                                         [JOURNAL_BINDING] = "binding", [JOURNAL_SCRIPT] = "script",
                                         [JOURNAL_WAIT] = "wait"};

const char *journal_kind_name(JournalKind k) { return kind_names[k]; }

static int read_kind(const char *s, JournalKind *k) {
  for (int i = 0; s && i < (int)(sizeof kind_names / sizeof kind_names[0]); i++)
    if (strcmp(s, kind_names[i]) == 0) return *k = (JournalKind)i, 0;
  return -1;
}

static int read_steps(json_t *runs, JournalEntry *e, Err *err) {
  if (!json_is_array(runs)) return err_set(err, "the runs' steps are not a list");
  size_t n = json_array_size(runs);
  e->runs = calloc(n ? n : 1, sizeof *e->runs);
  if (!e->runs) return err_set(err, "out of memory");
  for (size_t i = 0; i < n; i++) {
    json_t *p = json_array_get(runs, i), *step = json_array_get(p, 1);
    if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_integer(step) || json_integer_value(step) < 0)
      return err_set(err, "a run's step is not [name, step] with a step of at least 0");
    if (read_text_in(json_array_get(p, 0), e->runs[i].name, sizeof e->runs[i].name, "a run's name", err) < 0)
      return -1;
    e->runs[i].step = (long)json_integer_value(step);
    e->n_runs++;
  }
  return 0;
}

/* "fnv1a64": the script's hash as 16 hex digits. */
static int read_hash(json_t *v, uint64_t *hash, Err *err) {
  const char *hex = json_string_value(v);
  if (!hex || strlen(hex) != 16 || strspn(hex, "0123456789abcdefABCDEF") != 16)
    return err_set(err, "a script entry whose fnv1a64 is not 16 hex digits");
  *hash = strtoull(hex, NULL, 16);
  return 0;
}

static int read_script(json_t *o, JournalEntry *e, Err *err) {
  if (!(e->path = text_value(json_object_get(o, "path"))) || !e->path[0])
    return err_set(err, "a script entry without its file");
  if (read_strings(json_object_get(o, "args"), &e->argc, &e->argv) < 0)
    return err_set(err, "a script entry whose args are not a list of texts");
  if (read_count(o, "size", &e->size, err) < 0) return -1;
  return read_hash(json_object_get(o, "fnv1a64"), &e->hash, err);
}

static int read_entry(json_t *o, JournalEntry *e, Err *err) {
  if (read_kind(json_string_value(json_object_get(o, "kind")), &e->kind) < 0) return err_set(err, "unknown kind of entry");
  if (read_count(o, "step", &e->step, err) < 0) return -1;
  if (read_steps(json_object_get(o, "runs"), e, err) < 0) return -1;
  json_t *sel = json_object_get(o, "sel");
  if (sel && read_text_in(sel, e->sel, sizeof e->sel, "the selected run", err) < 0) return -1;
  json_t *v;
  switch (e->kind) {
    case JOURNAL_KEY:
    case JOURNAL_LINE:
      if (!(e->lua = text_value(json_object_get(o, "lua")))) return err_set(err, "an entry without its Lua");
      return 0;
    case JOURNAL_BINDING:
      v = json_object_get(o, "code");
      if (!json_is_integer(v) || json_integer_value(v) < INT_MIN || json_integer_value(v) > INT_MAX)
        return err_set(err, "a binding entry without its key code");
      e->code = (int)json_integer_value(v);
      return 0;
    case JOURNAL_SCRIPT: return read_script(o, e, err);
    case JOURNAL_WAIT:
      v = json_object_get(o, "answer");
      if (!json_is_boolean(v)) return err_set(err, "a wait entry without its answer (true or false)");
      e->answer = json_is_true(v);
      return 0;
  }
  return 0;
}

static int read_end_run(json_t *r, JournalRun *jr, Err *err) {
  if (read_text_in(json_object_get(r, setting_name(SETTING_NAME)), jr->name, sizeof jr->name, "a final run's name",
                   err) < 0)
    return -1;
  if (read_count(r, "step", &jr->step, err) < 0) return err_prefix(err, "final run '%s'", jr->name);
  for (int k = 0; k < JOURNAL_N_METRICS; k++) {
    const char *v = json_string_value(json_object_get(r, metrics[k].name));
    if (!v || strlen(v) >= JOURNAL_METRIC_CHARS)
      return err_set(err, "run '%s' has no final '%s' (a hex float)", jr->name, metrics[k].name);
    snprintf(jr->metric[k], JOURNAL_METRIC_CHARS, "%s", v);
  }
  return 0;
}

static int read_end(json_t *o, JournalFile *f, Err *err) {
  json_t *runs = json_object_get(o, "runs");
  if (!json_is_array(runs)) return err_set(err, "the final record's runs are not a list");
  if (read_count(o, "step", &f->end_step, err) < 0) return err_prefix(err, "the final record");
  size_t n = json_array_size(runs);
  f->end = calloc(n ? n : 1, sizeof *f->end);
  if (!f->end) return err_set(err, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (read_end_run(json_array_get(runs, i), &f->end[i], err) < 0) return -1;
    f->n_end++;
  }
  f->has_end = 1;
  return 0;
}

static int read_line(json_t *o, int lineno, JournalFile *f, Err *err) {
  if (!json_is_object(o)) return err_set(err, "not a JSON object");
  if (lineno == 1) return read_header(o, f, err);
  if (f->has_end) return err_set(err, "a line after the final record");
  if (json_object_get(o, "end")) return read_end(o, f, err);
  JournalEntry *e = realloc(f->e, sizeof *e * (size_t)(f->n + 1));
  if (!e) return err_set(err, "out of memory");
  f->e = e;
  memset(&e[f->n], 0, sizeof e[f->n]);
  f->n++;
  return read_entry(o, &e[f->n - 1], err);
}

/* One line of 'len' bytes, the line number 'lineno'. */
static int read_text_line(const char *line, size_t len, int lineno, JournalFile *f, Err *err) {
  if (len > JOURNAL_LINE_MAX) return err_set(err, "a line longer than %d MiB", JOURNAL_LINE_MAX >> 20);
  if (memchr(line, '\0', len)) return err_set(err, "a NUL byte (a journal is text)");
  json_error_t je;
  json_t *o = json_loadb(line, len, 0, &je);
  if (!o) return err_set(err, "%s", je.text);
  int rc = read_line(o, lineno, f, err);
  json_decref(o);
  return rc;
}

int journal_read(const char *path, JournalFile *f, Err *err) {
  memset(f, 0, sizeof *f);
  FILE *in = safeopen_fread(path, 0, NULL, err);
  if (!in) return -1;
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, rc = 0;
  ssize_t len;
  while (rc == 0 && (len = getline(&line, &cap, in)) > 0) {
    lineno++;
    if (read_text_line(line, (size_t)len, lineno, f, err) < 0) rc = err_prefix(err, "%s:%d", path, lineno);
  }
  if (rc == 0 && ferror(in)) rc = err_set(err, "%s: read error", path);
  free(line);
  fclose(in);
  if (rc == 0 && lineno == 0) rc = err_set(err, "%s: empty journal", path);
  if (rc < 0) journal_file_free(f);
  return rc;
}

void journal_file_free(JournalFile *f) {
  free_strings(f->argc, f->argv);
  free(f->start);
  for (int i = 0; i < f->n; i++) {
    free(f->e[i].runs);
    free(f->e[i].lua);
    free(f->e[i].path);
    free_strings(f->e[i].argc, f->e[i].argv);
  }
  free(f->e);
  free(f->end);
  memset(f, 0, sizeof *f);
}
