/*
** readout.c -- looking into a run without training it: loss and gradients
** on given token rows, the hidden states of a forward, text sampled from
** the model, the history exported.
*/
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/num.h"
#include "base/replace.h"
#include "core/rng.h"
#include "base/text.h"
#include "core/settings_model.h"
#include "lab/run.h"

int run_check_rows(const Run *r, const int32_t *rows, int b, int t, Err *err) {
  const ModelConfig *c = model_config(r->model);
  if (b < 1 || b > c->batch) return err_set(err, "batch has %d rows; this run takes 1 to %d", b, c->batch);
  if (t < 1 || t > c->ctx) return err_set(err, "rows have %d+1 tokens; this run takes 2 to %d+1", t, c->ctx);
  for (long i = 0; i < (long)b * (t + 1); i++)
    if (rows[i] < 0 || rows[i] >= c->vocab)
      return err_set(err, "token id %d at row %ld position %ld is outside [0, %d)", rows[i],
                     i / (t + 1) + 1, i % (t + 1) + 1, c->vocab);
  return 0;
}

static double tensor_norm(const float *g, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += (double)g[i] * g[i];
  return sqrt(s);
}

int run_evaluate(Run *r, const int32_t *rows, int b, int t, EvalResult *out, Err *err) {
  if (run_check_rows(r, rows, b, t, err) < 0) return -1;
  batch_split(rows, b, t, r->inputs, r->targets);
  /* The loss's own gradient: the run's hooks are its training's. */
  StepPlan plan = {.inputs = r->inputs, .targets = r->targets, .rows = b, .t = t, .batch_rows = b,
                   .in_scale = (float)r->opt.in_scale, .out_scale = (float)r->opt.out_scale, .gradient_only = 1};
  StepResult res;
  if (train_step(r->model, &plan, &res, err) < 0) return -1;
  out->loss = res.loss;
  out->grad = res.grad;
  const float *g = model_grads(r->model);
  const ModelConfig *c = model_config(r->model);
  int n = 0;
  double total = 0;
  for (int i = 0; i < model_tensor_count(r->model); i++) {
    const TensorInfo *ti = model_tensor(r->model, i);
    /* A fully tied E_out is no parameter of its own. */
    if (c->tie_k == c->dim && strcmp(ti->name, "lm_head.weight") == 0) continue;
    snprintf(r->eval_names[n], sizeof r->eval_names[n], "%s", ti->name);
    r->eval_norms[n] = r->opt.grad_scale * tensor_norm(g + ti->offset, ti->numel);   /* as the clip sees it */
    total += r->eval_norms[n] * r->eval_norms[n];
    n++;
  }
  out->grad.total_norm = sqrt(total);
  out->n_tensors = n;
  out->names = r->eval_names;
  out->grad_norm = r->eval_norms;
  return 0;
}

int run_hidden(Run *r, const int32_t *rows, int b, int t, float *const *out, Err *err) {
  if (run_check_rows(r, rows, b, t, err) < 0) return -1;
  const ModelConfig *c = model_config(r->model);
  batch_split(rows, b, t, r->inputs, r->targets);
  model_forward(r->model, r->inputs, NULL, b, t);
  size_t n = (size_t)b * t * c->dim;
  for (int p = 0; p <= c->layers; p++) memcpy(out[p], model_residual(r->model, p), n * sizeof(float));
  return 0;
}

/* Draw from softmax(logits / temp); temp <= 0 means the most likely id. */
static int32_t draw(const float *logits, int v, double temp, Rng *rng) {
  int best = 0;
  for (int i = 1; i < v; i++)
    if (logits[i] > logits[best]) best = i;
  if (temp <= 0) return best;
  double sum = 0;
  for (int i = 0; i < v; i++) sum += exp((logits[i] - logits[best]) / temp);
  double u = rng_uniform(rng) * sum;
  for (int i = 0; i < v; i++) {
    u -= exp((logits[i] - logits[best]) / temp);
    if (u <= 0) return i;
  }
  return best;
}

/* The token ids of a sample: the prompt's in [0, *start), those drawn in
** [*start, *len); the caller frees '*ids'. */
static int sample_ids(Run *r, const char *prompt, int n, double temp, uint64_t seed, int32_t **out,
                      size_t *start, size_t *out_len, Err *err) {
  const ModelConfig *c = model_config(r->model);
  const Tokenizer *tok = run_tok(r);
  if (!tok) return err_set(err, "run '%s' has no tokenizer to sample text with", r->opt.name);
  if (n < 0 || n > 100000) return err_set(err, "cannot sample %d tokens", n);
  int32_t *ids = NULL;
  size_t len = 0;
  const char *p = prompt && *prompt ? prompt : "\n";
  if (tokenizer_encode(tok, (const uint8_t *)p, strlen(p), &ids, &len, NULL, err) < 0) return -1;
  int32_t *all = realloc(ids, sizeof *all * (len + (size_t)n + 1));
  if (!all) {
    free(ids);
    return err_set(err, "out of memory sampling");
  }
  ids = all;
  Rng rng;
  rng_seed(&rng, seed);
  *start = len;
  for (int k = 0; k < n; k++) {
    int t = len > (size_t)c->ctx ? c->ctx : (int)len;
    model_forward(r->model, ids + len - t, NULL, 1, t);
    ids[len++] = draw(model_logits(r->model) + (size_t)(t - 1) * c->vocab, c->vocab, temp, &rng);
  }
  *out = ids;
  *out_len = len;
  return 0;
}

