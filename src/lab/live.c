/*
** live.c -- changing a run while it lives: tie mode, scales, the optimizer's
** settings and its schedule, and instrument intervals, each recorded as an
** event in the run's history so that every graph can mark it.
*/
#include <string.h>

#include "lab/run.h"

static int names_key(const char *const *keys, int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (strcmp(keys[i], key) == 0) return 1;
  return 0;
}

/* Only a change that names 'tie' touches the model's matrices and moments;
** every other r:set leaves them alone. */
static int apply_tie(Run *r, const RunOptions *next, const char *const *keys, int n, Err *err) {
  if (!names_key(keys, n, setting_name(SETTING_TIE))) return 0;
  const ModelConfig *c = model_config(r->model);
  if (next->model.tie_k == c->tie_k) return 0;
  if (run_refuse_if_fitting(r, "change its tie", err) < 0) return -1;
  return model_set_tie(r->model, next->model.tie_k, next->tie_merge, err);
}

/* After 'next' has been validated, make the run match it; each of the
** 'n' keys changed is an event. */
static int apply(Run *r, const RunOptions *next, const char *const *keys, int n, Err *err) {
  if (apply_tie(r, next, keys, n, err) < 0) return -1;
  r->opt = *next;   /* each step's optimizer follows from the options */
  run_refresh_metrics(r);
  for (int i = 0; i < n; i++) {
    char value[64], text[96];
    if (run_options_get_text(next, keys[i], value, sizeof value, err) < 0) return -1;
    snprintf(text, sizeof text, "%s=%s", keys[i], value);
    history_event(r->hist, r->metrics.step, text);
  }
  r->dirty = 1;
  return 0;
}

static int check_live(const char *key, Err *err) {
  const Setting *s = lab_setting_find(key);
  if (!s) return err_set(err, "unknown setting '%s'", key);
  if (!s->live) return err_set(err, "'%s' is fixed when a run is created", key);
  return 0;
}

/* A change is checked for what it changes: the memory only when a setting
** that changes what a run holds is among its keys (align_every turned on
** plans the alignment's workspace), never for a scale or a rate. */
static int check_memory(Run *r, const RunOptions *next, const char *const *keys, int n, Err *err) {
  for (int i = 0; i < n; i++)
    if (lab_setting_find(keys[i])->memory) return lab_check_change(r, next, keys[i], err);
  return 0;
}

int run_set_options(Run *r, const RunOptions *next, const char *const *keys, int n, Err *err) {
  for (int i = 0; i < n; i++)
    if (check_live(keys[i], err) < 0) return -1;
  if (run_options_check(next, err) < 0) return -1;
  if (check_memory(r, next, keys, n, err) < 0) return -1;
  return apply(r, next, keys, n, err);
}