int run_sample(Run *r, const char *prompt, int n, double temp, uint64_t seed, char *out, size_t cap,
               Err *err) {
  int32_t *ids;
  size_t start, len;
  if (sample_ids(r, prompt, n, temp, seed, &ids, &start, &len, err) < 0) return -1;
  /* Token by token, as a stream would: a token may end inside a character
  ** that the next one completes, and the text must stay valid UTF-8. */
  TextUtf8 u;
  text_utf8_begin(&u, out, cap);
  for (size_t i = start; i < len; i++) {
    size_t bytes;
    const uint8_t *token = tokenizer_token(run_tok(r), ids[i], &bytes);
    if (token) text_utf8_put(&u, (const char *)token, bytes);
  }
  text_utf8_end(&u);
  free(ids);
  return 0;
}

int run_sample_bytes(Run *r, const char *prompt, int n, double temp, uint64_t seed, char *out, size_t cap,
                     size_t *out_len, Err *err) {
  int32_t *ids;
  size_t start, len, w = 0;
  *out_len = 0;
  if (sample_ids(r, prompt, n, temp, seed, &ids, &start, &len, err) < 0) return -1;
  /* Whole tokens only: a cut made for want of room is not the model's. */
  for (size_t i = start; i < len; i++) {
    size_t bytes;
    const uint8_t *token = tokenizer_token(run_tok(r), ids[i], &bytes);
    if (!token) continue;
    if (w + bytes > cap) break;
    memcpy(out + w, token, bytes);
    w += bytes;
  }
  free(ids);
  *out_len = w;
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The export's settings line: the headline settings (the model as built,
** its seeds and rates, the corpus as read) at any value, then every other
** setting that is not at its default (the schedule, the optimizer, the
** instruments), so that a file says how its run was trained. The run's name
** is the file's 'run'; 'seed' is said by the two seeds it sets. */
static void export_settings(const Run *r, char *buf, size_t cap) {
  RunOptions now = r->opt, d;
  now.model = *model_config(r->model);
  run_options_default(&d);
  int count;
  const Setting *all = lab_settings(&count);
  size_t n = 0;
  buf[0] = '\0';
  for (int headline = 1; headline >= 0; headline--)
    for (int i = 0; i < count && n < cap; i++) {
      char value[1100], was[1100];
      if (all[i].headline != headline || (headline && (all[i].local || all[i].alias)) ||
          run_options_get_text(&now, all[i].name, value, sizeof value, NULL) < 0)
        continue;
      if (i == SETTING_CORPUS) snprintf(value, sizeof value, "%s", r->data ? r->data->ds.name : "none");
      else if (!headline && (run_options_get_text(&d, all[i].name, was, sizeof was, NULL) < 0 ||
                             strcmp(value, was) == 0))
        continue;
      n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", n ? " " : "", all[i].name, value);
    }
}

/* The meta sidecar's settings: every setting by name, with its type in
** JSON (numbers, booleans, strings); the model's shape as built. */
static json_t *settings_json(const Run *r) {
  json_t *o = json_object();
  int count;
  const Setting *all = lab_settings(&count);
  for (int i = 0; o && i < count; i++) {
    char text[1100];
    if (run_options_get_text(&r->opt, all[i].name, text, sizeof text, NULL) < 0) continue;
    json_t *v = NULL;
    char *end;
    if (all[i].type == SET_BOOL) v = json_boolean(strcmp(text, "true") == 0);
    else if (all[i].type == SET_INT) v = json_integer(strtoll(text, NULL, 10));
    else if (all[i].type == SET_NUMBER && isfinite(strtod(text, &end)) && *end == '\0') v = json_real(strtod(text, NULL));
    else v = json_string(text);   /* seeds run to 2^64, past JSON's integers in most readers */
    json_object_set_new(o, all[i].name, v);
  }
  /* the model's shape as built, the tie as text, over the options' values */
  json_t *shape = o ? model_config_json(model_config(r->model)) : NULL;
  if (o && (!shape || json_object_update(o, shape) < 0)) {
    json_decref(o);
    o = NULL;
  }
  json_decref(shape);
  return o;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Everything the CSV files leave out, for NAME.meta.json. */
static json_t *export_meta(const Run *r, const char *data, const char *events, int wide) {
  char settings[4096];
  export_settings(r, settings, sizeof settings);
  json_t *series = json_array();
  for (int i = 0; series && i < history_n_series(r->hist); i++)
    json_array_append_new(series, json_string(history_series_name(r->hist, i)));
  return json_pack("{s:s, s:i, s:s, s:s, s:{s:s, s:s}, s:o, s:I, s:s?, s:s, s:o}", "format", "tielab-history",
                   "version", 2, "run", r->opt.name, "form", wide ? "wide" : "long", "files", "data", base_name(data),
                   "events", base_name(events), "series", series, "events_dropped",
                   (json_int_t)history_events_dropped(r->hist), setting_name(SETTING_CORPUS),
                   r->data ? r->data->ds.name : NULL,
                   "settings_line", settings, "settings", settings_json(r));
}

typedef enum ExportPart { PART_LONG, PART_WIDE, PART_EVENTS, PART_JSONL, PART_META } ExportPart;

typedef struct ExportJob {
  Run *r;
  ExportPart part;
  json_t *meta;
} ExportJob;

static int write_part(const ExportJob *j, FILE *f, Err *err) {
  char settings[4096];
  switch (j->part) {
    case PART_LONG: return history_write_csv(j->r->hist, f, err);
    case PART_WIDE: return history_write_csv_wide(j->r->hist, f, err);
    case PART_EVENTS: return history_write_events_csv(j->r->hist, f, err);
    case PART_JSONL:
      export_settings(j->r, settings, sizeof settings);
      return history_write_jsonl(j->r->hist, f, j->r->opt.name, settings, err);
    case PART_META:
      if (!j->meta || json_dumpf(j->meta, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || fputc('\n', f) == EOF)
        return err_set(err, "writing the settings: out of memory or disk");
      return 0;
  }
  return err_set(err, "no such export part");
}

/* One file written whole and renamed over 'path', by the same rules as a
** checkpoint. */
static int write_replaced(const char *path, const ExportJob *j, Err *err) {
  Replace rep;
  if (replace_begin(&rep, path, err) < 0) return -1;
  FILE *f = fdopen(rep.fd, "w");
  if (!f) {
    int e = errno;
    replace_end(&rep, e);
    return err_set(err, "%s: cannot write: %s", path, strerror(e));
  }
  rep.fd = -1;   /* fclose closes it */
  int rc = write_part(j, f, err);
  int e = rc < 0 ? EIO : fflush(f) != 0 || fsync(fileno(f)) != 0 ? errno : 0;
  if (fclose(f) != 0 && e == 0) e = errno;
  e = replace_end(&rep, e);
  if (rc == 0 && e != 0) rc = err_set(err, "%s: %s", path, strerror(e));
  return rc;
}

const char *run_export_sidecar(const char *path, const char *suffix, char *buf, size_t cap) {
  if (!ends_with(path, ".csv")) return NULL;
  int base = (int)(strlen(path) - strlen(".csv"));
  int n = snprintf(buf, cap, "%.*s%s", base, path, suffix);
  return n >= 0 && (size_t)n < cap ? buf : NULL;
}

/* NAME.csv, NAME.events.csv and NAME.meta.json, the data file first. */
static int export_csv(Run *r, const char *path, int wide, Err *err) {
  char events[PATH_MAX], meta[PATH_MAX];
  if (!run_export_sidecar(path, RUN_EXPORT_EVENTS, events, sizeof events) ||
      !run_export_sidecar(path, RUN_EXPORT_META, meta, sizeof meta))
    return err_set(err, "%s: path too long for its sidecar files", path);
  ExportJob job = {r, wide ? PART_WIDE : PART_LONG, NULL};
  if (write_replaced(path, &job, err) < 0) return -1;
  job.part = PART_EVENTS;
  if (write_replaced(events, &job, err) < 0) return -1;
  job.part = PART_META;
  job.meta = export_meta(r, path, events, wide);
  int rc = write_replaced(meta, &job, err);
  json_decref(job.meta);
  return rc;
}

static int export_to(Run *r, const char *path, int wide, Err *err) {
  if (lab_rank(r->lab) > 0) return 0;   /* rank 0 holds the same run and writes it */
  if (ends_with(path, ".csv")) return export_csv(r, path, wide, err);
  if (!ends_with(path, ".jsonl")) return err_set(err, "%s: export to a .csv or .jsonl file", path);
  if (wide) return err_set(err, "%s: the wide form is a CSV file; name it .csv", path);
  ExportJob job = {r, PART_JSONL, NULL};
  return write_replaced(path, &job, err);
}

int run_export(Run *r, const char *path, Err *err) { return export_to(r, path, 0, err); }
int run_export_wide(Run *r, const char *path, Err *err) { return export_to(r, path, 1, err); }
